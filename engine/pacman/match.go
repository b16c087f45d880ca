package pacman

import (
	"encoding/json"
	"fmt"
	"slices"

	"arena/engine"
)

// Fault codes, as Saiblo records them.
const (
	codeRE  = "RE"  // runtime error: crashed, killed, did not start
	codeTLE = "TLE" // no answer in time
	codeOLE = "OLE" // message too long
	codeIA  = "IA"  // illegal action
)

// faultPoints is what a fault costs the faulty seat and earns the other.
const faultPoints = 1000

// Stop reasons of the original.
const (
	stopAllBeans = "Pacman ate all the beans!!!"
	stopTimeUp   = "time is up"
	stopSameRole = "Same Role"
	stopRole     = "Role error."
)

func faultCode(s engine.Status) string {
	switch s {
	case engine.StatusTimeout:
		return codeTLE
	case engine.StatusOutputLimit:
		return codeOLE
	case engine.StatusBadOutput:
		return codeIA
	default: // crashed, oom, start_failed, or a status this engine does not know
		return codeRE
	}
}

type match struct {
	seed uint64
	s    state

	roles   [2]int // claimed by each seat's first message
	asking  int    // the seat asked next: 0, then 1, then the round is played
	moves   [2][]int
	pending []engine.Message // delivered with the next request to seat 0
	turn    int
	over    bool
	codes   [2]string // fault code per seat
	adjust  [2]int    // ±1000 of a fault ending
	endTurn int       // the turn a fault ended the match
	frame   []byte    // after the last completed turn
	// rows are the level's board rows as the frames carry them, each kept
	// until a cell of it is eaten ("" then); nil at a level's start.
	rows []string
}

func newMatch(seed uint64) *match {
	g := &match{seed: seed, roles: [2]int{roleUnknown, roleUnknown}}
	g.pending = []engine.Message{{Seat: 0, Data: []byte("0\n")}, {Seat: 1, Data: []byte("1\n")}}
	in := g.startLevel(1)
	g.frame = encodeFrame(g.idleFrame(nil, in))
	return g
}

// startLevel generates level n, queues its init line for both seats and
// returns its init object.
func (g *match) startLevel(n int) *levelInit {
	g.s.startLevel(n, generateLevel(levelRand(g.seed, n), n))
	g.rows = nil
	in := g.s.initObject()
	line := initLine(in)
	g.pending = append(g.pending, engine.Message{Seat: 0, Data: line}, engine.Message{Seat: 1, Data: line})
	return in
}

func (s *state) initObject() *levelInit {
	in := &levelInit{
		Level:             s.level,
		Round:             s.round,
		BoardSize:         s.board.size,
		Board:             make([][]int, s.board.size),
		PacmanSkillStatus: s.skills,
		PacmanCoord:       xy(s.pac),
		Score:             s.score,
		Beannumber:        s.beans,
		PortalAvailable:   s.portalOpen,
		PortalCoord:       xy(s.portal),
	}
	for x := range in.Board {
		row := make([]int, s.board.size)
		for y := range row {
			row[y] = int(s.board.at(point{x, y}))
		}
		in.Board[x] = row
	}
	for j, gh := range s.ghosts {
		in.GhostsCoord[j] = xy(gh)
	}
	return in
}

// Step implements engine.Match. A round is two exchanges: seat 0 is asked
// (after receiving what is pending: the seat lines, init lines, the other
// seat's "player 1 send info" and the last round's actions line), then seat
// 1 is asked after receiving "player 0 send info".
func (g *match) Step() engine.Step {
	if g.over {
		return engine.Step{Done: true, Send: cloneMessages(g.pending)}
	}
	if g.asking == 0 {
		return engine.Step{Send: cloneMessages(g.pending), Await: []int{0}}
	}
	return engine.Step{Send: []engine.Message{{Seat: 1, Data: []byte(infoFromSeat0)}}, Await: []int{1}}
}

func cloneMessages(ms []engine.Message) []engine.Message {
	out := make([]engine.Message, len(ms))
	for i, m := range ms {
		out[i] = engine.Message{Seat: m.Seat, Data: append([]byte(nil), m.Data...)}
	}
	return out
}

// Submit implements engine.Match: it takes the awaited seat's answer; the
// second answer plays the round.
func (g *match) Submit(replies []engine.Reply) []engine.Rejection {
	if g.over {
		return nil
	}
	seat := g.asking
	var reply *engine.Reply
	for i := range replies {
		if replies[i].Seat == seat {
			reply = &replies[i]
		}
	}
	if reply == nil {
		return nil // not the awaited answer: nothing happens
	}
	g.pending = nil // delivered by the Step that asked
	if reply.Fault != "" {
		code := faultCode(reply.Fault)
		g.fault(seat, code, fmt.Sprintf("Unexpected behavior of player %d, judger returned error type %s.", seat, code))
		return nil
	}
	role, moves, err := parseMessage(reply.Data)
	if err != nil {
		g.fault(seat, codeIA, fmt.Sprintf("Illegal action of player %d: %v", seat, err))
		return []engine.Rejection{{Seat: seat, Reason: err.Error()}}
	}
	if g.roles[seat] == roleUnknown {
		g.roles[seat] = role
	} else if role != g.roles[seat] {
		g.fault(seat, codeIA, stopRole)
		return []engine.Rejection{{Seat: seat, Reason: fmt.Sprintf("role %d differs from the role %d claimed in the first message", role, g.roles[seat])}}
	}
	g.moves[seat] = moves
	if seat == 0 {
		g.asking = 1
		return nil
	}
	g.asking = 0
	if g.roles[0] == g.roles[1] {
		g.sameRole()
		reason := fmt.Sprintf("both seats claim role %d", g.roles[0])
		return []engine.Rejection{{Seat: 0, Reason: reason}, {Seat: 1, Reason: reason}}
	}
	g.playRound()
	return nil
}

func (g *match) seatOf(role int) int {
	if g.roles[0] == role {
		return 0
	}
	return 1
}

func (g *match) playRound() {
	pacman := g.moves[g.seatOf(rolePacman)][0]
	var ghosts [3]int
	copy(ghosts[:], g.moves[g.seatOf(roleGhosts)])
	res := g.s.play(pacman, ghosts)
	g.turn++
	line := actionsLine(pacman, ghosts)
	g.pending = append(g.pending,
		engine.Message{Seat: 0, Data: []byte(infoFromSeat1)},
		engine.Message{Seat: 0, Data: line},
		engine.Message{Seat: 1, Data: line})
	f := g.playedFrame(res)
	switch {
	case res.levelOver && g.s.level < len(levels):
		f.Init = g.startLevel(g.s.level + 1)
	case res.levelOver:
		g.over = true
		stop := stopTimeUp
		if res.remaining == 0 {
			stop = stopAllBeans
		}
		f.StopReason = &stop
	}
	g.frame = encodeFrame(f)
}

// fault ends the match on a seat's fault: −1000 for it, +1000 for the other.
func (g *match) fault(seat int, code, reason string) {
	g.codes[seat] = code
	g.adjust[seat] -= faultPoints
	g.adjust[1-seat] += faultPoints
	g.abort(reason)
}

// sameRole ends the match when both seats claim the same role: both are
// illegal and both get −1000, as in the original.
func (g *match) sameRole() {
	g.codes = [2]string{codeIA, codeIA}
	g.adjust = [2]int{-faultPoints, -faultPoints}
	g.abort(stopSameRole)
}

// abort ends the match during a round: the round is not played, but the
// turn completes so that the final frame, with its stop reason, is recorded.
func (g *match) abort(reason string) {
	g.over = true
	g.turn++
	g.endTurn = g.turn
	g.pending = nil
	g.frame = encodeFrame(g.idleFrame(&reason, nil))
}

// idleFrame is a frame of a turn without a round: the current state, no
// moves.
func (g *match) idleFrame(stop *string, in *levelInit) *arenaFrame {
	s := &g.s
	f := &arenaFrame{
		Turn: g.turn,
		roundInfo: roundInfo{
			Round:           s.round,
			Level:           s.level,
			PacmanStepBlock: [][2]int{},
			PacmanCoord:     xy(s.pac),
			PacmanSkills:    s.skills,
			GhostsStepBlock: [3][][2]int{{}, {}, {}},
			Score:           s.score,
			Events:          []int{},
			PortalAvailable: s.portalOpen,
			StopReason:      stop,
		},
		BeansLeft: s.beans - s.eaten,
		Eaten:     [][2]int{},
		CaughtBy:  -1,
		Roles:     g.roles,
		Init:      in,
	}
	for j, gh := range s.ghosts {
		f.GhostsCoord[j] = xy(gh)
	}
	g.levelFields(f, nil)
	return f
}

// playedFrame is the frame of the round just played, taken before the
// next level starts.
func (g *match) playedFrame(res roundResult) *arenaFrame {
	s := &g.s
	f := &arenaFrame{
		Turn:   g.turn,
		Played: true,
		roundInfo: roundInfo{
			Round:           s.round,
			Level:           s.level,
			PacmanStepBlock: xys(res.pacPath),
			PacmanCoord:     xy(s.pac),
			PacmanSkills:    res.skills,
			Score:           s.score,
			Events:          res.events,
			PortalAvailable: s.portalOpen,
		},
		BeansLeft: res.remaining,
		Eaten:     xys(res.eatenCells),
		CaughtBy:  res.caughtBy,
		Roles:     g.roles,
	}
	for j, gh := range s.ghosts {
		f.GhostsCoord[j] = xy(gh)
		f.GhostsStepBlock[j] = xys(res.ghostPaths[j])
	}
	g.levelFields(f, res.eatenCells)
	return f
}

// levelFields sets what a frame carries so that a viewer can draw it
// alone: the invulnerability left, the level's round limit and portal
// round, and the board as it stands (the rows of the cells eaten since
// the last frame encoded anew).
func (g *match) levelFields(f *arenaFrame, eaten []point) {
	s := &g.s
	f.Invulnerable = s.invulnerable
	f.MaxRounds = s.spec.maxRounds
	f.PortalRound = s.spec.portalAt
	if g.rows == nil {
		g.rows = make([]string, s.board.size)
	}
	for _, p := range eaten {
		g.rows[p.X] = ""
	}
	for x, row := range g.rows {
		if row == "" {
			g.rows[x] = s.board.row(x)
		}
	}
	f.Board = slices.Clone(g.rows)
}

// Turn implements engine.Match: the rounds played, plus one for a round
// cut short by a fault.
func (g *match) Turn() int { return g.turn }

// Frame implements engine.Match (doc.go describes the format).
func (g *match) Frame() json.RawMessage { return append(json.RawMessage(nil), g.frame...) }

// Out implements engine.Match. Both seats play to the end: a fault ends
// the match rather than leaving a seat out.
func (g *match) Out(int) bool { return false }

// Settings implements engine.Match: there are none.
func (g *match) Settings() json.RawMessage { return json.RawMessage("{}") }

// Result implements engine.Match. A seat scores its role's score (0 before
// it claimed one) plus the ±1000 of a fault ending; the higher score wins,
// equal scores are a draw.
func (g *match) Result() engine.Result {
	r := engine.Result{Seats: make([]engine.SeatResult, 2)}
	for seat := range r.Seats {
		sr := engine.SeatResult{Score: g.adjust[seat], DeathReason: g.codes[seat]}
		if role := g.roles[seat]; role != roleUnknown {
			sr.Score += g.s.score[role]
		}
		if sr.DeathReason != "" {
			sr.DeathTurn = g.endTurn
		}
		r.Seats[seat] = sr
	}
	if g.over {
		switch a, b := r.Seats[0].Score, r.Seats[1].Score; {
		case a > b:
			r.Winners = []int{0}
		case b > a:
			r.Winners = []int{1}
		}
	}
	return r
}
