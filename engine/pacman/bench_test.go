package pacman

import (
	"fmt"
	"testing"

	"arena/engine"
)

// BenchmarkRound measures the engine's share of a round: both seats'
// steps and messages, parsing both answers, the round and the frame.
func BenchmarkRound(b *testing.B) {
	m, err := New().Map("saiblo")
	if err != nil {
		b.Fatal(err)
	}
	newGame := func() engine.Match {
		g, err := New().NewMatch(engine.Config{Map: m, Seed: 1, Players: []string{"runner", "ghosts"}})
		if err != nil {
			b.Fatal(err)
		}
		return g
	}
	pac := make([][]byte, 5)
	ghosts := make([][]byte, 5)
	for a := 0; a < 5; a++ {
		pac[a] = []byte(fmt.Sprintf(`{"role":0,"action":"%d"}`, a))
		ghosts[a] = []byte(fmt.Sprintf(`{"role":1,"action":"%d %d %d"}`, a, (a+1)%5, (a+2)%5))
	}
	g := newGame()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		for turn := g.Turn(); g.Turn() == turn; {
			st := g.Step()
			if st.Done {
				g = newGame()
				break
			}
			seat := st.Await[0]
			data := pac[i%5]
			if seat == 1 {
				data = ghosts[(i/5)%5]
			}
			g.Submit([]engine.Reply{{Seat: seat, Data: data}})
		}
		_ = g.Frame()
	}
}
