package tanks

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"arena/engine"
)

// appendState appends the state as the bots receive it: compact JSON with
// the original PascalCase names, cells row by row from (0,0). Each row's
// encoding is kept until a cell of that row changes.
func (g *match) appendState(b []byte) []byte {
	b = append(b, `{"ContentsInfo":[`...)
	first := true
	for y := 0; y < g.height; y++ {
		if g.rowDirty[y] {
			g.rows[y] = g.appendRow(g.rows[y][:0], y)
			g.rowDirty[y] = false
		}
		if len(g.rows[y]) == 0 {
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, g.rows[y]...)
	}
	b = append(b, `],"BulletsInfo":[`...)
	for i, bl := range g.bullets {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendCoordinates(b, bl.at)
		b = append(b, `,"Direction":`...)
		b = appendInt(b, int(bl.dir))
		b = append(b, `,"OwnerId":`...)
		b = append(b, g.userIDs[bl.owner]...)
		b = append(b, '}')
	}
	b = append(b, `],"ZoneRadius":`...)
	b = appendInt(b, g.zone)
	return append(b, '}')
}

// appendRow encodes the non-empty cells of row y, comma-separated.
func (g *match) appendRow(b []byte, y int) []byte {
	first := true
	for x := 0; x < g.width; x++ {
		i := y*g.width + x
		c := g.cells[i]
		if c.kind == cellEmpty {
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		if s := g.static[i]; s != nil && c.kind != cellTank && c.kind != cellBarrier {
			b = append(b, s...)
			continue
		}
		b = appendCoordinates(b, point{x, y})
		b = append(b, `,"HealthCount":`...)
		b = appendInt(b, c.health)
		b = append(b, `,"Type":`...)
		b = appendInt(b, int(c.kind))
		if c.kind == cellTank {
			b = append(b, `,"UserId":`...)
			b = append(b, g.userIDs[c.seat]...)
		}
		b = append(b, '}')
	}
	return b
}

// encodeStatic encodes the cells that never change (indestructible blocks
// and water) once, for appendState.
func (g *match) encodeStatic() {
	g.static = make([][]byte, len(g.cells))
	for i, c := range g.cells {
		if c.kind != cellNotDestroyable && c.kind != cellWater {
			continue
		}
		b := appendCoordinates(nil, point{i % g.width, i / g.width})
		b = append(b, `,"HealthCount":`...)
		b = appendInt(b, c.health)
		b = append(b, `,"Type":`...)
		b = appendInt(b, int(c.kind))
		g.static[i] = append(b, '}')
	}
}

func appendCoordinates(b []byte, p point) []byte {
	b = append(b, `{"Coordinates":{"X":`...)
	b = appendInt(b, p.X)
	b = append(b, `,"Y":`...)
	b = appendInt(b, p.Y)
	return append(b, '}')
}

func appendInt(b []byte, v int) []byte { return strconv.AppendInt(b, int64(v), 10) }

// action is one parsed action. Values outside the enums are kept: such an
// action is invalid and ignored by the rules, as in the original.
type action struct {
	kind actionType
	dir  direction
}

// maxActions bounds how many actions of one answer are decoded.
const maxActions = 64

// parseActions reads a bot's answer: a JSON array of {Type, Direction}
// objects, parsed as leniently as the original server did: field names in
// any case, enum values as numbers or names, single-quoted strings and
// unquoted keys. A missing field is 0 (Move, Up), as the original's
// defaults were. Anything that is not such an array is an error.
func parseActions(line []byte) ([]action, error) {
	if !utf8.Valid(line) {
		return nil, errors.New("answer is not valid UTF-8")
	}
	p := lenientParser{s: string(line)}
	v, err := p.parseDocument()
	if err != nil {
		return nil, fmt.Errorf("answer is not a JSON array of actions: %w", err)
	}
	list, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("answer is %s, want a JSON array of actions such as [{\"Type\":1,\"Direction\":3}]", describe(v))
	}
	var acts []action
	for i, item := range list {
		obj, ok := item.(object)
		if !ok {
			return nil, fmt.Errorf("action %d is %s, want an object with Type and Direction", i, describe(item))
		}
		if i >= maxActions {
			continue
		}
		var a action
		for _, f := range obj { // in order: a repeated field's last value wins
			key, val := f.key, f.val
			switch strings.ToLower(key) {
			case "type":
				n, err := enumValue(val, actionTypeNames[:])
				if err != nil {
					return nil, fmt.Errorf("action %d: Type: %w", i, err)
				}
				a.kind = actionType(n)
			case "direction":
				n, err := enumValue(val, directionNames[:])
				if err != nil {
					return nil, fmt.Errorf("action %d: Direction: %w", i, err)
				}
				a.dir = direction(n)
			}
		}
		acts = append(acts, a)
	}
	return acts, nil
}

// enumValue reads an enum given as a number, a numeric string or a name.
// Unknown numbers are returned as they are (the action is then ignored);
// unknown names and other kinds of value are errors, as in the original.
func enumValue(v any, names []string) (int, error) {
	switch v := v.(type) {
	case float64:
		if v != math.Trunc(v) || math.Abs(v) > math.MaxInt32 {
			return 0, fmt.Errorf("%v is not an integer", v)
		}
		return int(v), nil
	case string:
		s := strings.TrimSpace(v)
		for i, n := range names {
			if strings.EqualFold(n, s) {
				return i, nil
			}
		}
		if n, err := strconv.Atoi(s); err == nil {
			return n, nil
		}
		return 0, fmt.Errorf("unknown value %q (want one of %s or its number)", v, strings.Join(names, ", "))
	default:
		return 0, fmt.Errorf("%s is not a number or a name", describe(v))
	}
}

func describe(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case float64:
		return "a number"
	case string:
		return "a string"
	case []any:
		return "an array"
	case object:
		return "an object"
	default:
		return fmt.Sprintf("%T", v)
	}
}

// lenientParser reads JSON extended with single-quoted strings and bare
// identifiers as keys or values (what the original's Newtonsoft parser
// allowed). Values are nil, bool, float64, string, []any and object.
type lenientParser struct {
	s     string
	i     int
	depth int
}

const maxDepth = 32

// object keeps an object's fields in their order, so that the outcome of a
// repeated key does not depend on map iteration.
type object []field

type field struct {
	key string
	val any
}

func (p *lenientParser) parseDocument() (any, error) {
	v, err := p.value()
	if err != nil {
		return nil, err
	}
	p.space()
	if p.i < len(p.s) {
		return nil, fmt.Errorf("unexpected %q after the value at offset %d", p.s[p.i], p.i)
	}
	return v, nil
}

func (p *lenientParser) space() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\r', '\n':
			p.i++
		default:
			return
		}
	}
}

func (p *lenientParser) value() (any, error) {
	p.space()
	if p.i >= len(p.s) {
		return nil, errors.New("unexpected end of input")
	}
	switch c := p.s[p.i]; {
	case c == '[':
		return p.array()
	case c == '{':
		return p.object()
	case c == '"' || c == '\'':
		return p.str()
	case c == '-' || c == '+' || c == '.' || (c >= '0' && c <= '9'):
		return p.number()
	case isIdentStart(c):
		id := p.ident()
		switch id {
		case "true":
			return true, nil
		case "false":
			return false, nil
		case "null":
			return nil, nil
		}
		return id, nil
	default:
		return nil, fmt.Errorf("unexpected %q at offset %d", c, p.i)
	}
}

func (p *lenientParser) enter() error {
	p.depth++
	if p.depth > maxDepth {
		return errors.New("nested too deeply")
	}
	return nil
}

func (p *lenientParser) array() (any, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer func() { p.depth-- }()
	p.i++ // '['
	list := []any{}
	for {
		p.space()
		if p.i < len(p.s) && p.s[p.i] == ']' {
			p.i++
			return list, nil
		}
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		list = append(list, v)
		p.space()
		if p.i >= len(p.s) {
			return nil, errors.New("unexpected end of input in an array")
		}
		switch p.s[p.i] {
		case ',':
			p.i++
		case ']':
			p.i++
			return list, nil
		default:
			return nil, fmt.Errorf("unexpected %q in an array at offset %d", p.s[p.i], p.i)
		}
	}
}

func (p *lenientParser) object() (any, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer func() { p.depth-- }()
	p.i++ // '{'
	obj := object{}
	for {
		p.space()
		if p.i >= len(p.s) {
			return nil, errors.New("unexpected end of input in an object")
		}
		if p.s[p.i] == '}' {
			p.i++
			return obj, nil
		}
		var key string
		switch c := p.s[p.i]; {
		case c == '"' || c == '\'':
			k, err := p.str()
			if err != nil {
				return nil, err
			}
			key = k
		case isIdentStart(c):
			key = p.ident()
		default:
			return nil, fmt.Errorf("unexpected %q where a key belongs at offset %d", c, p.i)
		}
		p.space()
		if p.i >= len(p.s) || p.s[p.i] != ':' {
			return nil, fmt.Errorf("missing ':' after key %q", key)
		}
		p.i++
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		obj = append(obj, field{key, v})
		p.space()
		if p.i >= len(p.s) {
			return nil, errors.New("unexpected end of input in an object")
		}
		switch p.s[p.i] {
		case ',':
			p.i++
		case '}':
			p.i++
			return obj, nil
		default:
			return nil, fmt.Errorf("unexpected %q in an object at offset %d", p.s[p.i], p.i)
		}
	}
}

func (p *lenientParser) str() (string, error) {
	quote := p.s[p.i]
	p.i++
	var sb strings.Builder
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c == quote:
			p.i++
			return sb.String(), nil
		case c == '\\':
			if p.i+1 >= len(p.s) {
				return "", errors.New("unterminated string")
			}
			e := p.s[p.i+1]
			p.i += 2
			switch e {
			case 'n':
				sb.WriteByte('\n')
			case 't':
				sb.WriteByte('\t')
			case 'r':
				sb.WriteByte('\r')
			case 'b':
				sb.WriteByte('\b')
			case 'f':
				sb.WriteByte('\f')
			case 'u':
				if p.i+4 > len(p.s) {
					return "", errors.New("bad \\u escape")
				}
				r, err := strconv.ParseUint(p.s[p.i:p.i+4], 16, 32)
				if err != nil {
					return "", errors.New("bad \\u escape")
				}
				sb.WriteRune(rune(r))
				p.i += 4
			default:
				sb.WriteByte(e) // \" \' \\ \/ and anything else taken literally
			}
		default:
			sb.WriteByte(c)
			p.i++
		}
	}
	return "", errors.New("unterminated string")
}

func (p *lenientParser) number() (any, error) {
	start := p.i
	for p.i < len(p.s) {
		c := p.s[p.i]
		if (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E' {
			p.i++
			continue
		}
		break
	}
	f, err := strconv.ParseFloat(p.s[start:p.i], 64)
	if err != nil {
		return nil, fmt.Errorf("bad number %q", p.s[start:p.i])
	}
	return f, nil
}

func isIdentStart(c byte) bool {
	return c == '_' || c == '$' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}

func (p *lenientParser) ident() string {
	start := p.i
	for p.i < len(p.s) {
		c := p.s[p.i]
		if isIdentStart(c) || (c >= '0' && c <= '9') {
			p.i++
			continue
		}
		break
	}
	return p.s[start:p.i]
}

// anonymousState is the turn's state line as seat sees it with
// AnonymousIDs: every other tank's UserId replaced by an id drawn for this
// seat and turn (bullets' OwnerId unchanged). The ids of a turn are drawn
// once, for every seat at once, from a stream of the seed for that turn:
// they depend on the seed and the turn only.
func (g *match) anonymousState(seat int) []byte {
	if g.anonTurn != g.turn || g.anon == nil {
		g.drawAnonymousIDs()
	}
	state := g.stateLine()
	out := make([]byte, 0, len(state))
	rest := state
	for {
		i := bytes.Index(rest, userIDKey)
		if i < 0 {
			return append(out, rest...)
		}
		i += len(userIDKey)
		out = append(out, rest[:i]...)
		rest = rest[i:]
		other := -1
		for s, id := range g.userIDs {
			if bytes.HasPrefix(rest, id) && len(rest) > len(id) && (rest[len(id)] == '}' || rest[len(id)] == ',') {
				other = s
				break
			}
		}
		if other < 0 || other == seat {
			continue
		}
		out = append(out, g.anon[seat][other]...)
		rest = rest[len(g.userIDs[other]):]
	}
}

var userIDKey = []byte(`"UserId":`)

// anonStream is the anonymous ids' stream family: "anon" and the turn.
const anonStream = 0x616e6f6e << 32

// drawAnonymousIDs draws, for each seat, an id for every other seat for
// this turn: 32 hex digits as a GUID (8-4-4-4-12), distinct from every
// real id and from each other.
func (g *match) drawAnonymousIDs() {
	n := len(g.players)
	g.anonTurn = g.turn
	r := engine.NewRand(g.seed, anonStream|uint64(g.turn))
	g.anon = make([][][]byte, n)
	used := map[string]bool{}
	for _, p := range g.players {
		used[p] = true
	}
	for s := range n {
		g.anon[s] = make([][]byte, n)
		for o := range n {
			if o == s {
				continue
			}
			for {
				id := guid(r.Uint64(), r.Uint64())
				if !used[id] {
					used[id] = true
					g.anon[s][o], _ = json.Marshal(id)
					break
				}
			}
		}
	}
}

// guid formats 128 random bits as a version 4 GUID.
func guid(hi, lo uint64) string {
	hi = hi&^(0xf<<12) | 0x4<<12 // version 4
	lo = lo&^(0x3<<62) | 0x2<<62 // RFC 4122 variant
	return fmt.Sprintf("%08x-%04x-%04x-%04x-%012x", hi>>32, hi>>16&0xffff, hi&0xffff, lo>>48, lo&0xffffffffffff)
}
