package tanks

import (
	"encoding/json"
	"strconv"

	"arena/engine"
)

// cell is one board cell's content.
type cell struct {
	kind   cellType
	health int
	seat   int // the owner, for tanks
}

type bullet struct {
	at    point
	dir   direction
	owner int
}

type tank struct {
	at          point
	alive       bool
	deathTurn   int
	deathReason string
}

// Death reasons.
const (
	reasonShot = "shot"
	reasonZone = "zone"
)

// Event is something notable that happened during a tick, for the viewer.
type Event struct {
	Kind string `json:"Kind"` // "shot", "hit", "destroyed", "zone"
	// Coordinates is where it happened.
	Coordinates point `json:"Coordinates"`
	// Type is the object hit or destroyed (CellContentType number).
	Type *cellType `json:"Type,omitempty"`
	// UserId is the shooter (shot, hit) or the tank concerned (destroyed, zone).
	UserId string `json:"UserId,omitempty"`
	// Target is the tank hit or destroyed, when the object is a tank.
	Target string `json:"Target,omitempty"`
}

type match struct {
	settings Settings
	players  []string
	userIDs  [][]byte // each player's id as a JSON string
	rng      *engine.Rand
	seed     uint64 // the match seed (the anonymous ids come from it)
	mapName  string

	width, height int // the board's, ring included
	cells         []cell
	static        [][]byte // encoded cells that never change, by index
	rows          [][]byte // each row's encoded cells, while not dirty
	rowDirty      []bool
	state         []byte // the state line of the current turn, once built
	stateBuf      []byte // its buffer, reused every turn (Step's contract)
	tanks         []tank
	bullets       []bullet // at most one per owner, kept in owner order
	zone          int
	turn          int
	over          bool
	lastAlive     []int // seats alive after the last tick that left one alive
	events        []Event
	// anon[seat][other] is the id seat sees for other in turn anonTurn
	// (AnonymousIDs).
	anon     [][][]byte
	anonTurn int
}

func newMatch(m *Map, s Settings, seed uint64, players []string) *match {
	g := &match{
		settings: s,
		players:  players,
		rng:      engine.NewRand(seed, 0x7a6b73),
		seed:     seed,
		mapName:  m.name,
		width:    m.width + 2,
		height:   m.height + 2,
		zone:     s.ZoneRadius,
		tanks:    make([]tank, len(players)),
	}
	g.userIDs = make([][]byte, len(players))
	for i, p := range players {
		g.userIDs[i], _ = json.Marshal(p) // a string always marshals
	}
	g.cells = make([]cell, g.width*g.height)
	for i := range g.cells {
		g.cells[i] = cell{kind: cellEmpty}
	}
	for x := 0; x < g.width; x++ {
		g.set(point{x, 0}, cell{kind: cellNotDestroyable, health: indestructible})
		g.set(point{x, g.height - 1}, cell{kind: cellNotDestroyable, health: indestructible})
	}
	for y := 0; y < g.height; y++ {
		g.set(point{0, y}, cell{kind: cellNotDestroyable, health: indestructible})
		g.set(point{g.width - 1, y}, cell{kind: cellNotDestroyable, health: indestructible})
	}
	for _, o := range m.objects {
		g.set(point{o.at.X + 1, o.at.Y + 1}, cell{kind: o.kind, health: o.health})
	}
	spawns := append([]point(nil), m.spawns...)
	g.rng.Shuffle(len(spawns), func(i, j int) { spawns[i], spawns[j] = spawns[j], spawns[i] })
	for seat := range players {
		at := point{spawns[seat].X + 1, spawns[seat].Y + 1}
		g.tanks[seat] = tank{at: at, alive: true}
		g.set(at, cell{kind: cellTank, health: s.TankHealth, seat: seat})
	}
	g.lastAlive = g.aliveSeats()
	g.encodeStatic()
	g.rows = make([][]byte, g.height)
	g.rowDirty = make([]bool, g.height)
	for y := range g.rowDirty {
		g.rowDirty[y] = true
	}
	return g
}

// stateLine is the current state as the bots receive it, with its
// newline, built once per turn in the same buffer (messages of a Step are
// only valid until the next Submit).
func (g *match) stateLine() []byte {
	if g.state == nil {
		g.state = append(g.appendState(g.stateBuf[:0]), '\n')
		g.stateBuf = g.state
	}
	return g.state
}

func (g *match) index(p point) int { return p.Y*g.width + p.X }

func (g *match) inside(p point) bool {
	return p.X >= 0 && p.Y >= 0 && p.X < g.width && p.Y < g.height
}

func (g *match) at(p point) cell { return g.cells[g.index(p)] }

func (g *match) set(p point, c cell) {
	g.cells[g.index(p)] = c
	if g.rowDirty != nil {
		g.rowDirty[p.Y] = true
	}
}

func (g *match) aliveSeats() []int {
	var seats []int
	for seat, t := range g.tanks {
		if t.alive {
			seats = append(seats, seat)
		}
	}
	return seats
}

// Step implements engine.Match: every living tank's bot gets the same state.
func (g *match) Step() engine.Step {
	if g.over {
		return engine.Step{Done: true}
	}
	state := g.stateLine()
	alive := g.aliveSeats()
	st := engine.Step{Send: make([]engine.Message, len(alive)), Await: alive}
	for i, seat := range alive {
		data := state
		if g.settings.AnonymousIDs {
			data = g.anonymousState(seat)
		}
		st.Send[i] = engine.Message{Seat: seat, Data: data}
	}
	return st
}

// Submit implements engine.Match: it parses the answers and plays one tick.
func (g *match) Submit(replies []engine.Reply) []engine.Rejection {
	if g.over {
		return nil
	}
	var rejected []engine.Rejection
	actions := make(map[int][]action, len(replies))
	for _, r := range replies {
		if r.Fault != "" || r.Seat < 0 || r.Seat >= len(g.tanks) {
			continue // a faulted tank idles
		}
		acts, err := parseActions(r.Data)
		if err != nil {
			rejected = append(rejected, engine.Rejection{Seat: r.Seat, Reason: err.Error()})
			continue
		}
		if len(acts) > g.settings.ActionPoints {
			acts = acts[:g.settings.ActionPoints]
		}
		actions[r.Seat] = acts
	}
	g.tick(actions)
	return rejected
}

// tick plays one turn with the given actions per seat.
func (g *match) tick(actions map[int][]action) {
	g.turn++
	g.state = nil
	g.events = g.events[:0]
	order := g.aliveSeats()
	g.rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
	for ap := 0; ap < g.settings.ActionPoints; ap++ {
		for _, seat := range order {
			if !g.tanks[seat].alive || ap >= len(actions[seat]) {
				continue
			}
			g.act(seat, actions[seat][ap])
		}
		for b := 0; b < g.settings.BulletActionPoints; b++ {
			g.resolveHits()
			g.moveBullets()
			g.resolveHits()
		}
	}
	g.applyZone()
	g.zone = max(0, g.zone-1)
	alive := g.aliveSeats()
	if len(alive) > 0 {
		g.lastAlive = alive
	}
	if len(alive) <= 1 {
		g.over = true
	}
}

func (g *match) act(seat int, a action) {
	t := &g.tanks[seat]
	if a.dir < dirUp || a.dir > dirRight {
		return
	}
	switch a.kind {
	case actionMove:
		to := t.at.step(a.dir)
		if !g.inside(to) || g.at(to).kind != cellEmpty {
			return
		}
		g.set(to, g.at(t.at))
		g.set(t.at, cell{kind: cellEmpty})
		t.at = to
	case actionShoot:
		for _, b := range g.bullets {
			if b.owner == seat {
				return // one bullet in flight per player
			}
		}
		from := t.at.step(a.dir)
		g.bullets = append(g.bullets, bullet{at: from, dir: a.dir, owner: seat})
		g.sortBullets()
		g.events = append(g.events, Event{Kind: "shot", Coordinates: from, UserId: g.players[seat]})
	}
}

// sortBullets keeps bullets in owner order so the state lists them
// deterministically (insertion sort: there is at most one per player).
func (g *match) sortBullets() {
	for i := 1; i < len(g.bullets); i++ {
		for j := i; j > 0 && g.bullets[j].owner < g.bullets[j-1].owner; j-- {
			g.bullets[j], g.bullets[j-1] = g.bullets[j-1], g.bullets[j]
		}
	}
}

func (g *match) moveBullets() {
	for i := range g.bullets {
		g.bullets[i].at = g.bullets[i].at.step(g.bullets[i].dir)
	}
}

// resolveHits: every bullet on a non-empty cell hits it, then objects at
// zero health are removed.
func (g *match) resolveHits() {
	kept := g.bullets[:0]
	var damaged []point
	for _, b := range g.bullets {
		if !g.inside(b.at) {
			continue // cannot happen with the indestructible ring; never crash
		}
		c := g.at(b.at)
		switch c.kind {
		case cellEmpty, cellWater:
			kept = append(kept, b)
			continue
		case cellTank, cellBarrier:
			c.health--
			g.set(b.at, c)
			damaged = append(damaged, b.at)
		}
		kind := c.kind
		ev := Event{Kind: "hit", Coordinates: b.at, Type: &kind, UserId: g.players[b.owner]}
		if c.kind == cellTank {
			ev.Target = g.players[c.seat]
		}
		g.events = append(g.events, ev)
	}
	g.bullets = kept
	for _, p := range damaged {
		if c := g.at(p); c.kind != cellEmpty && c.health <= 0 {
			g.destroy(p, reasonShot)
		}
	}
}

func (g *match) destroy(p point, reason string) {
	c := g.at(p)
	kind := c.kind
	ev := Event{Kind: "destroyed", Coordinates: p, Type: &kind}
	if c.kind == cellTank {
		t := &g.tanks[c.seat]
		t.alive = false
		t.deathTurn = g.turn
		t.deathReason = reason
		ev.Target = g.players[c.seat]
	}
	g.events = append(g.events, ev)
	g.set(p, cell{kind: cellEmpty})
}

// inZone reports whether coordinate c of an axis of size s is inside a
// zone of radius r: s/2 − r + s%2 ≤ c ≤ s/2 + r − 1.
func inZone(c, s, r int) bool {
	return s/2-r+s%2 <= c && c <= s/2+r-1
}

func (g *match) applyZone() {
	for seat := range g.tanks {
		t := &g.tanks[seat]
		if !t.alive || (inZone(t.at.X, g.width, g.zone) && inZone(t.at.Y, g.height, g.zone)) {
			continue
		}
		c := g.at(t.at)
		c.health--
		g.set(t.at, c)
		g.events = append(g.events, Event{Kind: "zone", Coordinates: t.at, Target: g.players[seat]})
		if c.health <= 0 {
			g.destroy(t.at, reasonZone)
		}
	}
}

// Turn implements engine.Match.
func (g *match) Turn() int { return g.turn }

// Out implements engine.Match: a destroyed tank's bot is done.
func (g *match) Out(seat int) bool { return seat >= 0 && seat < len(g.tanks) && !g.tanks[seat].alive }

// Settings implements engine.Match.
func (g *match) Settings() json.RawMessage {
	b, _ := json.Marshal(g.settings) // plain ints always marshal
	return b
}

// Frame implements engine.Match: the state the bots see, plus the turn
// number and the tick's events.
func (g *match) Frame() json.RawMessage {
	line := g.stateLine()
	line = line[:len(line)-1] // without the newline
	b := make([]byte, 0, len(line)+64+160*len(g.events))
	b = append(b, `{"Turn":`...)
	b = appendInt(b, g.turn)
	b = append(b, `,"State":`...)
	b = append(b, line...)
	b = append(b, `,"Events":[`...)
	for i, e := range g.events {
		if i > 0 {
			b = append(b, ',')
		}
		b = g.appendEvent(b, e)
	}
	return append(b, "]}"...)
}

// appendEvent encodes an event as encoding/json would (the golden files
// and replays hold this form).
func (g *match) appendEvent(b []byte, e Event) []byte {
	b = append(b, `{"Kind":`...)
	b = strconv.AppendQuote(b, e.Kind)
	b = append(b, `,"Coordinates":{"X":`...)
	b = appendInt(b, e.Coordinates.X)
	b = append(b, `,"Y":`...)
	b = appendInt(b, e.Coordinates.Y)
	b = append(b, '}')
	if e.Type != nil {
		b = append(b, `,"Type":`...)
		b = appendInt(b, int(*e.Type))
	}
	if e.UserId != "" {
		b = append(b, `,"UserId":`...)
		b = appendJSONString(b, e.UserId)
	}
	if e.Target != "" {
		b = append(b, `,"Target":`...)
		b = appendJSONString(b, e.Target)
	}
	return append(b, '}')
}

// appendJSONString appends s as a JSON string.
func appendJSONString(b []byte, s string) []byte {
	q, _ := json.Marshal(s) // a string always marshals
	return append(b, q...)
}

// Result implements engine.Match. A tank's score is the number of ticks it
// lived through.
func (g *match) Result() engine.Result {
	r := engine.Result{Seats: make([]engine.SeatResult, len(g.tanks))}
	for seat, t := range g.tanks {
		sr := engine.SeatResult{Score: g.turn}
		if !t.alive {
			sr.Score = t.deathTurn - 1
			sr.DeathReason = t.deathReason
			sr.DeathTurn = t.deathTurn
		}
		r.Seats[seat] = sr
	}
	if g.over {
		r.Winners = append([]int(nil), g.lastAlive...)
	}
	return r
}
