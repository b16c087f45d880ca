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
	return []tanks.Action{{Type: rand.Intn(2), Direction: rand.Intn(4)}}
}
