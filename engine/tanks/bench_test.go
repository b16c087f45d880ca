package tanks

import (
	"testing"

	"arena/engine"
)

// BenchmarkTurn measures the engine's share of a turn on the classic map:
// the state line, parsing two answers, the tick and the frame.
func BenchmarkTurn(b *testing.B) {
	m, err := loadShippedMap("classic")
	if err != nil {
		b.Fatal(err)
	}
	answers := [][]byte{[]byte(`[{"Type":0,"Direction":0}]`), []byte(`[{"Type":1,"Direction":2}]`), []byte(`[{'Type': 0, 'Direction': 3}]`), []byte(`[]`)}
	newGame := func() engine.Match {
		g, err := New().NewMatch(engine.Config{Map: m, Seed: 1, Players: []string{"arena/tanks-random", "arena/tanks-hunter"}})
		if err != nil {
			b.Fatal(err)
		}
		return g
	}
	g := newGame()
	replies := make([]engine.Reply, 2)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		st := g.Step()
		if st.Done {
			g = newGame()
			st = g.Step()
		}
		replies = replies[:len(st.Await)]
		for k, seat := range st.Await {
			replies[k] = engine.Reply{Seat: seat, Data: answers[(i+k)%len(answers)]}
		}
		g.Submit(replies)
		_ = g.Frame()
	}
}
