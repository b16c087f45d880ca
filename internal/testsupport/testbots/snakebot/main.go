// Command snakebot is a Snake bot for tests that lives long: on its first
// turn it marks out a loop two rows high around its head, long enough for
// its whole body (its score plus two cells), reaching towards the board's
// middle, and then circles it. With no apples or shields (settings
// "apples":0, "shields":0) it never grows, so it lives as long as the
// walls and the other snake leave its loop alone. A blocked loop cell
// sends it to any free neighbour.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
)

// state is the part of a round's line the bot reads.
type state struct {
	Rows  int      `json:"row_cnt"`
	Cols  int      `json:"col_cnt"`
	Mat   []string `json:"mat"`
	X     int      `json:"your_posx"`
	Y     int      `json:"your_posy"`
	Score int      `json:"your_score"`
}

type point struct{ x, y int }

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<22)
	var loop []point
	for in.Scan() {
		var s state
		if err := json.Unmarshal(in.Bytes(), &s); err != nil {
			fmt.Fprintln(os.Stderr, "snakebot:", err)
			os.Exit(1)
		}
		head := point{s.X, s.Y}
		if loop == nil {
			loop = loopAround(head, s)
		}
		next := follow(loop, head)
		if !free(s, next) {
			next = anyFree(s, head)
		}
		fmt.Printf("{\"X\":%d,\"Y\":%d}\n", next.x, next.y)
	}
}

// loopAround is the 2×k rectangle's cells in cyclic order, with the head
// on it and 2k ≥ score+2.
func loopAround(head point, s state) []point {
	k := (s.Score + 3) / 2
	top := head.x
	if head.x >= s.Rows/2 {
		top = head.x - 1
	}
	left := head.y
	if head.y >= s.Cols/2 {
		left = head.y - k + 1
	}
	var loop []point
	for y := left; y < left+k; y++ {
		loop = append(loop, point{top, y})
	}
	for y := left + k - 1; y >= left; y-- {
		loop = append(loop, point{top + 1, y})
	}
	return loop
}

// follow is the loop's cell after the head's, or the head's own cell when
// the head is off the loop.
func follow(loop []point, head point) point {
	for i, p := range loop {
		if p == head {
			return loop[(i+1)%len(loop)]
		}
	}
	return head
}

func free(s state, p point) bool {
	if p.x < 0 || p.y < 0 || p.x >= s.Rows || p.y >= s.Cols || p.x >= len(s.Mat) || p.y >= len(s.Mat[p.x]) {
		return false
	}
	switch s.Mat[p.x][p.y] {
	case '.', 'o', 'O':
		return true
	}
	return false
}

func anyFree(s state, head point) point {
	for _, d := range []point{{0, 1}, {1, 0}, {0, -1}, {-1, 0}} {
		if p := (point{head.x + d.x, head.y + d.y}); free(s, p) {
			return p
		}
	}
	return point{head.x, head.y + 1}
}
