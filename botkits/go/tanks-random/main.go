// Command tanks-random moves and shoots at random, like the original
// RandomBot.
package main

import (
	"fmt"
	"math/rand"
	"os"

	"arena-botkit/tanks"
)

func main() {
	err := tanks.Play(func(me string, s *tanks.State) []tanks.Action {
		return []tanks.Action{{Type: rand.Intn(2), Direction: rand.Intn(4)}}
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "tanks-random:", err)
		os.Exit(1)
	}
}
