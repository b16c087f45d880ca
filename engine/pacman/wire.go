package pacman

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Lines the platform sends between the answers.
const (
	infoFromSeat0 = "player 0 send info\n"
	infoFromSeat1 = "player 1 send info\n"
)

// Roles as claimed in the messages.
const (
	roleUnknown = -1
	rolePacman  = 0
	roleGhosts  = 1
)

// parseMessage reads a bot's message: {"role": 0, "action": "3"} for the
// Pac-Man, {"role": 1, "action": "1 0 4"} for the ghosts. The role is the
// number 0 or 1; the action a string of moves 0..4 separated by single
// spaces, exactly 1 of them for the Pac-Man and 3 for the ghosts. Other
// fields are ignored. Anything else is an error: an illegal action.
func parseMessage(data []byte) (role int, moves []int, err error) {
	if !utf8.Valid(data) {
		return 0, nil, errors.New("message is not valid UTF-8")
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(data, &obj); err != nil {
		return 0, nil, fmt.Errorf(`message is not a JSON object like {"role": 0, "action": "3"}: %w`, err)
	}
	if obj == nil {
		return 0, nil, errors.New(`message is null, want a JSON object like {"role": 0, "action": "3"}`)
	}
	rawRole, ok := obj["role"]
	if !ok {
		return 0, nil, errors.New(`message has no "role"`)
	}
	switch string(bytes.TrimSpace(rawRole)) {
	case "0":
		role = rolePacman
	case "1":
		role = roleGhosts
	default:
		return 0, nil, fmt.Errorf("role %s is not 0 (Pac-Man) or 1 (ghosts)", clip(rawRole))
	}
	rawAction, ok := obj["action"]
	if !ok {
		return 0, nil, errors.New(`message has no "action"`)
	}
	var action string
	if rawAction = bytes.TrimSpace(rawAction); len(rawAction) == 0 || rawAction[0] != '"' || json.Unmarshal(rawAction, &action) != nil {
		return 0, nil, fmt.Errorf("action %s is not a string", clip(rawAction))
	}
	want, who := 1, "the Pac-Man moves 1"
	if role == roleGhosts {
		want, who = 3, "the ghosts move 3"
	}
	fields := strings.Split(action, " ")
	if len(fields) != want {
		return 0, nil, fmt.Errorf("action %q has %d moves separated by single spaces, %s", clip([]byte(action)), len(fields), who)
	}
	moves = make([]int, want)
	for i, f := range fields {
		if len(f) != 1 || f[0] < '0' || f[0] > '4' {
			return 0, nil, fmt.Errorf("action %q: move %q is not one of 0 1 2 3 4", clip([]byte(action)), clip([]byte(f)))
		}
		moves[i] = int(f[0] - '0')
	}
	return role, moves, nil
}

// clip shortens what a bot sent for an error message.
func clip(b []byte) string {
	const max = 40
	if len(b) <= max {
		return string(b)
	}
	return strings.ToValidUTF8(string(b[:max]), "") + "…"
}

// actionsLine is what both seats receive after a round: the submitted
// actions, exactly as the original's json.dumps wrote them.
func actionsLine(pacman int, ghosts [3]int) []byte {
	return fmt.Appendf(nil, "{\"pacman_action\": %d, \"ghosts_action\": [%d, %d, %d]}\n", pacman, ghosts[0], ghosts[1], ghosts[2])
}

// levelInit is a level's init object: the bots' init line and the
// replay's, with the keys in the protocol's order.
type levelInit struct {
	Level             int            `json:"level"`
	Round             int            `json:"round"`
	BoardSize         int            `json:"board_size"`
	Board             [][]int        `json:"board"`
	PacmanSkillStatus [numSkills]int `json:"pacman_skill_status"`
	PacmanCoord       [2]int         `json:"pacman_coord"`
	GhostsCoord       [3][2]int      `json:"ghosts_coord"`
	Score             [2]int         `json:"score"`
	Beannumber        int            `json:"beannumber"`
	PortalAvailable   bool           `json:"portal_available"`
	PortalCoord       [2]int         `json:"portal_coord"`
}

// roundInfo is the original's per-round replay object.
type roundInfo struct {
	Round           int            `json:"round"`
	Level           int            `json:"level"`
	PacmanStepBlock [][2]int       `json:"pacman_step_block"`
	PacmanCoord     [2]int         `json:"pacman_coord"`
	PacmanSkills    [numSkills]int `json:"pacman_skills"`
	GhostsStepBlock [3][][2]int    `json:"ghosts_step_block"`
	GhostsCoord     [3][2]int      `json:"ghosts_coord"`
	Score           [2]int         `json:"score"`
	Events          []int          `json:"events"`
	PortalAvailable bool           `json:"portal_available"`
	StopReason      *string        `json:"StopReason"`
}

// arenaFrame is Match.Frame(): the round object plus what a viewer needs
// to draw the frame without any other (doc.go describes it).
type arenaFrame struct {
	Turn   int  `json:"turn"`
	Played bool `json:"played"`
	roundInfo
	BeansLeft    int        `json:"beans_left"`
	Eaten        [][2]int   `json:"eaten"`
	CaughtBy     int        `json:"caught_by"`
	Invulnerable int        `json:"invulnerable"`
	Roles        [2]int     `json:"roles"`
	MaxRounds    int        `json:"max_rounds"`
	PortalRound  int        `json:"portal_round"`
	Board        []string   `json:"board"`
	Init         *levelInit `json:"init,omitempty"`
}

// cellSymbols gives each cell value its symbol in a frame's board: wall,
// empty, bean, bonus bean, the speed, magnet, shield, double and freeze
// items, portal.
const cellSymbols = "# .osmhdf@"

// row is row x of the board as a frame carries it: the symbol of cell
// (x, y) at y.
func (b board) row(x int) string {
	var sb strings.Builder
	sb.Grow(b.size)
	for _, v := range b.cells[x*b.size : (x+1)*b.size] {
		sb.WriteByte(cellSymbols[v])
	}
	return sb.String()
}

func xy(p point) [2]int { return [2]int{p.X, p.Y} }

func xys(ps []point) [][2]int {
	out := make([][2]int, len(ps))
	for i, p := range ps {
		out[i] = xy(p)
	}
	return out
}

// writer writes JSON with the keys in a fixed order. With py set it uses
// the separators of Python's json.dumps (", " and ": "), as the original
// sent and recorded its lines; otherwise compact separators.
type writer struct {
	b  []byte
	py bool
}

func (w *writer) comma() {
	if w.py {
		w.b = append(w.b, ", "...)
	} else {
		w.b = append(w.b, ',')
	}
}

// key writes a key, preceded by a comma unless it is the first.
func (w *writer) key(first bool, k string) {
	if !first {
		w.comma()
	}
	w.b = append(w.b, '"')
	w.b = append(w.b, k...)
	w.b = append(w.b, '"', ':')
	if w.py {
		w.b = append(w.b, ' ')
	}
}

func (w *writer) int(v int) { w.b = strconv.AppendInt(w.b, int64(v), 10) }

func (w *writer) bool(v bool) { w.b = strconv.AppendBool(w.b, v) }

func (w *writer) ints(vs []int) {
	w.b = append(w.b, '[')
	for i, v := range vs {
		if i > 0 {
			w.comma()
		}
		w.int(v)
	}
	w.b = append(w.b, ']')
}

func (w *writer) pairs(ps [][2]int) {
	w.b = append(w.b, '[')
	for i, p := range ps {
		if i > 0 {
			w.comma()
		}
		w.ints(p[:])
	}
	w.b = append(w.b, ']')
}

// str writes a string as Python's json.dumps(..., ensure_ascii=False)
// does, which is also valid JSON: quotes, backslashes and control
// characters escaped, everything else as it is.
func (w *writer) str(s string) {
	s = strings.ToValidUTF8(s, "\uFFFD")
	w.b = append(w.b, '"')
	start := 0 // s[start:i] needs no escape
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		w.b = append(w.b, s[start:i]...)
		start = i + 1
		switch c {
		case '"':
			w.b = append(w.b, `\"`...)
		case '\\':
			w.b = append(w.b, `\\`...)
		case '\n':
			w.b = append(w.b, `\n`...)
		case '\r':
			w.b = append(w.b, `\r`...)
		case '\t':
			w.b = append(w.b, `\t`...)
		case '\b':
			w.b = append(w.b, `\b`...)
		case '\f':
			w.b = append(w.b, `\f`...)
		default:
			w.b = fmt.Appendf(w.b, `\u%04x`, c)
		}
	}
	w.b = append(w.b, s[start:]...)
	w.b = append(w.b, '"')
}

func (w *writer) levelInit(in *levelInit) {
	w.b = append(w.b, '{')
	w.key(true, "level")
	w.int(in.Level)
	w.key(false, "round")
	w.int(in.Round)
	w.key(false, "board_size")
	w.int(in.BoardSize)
	w.key(false, "board")
	w.b = append(w.b, '[')
	for i, row := range in.Board {
		if i > 0 {
			w.comma()
		}
		w.ints(row)
	}
	w.b = append(w.b, ']')
	w.key(false, "pacman_skill_status")
	w.ints(in.PacmanSkillStatus[:])
	w.key(false, "pacman_coord")
	w.ints(in.PacmanCoord[:])
	w.key(false, "ghosts_coord")
	w.pairs(in.GhostsCoord[:])
	w.key(false, "score")
	w.ints(in.Score[:])
	w.key(false, "beannumber")
	w.int(in.Beannumber)
	w.key(false, "portal_available")
	w.bool(in.PortalAvailable)
	w.key(false, "portal_coord")
	w.ints(in.PortalCoord[:])
	w.b = append(w.b, '}')
}

// roundFields writes the round object's fields, without the braces.
func (w *writer) roundFields(first bool, r *roundInfo) {
	w.key(first, "round")
	w.int(r.Round)
	w.key(false, "level")
	w.int(r.Level)
	w.key(false, "pacman_step_block")
	w.pairs(r.PacmanStepBlock)
	w.key(false, "pacman_coord")
	w.ints(r.PacmanCoord[:])
	w.key(false, "pacman_skills")
	w.ints(r.PacmanSkills[:])
	w.key(false, "ghosts_step_block")
	w.b = append(w.b, '[')
	for i, path := range r.GhostsStepBlock {
		if i > 0 {
			w.comma()
		}
		w.pairs(path)
	}
	w.b = append(w.b, ']')
	w.key(false, "ghosts_coord")
	w.pairs(r.GhostsCoord[:])
	w.key(false, "score")
	w.ints(r.Score[:])
	w.key(false, "events")
	w.ints(r.Events)
	w.key(false, "portal_available")
	w.bool(r.PortalAvailable)
	w.key(false, "StopReason")
	if r.StopReason == nil {
		w.b = append(w.b, "null"...)
	} else {
		w.str(*r.StopReason)
	}
}

// initLine is the level's init line as the bots receive it.
func initLine(in *levelInit) []byte {
	w := writer{py: true}
	w.levelInit(in)
	return append(w.b, '\n')
}

// roundLine is a round object as the original's replay recorded it.
func roundLine(r *roundInfo) []byte {
	w := writer{py: true}
	w.b = append(w.b, '{')
	w.roundFields(true, r)
	return append(w.b, '}', '\n')
}

// encodeFrame writes an Arena frame as compact JSON.
func encodeFrame(f *arenaFrame) []byte {
	// The board's rows and about 600 bytes of the rest.
	w := writer{b: make([]byte, 0, 600+len(f.Board)*(len(f.Board)+3))}
	w.b = append(w.b, '{')
	w.key(true, "turn")
	w.int(f.Turn)
	w.key(false, "played")
	w.bool(f.Played)
	w.roundFields(false, &f.roundInfo)
	w.key(false, "beans_left")
	w.int(f.BeansLeft)
	w.key(false, "eaten")
	w.pairs(f.Eaten)
	w.key(false, "caught_by")
	w.int(f.CaughtBy)
	w.key(false, "invulnerable")
	w.int(f.Invulnerable)
	w.key(false, "roles")
	w.ints(f.Roles[:])
	w.key(false, "max_rounds")
	w.int(f.MaxRounds)
	w.key(false, "portal_round")
	w.int(f.PortalRound)
	w.key(false, "board")
	w.b = append(w.b, '[')
	for i, row := range f.Board {
		if i > 0 {
			w.comma()
		}
		w.str(row)
	}
	w.b = append(w.b, ']')
	if f.Init != nil {
		w.key(false, "init")
		w.levelInit(f.Init)
	}
	return append(w.b, '}')
}
