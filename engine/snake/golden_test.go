package snake

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"arena/engine"
	"arena/internal/testsupport/golden"
)

// stateLine is what a scripted bot reads of its state line.
type stateLine struct {
	Round int      `json:"round"`
	Left  int      `json:"round_to_shrink"`
	Mat   []string `json:"mat"`
	X     int      `json:"your_posx"`
	Y     int      `json:"your_posy"`
}

// scriptedAnswer is a deterministic stand-in for a bot: it reads its state
// line and moves to a neighbour with the most room behind it (keeping off
// the ring about to close), preferring an item, and answers in a few
// spellings. Now and then it blunders up.
func scriptedAnswer(t *testing.T, r *engine.Rand, line []byte) []byte {
	t.Helper()
	var s stateLine
	if err := json.Unmarshal(line, &s); err != nil {
		t.Fatalf("the state line is not JSON: %v\n%s", err, line)
	}
	passable := func(x, y int) bool {
		return x >= 0 && y >= 0 && x < len(s.Mat) && y < len(s.Mat[x]) && strings.IndexByte(".oO", s.Mat[x][y]) >= 0
	}
	dirs := [][2]int{{-1, 0}, {1, 0}, {0, -1}, {0, 1}}
	room := func(x, y int) int { // cells reachable from (x, y)
		seen := map[[2]int]bool{{x, y}: true}
		queue := [][2]int{{x, y}}
		for len(queue) > 0 {
			c := queue[0]
			queue = queue[1:]
			for _, d := range dirs {
				n := [2]int{c[0] + d[0], c[1] + d[1]}
				if passable(n[0], n[1]) && !seen[n] {
					seen[n] = true
					queue = append(queue, n)
				}
			}
		}
		return len(seen)
	}
	ring := func(x, y int) int { return min(x, y, len(s.Mat)-1-x, len(s.Mat[0])-1-y) }
	outer := len(s.Mat) // the outermost ring still open
	for x, row := range s.Mat {
		for y := range len(row) {
			if row[y] != '#' {
				outer = min(outer, ring(x, y))
			}
		}
	}
	var best, food [][2]int
	most := 0
	for _, d := range dirs {
		x, y := s.X+d[0], s.Y+d[1]
		if !passable(x, y) {
			continue
		}
		n := room(x, y)
		if s.Left <= 3 && ring(x, y) == outer {
			n /= 10 // that ring closes soon
		}
		switch {
		case n > most:
			most, best, food = n, nil, nil
			fallthrough
		case n == most:
			best = append(best, [2]int{x, y})
			if s.Mat[x][y] != '.' {
				food = append(food, [2]int{x, y})
			}
		}
	}
	to := [2]int{s.X - 1, s.Y} // no way out, or a blunder: up
	switch {
	case r.IntN(300) == 0:
	case len(food) > 0 && r.IntN(4) > 0:
		to = food[r.IntN(len(food))]
	case len(best) > 0:
		to = best[r.IntN(len(best))]
	}
	switch r.IntN(4) {
	case 0:
		return fmt.Appendf(nil, `{"x":%d,"y":%d}`, to[0], to[1])
	case 1:
		return fmt.Appendf(nil, "{ \"Y\": %d, \"X\": %d }\r", to[1], to[0])
	default:
		return fmt.Appendf(nil, `{"X":%d,"Y":%d}`, to[0], to[1])
	}
}

type goldenCase struct {
	mapName  string
	seed     uint64
	settings string
	// fault makes seat fault.seat answer badly in round fault.round.
	fault struct {
		seat, round int
		status      engine.Status // "" for garbage
	}
}

// playScripted plays a whole match through the engine.Match contract and
// returns a transcript: the settings, the first and the last frame in full,
// and for every round a digest of its frame and its events, then the
// result.
func playScripted(t *testing.T, tt goldenCase) []byte {
	t.Helper()
	match, err := New().NewMatch(engine.Config{Map: mustMap(t, tt.mapName), Seed: tt.seed, Players: []string{"bot0", "bot1"}, Settings: []byte(tt.settings)})
	if err != nil {
		t.Fatal(err)
	}
	answers := engine.NewRand(tt.seed, 99)
	var out bytes.Buffer
	fmt.Fprintf(&out, "settings %s\n", match.Settings())
	out.Write(match.Frame())
	out.WriteByte('\n')
	var last json.RawMessage
	for round := 1; ; round++ {
		if round > 5000 {
			t.Fatal("the match did not end")
		}
		st := match.Step()
		if st.Done {
			break
		}
		if match.Turn() != round-1 || len(st.Send) != len(st.Await) {
			t.Fatalf("round %d: turn %d, %d messages for %d awaited seats", round, match.Turn(), len(st.Send), len(st.Await))
		}
		replies := make([]engine.Reply, len(st.Await))
		for i, seat := range st.Await {
			if match.Out(seat) || st.Send[i].Seat != seat {
				t.Fatalf("round %d: seat %d is out or not sent to, but awaited", round, seat)
			}
			replies[i] = engine.Reply{Seat: seat, Data: scriptedAnswer(t, answers, st.Send[i].Data)}
			if seat == tt.fault.seat && round == tt.fault.round {
				replies[i].Fault = tt.fault.status
				if tt.fault.status == "" {
					replies[i].Data = []byte("left")
				}
			}
		}
		for _, rej := range match.Submit(replies) {
			fmt.Fprintf(&out, "rejected seat %d: %s\n", rej.Seat, rej.Reason)
		}
		last = match.Frame()
		var f struct {
			Round  int             `json:"round"`
			Events json.RawMessage `json:"events"`
		}
		if err := json.Unmarshal(last, &f); err != nil {
			t.Fatalf("frame %d is not JSON: %v", round, err)
		}
		if f.Round != round {
			t.Fatalf("frame of round %d says round %d", round, f.Round)
		}
		sum := sha256.Sum256(last)
		fmt.Fprintf(&out, "%d %x", f.Round, sum[:6])
		if string(f.Events) != "[]" {
			fmt.Fprintf(&out, " %s", f.Events)
		}
		out.WriteByte('\n')
	}
	out.Write(last)
	out.WriteByte('\n')
	res, _ := json.Marshal(match.Result())
	out.Write(res)
	out.WriteByte('\n')
	return out.Bytes()
}

func TestGoldenMatches(t *testing.T) {
	cases := []goldenCase{
		{mapName: "open10", seed: 1},
		{mapName: "walls20", seed: 10},
		{mapName: "corridor30x15", seed: 6, settings: `{"max_rounds":150}`}, // ends at the limit
	}
	cases[1].fault.seat, cases[1].fault.round = 0, 200 // an unreadable answer
	for _, tt := range cases {
		name := fmt.Sprintf("%s-seed%d", tt.mapName, tt.seed)
		t.Run(name, func(t *testing.T) {
			got := playScripted(t, tt)
			if again := playScripted(t, tt); !bytes.Equal(got, again) {
				t.Fatal("the same seed and answers played two different matches")
			}
			golden.Check(t, name, got)
		})
	}
}
