// Command deps is a Tanks bot with a dependency from the Go module proxy
// (github.com/emirpasic/gods): the compose test copies the Go kit, adds
// this bot as the kit's README says (go get, go mod tidy) and builds it
// with the kit's Dockerfile. It ranks the other tanks by distance in a
// priority queue and goes after the nearest: it shoots when in line,
// else it steps towards it.
package main

import (
	"fmt"
	"os"

	"github.com/emirpasic/gods/queues/priorityqueue"

	"arena-botkit/tanks"
)

type target struct {
	at   tanks.Point
	dist int
}

func main() {
	if err := tanks.Play(turn); err != nil {
		fmt.Fprintln(os.Stderr, "deps:", err)
		os.Exit(1)
	}
}

func turn(me string, s *tanks.State) []tanks.Action {
	var self *tanks.Point
	for _, c := range s.ContentsInfo {
		if c.Type == 0 && c.UserId == me {
			self = &c.Coordinates
		}
	}
	if self == nil {
		return nil
	}
	q := priorityqueue.NewWith(func(a, b any) int { return a.(target).dist - b.(target).dist })
	for _, c := range s.ContentsInfo {
		if c.Type == 0 && c.UserId != me {
			q.Enqueue(target{c.Coordinates, abs(c.Coordinates.X-self.X) + abs(c.Coordinates.Y-self.Y)})
		}
	}
	v, ok := q.Dequeue()
	if !ok {
		return nil
	}
	t := v.(target)
	fmt.Fprintf(os.Stderr, "nearest of %d enemies at %v, %d cells\n", q.Size()+1, t.at, t.dist)
	switch dx, dy := t.at.X-self.X, t.at.Y-self.Y; {
	case dx == 0 && dy > 0:
		return []tanks.Action{{Type: 1, Direction: 0}}
	case dx == 0:
		return []tanks.Action{{Type: 1, Direction: 1}}
	case dy == 0 && dx < 0:
		return []tanks.Action{{Type: 1, Direction: 2}}
	case dy == 0:
		return []tanks.Action{{Type: 1, Direction: 3}}
	case abs(dx) < abs(dy) && dx < 0:
		return []tanks.Action{{Type: 0, Direction: 2}}
	case abs(dx) < abs(dy):
		return []tanks.Action{{Type: 0, Direction: 3}}
	case dy > 0:
		return []tanks.Action{{Type: 0, Direction: 0}}
	default:
		return []tanks.Action{{Type: 0, Direction: 1}}
	}
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}
