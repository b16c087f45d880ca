// Package snake is the Snake protocol for Go bots: every round read one
// JSON state line from stdin, answer one line {"X":x,"Y":y} on stdout.
//
// A cell is (X, Y) = (row, column), both from 0; row 0 is the top row.
// The answer is the cell the head moves to: one of its four neighbours.
package snake

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
)

// Symbols of State.Mat.
const (
	Wall   = '#'
	Ground = '.'
	Apple  = 'o' // score +1
	Shield = 'O' // score +1 and a shield for 20 rounds
	Snake1 = '1' // a cell of snake 1 (State.You == 1), head included
	Snake2 = '2'
)

// Point is a cell: X the row, Y the column.
type Point struct{ X, Y int }

// Neighbours are the four cells a head can move to, in the order up (row
// −1), down, left (column −1), right.
func (p Point) Neighbours() [4]Point {
	return [4]Point{{p.X - 1, p.Y}, {p.X + 1, p.Y}, {p.X, p.Y - 1}, {p.X, p.Y + 1}}
}

// UnmarshalJSON reads a cell written [x,y].
func (p *Point) UnmarshalJSON(b []byte) error {
	var xy [2]int
	if err := json.Unmarshal(b, &xy); err != nil {
		return err
	}
	p.X, p.Y = xy[0], xy[1]
	return nil
}

// State is what the game sends every round to each living snake.
type State struct {
	Round         int      `json:"round"`           // from 1
	RoundToShrink int      `json:"round_to_shrink"` // 1: the next round starts by walling the next ring
	Rows          int      `json:"row_cnt"`
	Cols          int      `json:"col_cnt"`
	Mat           []string `json:"mat"` // Rows strings of Cols symbols
	You           int      `json:"you"` // 1 or 2: your cells are '1' or '2' in Mat

	YourX     int `json:"your_posx"`
	YourY     int `json:"your_posy"`
	OpponentX int `json:"opponent_posx"` // −1 once the opponent is dead
	OpponentY int `json:"opponent_posy"`

	// Status: −1 dead, 0 normal, k > 0 shielded for the next k rounds.
	YourStatus     int `json:"your_status"`
	OpponentStatus int `json:"opponent_status"`
	// Score is a snake's target length: while it is longer than the body,
	// the tail stays put and the snake grows.
	YourScore     int `json:"your_score"`
	OpponentScore int `json:"opponent_score"`

	YourBody     []Point `json:"your_body"` // head first
	OpponentBody []Point `json:"opponent_body"`
}

// Head is your head's cell.
func (s *State) Head() Point { return Point{s.YourX, s.YourY} }

// OpponentHead is the opponent's head; ok is false once it is dead.
func (s *State) OpponentHead() (p Point, ok bool) {
	return Point{s.OpponentX, s.OpponentY}, s.OpponentStatus >= 0 && len(s.OpponentBody) > 0
}

// Inside reports whether p is on the board.
func (s *State) Inside(p Point) bool {
	return p.X >= 0 && p.Y >= 0 && p.X < s.Rows && p.Y < s.Cols
}

// At is the symbol of a cell; outside the board is a wall.
func (s *State) At(p Point) byte {
	if !s.Inside(p) || p.X >= len(s.Mat) || p.Y >= len(s.Mat[p.X]) {
		return Wall
	}
	return s.Mat[p.X][p.Y]
}

// ShrinkPeriod is P = ⌈4·rows·cols / min(rows, cols)⌉: every P rounds the
// next ring of the board (ring 0 is the outermost one) becomes wall.
func (s *State) ShrinkPeriod() int {
	n := 4 * s.Rows * s.Cols
	d := min(s.Rows, s.Cols)
	return (n + d - 1) / d
}

// RingsClosed is how many rings are wall by now: rings 0..RingsClosed()−1.
func (s *State) RingsClosed() int {
	return min(s.Round/s.ShrinkPeriod(), (min(s.Rows, s.Cols)+1)/2)
}

// Ring is the ring a cell lies on: 0 for the outermost rows and columns.
func (s *State) Ring(p Point) int {
	return min(p.X, p.Y, s.Rows-1-p.X, s.Cols-1-p.Y)
}

// Play runs the bot: for every state line read from stdin it calls turn and
// writes the cell it returns as {"X":x,"Y":y}, flushing each answer. It
// returns when stdin ends.
func Play(turn func(s *State) Point) error {
	in := bufio.NewReaderSize(os.Stdin, 1<<16)
	out := bufio.NewWriter(os.Stdout)
	for {
		line, err := in.ReadBytes('\n')
		if err == io.EOF && len(line) == 0 {
			return nil
		}
		if err != nil && err != io.EOF {
			return err
		}
		var s State
		if err := json.Unmarshal(line, &s); err != nil {
			return fmt.Errorf("bad state line: %w", err)
		}
		p := turn(&s)
		fmt.Fprintf(out, "{\"X\":%d,\"Y\":%d}\n", p.X, p.Y)
		// Flush every round: a buffered answer never reaches the game.
		if err := out.Flush(); err != nil {
			return err
		}
	}
}
