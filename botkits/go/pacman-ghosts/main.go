// Command pacman-ghosts plays the three ghosts: each one walks a shortest
// path, found breadth first, to where the Pac-Man is.
package main

import (
	"fmt"
	"os"

	"arena-botkit/pacman"
)

func main() {
	if err := pacman.PlayGhosts(turn); err != nil {
		fmt.Fprintln(os.Stderr, "pacman-ghosts:", err)
		os.Exit(1)
	}
}

func turn(g *pacman.Game) [3]int {
	var actions [3]int
	for j, gh := range g.Ghosts {
		actions[j] = chase(g, gh, j)
	}
	return actions
}

// chase is the first action of a shortest walk from the ghost at from to
// the Pac-Man. Each ghost tries the directions in its own order, so that
// ghosts do not all take the same one of several shortest paths.
func chase(g *pacman.Game, from pacman.Point, ghost int) int {
	if from == g.Pacman {
		return pacman.Stay
	}
	var order [4]int
	for i := range order {
		order[i] = pacman.Up + (i+ghost)%4
	}
	type node struct {
		at    pacman.Point
		first int
	}
	seen := map[pacman.Point]bool{from: true}
	var queue []node
	for _, a := range order {
		if n := from.Step(a); g.At(n) != pacman.Wall {
			seen[n] = true
			queue = append(queue, node{n, a})
		}
	}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		if cur.at == g.Pacman {
			return cur.first
		}
		for _, a := range order {
			if n := cur.at.Step(a); g.At(n) != pacman.Wall && !seen[n] {
				seen[n] = true
				queue = append(queue, node{n, cur.first})
			}
		}
	}
	return pacman.Stay
}
