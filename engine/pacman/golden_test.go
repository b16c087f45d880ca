package pacman

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"testing"

	"arena/engine"
	"arena/internal/testsupport/golden"
)

// towards is the first move of a shortest path from `from` to the nearest
// cell where goal holds (stay if none is reachable).
func towards(b board, from point, goal func(point) bool) int {
	type node struct {
		at    point
		first int
	}
	seen := map[point]bool{from: true}
	queue := []node{{from, stay}}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		if n.at != from && goal(n.at) {
			return n.first
		}
		for a := 1; a < numActions; a++ {
			next := n.at.add(actionDelta[a])
			if seen[next] || b.at(next) == cellWall {
				continue
			}
			seen[next] = true
			first := n.first
			if n.at == from {
				first = a
			}
			queue = append(queue, node{next, first})
		}
	}
	return stay
}

// bots are deterministic stand-ins: the Pac-Man goes for the nearest bean
// or item, and for the open portal late in a level; the ghosts chase it;
// both make the odd random move.
func bots(g *match, pacmanSeat int, r *engine.Rand) func(seat, turn int) engine.Reply {
	return func(seat, turn int) engine.Reply {
		s := &g.s
		if seat == pacmanSeat {
			var m int
			switch {
			case r.IntN(10) == 0:
				m = r.IntN(numActions)
			case s.portalOpen && s.round > s.spec.maxRounds/3:
				m = towards(s.board, s.pac, func(p point) bool { return p == s.portal })
			default:
				m = towards(s.board, s.pac, func(p point) bool {
					v := s.board.at(p)
					return v >= cellBean && v <= cellFreeze
				})
			}
			return engine.Reply{Data: fmt.Appendf(nil, `{"role": 0, "action": "%d"}`, m)}
		}
		var m [3]int
		for j, gh := range s.ghosts {
			if r.IntN(4) == 0 {
				m[j] = r.IntN(numActions)
			} else {
				m[j] = towards(s.board, gh, func(p point) bool { return p == s.pac })
			}
		}
		return engine.Reply{Data: fmt.Appendf(nil, `{"role":1,"action":"%d %d %d"}`, m[0], m[1], m[2])}
	}
}

// playGolden plays a whole match and returns its transcript: the first
// frame in full; a line for every turn with events or a level start and
// every 100th, with a digest chained over all frames so far; the last frame
// in full; digests of what each seat received and of the Saiblo replay; the
// result.
func playGolden(t *testing.T, seed uint64, pacmanSeat, faultTurn int) []byte {
	t.Helper()
	m, err := New().NewMatch(engine.Config{Map: mustMap(t), Seed: seed, Players: []string{"bot0", "bot1"}})
	if err != nil {
		t.Fatal(err)
	}
	g := m.(*match)
	answer := bots(g, pacmanSeat, engine.NewRand(seed, 99))
	var out bytes.Buffer
	out.Write(g.Frame())
	out.WriteByte('\n')
	frames := []json.RawMessage{g.Frame()}
	chain := sha256.Sum256(g.Frame())
	recv := [2]*bytes.Buffer{{}, {}}
	var final engine.Step
	for steps := 0; ; steps++ {
		if steps > 5000 {
			t.Fatal("the match did not end")
		}
		st := g.Step()
		for _, msg := range st.Send {
			recv[msg.Seat].Write(msg.Data)
		}
		if st.Done {
			final = st
			break
		}
		seat, turn := st.Await[0], g.Turn()
		r := answer(seat, turn+1)
		if turn+1 == faultTurn && seat == 1 {
			r = engine.Reply{Fault: engine.StatusTimeout}
		}
		r.Seat = seat
		for _, rej := range g.Submit([]engine.Reply{r}) {
			fmt.Fprintf(&out, "rejected seat %d: %s\n", rej.Seat, rej.Reason)
		}
		if g.Turn() == turn {
			continue
		}
		raw := g.Frame()
		frames = append(frames, raw)
		chain = sha256.Sum256(append(chain[:], raw...))
		f := decodeFrame(t, raw)
		if len(f.Events) > 0 || f.Init != nil || f.Turn%100 == 0 || f.StopReason != nil {
			ev, _ := json.Marshal(f.Events)
			fmt.Fprintf(&out, "turn %d level %d round %d score %v events %s left %d chain %x\n",
				f.Turn, f.Level, f.Round, f.Score, ev, f.BeansLeft, chain[:6])
		}
	}
	out.Write(frames[len(frames)-1])
	out.WriteByte('\n')
	fmt.Fprintf(&out, "final messages %d\n", len(final.Send))
	for seat, b := range recv {
		fmt.Fprintf(&out, "seat %d received %d bytes %x\n", seat, b.Len(), sha256.Sum256(b.Bytes()))
	}
	replay, err := SaibloReplay(frames)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(&out, "saiblo replay %d lines %x\n", bytes.Count(replay, []byte("\n")), sha256.Sum256(replay))
	res, _ := json.Marshal(g.Result())
	out.Write(res)
	out.WriteByte('\n')
	return out.Bytes()
}

func TestGoldenMatches(t *testing.T) {
	for _, tt := range []struct {
		name       string
		seed       uint64
		pacmanSeat int
		faultTurn  int
	}{
		{"seed1", 1, 0, 0},
		{"seed2-pacman-on-seat1", 2, 1, 0},
		{"seed3-timeout-at-turn-700", 3, 0, 700},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := playGolden(t, tt.seed, tt.pacmanSeat, tt.faultTurn)
			if again := playGolden(t, tt.seed, tt.pacmanSeat, tt.faultTurn); !bytes.Equal(got, again) {
				t.Fatal("the same seed and answers played two different matches")
			}
			golden.Check(t, tt.name, got)
		})
	}
}
