package pacman

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"arena/engine"
)

// TestKitRules ties the starter kits' copies of the rules to this package.
// The platform sends a bot no state during a level, only the actions both
// sides submitted, so every kit replays the rules to follow the game: the
// Go kit (botkits/go/pacman/rules.go), the Python kit
// (botkits/python/pacman.py), the JavaScript kit
// (botkits/javascript/pacman.js) and the C++ kit
// (botkits/cpp/pacman/pacman.h). Here the engine plays the golden files'
// matches (same seeds, same stand-in bots, the Pac-Man on either seat, a fault ending) and one
// more match whose last level ends with every bean eaten, and writes a
// transcript: what each seat read on stdin, byte for byte (the seat line,
// the init lines, "player N send info", the actions lines), what each seat
// answered, and the engine's state after every round. The Go kit's
// TestEngineTranscript (run with go test inside botkits/go),
// testdata/kitcheck.py (run with python3 on botkits/python/pacman.py),
// testdata/kitcheck.js (run with node on botkits/javascript/pacman.js) and
// testdata/kitcheck.cpp (built with g++ against botkits/cpp/pacman/pacman.h)
// feed each seat's stdin to their kit's Game, as a bot's input loop does,
// and after every actions line compare what the kit predicts with the engine's
// state after that round. The first round that differs fails the test,
// with both values of every field that differs.
//
// Compared, after every round: level, round, the Pac-Man's and the ghosts'
// cells, the score, the skills in effect next round (the shield count
// included), invulnerability, the rounds since the last catch and the
// catches since the last bonus (private to the kits, but they decide later
// scores), beans left, whether the portal is open, whether the round ended
// the level and the game, and the whole board. Not compared, because the
// kits do not model them: the paths (step blocks) and their wall bumps,
// the events, which ghost made a catch, the order in which cells were
// eaten, and the skills as they were at the start of the round.
//
// The engine's state after a round comes from the rules, not from the
// frames (their format is no part of what bots see): the round's actions
// are replayed on a copy of the state the match had before it, since the
// match starts the next level at once and a level's last round would be
// lost otherwise, and the copy is checked against the match itself after
// every round that does not end a level. The test checks too that the
// matches exercise every rule the kits copy (kitRulesCovered).
//
// The test needs go, python3, node and g++ and fails without them.
func TestKitRules(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the Go kit's rules cannot be checked without the go command: %v", err)
	}
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Fatalf("the Python kit's rules cannot be checked without python3: %v", err)
	}
	kits, err := filepath.Abs(filepath.Join("..", "..", "botkits"))
	if err != nil {
		t.Fatal(err)
	}

	var tr kitTranscript
	cov := kitCoverage{}
	rounds := 0
	for _, c := range kitCases {
		km := recordKitMatch(t, c, cov)
		rounds += len(km.Rounds)
		tr.Matches = append(tr.Matches, km)
	}
	for _, what := range cov.missing() {
		t.Errorf("the transcripts never exercise this rule: %s", what)
	}
	data, err := json.Marshal(tr)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "transcript.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	// Each checker follows both seats' stdin and says how many rounds it
	// compared, so that a checker that ran nothing cannot pass.
	compared := fmt.Sprintf("compared %d rounds", 2*rounds)

	t.Run("go", func(t *testing.T) {
		t.Parallel()
		cmd := exec.CommandContext(t.Context(), goBin, "test", "-count=1", "-v", "-run", "^TestEngineTranscript$", "./pacman")
		cmd.Dir = filepath.Join(kits, "go")
		cmd.Env = append(os.Environ(), "ARENA_PACMAN_TRANSCRIPT="+path, "GOWORK=off")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("the Go kit's rules (botkits/go/pacman/rules.go) differ from the engine's: %v\n%s", err, out)
		}
		if !strings.Contains(string(out), "--- PASS: TestEngineTranscript") || !strings.Contains(string(out), compared) {
			t.Fatalf("the Go kit's check did not run (want %q):\n%s", compared, out)
		}
	})
	t.Run("javascript", func(t *testing.T) {
		t.Parallel()
		node, err := exec.LookPath("node")
		if err != nil {
			t.Fatalf("the JavaScript kit's rules cannot be checked without node: %v", err)
		}
		cmd := exec.CommandContext(t.Context(), node, filepath.Join("testdata", "kitcheck.js"),
			filepath.Join(kits, "javascript", "pacman.js"), path)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("the JavaScript kit's rules (botkits/javascript/pacman.js) differ from the engine's: %v\n%s", err, out)
		}
		if !strings.Contains(string(out), compared) {
			t.Fatalf("the JavaScript kit's check did not run (want %q):\n%s", compared, out)
		}
	})
	t.Run("cpp", func(t *testing.T) {
		t.Parallel()
		gxx, err := exec.LookPath("g++")
		if err != nil {
			t.Fatalf("the C++ kit's rules cannot be checked without g++: %v", err)
		}
		bin := filepath.Join(t.TempDir(), "kitcheck")
		build := exec.CommandContext(t.Context(), gxx, "-std=c++11", "-O2", "-Wall", "-I", filepath.Join(kits, "cpp"),
			"-o", bin, filepath.Join("testdata", "kitcheck.cpp"))
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("building the C++ kit's check: %v\n%s", err, out)
		}
		out, err := exec.CommandContext(t.Context(), bin, path).CombinedOutput()
		if err != nil {
			t.Fatalf("the C++ kit's rules (botkits/cpp/pacman/pacman.h) differ from the engine's: %v\n%s", err, out)
		}
		if !strings.Contains(string(out), compared) {
			t.Fatalf("the C++ kit's check did not run (want %q):\n%s", compared, out)
		}
	})
	t.Run("python", func(t *testing.T) {
		t.Parallel()
		cmd := exec.CommandContext(t.Context(), python, "-B", filepath.Join("testdata", "kitcheck.py"),
			filepath.Join(kits, "python", "pacman.py"), path)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("the Python kit's rules (botkits/python/pacman.py) differ from the engine's: %v\n%s", err, out)
		}
		if !strings.Contains(string(out), compared) {
			t.Fatalf("the Python kit's check did not run (want %q):\n%s", compared, out)
		}
	})
}

// kitTranscript is the file the kits' checkers read.
type kitTranscript struct {
	Matches []kitMatch `json:"matches"`
}

// kitMatch is one match as the bots lived it.
type kitMatch struct {
	Name       string `json:"name"`
	Seed       uint64 `json:"seed"`
	PacmanSeat int    `json:"pacman_seat"`
	// Stdin is what each seat read, exactly as delivered.
	Stdin [2]string `json:"stdin"`
	// Answers are each seat's messages, without the length prefix.
	Answers [2][]string `json:"answers"`
	// Rounds are the engine's state after each round played, in the order
	// of the actions lines.
	Rounds []kitRound `json:"rounds"`
}

// kitRound is the engine's state after a round, before the next level
// starts: what the kits predict.
type kitRound struct {
	Level        int       `json:"level"`
	Round        int       `json:"round"`
	Pacman       [2]int    `json:"pacman"`
	Ghosts       [3][2]int `json:"ghosts"`
	Score        [2]int    `json:"score"`
	Skills       [5]int    `json:"skills"`
	Invulnerable int       `json:"invulnerable"`
	Survival     int       `json:"survival"`
	Catches      int       `json:"catches"`
	BeansLeft    int       `json:"beans_left"`
	PortalOpen   bool      `json:"portal_open"`
	LevelOver    bool      `json:"level_over"`
	GameOver     bool      `json:"game_over"`
	// Board lists the cells the round changed: x, y and the new value.
	Board [][3]int `json:"board"`
}

// kitCase is a match played for the transcript.
type kitCase struct {
	name       string
	seed       uint64
	pacmanSeat int
	faultTurn  int // seat 1 times out in this turn; 0: never
	bots       func(g *match, pacmanSeat int, r *engine.Rand) func(seat, turn int) engine.Reply
}

// kitCases are the golden files' matches and a sweep of the last level.
var kitCases = []kitCase{
	{"seed1", 1, 0, 0, bots},
	{"seed2-pacman-on-seat1", 2, 1, 0, bots},
	{"seed3-timeout-at-turn-700", 3, 0, 700, bots},
	{"seed3-sweeper-pacman-on-seat1", 3, 1, 0, sweeper},
}

// recordKitMatch plays a match and records its transcript.
func recordKitMatch(t *testing.T, c kitCase, cov kitCoverage) kitMatch {
	t.Helper()
	m, err := New().NewMatch(engine.Config{Map: mustMap(t), Seed: c.seed, Players: []string{"bot0", "bot1"}})
	if err != nil {
		t.Fatal(err)
	}
	g := m.(*match)
	answer := c.bots(g, c.pacmanSeat, engine.NewRand(c.seed, 99))
	km := kitMatch{Name: c.name, Seed: c.seed, PacmanSeat: c.pacmanSeat}
	var stdin [2]strings.Builder
	var moves [2][]int
	cov.note(fmt.Sprintf("the Pac-Man on seat %d", c.pacmanSeat))
	for steps := 0; ; steps++ {
		if steps > 5000 {
			t.Fatalf("%s: the match did not end", c.name)
		}
		st := g.Step()
		for _, msg := range st.Send {
			stdin[msg.Seat].Write(msg.Data)
		}
		if st.Done {
			break
		}
		seat, turn := st.Await[0], g.Turn()
		r := answer(seat, turn+1)
		if turn+1 == c.faultTurn && seat == 1 {
			r = engine.Reply{Fault: engine.StatusTimeout}
		}
		r.Seat = seat
		played := r.Fault == "" && seat == 1 // the second answer plays the round
		if r.Fault == "" {
			km.Answers[seat] = append(km.Answers[seat], string(r.Data))
			if _, moves[seat], err = parseMessage(r.Data); err != nil {
				t.Fatalf("%s: the stand-in bot of seat %d answered %s: %v", c.name, seat, r.Data, err)
			}
		}
		before := g.s.clone()
		if rej := g.Submit([]engine.Reply{r}); len(rej) > 0 {
			t.Fatalf("%s: rejected %v", c.name, rej)
		}
		if !played {
			continue
		}
		after := before.clone()
		res := after.play(moves[c.pacmanSeat][0], [3]int(moves[1-c.pacmanSeat]))
		switch {
		case !res.levelOver:
			if !reflect.DeepEqual(after, g.s) {
				t.Fatalf("%s: turn %d: the round replayed on a copy of the state differs from the match's", c.name, g.Turn())
			}
		case after.level < len(levels):
			if g.s.level != after.level+1 || g.s.score != after.score {
				t.Fatalf("%s: turn %d: level %d ended with score %v, but the match is on level %d with score %v",
					c.name, g.Turn(), after.level, after.score, g.s.level, g.s.score)
			}
		case !g.over:
			t.Fatalf("%s: turn %d: the last level ended, but the match goes on", c.name, g.Turn())
		}
		km.Rounds = append(km.Rounds, kitRoundOf(&before, &after, res))
		cov.round(&before, &after, res)
	}
	km.Stdin = [2]string{stdin[0].String(), stdin[1].String()}
	return km
}

func (s *state) clone() state {
	c := *s
	c.board.cells = slices.Clone(s.board.cells)
	return c
}

func kitRoundOf(before, after *state, res roundResult) kitRound {
	k := kitRound{
		Level:        after.level,
		Round:        after.round,
		Pacman:       [2]int{after.pac.X, after.pac.Y},
		Score:        after.score,
		Skills:       after.skills,
		Invulnerable: after.invulnerable,
		Survival:     after.survival,
		Catches:      after.catches,
		BeansLeft:    res.remaining,
		PortalOpen:   after.portalOpen,
		LevelOver:    res.levelOver,
		GameOver:     res.levelOver && after.level == len(levels),
		Board:        [][3]int{},
	}
	for j, gh := range after.ghosts {
		k.Ghosts[j] = [2]int{gh.X, gh.Y}
	}
	size := after.board.size
	for i, v := range after.board.cells {
		if v != before.board.cells[i] {
			k.Board = append(k.Board, [3]int{i / size, i % size, int(v)})
		}
	}
	return k
}

// kitCoverage counts the rules the transcripts exercise, so that a change
// of the stand-in bots cannot quietly thin the cross-check out.
type kitCoverage map[string]int

// kitRulesCovered must all happen at least once.
var kitRulesCovered = []string{
	"the Pac-Man on seat 0", "the Pac-Man on seat 1",
	"level 1", "level 2", "level 3",
	"a level left through the portal", "a level ended with every bean eaten", "a level timed out",
	"the Pac-Man bumps into a wall", "a ghost bumps into a wall",
	"the Pac-Man eaten", "a shield broken", "a catch while invulnerable", "the fifth catch's bonus",
	"the survival bonus",
	"a speed item", "a magnet item", "a shield item", "a double-score item", "a freeze item",
	"a round with speed", "a round with the magnet", "a round with double score", "a round with the ghosts frozen",
	"a magnet pickup off the Pac-Man's path",
}

func (c kitCoverage) note(what string) { c[what]++ }

func (c kitCoverage) missing() []string {
	var out []string
	for _, what := range kitRulesCovered {
		if c[what] == 0 {
			out = append(out, what)
		}
	}
	return out
}

// round notes what a round did.
func (c kitCoverage) round(before, after *state, res roundResult) {
	c.note(fmt.Sprintf("level %d", after.level))
	for _, e := range res.events {
		switch {
		case e == eventFinishedLevel && res.remaining == 0:
			c.note("a level ended with every bean eaten")
		case e == eventFinishedLevel:
			c.note("a level left through the portal")
		case e == eventTimeout:
			c.note("a level timed out")
		case e == eventShieldBroken:
			c.note("a shield broken")
		case e == eventEaten:
			c.note("the Pac-Man eaten")
			if before.catches+1 == catchBonusEvery {
				c.note("the fifth catch's bonus")
			}
		}
	}
	for _, p := range res.pacPath {
		if p.X < 0 {
			c.note("the Pac-Man bumps into a wall")
		}
	}
	for _, path := range res.ghostPaths {
		if path[len(path)-1].X < 0 {
			c.note("a ghost bumps into a wall")
		}
	}
	if res.caughtBy < 0 {
		if before.survival+1 == survivalRounds {
			c.note("the survival bonus")
		}
		if before.invulnerable > 0 && caughtAnyway(res) {
			c.note("a catch while invulnerable")
		}
	}
	for _, p := range res.eatenCells {
		name := map[int8]string{cellSpeed: "a speed item", cellMagnet: "a magnet item", cellShield: "a shield item",
			cellDouble: "a double-score item", cellFreeze: "a freeze item"}[before.board.at(p)]
		if name != "" {
			c.note(name)
		}
		if !slices.Contains(res.pacPath, p) {
			c.note("a magnet pickup off the Pac-Man's path")
		}
	}
	for k, name := range map[int]string{skillSpeed: "a round with speed", skillMagnet: "a round with the magnet",
		skillDouble: "a round with double score", skillFreeze: "a round with the ghosts frozen"} {
		if res.skills[k] > 0 {
			c.note(name)
		}
	}
}

// caughtAnyway reports whether a ghost met the Pac-Man in a round whose
// catch did not count.
func caughtAnyway(res roundResult) bool {
	pac := catchSamples(res.pacPath)
	for _, path := range res.ghostPaths {
		gh := catchSamples(path)
		for k := 1; k <= 2; k++ {
			if halfDistance(pac[k], gh[k]) <= 1 {
				return true
			}
		}
	}
	return false
}

// sweeper is a second pair of stand-ins: the Pac-Man eats what is nearest,
// around the ghosts, and leaves through the portal as soon as it opens;
// on the last level, which has none, it eats every bean. The ghosts mostly
// stand still and now and then step at random.
func sweeper(g *match, pacmanSeat int, r *engine.Rand) func(seat, turn int) engine.Reply {
	return func(seat, turn int) engine.Reply {
		s := &g.s
		if seat == pacmanSeat {
			open := s.board
			open.cells = slices.Clone(s.board.cells)
			for _, gh := range s.ghosts {
				open.set(gh, cellWall)
			}
			goal := func(p point) bool { v := s.board.at(p); return v >= cellBean && v <= cellFreeze }
			if s.portalOpen {
				goal = func(p point) bool { return p == s.portal }
			}
			m := towards(open, s.pac, goal)
			return engine.Reply{Data: fmt.Appendf(nil, `{"role": 0, "action": "%d"}`, m)}
		}
		var m [3]int
		for j := range m {
			if r.IntN(6) == 0 {
				m[j] = r.IntN(numActions)
			}
		}
		return engine.Reply{Data: fmt.Appendf(nil, `{"role": 1, "action": "%d %d %d"}`, m[0], m[1], m[2])}
	}
}
