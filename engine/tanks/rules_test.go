package tanks

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"arena/engine"
)

// board builds a match from an ASCII picture of the interior, top row first
// (the ring of indestructible blocks is added around it, so the picture's
// bottom-left cell is board (1,1)). Letters a–d are the tanks of seats 0–3,
// '#' indestructible, '~' water, '1'–'9' a barrier with that health.
func board(t *testing.T, s Settings, rows ...string) *match {
	t.Helper()
	h, w := len(rows), len(rows[0])
	m := &Map{name: "test", width: w, height: h}
	type placed struct {
		seat int
		at   point
	}
	var tanks []placed
	for i, row := range rows {
		if len(row) != w {
			t.Fatalf("row %d has %d cells, want %d", i, len(row), w)
		}
		y := h - 1 - i
		for x, c := range row {
			at := point{x, y}
			switch {
			case c == '#':
				m.objects = append(m.objects, mapObject{at: at, kind: cellNotDestroyable, health: indestructible})
			case c == '~':
				m.objects = append(m.objects, mapObject{at: at, kind: cellWater, health: indestructible})
			case c >= '1' && c <= '9':
				m.objects = append(m.objects, mapObject{at: at, kind: cellBarrier, health: int(c - '0')})
			case c >= 'a' && c <= 'd':
				tanks = append(tanks, placed{int(c - 'a'), at})
			case c == '.':
			default:
				t.Fatalf("unknown cell %q", c)
			}
		}
	}
	slices.SortFunc(tanks, func(a, b placed) int { return a.seat - b.seat })
	players := make([]string, len(tanks))
	for i, p := range tanks {
		if p.seat != i {
			t.Fatalf("tank seats must be a, b, c… without gaps")
		}
		players[i] = string(rune('a' + i))
		m.spawns = append(m.spawns, p.at)
	}
	g := newMatch(m, s, 1, players)
	// Put each tank where the picture shows it, whatever the spawn shuffle chose.
	for seat := range g.tanks {
		g.set(g.tanks[seat].at, cell{kind: cellEmpty})
	}
	for seat, p := range tanks {
		at := point{p.at.X + 1, p.at.Y + 1}
		g.tanks[seat].at = at
		g.set(at, cell{kind: cellTank, health: s.TankHealth, seat: seat})
	}
	return g
}

// picture draws the interior back in board()'s notation, with bullets as
// '*' (over an empty cell).
func (g *match) picture() string {
	var sb strings.Builder
	for y := g.height - 2; y >= 1; y-- {
		for x := 1; x < g.width-1; x++ {
			c := g.at(point{x, y})
			switch c.kind {
			case cellEmpty:
				ch := byte('.')
				for _, b := range g.bullets {
					if b.at == (point{x, y}) {
						ch = '*'
					}
				}
				sb.WriteByte(ch)
			case cellTank:
				sb.WriteByte(byte('a' + c.seat))
			case cellBarrier:
				sb.WriteByte(byte('0' + c.health))
			case cellNotDestroyable:
				sb.WriteByte('#')
			case cellWater:
				sb.WriteByte('~')
			}
		}
		if y > 1 {
			sb.WriteByte('\n')
		}
	}
	return sb.String()
}

func move(d direction) []action  { return []action{{kind: actionMove, dir: d}} }
func shoot(d direction) []action { return []action{{kind: actionShoot, dir: d}} }

func rows(s ...string) string { return strings.Join(s, "\n") }

func TestMoves(t *testing.T) {
	tests := []struct {
		name string
		give []string
		act  map[int][]action
		want string
	}{
		{
			name: "into an empty cell",
			give: []string{".a..", "....", "...b"},
			act:  map[int][]action{0: move(dirRight), 1: move(dirUp)},
			want: rows("..a.", "...b", "...."),
		},
		{
			name: "into a barrier or a block: nothing happens",
			give: []string{"1a#.", "..b.", "...."},
			act:  map[int][]action{0: move(dirLeft), 1: move(dirUp)},
			want: rows("1a#.", "..b.", "...."),
		},
		{
			name: "into water or a tank: nothing happens",
			give: []string{".ab.", "..~.", "...."},
			act:  map[int][]action{0: move(dirRight), 1: move(dirDown)},
			want: rows(".ab.", "..~.", "...."),
		},
		{
			name: "blocked by water below and the ring above",
			give: []string{"a...", "~...", "...b"},
			act:  map[int][]action{0: move(dirDown), 1: move(dirDown)},
			want: rows("a...", "~...", "...b"),
		},
		{
			name: "into the ring",
			give: []string{"a..b"},
			act:  map[int][]action{0: move(dirLeft), 1: move(dirRight)},
			want: rows("a..b"),
		},
		{
			name: "unknown direction or type is ignored",
			give: []string{".a.b"},
			act:  map[int][]action{0: {{kind: actionMove, dir: 7}}, 1: {{kind: 5, dir: dirLeft}}},
			want: rows(".a.b"),
		},
		{
			name: "no answer: the tank idles",
			give: []string{".a.b"},
			act:  map[int][]action{},
			want: rows(".a.b"),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := board(t, DefaultSettings(), tt.give...)
			g.tick(tt.act)
			if got := g.picture(); got != tt.want {
				t.Errorf("after the tick:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
}

func TestTwoTanksRaceForOneCell(t *testing.T) {
	// Both move into the same cell; the shuffled order decides who gets it,
	// and the loser's move is ignored. Both outcomes occur over seeds.
	outcomes := map[string]bool{}
	for seed := uint64(0); seed < 40; seed++ {
		g := board(t, DefaultSettings(), "a.b")
		g.rng = engine.NewRand(seed, 0)
		g.tick(map[int][]action{0: move(dirRight), 1: move(dirLeft)})
		outcomes[g.picture()] = true
	}
	if !outcomes[".ab"] || !outcomes["ab."] || len(outcomes) != 2 {
		t.Errorf("outcomes = %v, want exactly .ab and ab.", outcomes)
	}
}

func TestShuffledOrderIsReproducible(t *testing.T) {
	run := func(seed uint64) string {
		g := board(t, DefaultSettings(), "a.b", "...", "c.d")
		g.rng = engine.NewRand(seed, 0)
		var trace strings.Builder
		for i := 0; i < 8; i++ {
			g.tick(map[int][]action{0: move(dirRight), 1: move(dirLeft), 2: move(dirUp), 3: move(dirUp)})
			trace.WriteString(g.picture() + "|")
		}
		return trace.String()
	}
	if a, b := run(42), run(42); a != b {
		t.Errorf("the same seed played differently:\n%s\n%s", a, b)
	}
	differs := false
	for seed := uint64(1); seed < 20 && !differs; seed++ {
		differs = run(0) != run(seed)
	}
	if !differs {
		t.Error("every seed played the same: the order is not shuffled")
	}
}

func TestBullets(t *testing.T) {
	tests := []struct {
		name  string
		give  []string
		ticks []map[int][]action
		want  string
	}{
		{
			name:  "a bullet flies two cells per tick",
			give:  []string{"a.......", "........", ".......b"},
			ticks: []map[int][]action{{0: shoot(dirRight)}},
			// created at x=1, then 2 steps: x=3
			want: rows("a..*....", "........", ".......b"),
		},
		{
			name:  "one bullet per player: the second shot is ignored",
			give:  []string{"a.......", "........", "......b."},
			ticks: []map[int][]action{{0: shoot(dirRight)}, {0: shoot(dirDown)}},
			want:  rows("a....*..", "........", "......b."),
		},
		{
			name:  "a bullet passes over water",
			give:  []string{"a.~~....", "........", "b......."},
			ticks: []map[int][]action{{0: shoot(dirRight)}, {}},
			want:  rows("a.~~.*..", "........", "b......."),
		},
		{
			name:  "a barrier loses one health and the bullet is gone",
			give:  []string{"a..2....", "........", "b......."},
			ticks: []map[int][]action{{0: shoot(dirRight)}},
			want:  rows("a..1....", "........", "b......."),
		},
		{
			name:  "a barrier at zero health is removed",
			give:  []string{"a..1....", "........", "b......."},
			ticks: []map[int][]action{{0: shoot(dirRight)}},
			want:  rows("a.......", "........", "b......."),
		},
		{
			name:  "an indestructible block stops the bullet and stays",
			give:  []string{"a..#....", "........", "b......."},
			ticks: []map[int][]action{{0: shoot(dirRight)}, {}},
			want:  rows("a..#....", "........", "b......."),
		},
		{
			name:  "a bullet created on an occupied cell hits it at once",
			give:  []string{"a2......", "........", "b......."},
			ticks: []map[int][]action{{0: shoot(dirRight)}},
			want:  rows("a1......", "........", "b......."),
		},
		{
			name:  "a shot into the ring disappears",
			give:  []string{"a.......", "........", "b......."},
			ticks: []map[int][]action{{0: shoot(dirLeft)}, {0: shoot(dirRight)}},
			want:  rows("a..*....", "........", "b......."),
		},
		{
			name:  "a tank that moves onto a bullet is hit before the bullet moves",
			give:  []string{"a.........", "...b......"},
			ticks: []map[int][]action{{0: shoot(dirRight)}, {1: move(dirUp)}},
			// the bullet is at x=3 after tick 1; b steps onto it in tick 2
			want: rows("a..b......", ".........."),
		},
		{
			name:  "bullets do not collide with each other",
			give:  []string{"a......b", "........", "........"},
			ticks: []map[int][]action{{0: shoot(dirRight), 1: shoot(dirLeft)}},
			want:  rows("a..**..b", "........", "........"),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := board(t, DefaultSettings(), tt.give...)
			for _, acts := range tt.ticks {
				g.tick(acts)
			}
			if got := g.picture(); got != tt.want {
				t.Errorf("after %d ticks:\n%s\nwant:\n%s", len(tt.ticks), got, tt.want)
			}
		})
	}
}

func TestBulletHitsAfterEachStep(t *testing.T) {
	// A bullet passing one cell away from a barrier column must hit the first
	// object in its path even inside a two-step tick: no tunnelling.
	g := board(t, DefaultSettings(), "a.1.1...", "........", "b.......")
	g.tick(map[int][]action{0: shoot(dirRight)})
	if got, want := g.picture(), rows("a...1...", "........", "b......."); got != want {
		t.Fatalf("after the shot:\n%s\nwant:\n%s", got, want)
	}
}

func TestTankDamageAndDeath(t *testing.T) {
	s := DefaultSettings()
	s.TankHealth = 2
	g := board(t, s, "a.b", "...", "...")
	g.tick(map[int][]action{0: shoot(dirRight)}) // bullet created at x=1 (empty), flies into b
	if c := g.at(g.tanks[1].at); c.health != 1 {
		t.Fatalf("b has %d health after one hit, want 1", c.health)
	}
	g.tick(map[int][]action{0: shoot(dirRight)})
	if g.tanks[1].alive {
		t.Fatal("b survived a second hit at health 1")
	}
	if got := g.picture(); got != rows("a..", "...", "...") {
		t.Errorf("destroyed tank still on the board:\n%s", got)
	}
	if !g.over {
		t.Error("the game did not end with one tank left")
	}
	r := g.Result()
	if !slices.Equal(r.Winners, []int{0}) {
		t.Errorf("winners = %v, want [0]", r.Winners)
	}
	if got := r.Seats[1]; got.DeathReason != reasonShot || got.DeathTurn != 2 || got.Score != 1 {
		t.Errorf("b's result = %+v, want shot at turn 2 with score 1", got)
	}
	if got := r.Seats[0]; got.DeathReason != "" || got.Score != 2 {
		t.Errorf("a's result = %+v, want alive with score 2", got)
	}
}

func TestDeadPlayersBulletKeepsFlying(t *testing.T) {
	s := DefaultSettings()
	s.TankHealth = 1
	// a shoots up at a barrier far away and is killed in the same tick by
	// b's point-blank shot; a's bullet must still reach the barrier.
	g := board(t, s,
		"1.....",
		"......",
		"......",
		"......",
		"......",
		"ab...c")
	g.tick(map[int][]action{0: shoot(dirUp), 1: shoot(dirLeft)})
	if g.tanks[0].alive {
		t.Fatal("a survived a point-blank shot at health 1")
	}
	if len(g.bullets) != 1 || g.bullets[0].owner != 0 {
		t.Fatalf("bullets = %+v, want a's bullet still flying", g.bullets)
	}
	g.tick(nil)
	g.tick(nil)
	if c := g.at(point{1, 6}); c.kind != cellEmpty {
		t.Errorf("the dead player's bullet did not destroy the barrier: %+v", c)
	}
}

func TestInZone(t *testing.T) {
	tests := []struct {
		size, radius int
		want         string // which coordinates 0..size-1 are inside
	}{
		{size: 22, radius: 100, want: "1111111111111111111111"},
		{size: 22, radius: 11, want: "1111111111111111111111"},
		{size: 22, radius: 10, want: "0111111111111111111110"},
		{size: 22, radius: 1, want: "0000000000110000000000"},
		{size: 22, radius: 0, want: "0000000000000000000000"},
		{size: 15, radius: 8, want: "111111111111111"},
		{size: 15, radius: 7, want: "011111111111110"},
		{size: 15, radius: 1, want: "000000010000000"},
		{size: 15, radius: 0, want: "000000000000000"},
	}
	for _, tt := range tests {
		var sb strings.Builder
		for c := 0; c < tt.size; c++ {
			if inZone(c, tt.size, tt.radius) {
				sb.WriteByte('1')
			} else {
				sb.WriteByte('0')
			}
		}
		if got := sb.String(); got != tt.want {
			t.Errorf("size %d radius %d: inside = %s, want %s", tt.size, tt.radius, got, tt.want)
		}
	}
}

func TestZoneDamagesBeforeShrinking(t *testing.T) {
	// Board 6x5 (interior 4x3). Radius 2 covers board x 1..4, y 1..3: the
	// whole interior. Radius 1 covers board x 2..3, y 2 only.
	s := DefaultSettings()
	s.ZoneRadius = 2
	g := board(t, s, "a...", "....", "...b")
	g.tick(nil) // zone 2: everyone inside; then it shrinks to 1
	if g.zone != 1 || g.at(g.tanks[0].at).health != 3 {
		t.Fatalf("zone %d, a's health %d: want 1 and 3", g.zone, g.at(g.tanks[0].at).health)
	}
	g.tick(nil) // zone 1: both outside, damaged, then 0
	if g.zone != 0 || g.at(g.tanks[0].at).health != 2 || g.at(g.tanks[1].at).health != 2 {
		t.Fatalf("after a tick at radius 1: zone %d, health %d/%d; want 0, 2/2",
			g.zone, g.at(g.tanks[0].at).health, g.at(g.tanks[1].at).health)
	}
}

func TestZoneSparesTanksInside(t *testing.T) {
	s := DefaultSettings()
	s.ZoneRadius = 1
	// Interior 4x3 on a 6x5 board: radius 1 covers board x 2..3, y 2..2,
	// i.e. interior (1..2, 1).
	g := board(t, s, "....", ".ab.", "....")
	g.tick(nil)
	for seat := range g.tanks {
		if h := g.at(g.tanks[seat].at).health; h != 3 {
			t.Errorf("tank %d inside the zone lost health: %d", seat, h)
		}
	}
}

func TestWinners(t *testing.T) {
	t.Run("last tank standing", func(t *testing.T) {
		s := DefaultSettings()
		s.TankHealth = 1
		g := board(t, s, "ab.c")
		g.tick(map[int][]action{0: shoot(dirRight)})
		if g.over {
			t.Fatal("over with two tanks left")
		}
		g.tick(map[int][]action{2: shoot(dirLeft)}) // created on the empty x=2, it flies into a at x=0
		if !g.over {
			t.Fatalf("not over:\n%s", g.picture())
		}
		if got := g.Result().Winners; !slices.Equal(got, []int{2}) {
			t.Errorf("winners = %v, want [2]", got)
		}
	})
	t.Run("simultaneous last deaths share the win", func(t *testing.T) {
		s := DefaultSettings()
		s.TankHealth = 1
		s.ZoneRadius = 0
		g := board(t, s, "a..b", "....", ".c..")
		g.tick(nil) // every tank is outside a zone of radius 0
		if !g.over {
			t.Fatal("not over after every tank died")
		}
		if got := g.Result().Winners; !slices.Equal(got, []int{0, 1, 2}) {
			t.Errorf("winners = %v, want all three", got)
		}
		for seat, sr := range g.Result().Seats {
			if sr.DeathReason != reasonZone || sr.DeathTurn != 1 {
				t.Errorf("seat %d: %+v, want zone death at turn 1", seat, sr)
			}
		}
	})
	t.Run("only the tanks alive before the last tick share it", func(t *testing.T) {
		s := DefaultSettings()
		s.TankHealth = 1
		s.ZoneRadius = 2
		// Board 7x5: radius 2 covers interior x 1..3, so a at x=0 dies in
		// tick 1; radius 1 covers interior x 2 only, so b and c at x=1 and
		// x=3 die together in tick 2.
		g := board(t, s, ".....", "ab.c.", ".....")
		g.tick(nil)
		if g.tanks[0].alive || !g.tanks[1].alive || !g.tanks[2].alive {
			t.Fatalf("after tick 1:\n%s", g.picture())
		}
		g.tick(nil)
		if !g.over {
			t.Fatalf("not over:\n%s", g.picture())
		}
		if got := g.Result().Winners; !slices.Equal(got, []int{1, 2}) {
			t.Errorf("winners = %v, want [1 2]", got)
		}
	})
}

func TestBorderRing(t *testing.T) {
	m, err := ParseMap("tiny", []byte(`{"Width":3,"Height":2,"MapObjects":[
		{"Coordinates":{"X":0,"Y":0},"CellContentType":"Spawn"},
		{"Coordinates":{"X":2,"Y":1},"CellContentType":"Spawn"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	g := newMatch(m, DefaultSettings(), 3, []string{"p", "q"})
	if g.width != 5 || g.height != 4 {
		t.Fatalf("board %dx%d, want 5x4", g.width, g.height)
	}
	for y := 0; y < g.height; y++ {
		for x := 0; x < g.width; x++ {
			ring := x == 0 || y == 0 || x == g.width-1 || y == g.height-1
			c := g.at(point{x, y})
			if ring != (c.kind == cellNotDestroyable) {
				t.Errorf("(%d,%d): %+v, ring=%v", x, y, c, ring)
			}
		}
	}
	// Spawns shift by +1 onto the board.
	got := []point{g.tanks[0].at, g.tanks[1].at}
	slices.SortFunc(got, func(a, b point) int { return a.X - b.X })
	if want := []point{{1, 1}, {3, 2}}; !slices.Equal(got, want) {
		t.Errorf("tanks at %v, want %v", got, want)
	}
}

func TestSpawnsAreShuffledBySeed(t *testing.T) {
	m, err := loadShippedMap("crossroads")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[point]bool{}
	for seed := uint64(0); seed < 30; seed++ {
		g := newMatch(m, DefaultSettings(), seed, []string{"p", "q"})
		again := newMatch(m, DefaultSettings(), seed, []string{"p", "q"})
		if g.tanks[0].at != again.tanks[0].at || g.tanks[1].at != again.tanks[1].at {
			t.Fatalf("seed %d placed tanks differently twice", seed)
		}
		seen[g.tanks[0].at] = true
	}
	if len(seen) != 4 {
		t.Errorf("the first tank used %d of the 4 spawns over 30 seeds", len(seen))
	}
	// Unused spawn markers vanish.
	g := newMatch(m, DefaultSettings(), 0, []string{"p", "q"})
	tanks := 0
	for _, c := range g.cells {
		if c.kind == cellSpawn {
			t.Fatal("a spawn marker is on the board")
		}
		if c.kind == cellTank {
			tanks++
		}
	}
	if tanks != 2 {
		t.Errorf("%d tanks on the board, want 2", tanks)
	}
}

func TestActionPoints(t *testing.T) {
	s := DefaultSettings()
	s.ActionPoints = 2
	g := board(t, s, "a....", "....b")
	g.tick(map[int][]action{0: {{actionMove, dirRight}, {actionMove, dirRight}, {actionMove, dirRight}}})
	if got, want := g.picture(), rows("..a..", "....b"); got != want {
		t.Errorf("with 2 action points:\n%s\nwant:\n%s", got, want)
	}
}

func ExampleGame_Protocol() {
	p := New().Protocol()
	fmt.Println(p.Framing, p.AnswerTimeout, p.WarmUp, p.MaxMessageBytes)
	// Output: lines 100ms 20s 4096
}

func TestRenderText(t *testing.T) {
	m := mustMap(t, "classic")
	g := newMatch(m, DefaultSettings(), 0, []string{"r1", "r2"})
	text := New().RenderText([]json.RawMessage{g.Frame()}, 0, []string{"r1", "r2"})
	lines := strings.Split(text, "\n")
	if lines[0] != "turn 0, zone radius 100" || lines[1] != strings.Repeat("#", 22) || len(lines) < 16 {
		t.Fatalf("text:\n%s", text)
	}
	if !strings.Contains(text, "A r1: 3 HP") || !strings.Contains(text, "B r2: 3 HP") || strings.Count(text, "~") != 6 {
		t.Errorf("text:\n%s", text)
	}
	// The legend follows seat order, wherever the tanks stand, and keeps
	// a line for a destroyed tank.
	g3 := board(t, DefaultSettings(), "c.b", "...", "..a")
	g3.tanks[1].alive = false
	g3.set(g3.tanks[1].at, cell{kind: cellEmpty})
	text = New().RenderText([]json.RawMessage{g3.Frame()}, 0, []string{"a", "b", "c"})
	if !strings.HasSuffix(text, "A a: 3 HP\nB b: destroyed\nC c: 3 HP\n") {
		t.Errorf("legend not in seat order:\n%s", text)
	}
}
