// Command tanks-hunter stays inside the zone, dodges bullets, and hunts the
// nearest tank: it walks to a cell in line with it and shoots.
package main

import (
	"fmt"
	"os"

	"arena-botkit/tanks"
)

func main() {
	if err := tanks.Play(turn); err != nil {
		fmt.Fprintln(os.Stderr, "tanks-hunter:", err)
		os.Exit(1)
	}
}

type board struct {
	w, h  int
	cells map[tanks.Point]tanks.Content
}

func (b *board) free(p tanks.Point) bool {
	_, taken := b.cells[p]
	return p.X >= 0 && p.Y >= 0 && p.X < b.w && p.Y < b.h && !taken
}

func turn(me string, s *tanks.State) []tanks.Action {
	b := &board{cells: map[tanks.Point]tanks.Content{}}
	b.w, b.h = s.Size()
	var self *tanks.Content
	var enemies []tanks.Content
	for i, c := range s.ContentsInfo {
		b.cells[c.Coordinates] = c
		if c.Type == tanks.Tank {
			if c.UserId == me {
				self = &s.ContentsInfo[i]
			} else {
				enemies = append(enemies, c)
			}
		}
	}
	if self == nil {
		return nil
	}
	at := self.Coordinates
	safe := func(p tanks.Point) bool { return tanks.InZone(p, b.w, b.h, s.ZoneRadius-2) }

	// 1. Dodge a bullet about to hit us.
	if d, ok := threat(at, s.BulletsInfo, me); ok {
		for _, side := range sideways(d) {
			if n := at.Step(side); b.free(n) && safe(n) {
				return move(side)
			}
		}
	}
	// 2. Shoot a tank in line of fire.
	for _, e := range enemies {
		if d, ok := lineOfFire(b, at, e.Coordinates); ok {
			fmt.Fprintf(os.Stderr, "firing at %s\n", e.UserId)
			return []tanks.Action{{Type: tanks.Shoot, Direction: d}}
		}
	}
	// 3. Walk: towards the zone's centre when outside, else to a cell in
	// line with the nearest enemy.
	goal := func(p tanks.Point) bool { return safe(p) }
	if safe(at) {
		goal = func(p tanks.Point) bool {
			if !safe(p) {
				return false
			}
			for _, e := range enemies {
				if _, ok := lineOfFire(b, p, e.Coordinates); ok {
					return true
				}
			}
			return false
		}
	}
	if d, ok := firstStep(b, at, goal); ok {
		return move(d)
	}
	return nil
}

func move(d int) []tanks.Action { return []tanks.Action{{Type: tanks.Move, Direction: d}} }

func sideways(d int) []int {
	if d == tanks.Up || d == tanks.Down {
		return []int{tanks.Left, tanks.Right}
	}
	return []int{tanks.Up, tanks.Down}
}

// threat finds an enemy bullet flying at p from up to 4 cells away.
func threat(p tanks.Point, bullets []tanks.Bullet, me string) (int, bool) {
	for _, bl := range bullets {
		if bl.OwnerId == me {
			continue
		}
		q := bl.Coordinates
		for i := 0; i <= 4; i++ {
			if q == p {
				return bl.Direction, true
			}
			q = q.Step(bl.Direction)
		}
	}
	return 0, false
}

// lineOfFire says in which direction to shoot from p to hit target: same
// row or column with nothing indestructible in between (water lets bullets
// pass, barriers break).
func lineOfFire(b *board, p, target tanks.Point) (int, bool) {
	var d int
	switch {
	case p.X == target.X && p.Y < target.Y:
		d = tanks.Up
	case p.X == target.X && p.Y > target.Y:
		d = tanks.Down
	case p.Y == target.Y && p.X < target.X:
		d = tanks.Right
	case p.Y == target.Y && p.X > target.X:
		d = tanks.Left
	default:
		return 0, false
	}
	for q := p.Step(d); q != target; q = q.Step(d) {
		if c, ok := b.cells[q]; ok && (c.Type == tanks.NotDestroyable || c.Type == tanks.Tank) {
			return 0, false
		}
	}
	return d, true
}

// firstStep finds, breadth first, the first move of a shortest walk from p
// to a cell where goal holds.
func firstStep(b *board, p tanks.Point, goal func(tanks.Point) bool) (int, bool) {
	type node struct {
		at    tanks.Point
		first int
	}
	seen := map[tanks.Point]bool{p: true}
	queue := []node{}
	for d := 0; d < 4; d++ {
		if n := p.Step(d); b.free(n) {
			seen[n] = true
			queue = append(queue, node{n, d})
		}
	}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		if goal(cur.at) {
			return cur.first, true
		}
		for d := 0; d < 4; d++ {
			if n := cur.at.Step(d); b.free(n) && !seen[n] {
				seen[n] = true
				queue = append(queue, node{n, cur.first})
			}
		}
	}
	return 0, false
}
