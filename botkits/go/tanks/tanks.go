// Package tanks is the Tanks protocol for Go bots: read a state line from
// stdin, write an action line to stdout, one turn at a time.
package tanks

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
)

// Object types (CellContentType).
const (
	Tank           = 0
	Barrier        = 1
	NotDestroyable = 2
	Water          = 3
)

// Directions.
const (
	Up    = 0
	Down  = 1
	Left  = 2
	Right = 3
)

// Action types.
const (
	Move  = 0
	Shoot = 1
)

// Point is a cell; (0,0) is the bottom-left corner, Y grows upward.
type Point struct{ X, Y int }

// Step is the neighbour of p in direction d.
func (p Point) Step(d int) Point {
	switch d {
	case Up:
		p.Y++
	case Down:
		p.Y--
	case Left:
		p.X--
	case Right:
		p.X++
	}
	return p
}

// Content is one non-empty cell.
type Content struct {
	Coordinates Point
	HealthCount int
	Type        int
	UserId      string // tanks only
}

// Bullet is a bullet in flight; it moves 2 cells per turn.
type Bullet struct {
	Coordinates Point
	Direction   int
	OwnerId     string
}

// State is what the game sends every turn.
type State struct {
	ContentsInfo []Content
	BulletsInfo  []Bullet
	ZoneRadius   int
}

// Size is the board's width and height (the outer ring included).
func (s *State) Size() (w, h int) {
	for _, c := range s.ContentsInfo {
		w = max(w, c.Coordinates.X+1)
		h = max(h, c.Coordinates.Y+1)
	}
	return w, h
}

// InZone reports whether p is inside the zone of radius r on a w×h board;
// tanks outside lose 1 health per turn.
func InZone(p Point, w, h, r int) bool {
	in := func(c, s int) bool { return s/2-r+s%2 <= c && c <= s/2+r-1 }
	return in(p.X, w) && in(p.Y, h)
}

// Action is one move or shot.
type Action struct {
	Type      int
	Direction int
}

// Play runs the bot: for every state read from stdin it calls turn and
// writes the returned actions to stdout, flushing each line. It returns
// when stdin ends.
func Play(turn func(me string, s *State) []Action) error {
	me := os.Getenv("ARENA_BOT_ID") // this bot's UserId in the match
	in := bufio.NewReaderSize(os.Stdin, 1<<20)
	out := bufio.NewWriter(os.Stdout)
	for {
		line, err := in.ReadBytes('\n')
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		var s State
		if err := json.Unmarshal(line, &s); err != nil {
			return fmt.Errorf("bad state line: %w", err)
		}
		actions := turn(me, &s)
		if actions == nil {
			actions = []Action{}
		}
		b, _ := json.Marshal(actions)
		out.Write(b)
		out.WriteByte('\n')
		// Flush every turn: a buffered answer never reaches the game.
		if err := out.Flush(); err != nil {
			return err
		}
	}
}
