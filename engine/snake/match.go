package snake

import (
	"encoding/json"

	"arena/engine"
)

// point is a cell: X is the row, Y the column, both from 0.
type point struct{ X, Y int }

func (p point) adjacent(q point) bool {
	dx, dy := p.X-q.X, p.Y-q.Y
	return (dx == 0 && (dy == 1 || dy == -1)) || (dy == 0 && (dx == 1 || dx == -1))
}

// Death reasons, as recorded in the result.
const (
	reasonInvalid      = "invalid"
	reasonWall         = "wall"
	reasonSelf         = "self"
	reasonHeadOn       = "head_on"
	reasonOpponentBody = "opponent_body"
	reasonOpponentHead = "opponent_head"
	reasonTimeout      = "timeout"
	reasonCrashed      = "crashed"
	reasonBadOutput    = "bad_output"
)

// faultReason maps a bot fault to the death reason it causes.
func faultReason(f engine.Status) string {
	switch f {
	case engine.StatusTimeout:
		return reasonTimeout
	case engine.StatusBadOutput, engine.StatusOutputLimit:
		return reasonBadOutput
	default: // crashed, oom, start_failed, and any status added later
		return reasonCrashed
	}
}

// Random streams of a match: independent sequences from the one seed.
const (
	streamSpawn = 0x736e616b65_01 // "snake" 1: the heads' start cells
	streamItems = 0x736e616b65_02 // "snake" 2: where items appear
)

type snake struct {
	body        []point // tail first, head last; empty once dead
	score       int     // the target length
	shield      int     // shield rounds left
	alive       bool
	deathRound  int
	deathReason string
}

func (s *snake) head() point { return s.body[len(s.body)-1] }
func (s *snake) tail() point { return s.body[0] }

// growing: the tail stays this round.
func (s *snake) growing() bool { return s.score > len(s.body) }

// status is the wire status: −1 dead, 0 normal, k > 0 shield rounds left.
func (s *snake) status() int {
	if !s.alive {
		return -1
	}
	return s.shield
}

// Event types of a frame.
const (
	eventAte    = "ate"
	eventDied   = "died"
	eventShrink = "shrink"
	eventSpawn  = "spawn"
)

type event struct {
	kind   string
	seat   int
	item   byte
	reason string
	at     point
	to     point
	hasTo  bool
	ring   int
}

// move is a seat's answer for one round: a target cell, or the death reason
// of a fault.
type move struct {
	to    point
	fault string
}

type match struct {
	settings   Settings
	rows, cols int
	period     int // the shrink period P
	rings      int // how many rings the board has
	closed     int // how many rings have been painted wall
	// ground is each cell's wall, item or ground symbol ('#', 'o', 'O', '.');
	// occ is the seat+1 of the snake on it, or 0. A snake segment can lie
	// under a ring that closed on it.
	ground  []byte
	occ     []int8
	snakes  [players]snake
	items   *engine.Rand
	pending []byte // items that found no free cell yet, in order
	turn    int
	over    bool
	winners []int
	events  []event
}

func newMatch(m *Map, s Settings, seed uint64) *match {
	g := &match{
		settings: s,
		rows:     m.rows,
		cols:     m.cols,
		period:   ceilDiv(4*m.rows*m.cols, min(m.rows, m.cols)),
		rings:    ceilDiv(min(m.rows, m.cols), 2),
		ground:   make([]byte, len(m.cells)),
		occ:      make([]int8, len(m.cells)),
		items:    engine.NewRand(seed, streamItems),
	}
	for i, c := range m.cells {
		switch c {
		case symWall, symApple, symShield:
			g.ground[i] = c
		default: // ground and start regions
			g.ground[i] = symGround
		}
	}
	spawn := engine.NewRand(seed, streamSpawn)
	first := m.regions[0]
	if r := m.regions[1]; len(r) == 1 {
		first = without(first, r[0]) // leave snake 2 its only cell
	}
	heads := [players]point{first[spawn.IntN(len(first))]}
	second := without(m.regions[1], heads[0])
	heads[1] = second[spawn.IntN(len(second))]
	length := ceilDiv(3*(m.rows+m.cols), 8)
	for seat, h := range heads {
		g.snakes[seat] = snake{body: []point{h}, score: length, alive: true}
		g.occ[g.index(h)] = int8(seat + 1)
	}
	if m.apples+m.shields == 0 {
		g.placeInitialItems(s.Apples, s.Shields)
	}
	g.startRound(1)
	return g
}

func without(cells []point, p point) []point {
	out := make([]point, 0, len(cells))
	for _, c := range cells {
		if c != p {
			out = append(out, c)
		}
	}
	return out
}

func (g *match) index(p point) int { return p.X*g.cols + p.Y }

func (g *match) inside(p point) bool {
	return p.X >= 0 && p.Y >= 0 && p.X < g.rows && p.Y < g.cols
}

// ringOf is a cell's ring: 0 for the outermost rows and columns.
func (g *match) ringOf(p point) int {
	return min(p.X, p.Y, g.rows-1-p.X, g.cols-1-p.Y)
}

// roundToShrink is what the bots see in round r: 1 means that the next
// round starts with a shrink.
func (g *match) roundToShrink(r int) int { return g.period - r%g.period }

// occupies reports whether snake seat holds p this round, its tail freed
// when it is not growing.
func (g *match) occupies(seat int, p point, growing bool) bool {
	s := &g.snakes[seat]
	if g.occ[g.index(p)] != int8(seat+1) {
		return false
	}
	return growing || p != s.tail()
}

// stronger compares two snakes for a collision: a shield beats no shield,
// then the longer body wins. It returns +1, 0 or −1.
func (g *match) stronger(i, j int) int {
	a, b := &g.snakes[i], &g.snakes[j]
	if (a.shield > 0) != (b.shield > 0) {
		if a.shield > 0 {
			return 1
		}
		return -1
	}
	switch {
	case len(a.body) > len(b.body):
		return 1
	case len(a.body) < len(b.body):
		return -1
	}
	return 0
}

// startRound begins round r: the next ring closes when r is a multiple of
// the shrink period. Items on it respawn inside.
func (g *match) startRound(r int) {
	if r%g.period != 0 || g.closed >= g.rings {
		return
	}
	ring := g.closed
	g.closed++
	g.events = append(g.events, event{kind: eventShrink, ring: ring})
	var swallowed []byte
	for x := range g.rows {
		for y := range g.cols {
			p := point{x, y}
			if g.ringOf(p) != ring {
				continue
			}
			i := g.index(p)
			if c := g.ground[i]; c == symApple || c == symShield {
				swallowed = append(swallowed, c)
			}
			g.ground[i] = symWall
		}
	}
	for _, kind := range swallowed {
		g.spawnItem(kind)
	}
}

// placeInitialItems puts the apples, then the shields, on distinct random
// free cells (those that do not fit wait, pending).
func (g *match) placeInitialItems(apples, shields int) {
	var free []int
	for i, c := range g.ground {
		if c == symGround && g.occ[i] == 0 {
			free = append(free, i)
		}
	}
	for n := range apples + shields {
		kind := byte(symApple)
		if n >= apples {
			kind = symShield
		}
		if len(free) == 0 {
			g.pending = append(g.pending, kind)
			continue
		}
		k := g.items.IntN(len(free))
		g.ground[free[k]] = kind
		free[k] = free[len(free)-1]
		free = free[:len(free)-1]
	}
}

// freeCell draws a cell inside the current ring that is ground and holds no
// snake and no item.
func (g *match) freeCell() (point, bool) {
	free := 0
	for i, c := range g.ground {
		if c == symGround && g.occ[i] == 0 {
			free++
		}
	}
	if free == 0 {
		return point{}, false
	}
	k := g.items.IntN(free)
	for i, c := range g.ground {
		if c == symGround && g.occ[i] == 0 {
			if k == 0 {
				return point{i / g.cols, i % g.cols}, true
			}
			k--
		}
	}
	return point{}, false // unreachable: the count above found k+1 cells
}

// spawnItem places an item on a free cell, or keeps it pending while the
// board has none.
func (g *match) spawnItem(kind byte) {
	p, ok := g.freeCell()
	if !ok {
		g.pending = append(g.pending, kind)
		return
	}
	g.ground[g.index(p)] = kind
	g.events = append(g.events, event{kind: eventSpawn, item: kind, at: p})
}

func (g *match) placePending() {
	for len(g.pending) > 0 {
		p, ok := g.freeCell()
		if !ok {
			return
		}
		kind := g.pending[0]
		g.pending = g.pending[1:]
		g.ground[g.index(p)] = kind
		g.events = append(g.events, event{kind: eventSpawn, item: kind, at: p})
	}
}

// stage is one named step of a round: a rule applied to the match.
type stage struct {
	name string
	run  func(g *match, t *turn)
}

// snakeStages are the steps of a round, applied in this order. The deaths
// are decided on the board before anyone moves; then the survivors move
// and eat, the dead leave the board, and the next round's shrink follows.
var snakeStages = []stage{
	{"check moves", checkMoves},
	{"collide", collide},
	{"crush", crush},
	{"die", die},
	{"move", moveSnakes},
	{"eat", eat},
	{"count down shields", countDownShields},
	{"remove dead", removeDead},
	{"place pending", placeWaiting},
	{"end round", endRound},
	{"shrink", shrinkNext},
}

// turn is what the stages of one round share: the round, the moves, and
// what the checks decided.
type turn struct {
	round   int
	moves   [players]move
	reason  [players]string // why the snake dies this round, or ""
	passed  [players]bool   // passed its own checks: it moves unless a collision kills it
	growing [players]bool   // its tail stays this round
	crushed [players]bool   // its body was entered by a stronger head
}

// play plays one round (the shrink that starts it is already done) with
// each living seat's move, then starts the next round unless the game is
// over.
func (g *match) play(moves [players]move) {
	g.events = g.events[:0]
	t := &turn{round: g.turn + 1, moves: moves}
	for _, st := range snakeStages {
		st.run(g, t)
	}
}

// checkMoves applies each living snake's own checks: a fault, a target not
// next to the head, a wall, or its own body kills it. Every check reads the
// board before anyone moves, with the tails of the snakes that are not
// growing freed.
func checkMoves(g *match, t *turn) {
	for i := range g.snakes {
		s := &g.snakes[i]
		if !s.alive {
			continue
		}
		t.growing[i] = s.growing()
		to := t.moves[i].to
		switch {
		case t.moves[i].fault != "":
			t.reason[i] = t.moves[i].fault
		case !s.head().adjacent(to):
			t.reason[i] = reasonInvalid
		case !g.inside(to) || g.ground[g.index(to)] == symWall:
			t.reason[i] = reasonWall
		case g.occupies(i, to, t.growing[i]):
			t.reason[i] = reasonSelf
		default:
			t.passed[i] = true
		}
	}
}

// collide checks each head that passed its own checks against the other
// snakes still on the board, until one collision kills it.
func collide(g *match, t *turn) {
	for i := range g.snakes {
		if !t.passed[i] {
			continue
		}
		for j := range g.snakes {
			if j != i && g.snakes[j].alive && t.reason[i] == "" {
				g.meet(t, i, j)
			}
		}
	}
}

// meet decides head i against snake j. Two heads on one cell: the weaker
// dies, and both when equal. A head entering j's body: a stronger head
// crushes j, a weaker or equal one dies.
func (g *match) meet(t *turn, i, j int) {
	to := t.moves[i].to
	switch {
	case t.passed[j] && t.moves[j].to == to: // head-on
		if g.stronger(i, j) <= 0 {
			t.reason[i] = reasonHeadOn
		}
	case g.occupies(j, to, t.growing[j]): // into j's body
		if g.stronger(i, j) > 0 {
			t.crushed[j] = true
		} else {
			t.reason[i] = reasonOpponentBody
		}
	}
}

// crush kills a snake whose body a stronger head entered, unless it already
// dies of something else.
func crush(_ *match, t *turn) {
	for j := range t.crushed {
		if t.crushed[j] && t.reason[j] == "" {
			t.reason[j] = reasonOpponentHead
		}
	}
}

// die records this round's deaths, in seat order. A dead snake stays on
// the board until removeDead.
func die(g *match, t *turn) {
	for i := range g.snakes {
		if t.reason[i] == "" {
			continue
		}
		s := &g.snakes[i]
		s.alive, s.deathRound, s.deathReason = false, t.round, t.reason[i]
		ev := event{kind: eventDied, seat: i, reason: t.reason[i], at: s.head()}
		if t.moves[i].fault == "" {
			ev.to, ev.hasTo = t.moves[i].to, true
		}
		g.events = append(g.events, ev)
	}
}

// moveSnakes moves the survivors: tails first, then heads. The tail of a
// growing snake stays.
func moveSnakes(g *match, t *turn) {
	for i := range g.snakes {
		if s := &g.snakes[i]; s.alive && !t.growing[i] {
			if k := g.index(s.tail()); g.occ[k] == int8(i+1) {
				g.occ[k] = 0
			}
			s.body = s.body[1:]
		}
	}
	for i := range g.snakes {
		if s := &g.snakes[i]; s.alive {
			s.body = append(s.body, t.moves[i].to)
			g.occ[g.index(t.moves[i].to)] = int8(i + 1)
		}
	}
}

// eat gives each living head the item on its cell. An item adds one to the
// score, a shield also sets the shield counter, and the item appears again
// on a free cell.
func eat(g *match, _ *turn) {
	for i := range g.snakes {
		s := &g.snakes[i]
		if !s.alive {
			continue
		}
		k := g.index(s.head())
		kind := g.ground[k]
		if kind != symApple && kind != symShield {
			continue
		}
		g.ground[k] = symGround
		s.score++
		if kind == symShield {
			s.shield = g.settings.ShieldRounds
		}
		g.events = append(g.events, event{kind: eventAte, seat: i, item: kind, at: s.head()})
		g.spawnItem(kind)
	}
}

// countDownShields takes one round off each living snake's shield, also in
// the round it was picked up.
func countDownShields(g *match, _ *turn) {
	for i := range g.snakes {
		if s := &g.snakes[i]; s.alive {
			s.shield = max(0, s.shield-1)
		}
	}
}

// removeDead takes the snakes that died this round off the board.
func removeDead(g *match, t *turn) {
	for i := range g.snakes {
		if t.reason[i] == "" {
			continue // alive, or died in an earlier round
		}
		s := &g.snakes[i]
		for _, p := range s.body {
			if k := g.index(p); g.occ[k] == int8(i+1) {
				g.occ[k] = 0
			}
		}
		s.body, s.shield = nil, 0
	}
}

// placeWaiting puts the items that waited for room on the cells freed this
// round.
func placeWaiting(g *match, _ *turn) { g.placePending() }

// endRound counts the round as played. The game is over when at most one
// snake is alive or the round limit is reached.
func endRound(g *match, t *turn) {
	g.turn = t.round
	alive := g.aliveSeats()
	if len(alive) <= 1 || t.round >= g.settings.MaxRounds {
		g.over = true
		g.winners = g.decide(alive, t.round)
	}
}

// shrinkNext starts the next round unless the game is over, so that the
// bots see its shrink before they move.
func shrinkNext(g *match, t *turn) {
	if !g.over {
		g.startRound(t.round + 1)
	}
}

func (g *match) aliveSeats() []int {
	var seats []int
	for seat := range g.snakes {
		if g.snakes[seat].alive {
			seats = append(seats, seat)
		}
	}
	return seats
}

// decide names the winners after round r: the last snake alive; when
// several are alive at the limit, or all died together in round r, the
// highest score, and a draw (no winner) when it is shared.
func (g *match) decide(alive []int, r int) []int {
	contenders := alive
	if len(contenders) == 0 {
		for seat := range g.snakes {
			if g.snakes[seat].deathRound == r {
				contenders = append(contenders, seat)
			}
		}
	}
	best, winners := -1, []int(nil)
	for _, seat := range contenders {
		switch sc := g.snakes[seat].score; {
		case sc > best:
			best, winners = sc, []int{seat}
		case sc == best:
			winners = append(winners, seat)
		}
	}
	if len(winners) != 1 {
		return []int{} // a draw
	}
	return winners
}

// Step implements engine.Match: every living snake gets its state line.
func (g *match) Step() engine.Step {
	if g.over {
		return engine.Step{Done: true}
	}
	prefix := g.appendPrefix(make([]byte, 0, g.prefixSize()))
	var st engine.Step
	for seat := range g.snakes {
		if !g.snakes[seat].alive {
			continue
		}
		line := make([]byte, 0, len(prefix)+g.seatPartSize()+1)
		line = append(line, prefix...)
		line = g.appendSeatPart(line, seat)
		line = append(line, '\n')
		st.Send = append(st.Send, engine.Message{Seat: seat, Data: line})
		st.Await = append(st.Await, seat)
	}
	return st
}

// Submit implements engine.Match: it reads the answers and plays a round.
// A fault kills the snake; so does an answer that cannot be read, which is
// also rejected. A seat awaited but missing from the replies counts as a
// timeout.
func (g *match) Submit(replies []engine.Reply) []engine.Rejection {
	if g.over {
		return nil
	}
	var (
		moves    [players]move
		answered [players]bool
		rejected []engine.Rejection
	)
	for _, r := range replies {
		if r.Seat < 0 || r.Seat >= players || !g.snakes[r.Seat].alive || answered[r.Seat] {
			continue
		}
		answered[r.Seat] = true
		if r.Fault != "" && r.Fault != engine.StatusOK {
			moves[r.Seat].fault = faultReason(r.Fault)
			continue
		}
		to, err := parseMove(r.Data)
		if err != nil {
			rejected = append(rejected, engine.Rejection{Seat: r.Seat, Reason: err.Error()})
			moves[r.Seat].fault = reasonBadOutput
			continue
		}
		moves[r.Seat].to = to
	}
	for seat := range g.snakes {
		if g.snakes[seat].alive && !answered[seat] {
			moves[seat].fault = reasonTimeout
		}
	}
	g.play(moves)
	return rejected
}

// Turn implements engine.Match: the rounds played.
func (g *match) Turn() int { return g.turn }

// Out implements engine.Match: a dead snake's bot is done.
func (g *match) Out(seat int) bool {
	return seat >= 0 && seat < players && !g.snakes[seat].alive
}

// Settings implements engine.Match.
func (g *match) Settings() json.RawMessage {
	b, _ := json.Marshal(g.settings) // plain ints always marshal
	return b
}

// Result implements engine.Match. A seat's score is its snake's score,
// kept when it dies.
func (g *match) Result() engine.Result {
	r := engine.Result{Seats: make([]engine.SeatResult, players)}
	for seat := range g.snakes {
		s := &g.snakes[seat]
		r.Seats[seat] = engine.SeatResult{Score: s.score, DeathReason: s.deathReason, DeathTurn: s.deathRound}
	}
	if g.over {
		r.Winners = append([]int{}, g.winners...)
	}
	return r
}
