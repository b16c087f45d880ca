package snake

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"
)

// The state line is written by appending to one buffer: its size is known
// up front, so a round costs one allocation per line and a copy of each
// board row.

// prefixSize bounds the length of the part of the state line shared by both
// seats: the numbers and the board.
func (g *match) prefixSize() int { return 96 + g.rows*(g.cols+3) }

// seatPartSize bounds the length of a seat's own part of the state line.
func (g *match) seatPartSize() int {
	n := 256
	for i := range g.snakes {
		n += 2 * len(g.snakes[i].body) * 10
	}
	return n
}

// appendState appends seat's state line (without the final newline).
func (g *match) appendState(b []byte, seat int) []byte {
	return g.appendSeatPart(g.appendPrefix(b), seat)
}

// appendPrefix appends {"round":…,"round_to_shrink":…,"row_cnt":…,
// "col_cnt":…,"mat":[…] — the same for both seats.
func (g *match) appendPrefix(b []byte) []byte {
	r := g.turn + 1
	b = append(b, `{"round":`...)
	b = appendInt(b, r)
	b = append(b, `,"round_to_shrink":`...)
	b = appendInt(b, g.roundToShrink(r))
	b = append(b, `,"row_cnt":`...)
	b = appendInt(b, g.rows)
	b = append(b, `,"col_cnt":`...)
	b = appendInt(b, g.cols)
	b = append(b, `,"mat":`...)
	return g.appendMat(b)
}

// appendMat appends the board as a JSON array of row strings: # . o O, and
// 1 / 2 for the cells of snake 1 / 2. A wall that closed over a snake's
// segment shows as a wall (the segment is in the body lists).
func (g *match) appendMat(b []byte) []byte {
	start := len(b) + 1 // where row 0's opening quote goes
	b = append(b, '[')
	for x := range g.rows {
		if x > 0 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = append(b, g.ground[x*g.cols:(x+1)*g.cols]...)
		b = append(b, '"')
	}
	b = append(b, ']')
	for seat := range g.snakes {
		for _, p := range g.snakes[seat].body {
			if g.ground[g.index(p)] != symWall {
				b[start+p.X*(g.cols+3)+1+p.Y] = byte('1' + seat)
			}
		}
	}
	return b
}

// appendSeatPart appends the rest of seat's line, from "you" to the closing
// brace.
func (g *match) appendSeatPart(b []byte, seat int) []byte {
	me, op := &g.snakes[seat], &g.snakes[1-seat]
	b = append(b, `,"you":`...)
	b = appendInt(b, seat+1)
	mx, my := headOrNone(me)
	ox, oy := headOrNone(op)
	b = append(b, `,"your_posx":`...)
	b = appendInt(b, mx)
	b = append(b, `,"your_posy":`...)
	b = appendInt(b, my)
	b = append(b, `,"opponent_posx":`...)
	b = appendInt(b, ox)
	b = append(b, `,"opponent_posy":`...)
	b = appendInt(b, oy)
	b = append(b, `,"your_status":`...)
	b = appendInt(b, me.status())
	b = append(b, `,"opponent_status":`...)
	b = appendInt(b, op.status())
	b = append(b, `,"your_score":`...)
	b = appendInt(b, me.score)
	b = append(b, `,"opponent_score":`...)
	b = appendInt(b, op.score)
	b = append(b, `,"your_body":`...)
	b = appendBody(b, me.body)
	b = append(b, `,"opponent_body":`...)
	b = appendBody(b, op.body)
	return append(b, '}')
}

// headOrNone is a snake's head, or (−1, −1) once it is gone.
func headOrNone(s *snake) (int, int) {
	if len(s.body) == 0 {
		return -1, -1
	}
	h := s.head()
	return h.X, h.Y
}

// appendBody appends a body head first: [[x,y],…].
func appendBody(b []byte, body []point) []byte {
	b = append(b, '[')
	for i := len(body) - 1; i >= 0; i-- {
		if i < len(body)-1 {
			b = append(b, ',')
		}
		b = appendCell(b, body[i])
	}
	return append(b, ']')
}

func appendCell(b []byte, p point) []byte {
	b = append(b, '[')
	b = appendInt(b, p.X)
	b = append(b, ',')
	b = appendInt(b, p.Y)
	return append(b, ']')
}

func appendInt(b []byte, v int) []byte { return strconv.AppendInt(b, int64(v), 10) }

func itemName(kind byte) string {
	if kind == symShield {
		return "shield"
	}
	return "apple"
}

// Frame implements engine.Match; the format is described in doc.go.
func (g *match) Frame() json.RawMessage {
	b := make([]byte, 0, 512+g.prefixSize()+g.seatPartSize()+64*len(g.events))
	b = append(b, `{"round":`...)
	b = appendInt(b, g.turn)
	b = append(b, `,"rows":`...)
	b = appendInt(b, g.rows)
	b = append(b, `,"cols":`...)
	b = appendInt(b, g.cols)
	b = append(b, `,"board":`...)
	b = g.appendMat(b)
	b = append(b, `,"shrink_period":`...)
	b = appendInt(b, g.period)
	b = append(b, `,"rings":`...)
	b = appendInt(b, g.rings)
	b = append(b, `,"rings_closed":`...)
	b = appendInt(b, g.closed)
	b = append(b, `,"round_to_shrink":`...)
	b = appendInt(b, g.roundToShrink(g.turn+1))
	b = append(b, `,"over":`...)
	b = strconv.AppendBool(b, g.over)
	b = append(b, `,"snakes":[`...)
	for seat := range g.snakes {
		s := &g.snakes[seat]
		if seat > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"seat":`...)
		b = appendInt(b, seat)
		b = append(b, `,"alive":`...)
		b = strconv.AppendBool(b, s.alive)
		b = append(b, `,"body":`...)
		b = appendBody(b, s.body)
		b = append(b, `,"score":`...)
		b = appendInt(b, s.score)
		b = append(b, `,"status":`...)
		b = appendInt(b, s.status())
		b = append(b, `,"shield":`...)
		b = appendInt(b, max(0, s.status()))
		b = append(b, `,"death_reason":"`...)
		b = append(b, s.deathReason...) // a fixed word: nothing to escape
		b = append(b, `","death_round":`...)
		b = appendInt(b, s.deathRound)
		b = append(b, '}')
	}
	b = append(b, `],"items":[`...)
	first := true
	for i, c := range g.ground {
		if c != symApple && c != symShield {
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, `{"type":"`...)
		b = append(b, itemName(c)...)
		b = append(b, `","at":`...)
		b = appendCell(b, point{i / g.cols, i % g.cols})
		b = append(b, '}')
	}
	b = append(b, `],"events":[`...)
	for i, ev := range g.events {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendEvent(b, ev)
	}
	return append(b, "]}"...)
}

func appendEvent(b []byte, ev event) []byte {
	b = append(b, `{"type":"`...)
	b = append(b, ev.kind...)
	b = append(b, '"')
	switch ev.kind {
	case eventAte, eventDied:
		b = append(b, `,"seat":`...)
		b = appendInt(b, ev.seat)
	}
	switch ev.kind {
	case eventAte, eventSpawn:
		b = append(b, `,"item":"`...)
		b = append(b, itemName(ev.item)...)
		b = append(b, '"')
	case eventDied:
		b = append(b, `,"reason":"`...)
		b = append(b, ev.reason...)
		b = append(b, '"')
	case eventShrink:
		b = append(b, `,"ring":`...)
		b = appendInt(b, ev.ring)
	}
	if ev.kind != eventShrink {
		b = append(b, `,"at":`...)
		b = appendCell(b, ev.at)
	}
	if ev.hasTo {
		b = append(b, `,"to":`...)
		b = appendCell(b, ev.to)
	}
	return append(b, '}')
}

// farAway stands for a coordinate too large for an int: the move is then
// simply not a neighbour.
const farAway = 1 << 30

// parseMove reads an answer {"X":x,"Y":y}: a JSON object whose X (row) and
// Y (column) are integers; the keys' case does not matter and other keys
// are ignored. 3.0 is an integer; 3.5, "3" and null are not.
func parseMove(data []byte) (point, error) {
	if !utf8.Valid(data) {
		return point{}, errors.New("answer is not valid UTF-8")
	}
	var a struct{ X, Y json.RawMessage }
	if err := json.Unmarshal(data, &a); err != nil {
		return point{}, fmt.Errorf(`answer is not a JSON object such as {"X":3,"Y":4}: %v`, err)
	}
	x, err := coordinate("X", a.X)
	if err != nil {
		return point{}, err
	}
	y, err := coordinate("Y", a.Y)
	if err != nil {
		return point{}, err
	}
	return point{x, y}, nil
}

func coordinate(name string, raw json.RawMessage) (int, error) {
	if len(raw) == 0 {
		return 0, fmt.Errorf(`answer has no %s (want an object such as {"X":3,"Y":4})`, name)
	}
	s := string(raw)
	if c := s[0]; c == '-' || (c >= '0' && c <= '9') {
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			if n > farAway || n < -farAway {
				return farAway, nil
			}
			return int(n), nil
		}
		if f, err := strconv.ParseFloat(s, 64); err == nil && f == math.Trunc(f) {
			if math.Abs(f) > farAway {
				return farAway, nil
			}
			return int(f), nil
		}
		if _, err := strconv.ParseFloat(s, 64); errors.Is(err, strconv.ErrRange) {
			return farAway, nil // a huge exponent: not a neighbour either way
		}
	}
	if len(s) > 32 {
		cut := 32
		for !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return 0, fmt.Errorf("%s is %s, want an integer", name, s)
}
