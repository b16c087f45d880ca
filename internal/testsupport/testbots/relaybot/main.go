// Command relaybot answers every line it reads with "ok", as a Saiblo AI
// writes: a 4-byte big-endian length, then the bytes (for relaylogic).
package main

import (
	"bufio"
	"os"
)

func main() {
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		os.Stdout.Write([]byte{0, 0, 0, 2, 'o', 'k'})
	}
}
