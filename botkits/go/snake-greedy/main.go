// Command snake-greedy heads for the nearest apple or shield by breadth
// first search. It avoids walls and bodies, the cells the opponent's head
// could enter next when a head-on would go against it, moves that leave
// too little room, and rings about to become wall. When no item is in
// reach it takes the move with the most room. When it is the stronger
// snake (shielded, or longer) and its head touches the opponent's body, it
// bites: a head entering the body of a weaker snake kills that snake.
//
// The search knows that the board changes as the snakes move: a body
// segment is gone after as many moves as there are segments behind it (plus
// the rounds the snake still grows), and a ring is only usable until it
// closes.
package main

import (
	"fmt"
	"os"

	"arena-botkit/draw"
	"arena-botkit/snake"
)

func main() {
	if err := snake.Play(turn); err != nil {
		fmt.Fprintln(os.Stderr, "snake-greedy:", err)
		os.Exit(1)
	}
}

const never = 1 << 30

// board knows when each cell can be entered: from move freeAt (1 is this
// round's move) until, but not including, move closeAt.
type board struct {
	s       *snake.State
	freeAt  []int
	mine    []bool // our body
	theirs  []bool // the opponent's body
	near    []bool // cells the opponent's head may enter this round
	closed  int    // rings already wall
	toClose int    // moves until the next ring closes
	period  int    // then one more ring every period moves
}

func newBoard(s *snake.State) *board {
	n := s.Rows * s.Cols
	b := &board{s: s, freeAt: make([]int, n), mine: make([]bool, n), theirs: make([]bool, n), near: make([]bool, n),
		closed: s.RingsClosed(), toClose: s.RoundToShrink, period: s.ShrinkPeriod()}
	for x := 0; x < s.Rows; x++ {
		for y := 0; y < s.Cols; y++ {
			if p := (snake.Point{X: x, Y: y}); s.At(p) == snake.Wall {
				b.freeAt[b.index(p)] = never
			}
		}
	}
	// Segment k of a body of length L (head first) leaves after L−k moves,
	// later while the snake grows (its score is above its length).
	mark := func(body []snake.Point, score int, owner []bool) {
		grow := max(0, score-len(body))
		for k, p := range body {
			if !s.Inside(p) {
				continue
			}
			i := b.index(p)
			owner[i] = true
			if b.freeAt[i] != never {
				b.freeAt[i] = max(b.freeAt[i], len(body)-k+grow)
			}
		}
	}
	mark(s.YourBody, s.YourScore, b.mine)
	if op, alive := s.OpponentHead(); alive {
		mark(s.OpponentBody, s.OpponentScore, b.theirs)
		for _, p := range op.Neighbours() {
			if s.Inside(p) {
				b.near[b.index(p)] = true
			}
		}
	}
	return b
}

func (b *board) index(p snake.Point) int { return p.X*b.s.Cols + p.Y }

// closeAt is the move from which p's ring is wall.
func (b *board) closeAt(p snake.Point) int {
	ring := b.s.Ring(p)
	if ring < b.closed {
		return 0
	}
	return b.toClose + (ring-b.closed)*b.period
}

// usable says whether the head may be on p after move d, when our tail
// stays put for grow more rounds than it would now (we ate on the way).
func (b *board) usable(p snake.Point, d, grow int) bool {
	if !b.s.Inside(p) {
		return false
	}
	i := b.index(p)
	free := b.freeAt[i]
	if b.mine[i] && free != never {
		free += grow
	}
	return free <= d && d < b.closeAt(p)
}

// legal: entering p with this round's move does not kill the snake.
func (b *board) legal(p snake.Point) bool {
	return b.s.Inside(p) && b.freeAt[b.index(p)] <= 1
}

// option is one possible move and what it leads to.
type option struct {
	to    snake.Point
	bite  bool // into the body of a weaker opponent: it dies
	risky bool // the opponent's head could enter it and win the head-on
	tight bool // less room behind it than our length
	doom  bool // its ring closes before we can move on
	dist  int  // moves to the nearest item after this one; −1: none in reach
	room  int  // cells reachable from it
}

// better orders options: safe first, then the nearest item, then room.
func (o option) better(p option) bool {
	if o.bite != p.bite {
		return o.bite
	}
	if o.risky != p.risky {
		return !o.risky
	}
	if o.tight != p.tight {
		return !o.tight
	}
	if o.doom != p.doom {
		return !o.doom
	}
	if (o.dist >= 0) != (p.dist >= 0) {
		return o.dist >= 0
	}
	if o.dist != p.dist {
		return o.dist < p.dist
	}
	return o.room > p.room
}

func turn(s *snake.State) snake.Point {
	b := newBoard(s)
	head := s.Head()
	defer draw.Flush() // what it drew, on the board (the viewer's Annotations)
	strong := stronger(s)
	var best *option
	for _, n := range head.Neighbours() {
		bite := strong && s.At(n) != snake.Wall && b.theirs[b.index(n)] && !b.legal(n)
		if !b.legal(n) && !bite {
			continue
		}
		o := option{to: n, bite: bite, risky: b.near[b.index(n)] && !strong, doom: !b.usable(n, 1, 0)}
		o.dist, o.room = b.explore(n, head)
		o.tight = o.room < len(s.YourBody)
		if best == nil || o.better(*best) {
			best = &o
		}
	}
	if best == nil {
		fmt.Fprintln(os.Stderr, "trapped")
		return head.Neighbours()[0] // every move loses: any neighbour will do
	}
	fmt.Fprintf(os.Stderr, "to %v item dist %d room %d\n", best.to, best.dist, best.room)
	draw.Line(head.X, head.Y, best.to.X, best.to.Y, "", fmt.Sprintf("room %d", best.room))
	return best.to
}

// stronger reports whether we win a collision, head-on or head into body:
// a shield beats no shield, then the longer body wins. On a tie a head-on
// kills both, and a head entering a body loses.
func stronger(s *snake.State) bool {
	mine, theirs := s.YourStatus > 0, s.OpponentStatus > 0
	if mine != theirs {
		return mine
	}
	return len(s.YourBody) > len(s.OpponentBody)
}

// explore searches breadth first from start, where this round's move puts
// the head. It returns the distance from start to the nearest item (−1 if
// none is reachable) and how many cells can be reached. The cells the
// opponent's head may enter count as taken: it may close a pocket's exit.
func (b *board) explore(start, head snake.Point) (dist, room int) {
	grow := 0 // eating at start keeps our tail one more round
	if c := b.s.At(start); c == snake.Apple || c == snake.Shield {
		grow = 1
	}
	seen := make([]bool, len(b.freeAt))
	seen[b.index(head)] = true
	seen[b.index(start)] = true
	type node struct {
		at snake.Point
		d  int // the move that reaches it
	}
	queue := []node{{start, 1}}
	dist = -1
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		room++
		if c := b.s.At(cur.at); dist < 0 && (c == snake.Apple || c == snake.Shield) {
			dist = cur.d - 1
		}
		for _, n := range cur.at.Neighbours() {
			if b.s.Inside(n) && !seen[b.index(n)] && !b.near[b.index(n)] && b.usable(n, cur.d+1, grow) {
				seen[b.index(n)] = true
				queue = append(queue, node{n, cur.d + 1})
			}
		}
	}
	return dist, room
}
