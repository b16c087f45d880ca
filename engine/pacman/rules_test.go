package pacman

import (
	"reflect"
	"slices"
	"testing"
)

func TestMoves(t *testing.T) {
	pic := []string{
		"#####",
		"#...#",
		"..P##",
		"#...#",
		"A#BC.",
	}
	tests := []struct {
		name      string
		pacman    int
		ghosts    [3]int
		speed     bool
		wantPath  []point
		wantGhost [3][]point
	}{
		{
			name: "stay", pacman: stay, ghosts: still,
			wantPath:  pts(point{3, 3}, point{3, 3}),
			wantGhost: [3][]point{pts(point{1, 1}, point{1, 1}), pts(point{1, 3}, point{1, 3}), pts(point{1, 4}, point{1, 4})},
		},
		{
			name: "up is x+1, left is y-1", pacman: up, ghosts: [3]int{stay, up, left},
			wantPath:  pts(point{3, 3}, point{4, 3}),
			wantGhost: [3][]point{pts(point{1, 1}, point{1, 1}), pts(point{1, 3}, point{2, 3}), pts(point{1, 4}, point{1, 3})},
		},
		{
			name: "down is x-1, right is y+1", pacman: down, ghosts: [3]int{stay, stay, right},
			wantPath:  pts(point{3, 3}, point{2, 3}),
			wantGhost: [3][]point{pts(point{1, 1}, point{1, 1}), pts(point{1, 3}, point{1, 3}), pts(point{1, 4}, point{1, 5})},
		},
		{
			name: "bumps: the target −100 for the Pac-Man, −200 for a ghost", pacman: right, ghosts: [3]int{right, left, stay},
			wantPath:  pts(point{3, 3}, point{3 - 100, 4 - 100}),
			wantGhost: [3][]point{pts(point{1, 1}, point{1 - 200, 2 - 200}), pts(point{1, 3}, point{1 - 200, 2 - 200}), pts(point{1, 4}, point{1, 4})},
		},
		{
			name: "bump into the border", pacman: left, ghosts: [3]int{down, stay, stay},
			wantPath:  pts(point{3, 3}, point{3, 2}),
			wantGhost: [3][]point{pts(point{1, 1}, point{0 - 200, 1 - 200}), pts(point{1, 3}, point{1, 3}), pts(point{1, 4}, point{1, 4})},
		},
		{
			name: "speed: the same action twice", pacman: left, ghosts: still, speed: true,
			wantPath:  pts(point{3, 3}, point{3, 2}, point{3, 1}),
			wantGhost: [3][]point{pts(point{1, 1}, point{1, 1}), pts(point{1, 3}, point{1, 3}), pts(point{1, 4}, point{1, 4})},
		},
		{
			name: "speed: the second step bumps", pacman: up, ghosts: still, speed: true,
			wantPath:  pts(point{3, 3}, point{4, 3}, point{5 - 100, 3 - 100}),
			wantGhost: [3][]point{pts(point{1, 1}, point{1, 1}), pts(point{1, 3}, point{1, 3}), pts(point{1, 4}, point{1, 4})},
		},
		{
			name: "speed: both steps bump", pacman: right, ghosts: still, speed: true,
			wantPath:  pts(point{3, 3}, point{3 - 100, 4 - 100}, point{3 - 100, 4 - 100}),
			wantGhost: [3][]point{pts(point{1, 1}, point{1, 1}), pts(point{1, 3}, point{1, 3}), pts(point{1, 4}, point{1, 4})},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := endless(t, pic...)
			if tt.speed {
				s.skills[skillSpeed] = 3
				s.active[skillSpeed] = 3
			}
			res := s.play(tt.pacman, tt.ghosts)
			if !slices.Equal(res.pacPath, tt.wantPath) {
				t.Errorf("pacman_step_block = %v, want %v", res.pacPath, tt.wantPath)
			}
			if !reflect.DeepEqual(res.ghostPaths, tt.wantGhost) {
				t.Errorf("ghosts_step_block = %v, want %v", res.ghostPaths, tt.wantGhost)
			}
			last := tt.wantPath[len(tt.wantPath)-1]
			for i := len(tt.wantPath) - 1; last.X < 0; i-- {
				last = tt.wantPath[i-1]
			}
			if s.pac != last {
				t.Errorf("Pac-Man at %v, want %v", s.pac, last)
			}
		})
	}
}

func TestEatingScores(t *testing.T) {
	s := endless(t,
		"PoOo.",
		"ABC..",
	)
	var got []int
	for range 4 {
		s.play(right, still)
		got = append(got, s.score[0])
	}
	if want := []int{1, 3, 4, 4}; !slices.Equal(got, want) {
		t.Errorf("Pac-Man score after each round = %v, want %v (bean 1, bonus 2)", got, want)
	}
	if s.eaten != 3 {
		t.Errorf("eaten = %d, want 3", s.eaten)
	}
	for y := 2; y <= 4; y++ {
		if v := s.board.at(point{2, y}); v != cellEmpty {
			t.Errorf("(2,%d) = %d after eating, want empty", y, v)
		}
	}
}

// A skill picked up in round i is in effect in rounds i+1 … i+L, and the
// frame reports the skills as they were at the start of each round.
func TestDoubleScoreTiming(t *testing.T) {
	s := endless(t,
		"PdOooooooooooo",
		"ABC...........",
	)
	var gains []int
	var reported []int
	for range 12 {
		before := s.score[0]
		res := s.play(right, still)
		gains = append(gains, s.score[0]-before)
		reported = append(reported, res.skills[skillDouble])
	}
	// Round 1 picks it up; rounds 2..9 double (the bonus bean: 4); round 10 on: single.
	if want := []int{0, 4, 2, 2, 2, 2, 2, 2, 2, 1, 1, 1}; !slices.Equal(gains, want) {
		t.Errorf("points per round = %v, want %v", gains, want)
	}
	if want := []int{0, 8, 7, 6, 5, 4, 3, 2, 1, 0, 0, 0}; !slices.Equal(reported, want) {
		t.Errorf("pacman_skills[double] per round = %v, want %v", reported, want)
	}
}

func TestSkillPickedAgainIsReset(t *testing.T) {
	s := endless(t,
		"Pdoodooooooooooo",
		"ABC.............",
	)
	var gains []int
	for range 14 {
		before := s.score[0]
		s.play(right, still)
		gains = append(gains, s.score[0]-before)
	}
	// Picked in rounds 1 and 4: doubled in 2..3 and 5..12, not 4+8 more on top of what was left.
	if want := []int{0, 2, 2, 0, 2, 2, 2, 2, 2, 2, 2, 2, 1, 1}; !slices.Equal(gains, want) {
		t.Errorf("points per round = %v, want %v", gains, want)
	}
}

func TestMagnetTiming(t *testing.T) {
	s := endless(t,
		"oooooooooooooo",
		"Pm............",
		"ABC...........",
	)
	var counts []int
	for range 11 {
		res := s.play(right, still)
		beans := 0
		for _, p := range res.eatenCells {
			if p.X == 3 {
				beans++
			}
		}
		counts = append(counts, beans)
	}
	// Round 1 picks it up (nothing from the row above); rounds 2..9 pull
	// beans from the row above: three around the start, then one more
	// column at the end; round 10 on: only the Pac-Man's own cell.
	if want := []int{0, 4, 1, 1, 1, 1, 1, 1, 1, 0, 0}; !slices.Equal(counts, want) {
		t.Errorf("beans pulled from the row above per round = %v, want %v", counts, want)
	}
}

func TestMagnetTakesItemsToo(t *testing.T) {
	s := endless(t,
		".d.",
		"P..",
		"ABC",
	)
	s.skills[skillMagnet], s.active[skillMagnet] = 5, 5
	s.play(stay, still)
	if s.board.at(point{3, 2}) != cellEmpty || s.skills[skillDouble] != skillRounds[skillDouble] {
		t.Errorf("the magnet left the double-score item: cell %d, skills %v", s.board.at(point{3, 2}), s.skills)
	}
}

func TestSpeedTiming(t *testing.T) {
	s := endless(t,
		"Ps............................",
		"ABC...........................",
	)
	var steps []int
	for range 11 {
		res := s.play(right, still)
		steps = append(steps, len(res.pacPath)-1)
	}
	if want := []int{1, 2, 2, 2, 2, 2, 2, 2, 2, 1, 1}; !slices.Equal(steps, want) {
		t.Errorf("steps per round = %v, want %v", steps, want)
	}
}

func TestSpeedEatsOnBothSteps(t *testing.T) {
	s := endless(t,
		"PoOo",
		"ABC.",
	)
	s.skills[skillSpeed], s.active[skillSpeed] = 4, 4
	s.play(right, still)
	if s.score[0] != 3 || s.pac != (point{2, 3}) {
		t.Errorf("score %d at %v, want 3 at (2,3)", s.score[0], s.pac)
	}
}

func TestFreezeTiming(t *testing.T) {
	s := endless(t,
		"Pf....",
		"......",
		"A.B.C.",
	)
	var moved []bool
	for round := 1; round <= 5; round++ {
		m := stay
		if round == 1 {
			m = right // onto the freeze item
		}
		res := s.play(m, [3]int{right, up, left})
		moved = append(moved, res.ghostPaths[1][1] != res.ghostPaths[1][0])
		for j := range s.ghosts { // put them back
			s.ghosts[j] = res.ghostPaths[j][0]
		}
	}
	if want := []bool{true, false, false, true, true}; !slices.Equal(moved, want) {
		t.Errorf("ghosts moved per round = %v, want %v (frozen in rounds 2 and 3)", moved, want)
	}
}

func TestCatch(t *testing.T) {
	tests := []struct {
		name   string
		pic    []string
		pacman int
		ghosts [3]int
		speed  bool
		want   int // the credited ghost, −1 for none
	}{
		{"same cell", []string{"P.A", "B.C"}, right, [3]int{left, stay, stay}, false, 0},
		{"swap", []string{"PA.", "B.C"}, right, [3]int{left, stay, stay}, false, 0},
		{"a ghost enters the Pac-Man's cell", []string{"PA.", "B.C"}, stay, [3]int{left, stay, stay}, false, 0},
		{"the Pac-Man enters a ghost's cell", []string{"PA.", "B.C"}, right, still, false, 0},
		{"adjacent, nobody moves", []string{"PA.", "B.C"}, stay, still, false, -1},
		{"side by side, moving together", []string{"P..", "A..", "..B", "..C"}, right, [3]int{right, stay, stay}, false, -1},
		{"crossing diagonally", []string{".A..", "P...", "...B", "...C"}, up, [3]int{down, stay, stay}, false, -1},
		{"bumping a wall while a ghost enters", []string{"PA.", "B.C"}, left, [3]int{left, stay, stay}, false, 0},
		{"a ghost bumping a wall next to the Pac-Man", []string{"PA#", "B.C"}, stay, [3]int{right, stay, stay}, false, -1},
		{"speed: passing through a standing ghost", []string{"PA..", "B..C"}, right, still, true, 0},
		{"speed: running into an oncoming ghost at the second step", []string{"P..A", "B..C"}, right, [3]int{left, stay, stay}, true, 0},
		{"speed: crossing an oncoming ghost at the first step", []string{"P.A.", "B..C"}, right, [3]int{left, stay, stay}, true, 0},
		{"speed: outrunning a ghost", []string{"P.A.", "B..C"}, right, [3]int{right, stay, stay}, true, -1},
		// Ghost 0 swaps with the Pac-Man (sample 1), ghost 1 meets it on its
		// new cell (sample 2): the later sample wins.
		{"credit: the largest sample", []string{"..B", ".PA", "..C"}, right, [3]int{left, down, stay}, false, 1},
		// Ghosts 1 and 2 both meet it at sample 2: the lowest index wins.
		{"credit: the lowest ghost at that sample", []string{"A.B", ".P.", "..C"}, right, [3]int{stay, down, up}, false, 1},
		{"credit: ghost 2 alone", []string{"A.B", ".P.", "..C"}, right, [3]int{stay, stay, up}, false, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := endless(t, tt.pic...)
			if tt.speed {
				s.skills[skillSpeed], s.active[skillSpeed] = 4, 4
			}
			res := s.play(tt.pacman, tt.ghosts)
			if res.caughtBy != tt.want {
				t.Errorf("caught by %d, want %d (paths %v %v)", res.caughtBy, tt.want, res.pacPath, res.ghostPaths)
			}
			wantEvents := []int{}
			if tt.want >= 0 {
				wantEvents = []int{eventEaten}
			}
			if !slices.Equal(res.events, wantEvents) {
				t.Errorf("events = %v, want %v", res.events, wantEvents)
			}
		})
	}
}

func TestEatenByGhost(t *testing.T) {
	s := endless(t,
		".....",
		".....",
		"PABC.",
	)
	s.skills = [numSkills]int{3, 0, 4, 0, 0}
	s.active = [numSkills]int{4, 0, 5, 0, 0}
	s.score = [2]int{100, 20}
	s.survival = 42
	res := s.play(stay, [3]int{left, stay, stay})
	if !slices.Equal(res.events, []int{eventEaten}) {
		t.Fatalf("events = %v, want [0]", res.events)
	}
	if s.score != [2]int{40, 70} {
		t.Errorf("score = %v, want [40 70] (−60, +50)", s.score)
	}
	if s.invulnerable != invulnerableEaten || s.catches != 1 || s.survival != 0 {
		t.Errorf("invulnerable %d, catches %d, survival %d; want 3, 1, 0", s.invulnerable, s.catches, s.survival)
	}
	if s.skills != [numSkills]int{} || s.active != [numSkills]int{} || res.skills != [numSkills]int{} {
		t.Errorf("skills %v, active %v, reported %v; want all cleared", s.skills, s.active, res.skills)
	}
	if s.pac != (point{3, 2}) {
		t.Errorf("respawned at %v, want (3,2)", s.pac)
	}
	if !slices.Equal(res.pacPath, pts(point{1, 1}, point{1, 1})) {
		t.Errorf("pacman_step_block = %v, want the path before the respawn", res.pacPath)
	}
}

func TestRespawnPoint(t *testing.T) {
	tests := []struct {
		name string
		pic  []string
		want point
	}{
		// After the catch the ghosts stand at (1,1), (1,4), (1,5). The
		// farthest empty cells, at distance 3, are (3,2) and (3,3).
		{"row-major: the first maximum", []string{".....", ".....", "PA.BC"}, point{3, 2}},
		{"only empty cells", []string{".o...", ".....", "PA.BC"}, point{3, 3}},
		{"not a bean, however far", []string{"ooo.o", ".....", "PA.BC"}, point{2, 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := endless(t, tt.pic...)
			s.play(stay, [3]int{left, stay, stay})
			if s.pac != tt.want {
				t.Errorf("respawned at %v, want %v", s.pac, tt.want)
			}
		})
	}
}

func TestShield(t *testing.T) {
	s := endless(t,
		"......",
		"P.....",
		"..ABC.",
	)
	s.ghosts[0] = s.pac // a ghost on the Pac-Man's cell: caught every round
	s.skills[skillShield], s.active[skillShield] = 2, 2
	type outcome struct {
		events       []int
		shields      int
		invulnerable int
		ghosts       int
	}
	var got []outcome
	for range 5 {
		res := s.play(stay, still)
		got = append(got, outcome{res.events, s.skills[skillShield], s.invulnerable, s.score[1]})
		s.ghosts[0] = s.pac
	}
	want := []outcome{
		{[]int{eventShieldBroken}, 1, 1, 10},
		{[]int{}, 1, 0, 10}, // invulnerable for one round
		{[]int{eventShieldBroken}, 0, 1, 20},
		{[]int{}, 0, 0, 20},
		{[]int{eventEaten}, 0, 3, 70},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
}

func TestShieldPickedUpThisRoundDoesNotProtect(t *testing.T) {
	s := endless(t,
		"PhA",
		"B.C",
	)
	res := s.play(right, [3]int{left, stay, stay})
	if !slices.Equal(res.events, []int{eventEaten}) || s.skills[skillShield] != 0 {
		t.Errorf("events %v, shields %d; want eaten, and the new shield gone with the other skills", res.events, s.skills[skillShield])
	}
}

func TestShieldPickedUpProtectsNextRound(t *testing.T) {
	s := endless(t,
		"Ph.A",
		"B..C",
	)
	s.play(right, [3]int{left, stay, stay}) // picks the shield up; the ghost comes closer
	res := s.play(stay, [3]int{left, stay, stay})
	if !slices.Equal(res.events, []int{eventShieldBroken}) || s.skills[skillShield] != 0 {
		t.Errorf("events %v, shields %d; want the shield broken", res.events, s.skills[skillShield])
	}
	if res.skills[skillShield] != 1 {
		t.Errorf("pacman_skills = %v, want the shield reported at the round's start", res.skills)
	}
}

func TestInvulnerabilityAfterBeingEaten(t *testing.T) {
	s := endless(t,
		"........",
		"........",
		"P...ABC.",
	)
	var events [][]int
	for range 5 {
		s.ghosts[0] = s.pac // caught every round, wherever it respawns
		res := s.play(stay, still)
		events = append(events, res.events)
	}
	want := [][]int{{eventEaten}, {}, {}, {}, {eventEaten}}
	if !reflect.DeepEqual(events, want) {
		t.Errorf("events per round = %v, want %v (3 rounds of invulnerability)", events, want)
	}
}

func TestInvulnerableCatchCountsAsSurvival(t *testing.T) {
	s := endless(t,
		"P.....",
		"A..BC.",
	)
	s.invulnerable = 2
	s.ghosts[0] = s.pac
	s.survival = 98
	s.play(stay, still)
	s.play(stay, still)
	if s.invulnerable != 0 || s.score[0] != survivalBonus || s.survival != 0 {
		t.Errorf("invulnerable %d, score %d, survival %d; want 0, 50, 0", s.invulnerable, s.score[0], s.survival)
	}
}

func TestEveryFifthCatch(t *testing.T) {
	s := endless(t,
		"........",
		"........",
		"P...ABC.",
	)
	var ghosts []int
	for range 10 {
		s.ghosts[0] = s.pac
		s.invulnerable = 0
		s.play(stay, still)
		ghosts = append(ghosts, s.score[1])
	}
	want := []int{50, 100, 150, 200, 310, 360, 410, 460, 510, 620}
	if !slices.Equal(ghosts, want) {
		t.Errorf("ghost score after each catch = %v, want %v", ghosts, want)
	}
	if s.score[0] != -600 {
		t.Errorf("Pac-Man score %d, want −600", s.score[0])
	}
}

func TestSurvivalBonus(t *testing.T) {
	s := endless(t,
		"P.......",
		"........",
		".....ABC",
	)
	s.ghosts[0] = point{3, 8}
	var bonusRounds []int
	for round := 1; round <= 260; round++ {
		if round == 150 { // a shield break resets the count too
			s.skills[skillShield], s.active[skillShield] = 1, 1
			s.ghosts[0] = s.pac
		}
		before := s.score[0]
		s.play(stay, still)
		if s.score[0] != before {
			bonusRounds = append(bonusRounds, round)
		}
		if round == 150 {
			s.ghosts[0] = point{3, 8}
		}
	}
	if want := []int{100, 250}; !slices.Equal(bonusRounds, want) { // the shield break in round 150 restarts the count
		t.Errorf("bonus in rounds %v, want %v", bonusRounds, want)
	}
}

func TestPortal(t *testing.T) {
	pic := []string{
		"..@...",
		"......",
		"......",
		"A....B",
		"C....P",
	}
	const portalX, portalY = 5, 3
	tests := []struct {
		name string
		// The Pac-Man starts at from and plays moves from round 58 on.
		from  point
		moves []int
		speed bool
		// wantRound is the round that finishes the level, 0 for none.
		wantRound int
	}{
		{"entered in the round it opens: not yet", point{5, 2}, []int{stay, stay, right}, false, 0},
		{"entered in the round it opens: finished the next round, whatever the move", point{5, 2}, []int{stay, stay, right, left}, false, 61},
		{"entered the round after it opens", point{5, 2}, []int{stay, stay, stay, right}, false, 61},
		{"standing on it when it opens: finished next round", point{portalX, portalY}, []int{stay, stay, stay, stay}, false, 61},
		{"leaving it counts: the path's start", point{portalX, portalY}, []int{stay, stay, stay, right}, false, 61},
		{"passing through with speed", point{5, 2}, []int{stay, stay, stay, right}, true, 61},
		{"standing next to it", point{4, 3}, []int{stay, stay, stay, stay, stay}, false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := endless(t, pic...)
			s.pac = tt.from
			s.round = 57
			finished := 0
			for i, m := range tt.moves {
				if tt.speed && i == len(tt.moves)-1 {
					s.skills[skillSpeed], s.active[skillSpeed] = 2, 2
				}
				res := s.play(m, still)
				if s.round == 60 && !s.portalOpen {
					t.Fatal("the portal is closed after round 60")
				}
				if s.round < 60 && s.portalOpen {
					t.Fatalf("the portal is open after round %d", s.round)
				}
				if slices.Contains(res.events, eventFinishedLevel) {
					finished = s.round
					if !res.levelOver {
						t.Error("finished but the level is not over")
					}
					break
				}
			}
			if finished != tt.wantRound {
				t.Errorf("finished in round %d, want %d", finished, tt.wantRound)
			}
		})
	}
}

func TestPortalScore(t *testing.T) {
	for _, tt := range []struct {
		name      string
		beansLeft bool
		want      int
	}{
		{"beans left", true, 188},        // floor((500−61) × 0.43) = floor(188.77)
		{"every bean eaten", false, 238}, // + 50
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := level(t, "P@..", "A.BC")
			if tt.beansLeft {
				s.beans++
			}
			s.round, s.portalOpen = 60, true
			s.skills = [numSkills]int{3, 3, 3, 1, 1}
			s.survival, s.catches, s.eaten = 7, 2, 0
			res := s.play(right, still)
			if !slices.Equal(res.events, []int{eventFinishedLevel}) {
				t.Fatalf("events %v, want [2]", res.events)
			}
			if s.score[0] != tt.want {
				t.Errorf("score %d, want %d", s.score[0], tt.want)
			}
			if s.skills != [numSkills]int{} || s.survival != 0 || s.catches != 0 {
				t.Errorf("skills %v survival %d catches %d, want all reset", s.skills, s.survival, s.catches)
			}
		})
	}
}

func TestPortalBlockedWhenEaten(t *testing.T) {
	for _, tt := range []struct {
		name   string
		shield bool
		want   []int
	}{
		{"eaten: no", false, []int{eventEaten}},
		{"shield broken: yes", true, []int{eventShieldBroken, eventFinishedLevel}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := endless(t, "P@A.", "B..C")
			s.round, s.portalOpen = 70, true
			if tt.shield {
				s.skills[skillShield], s.active[skillShield] = 1, 1
			}
			res := s.play(right, [3]int{left, stay, stay})
			if !slices.Equal(res.events, tt.want) {
				t.Errorf("events %v, want %v", res.events, tt.want)
			}
		})
	}
}

func TestNoPortalOnLevelThree(t *testing.T) {
	s := endless(t, "P...", "A.BC")
	s.spec = levelSpec{size: s.board.size, maxRounds: 300}
	s.round = 200
	s.play(stay, still)
	if s.portalOpen {
		t.Error("a level without a portal opened one")
	}
}

func TestAllBeansEaten(t *testing.T) {
	s := level(t,
		"PoO.",
		"A.BC",
	)
	s.round = 497
	s.play(right, still)
	res := s.play(right, still)
	if !slices.Equal(res.events, []int{eventFinishedLevel}) || !res.levelOver || res.remaining != 0 {
		t.Fatalf("events %v over %v remaining %d, want the level finished", res.events, res.levelOver, res.remaining)
	}
	// 3 for the beans, 50 for all, floor((500−499) × 0.43) = 0.
	if s.score[0] != 53 {
		t.Errorf("score %d, want 53", s.score[0])
	}
}

func TestAllBeansOnTheLastRoundIsNotATimeout(t *testing.T) {
	s := level(t, "Po..", "A.BC")
	s.round = 499
	res := s.play(right, still)
	if !slices.Equal(res.events, []int{eventFinishedLevel}) || s.score != [2]int{51, 0} {
		t.Errorf("events %v score %v, want [2] and [51 0]", res.events, s.score)
	}
}

func TestTimeout(t *testing.T) {
	s := endless(t, "P...", "A.BC")
	s.skills = [numSkills]int{2, 0, 0, 1, 0}
	s.round = 498
	if res := s.play(stay, still); res.levelOver {
		t.Fatal("over after round 499")
	}
	res := s.play(stay, still)
	if !slices.Equal(res.events, []int{eventTimeout}) || !res.levelOver || s.score[1] != timeoutPoints {
		t.Errorf("events %v over %v ghosts %d, want [3], over, 75", res.events, res.levelOver, s.score[1])
	}
	if s.skills != [numSkills]int{} {
		t.Errorf("skills %v after the level, want cleared", s.skills)
	}
}

func TestRoundBonus(t *testing.T) {
	for _, tt := range []struct{ give, want int }{
		{0, 0}, {1, 0}, {3, 1}, {100, 43}, {439, 188}, {440, 189}, {499, 214}, {300, 129},
	} {
		if got := roundBonus(tt.give); got != tt.want {
			t.Errorf("roundBonus(%d) = %d, want %d", tt.give, got, tt.want)
		}
	}
}

func TestStartLevelKeepsInvulnerabilityAndScore(t *testing.T) {
	s := endless(t, "P...", "A.BC")
	s.invulnerable, s.score = 2, [2]int{10, 20}
	s.skills, s.active = [numSkills]int{1, 1, 1, 1, 1}, [numSkills]int{1, 1, 1, 1, 1}
	s.portalOpen, s.eaten, s.round = true, 5, 77
	s.startLevel(2, generateLevel(levelRand(1, 2), 2))
	if s.invulnerable != 2 || s.score != [2]int{10, 20} {
		t.Errorf("invulnerable %d score %v, want both kept", s.invulnerable, s.score)
	}
	if s.skills != [numSkills]int{} || s.active != [numSkills]int{} || s.portalOpen || s.eaten != 0 || s.round != 0 {
		t.Errorf("skills %v active %v portal %v eaten %d round %d, want reset", s.skills, s.active, s.portalOpen, s.eaten, s.round)
	}
}
