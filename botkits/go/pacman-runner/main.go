// Command pacman-runner plays the Pac-Man: it walks to the nearest bean by
// breadth first search, keeping off the cells next to a ghost (where a
// ghost could catch it this round). With no safe bean in reach it takes
// the open portal, or else runs from the ghosts.
package main

import (
	"fmt"
	"os"

	"arena-botkit/draw"
	"arena-botkit/pacman"
)

func main() {
	if err := pacman.PlayPacman(turn); err != nil {
		fmt.Fprintln(os.Stderr, "pacman-runner:", err)
		os.Exit(1)
	}
}

func turn(g *pacman.Game) int {
	danger := dangerous(g)
	// On the board (the viewer's Annotations): the cells a ghost may
	// reach this round, and where we stand.
	for p := range danger {
		draw.Cell(p.X, p.Y, "#dc2626", "")
	}
	draw.Circle(g.Pacman.X, g.Pacman.Y, "", "")
	defer draw.Flush()
	// The portal ends the level: go there only when no bean is left in
	// reach.
	walkable := func(p pacman.Point) bool {
		return g.At(p) != pacman.Wall && !danger[p] && !(g.PortalOpen && p == g.Portal)
	}
	isBean := func(p pacman.Point) bool { v := g.At(p); return v == pacman.Bean || v == pacman.Bonus }
	if a, ok := firstStep(g, walkable, isBean); ok {
		return a
	}
	if g.PortalOpen {
		walkable = func(p pacman.Point) bool { return g.At(p) != pacman.Wall && !danger[p] }
		if a, ok := firstStep(g, walkable, func(p pacman.Point) bool { return p == g.Portal }); ok {
			fmt.Fprintln(os.Stderr, "to the portal")
			return a
		}
	}
	return flee(g)
}

// dangerous lists the cells a ghost may reach this round: its own and,
// unless the ghosts are frozen, its neighbours. Nothing is dangerous while
// the Pac-Man cannot be caught.
func dangerous(g *pacman.Game) map[pacman.Point]bool {
	danger := map[pacman.Point]bool{}
	if g.Invulnerable > 0 {
		return danger
	}
	for _, gh := range g.Ghosts {
		danger[gh] = true
		if g.Skills[pacman.SkillFreeze] == 0 {
			for a := pacman.Up; a <= pacman.Right; a++ {
				danger[gh.Step(a)] = true
			}
		}
	}
	return danger
}

// firstStep finds, breadth first over walkable cells, the first action of
// a shortest walk from the Pac-Man to a cell where goal holds.
func firstStep(g *pacman.Game, walkable, goal func(pacman.Point) bool) (int, bool) {
	type node struct {
		at    pacman.Point
		first int
	}
	seen := map[pacman.Point]bool{g.Pacman: true}
	var queue []node
	for a := pacman.Up; a <= pacman.Right; a++ {
		if n := g.Pacman.Step(a); walkable(n) {
			seen[n] = true
			queue = append(queue, node{n, a})
		}
	}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		if goal(cur.at) {
			return cur.first, true
		}
		for a := pacman.Up; a <= pacman.Right; a++ {
			if n := cur.at.Step(a); walkable(n) && !seen[n] {
				seen[n] = true
				queue = append(queue, node{n, cur.first})
			}
		}
	}
	return pacman.Stay, false
}

// flee takes the action that ends farthest from the nearest ghost.
func flee(g *pacman.Game) int {
	best, bestDist := pacman.Stay, -1
	for a := pacman.Stay; a <= pacman.Right; a++ {
		to := g.Move(g.Pacman, a)
		d := 1 << 30
		for _, gh := range g.Ghosts {
			d = min(d, abs(gh.X-to.X)+abs(gh.Y-to.Y))
		}
		if d > bestDist {
			best, bestDist = a, d
		}
	}
	return best
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}
