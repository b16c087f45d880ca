// Command bot is your Tanks bot: change turn and build the image with
//
//	docker build -t my_name/mega_destructor .
//
// It starts as the random bot; tanks-hunter shows a stronger strategy.
package main

import (
	"fmt"
	"math/rand"
	"os"

	"arena-botkit/draw"
	"arena-botkit/tanks"
)

func main() {
	if err := tanks.Play(turn); err != nil {
		fmt.Fprintln(os.Stderr, "bot:", err)
		os.Exit(1)
	}
}

// turn is called once per turn with this bot's id and the game state; it
// returns the action to take (only the first one is used).
func turn(me string, s *tanks.State) []tanks.Action {
	// What you print to stderr shows in the replay next to this turn.
	fmt.Fprintf(os.Stderr, "zone radius %d\n", s.ZoneRadius)
	// What you draw shows on the board (the viewer's Annotations): here,
	// a ring around this tank and a line to the nearest enemy.
	var self, nearest *tanks.Point
	for i, c := range s.ContentsInfo {
		if c.Type == tanks.Tank && c.UserId == me {
			self = &s.ContentsInfo[i].Coordinates
		}
	}
	for i, c := range s.ContentsInfo {
		if self != nil && c.Type == tanks.Tank && c.UserId != me && (nearest == nil || far(*self, c.Coordinates) < far(*self, *nearest)) {
			nearest = &s.ContentsInfo[i].Coordinates
		}
	}
	if self != nil {
		draw.Circle(self.X, self.Y, "", "me")
		if nearest != nil {
			draw.Line(self.X, self.Y, nearest.X, nearest.Y, "", fmt.Sprint(far(*self, *nearest)))
		}
	}
	draw.Flush()
	return []tanks.Action{{Type: rand.Intn(2), Direction: rand.Intn(4)}}
}

// far is how many steps apart two cells are.
func far(a, b tanks.Point) int {
	d := func(n int) int {
		if n < 0 {
			return -n
		}
		return n
	}
	return d(a.X-b.X) + d(a.Y-b.Y)
}
