package snake

import (
	"fmt"
	"testing"

	"arena/engine"
)

// loop is the cycle of cells around the rectangle rows x0..x1, columns
// y0..y1, clockwise from (x0, y0).
func loop(x0, y0, x1, y1 int) []point {
	var c []point
	for y := y0; y < y1; y++ {
		c = append(c, point{x0, y})
	}
	for x := x0; x < x1; x++ {
		c = append(c, point{x, y1})
	}
	for y := y1; y > y0; y-- {
		c = append(c, point{x1, y})
	}
	for x := x1; x > x0; x-- {
		c = append(c, point{x, y0})
	}
	return c
}

// BenchmarkRound measures the engine's share of a round on a 20×20 board
// with two 30-cell snakes: the state lines, reading both answers, the
// resolution and the frame.
func BenchmarkRound(b *testing.B) {
	m := mustMapB(b, "walls20")
	g := newMatch(m, DefaultSettings(m), 1)
	for i := range g.ground {
		if g.ground[i] != symGround { // no walls, no items
			g.ground[i] = symGround
		}
	}
	cycles := [players][]point{loop(2, 2, 7, 17), loop(12, 2, 17, 17)}
	pos := [players]int{}
	for seat, c := range cycles {
		for _, p := range g.snakes[seat].body {
			g.occ[g.index(p)] = 0
		}
		body := append([]point(nil), c[:30]...) // tail first, head at c[29]
		for _, p := range body {
			if g.ground[g.index(p)] != symGround {
				g.ground[g.index(p)] = symGround
			}
			g.occ[g.index(p)] = int8(seat + 1)
		}
		g.snakes[seat].body, g.snakes[seat].score, pos[seat] = body, 30, 29
	}
	replies := make([]engine.Reply, players)
	b.ReportAllocs()
	for b.Loop() {
		g.turn = 1 // no shrink, no round limit
		st := g.Step()
		for i, seat := range st.Await {
			pos[seat] = (pos[seat] + 1) % len(cycles[seat])
			next := cycles[seat][pos[seat]]
			replies[i] = engine.Reply{Seat: seat, Data: fmt.Appendf(replies[i].Data[:0], `{"X":%d,"Y":%d}`, next.X, next.Y)}
		}
		g.Submit(replies)
		_ = g.Frame()
		if !g.snakes[0].alive || !g.snakes[1].alive {
			b.Fatalf("a snake died: %q", reasons(g))
		}
	}
}

func mustMapB(b *testing.B, name string) *Map {
	m, err := loadShippedMap(name)
	if err != nil {
		b.Fatal(err)
	}
	return m
}
