// Command snake-random moves its snake's head to a random neighbour that
// is not a wall or a snake's body, when there is one.
package main

import (
	"fmt"
	"math/rand"
	"os"

	"arena-botkit/snake"
)

func main() {
	if err := snake.Play(turn); err != nil {
		fmt.Fprintln(os.Stderr, "snake-random:", err)
		os.Exit(1)
	}
}

func turn(s *snake.State) snake.Point {
	head := s.Head()
	var free []snake.Point
	for _, n := range head.Neighbours() {
		switch s.At(n) {
		case snake.Wall, snake.Snake1, snake.Snake2:
		default:
			free = append(free, n)
		}
	}
	if len(free) == 0 {
		fmt.Fprintln(os.Stderr, "trapped")
		return head.Neighbours()[0] // every move loses: any neighbour will do
	}
	return free[rand.Intn(len(free))]
}
