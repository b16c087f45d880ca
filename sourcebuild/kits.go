package sourcebuild

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Kit is a starter kit's recipe: how a bot of its language is built and
// how its image runs it, the same as the kit's Dockerfile does.
type Kit struct {
	Name string
	// detect says whether an upload is this kit's.
	detect func(Source) bool
	// Build is the build step in the sandbox; nil where the files are the
	// bot.
	Build *Step
	// Base is the image the bot runs on; "" for an empty image holding
	// the built binary alone.
	Base string
	// Main is the file (or, for Go, the package folder) the bot starts
	// from when the upload names none.
	Main string
	// check refuses an upload the kit cannot build offline, saying why.
	check func(Source, string) error
	// run is how the image starts the bot (its entrypoint), and the
	// environment it adds, given the main file.
	run func(main string) (entrypoint, env []string)
}

// Step is a build step: a shell script run in the build image, which
// reads the upload as one line (base64 of a .tar.gz) on stdin, unpacks it
// into /tmp/src, builds, and writes the binary as one line (base64) on
// stdout; what it prints on stderr is the build's log. BOT is the main
// package or file.
type Step struct {
	Image  string
	Script string
}

// unpack is every step's start: the upload into /tmp/src, the tools'
// homes and caches under /tmp (the only place the sandbox lets a build
// write).
const unpack = `set -e
mkdir -p /tmp/src /tmp/out
cd /tmp/src
head -n 1 | base64 -d | tar -xzf -
export HOME=/tmp
`

// done is every step's end: the binary, as one line.
const done = `
base64 -w 0 /tmp/out/bot
echo
`

// Kits are the starter kits uploads are built with, in the order an
// upload's kit is told from its files.
var Kits = []Kit{
	{
		Name:   "go",
		detect: func(s Source) bool { return s.Has("go.mod") },
		Build: &Step{Image: "golang:1.26-trixie", Script: unpack + `export GOPATH=/tmp/go GOCACHE=/tmp/cache GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-buildvcs=false
echo "go build ./$BOT" >&2
go build -trimpath -ldflags="-s -w" -o /tmp/out/bot "./$BOT" >&2
` + done},
		Main: "bot",
		check: func(s Source, main string) error {
			if !s.Any(main+"/*.go") && !(main == "." && s.Any("*.go")) {
				return fmt.Errorf("no Go files in %s/: name the main package's folder (--bot, or bot= on the request)", main)
			}
			return nil
		},
		run: func(string) ([]string, []string) { return []string{"/bot"}, nil },
	},
	{
		Name:   "cpp",
		detect: cppSources,
		// The top's .cpp and .c files, and the main source when it is in
		// a folder (a Snake bot's snake/snake_main.cpp beside its
		// algorithm, a Pac-Man bot's pacman/runner.cpp), with -I. for
		// their headers; each as ./PATH: never an option, nor a response
		// file (@NAME) to g++.
		Build: &Step{Image: "gcc:15-trixie", Script: unpack + cppSteps + done},
		check: cppCheck,
		run:   func(string) ([]string, []string) { return []string{"/bot"}, nil },
	},
	{
		Name:   "python",
		detect: func(s Source) bool { return s.Any("*.py") },
		Base:   "python:3.14-slim-trixie",
		Main:   "bot.py",
		check: func(s Source, main string) error {
			if f := s.file("requirements.txt"); f != nil && strings.TrimSpace(string(f.Data)) != "" {
				return fmt.Errorf("requirements.txt cannot be installed: a build has no network; put pure-Python packages next to %s, or build the image yourself and docker push it", main)
			}
			return nil
		},
		run: func(main string) ([]string, []string) {
			return []string{"/bin/sh", "-c", `exec python3 -u "$BOT_FILE"`},
				[]string{"PYTHONDONTWRITEBYTECODE=1", "PYTHONUNBUFFERED=1", "BOT_FILE=/bot/" + main}
		},
	},
	{
		Name:   "javascript",
		detect: func(s Source) bool { return s.Any("*.js") },
		Base:   "node:24-trixie-slim",
		Main:   "bot.js",
		check: func(s Source, main string) error {
			if f := s.file("package.json"); f != nil && !s.under("node_modules") {
				var pkg struct{ Dependencies map[string]any }
				if json.Unmarshal(f.Data, &pkg) == nil && len(pkg.Dependencies) > 0 {
					return fmt.Errorf("package.json's dependencies cannot be installed: a build has no network; upload node_modules with them, or build the image yourself and docker push it")
				}
			}
			return nil
		},
		run: func(main string) ([]string, []string) {
			return []string{"/bin/sh", "-c", `exec node "$BOT_FILE"`}, []string{"NODE_ENV=production", "BOT_FILE=/bot/" + main}
		},
	},
}

// cppSteps compiles a C++ upload in /tmp/src: every .cpp and .c file at
// its top (none is fine), and BOT when it is in a folder (at the top it
// is one of them already: cppCheck holds it to .cpp or .c).
const cppSteps = `set --
for f in ./*.cpp ./*.c; do
  if [ -f "$f" ]; then set -- "$@" "$f"; fi
done
case "$BOT" in */*) set -- "$@" "./$BOT" ;; esac
echo "g++ -std=c++17 -O2 -static -I. -o bot $*" >&2
g++ -std=c++17 -O2 -static -I. -o /tmp/out/bot "$@" >&2
`

// cppSources says whether an upload is a C or C++ bot's: a .cpp file at
// its top; or, with no Python or JavaScript file there, a .c file at its
// top (the Snake starter's my_algo.c) or a .cpp file in a folder (the
// Pac-Man starter's pacman/runner.cpp).
func cppSources(s Source) bool {
	return s.Any("*.cpp") || (s.Any("*.c") || s.Any("*/*.cpp")) && !s.Any("*.py") && !s.Any("*.js")
}

// cppCheck refuses names g++ could read as options, a main source that
// is no .cpp or .c file of the upload, and an upload with nothing to
// compile.
func cppCheck(s Source, main string) error {
	if err := plainNames(s, "C++"); err != nil {
		return err
	}
	switch {
	case main != "" && !strings.HasSuffix(main, ".cpp") && !strings.HasSuffix(main, ".c"):
		return fmt.Errorf("bot %q: the main source of a C++ bot is a .cpp or .c file", main)
	case main != "" && !s.Has(main):
		return fmt.Errorf("no %s in the upload: name the bot's main source (--bot, or bot= on the request)", main)
	case main == "" && !s.Any("*.cpp") && !s.Any("*.c"):
		return fmt.Errorf("no .cpp or .c file at the upload's top: name the bot's main source (--bot, or bot= on the request), e.g. pacman/runner.cpp")
	}
	return nil
}

// plainNames refuses files whose name (or a folder's on their path)
// starts with - or @, which a compiler could take for an option or a
// response file (the C++ kit's; the others hand no uploaded name to a
// tool, and a JavaScript upload's node_modules/@scope/… must build).
func plainNames(s Source, kit string) error {
	for _, f := range s.Files {
		for _, part := range strings.Split(f.Name, "/") {
			if strings.HasPrefix(part, "-") || strings.HasPrefix(part, "@") {
				return fmt.Errorf("file %q: a name starting with - or @ is refused by the %s kit (its compiler could take it for an option); rename it", f.Name, kit)
			}
		}
	}
	return nil
}

// KitNames are the kits' names.
func KitNames() []string {
	var names []string
	for _, k := range Kits {
		names = append(names, k.Name)
	}
	return names
}

// FindKit is the kit of that name, or, with no name, the first whose files
// the upload has (Go: go.mod; C++: a .cpp file at the top, or, with no
// .py or .js file there, a .c file at the top or a .cpp file in a folder;
// Python: a .py file; JavaScript: a .js file).
func FindKit(name string, s Source) (Kit, error) {
	for _, k := range Kits {
		if name == k.Name || name == "" && k.detect(s) {
			return k, nil
		}
	}
	if name != "" {
		return Kit{}, fmt.Errorf("unknown kit %q: one of %s", name, strings.Join(KitNames(), ", "))
	}
	return Kit{}, fmt.Errorf("no kit's files in the upload (go.mod, a .cpp, .c, .py or .js file): name the kit (one of %s)", strings.Join(KitNames(), ", "))
}

// mainOf is the bot's main file or package for a kit, checked against
// the upload.
func (k Kit) mainOf(s Source, main string) (string, error) {
	if main == "" {
		main = k.Main
	}
	if k.Name == "go" && main != "" && !s.Any(main+"/*.go") && s.Any("*.go") && main == k.Main {
		main = "." // a module whose main package is at its root
	}
	if main != "" {
		if _, err := entry(main); err != nil || strings.HasPrefix(main, "-") {
			return "", fmt.Errorf("bot %q: a path inside the upload", main)
		}
	}
	if k.Build == nil && !s.Has(main) {
		return "", fmt.Errorf("no %s in the upload: name the bot's main file (--bot, or bot= on the request)", main)
	}
	if k.check != nil {
		if err := k.check(s, main); err != nil {
			return "", err
		}
	}
	return main, nil
}
