package botkits

import (
	"fmt"
	"slices"
	"strings"
	"sync"
)

// A Starter is a kit's starting project for a game: its files (paths
// relative to the project's root, as an upload has them) and its main
// file (the build's BOT: a file for Python and JavaScript, the C++ main
// source, the Go main package's folder).
type Starter struct {
	Kit, Game, Main string
	Files           []File
}

// starterKits and starterGames are the kits and games starters exist
// for, in Starters' order.
var (
	starterKits  = []string{"go", "cpp", "python", "javascript"}
	starterGames = []string{"tanks", "snake", "pacman"}
)

// starterSpecs are the starters, in Starters' order: each the kit's
// files its game's bot needs, by their path in the kit (botkits/KIT/…),
// and the kit's drawing helper (for annotations, docs/bots.md).
// "NAME=PATH" puts the kit's PATH at NAME; "FOLDER/" is a folder's files
// (a Go package's, its tests aside). Go's also hold the kit's go.mod (and
// go.sum, when it has one): each is the kit's module, of which the build
// makes the main package's folder. TestStarters checks that the files are
// exactly what the main needs.
var starterSpecs = []starterSpec{
	{"go", "tanks", "bot", []string{"bot/", "tanks/", "draw/"}},
	{"go", "snake", "snake-greedy", []string{"snake-greedy/", "snake/", "draw/"}},
	{"go", "pacman", "pacman-runner", []string{"pacman-runner/", "pacman/", "draw/"}},
	// C++: the build compiles every .cpp and .c file at the top, and the
	// main source when it is in a folder, with -I. (sourcebuild): the
	// Snake algorithm a student edits is my_algo.c, as the kit's README
	// has it.
	{"cpp", "tanks", "bot.cpp", []string{"bot.cpp", "tanks.h", "json.h", "draw.h"}},
	{"cpp", "snake", "snake/snake_main.cpp", []string{"my_algo.c=examples/greedy.c", "playerbase.h", "snake/snake_main.cpp", "json.h", "draw.h"}},
	{"cpp", "pacman", "pacman/runner.cpp", []string{"pacman/runner.cpp", "pacman/pacman.h", "json.h", "draw.h"}},
	{"python", "tanks", "bot.py", []string{"bot.py", "tanks.py", "draw.py"}},
	{"python", "snake", "snake_greedy.py", []string{"snake_greedy.py", "snake.py", "draw.py"}},
	{"python", "pacman", "pacman_runner.py", []string{"pacman_runner.py", "pacman.py", "draw.py"}},
	{"javascript", "tanks", "bot.js", []string{"bot.js", "tanks.js", "draw.js"}},
	{"javascript", "snake", "snake_greedy.js", []string{"snake_greedy.js", "snake.js", "draw.js"}},
	{"javascript", "pacman", "pacman_runner.js", []string{"pacman_runner.js", "pacman.js", "draw.js"}},
}

type starterSpec struct {
	kit, game, main string
	files           []string
}

// starters are the starters as built from starterSpecs, once. (A spec
// naming a file the kit lacks fails every test of the package.)
var starters = sync.OnceValue(func() []Starter {
	var out []Starter
	for _, spec := range starterSpecs {
		st, err := spec.starter()
		if err != nil {
			panic("botkits: " + err.Error())
		}
		out = append(out, st)
	}
	return out
})

// starter reads the spec's files from the kit.
func (spec starterSpec) starter() (Starter, error) {
	st := Starter{Kit: spec.kit, Game: spec.game, Main: spec.main}
	add := func(name, from string) error {
		data := kitFile(spec.kit + "/" + from)
		if data == nil {
			return fmt.Errorf("the %s kit's %s starter: no file %s/%s", spec.kit, spec.game, spec.kit, from)
		}
		st.Files = append(st.Files, File{Name: name, Data: data})
		return nil
	}
	names := spec.files
	if spec.kit == "go" {
		names = append([]string{"go.mod"}, names...)
		if kitFile("go/go.sum") != nil {
			names = append([]string{"go.sum"}, names...)
		}
	}
	for _, n := range names {
		var err error
		switch name, from, renamed := strings.Cut(n, "="); {
		case renamed:
			err = add(name, from)
		case strings.HasSuffix(n, "/"):
			err = spec.addFolder(n, add)
		default:
			err = add(n, n)
		}
		if err != nil {
			return Starter{}, err
		}
	}
	return st, nil
}

// addFolder adds the files of a folder of the kit (not its subfolders'),
// named as in the kit.
func (spec starterSpec) addFolder(folder string, add func(name, from string) error) error {
	n := 0
	for _, name := range kitNames() {
		rest, ok := strings.CutPrefix(name, spec.kit+"/"+folder)
		if ok && !strings.Contains(rest, "/") {
			if err := add(folder+rest, folder+rest); err != nil {
				return err
			}
			n++
		}
	}
	if n == 0 {
		return fmt.Errorf("the %s kit's %s starter: no folder %s/%s", spec.kit, spec.game, spec.kit, folder)
	}
	return nil
}

// StarterOf is kit's starter for game (an error naming the kits and
// games when there is none).
func StarterOf(kit, game string) (Starter, error) {
	for _, st := range starters() {
		if st.Kit == kit && st.Game == game {
			return st.clone(), nil
		}
	}
	return Starter{}, fmt.Errorf("no starter of kit %q for game %q: the kits are %s, the games %s",
		kit, game, strings.Join(starterKits, ", "), strings.Join(starterGames, ", "))
}

// Starters are every kit's starter for every game, in a fixed order:
// the kits go, cpp, python, javascript, each for tanks, snake, pacman.
// What a caller does to them changes no other caller's.
func Starters() []Starter {
	var out []Starter
	for _, st := range starters() {
		out = append(out, st.clone())
	}
	return out
}

// clone is a starter whose files are its own.
func (st Starter) clone() Starter {
	st.Files = slices.Clone(st.Files)
	for i := range st.Files {
		st.Files[i].Data = slices.Clone(st.Files[i].Data)
	}
	return st
}
