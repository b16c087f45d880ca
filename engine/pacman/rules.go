package pacman

// Skills, as indexed in pacman_skill_status.
const (
	skillDouble = 0
	skillSpeed  = 1
	skillMagnet = 2
	skillShield = 3 // a count, not a duration
	skillFreeze = 4
	numSkills   = 5
)

// skillRounds is how long a timed skill lasts once picked up.
var skillRounds = [numSkills]int{skillDouble: 8, skillSpeed: 8, skillMagnet: 8, skillFreeze: 2}

// Actions: 0 stay, 1 up (x+1), 2 left (y−1), 3 down (x−1), 4 right (y+1).
const numActions = 5

var actionDelta = [numActions]point{{0, 0}, {1, 0}, {0, -1}, {-1, 0}, {0, 1}}

// Wall-bump offsets in the step blocks.
const (
	pacmanHitOffset = -100
	ghostHitOffset  = -200
)

// Points and counters.
const (
	beanPoints         = 1
	bonusBeanPoints    = 2
	shieldBreakPoints  = 10 // ghosts
	eatenPenalty       = 60 // taken from the Pac-Man
	catchPoints        = 50 // ghosts
	catchBonusEvery    = 5
	catchBonus         = 60 // ghosts, every catchBonusEvery-th catch
	survivalRounds     = 100
	survivalBonus      = 50
	allBeansBonus      = 50
	roundBonusFactor   = 0.43 // × rounds left, when a level is finished
	timeoutPoints      = 75   // ghosts
	invulnerableShield = 1    // rounds of invulnerability after a shield breaks
	invulnerableEaten  = 3    // after being eaten
)

// Events, as numbered in the replay.
const (
	eventEaten         = 0
	eventShieldBroken  = 1
	eventFinishedLevel = 2
	eventTimeout       = 3
)

// state is the game: the current level and everything that carries over.
type state struct {
	level  int // 1..3
	spec   levelSpec
	board  board
	portal point
	beans  int // beannumber
	eaten  int // beans eaten in this level
	round  int
	pac    point
	ghosts [3]point
	// skills counts down and takes pickups at once; active is what is in
	// effect this round: skills as they were at the end of the last round.
	skills       [numSkills]int
	active       [numSkills]int
	invulnerable int // carries over levels
	survival     int // rounds since the last catch
	catches      int // catches since the last bonus
	portalOpen   bool
	score        [2]int // Pac-Man, ghosts
}

// startLevel sets up level n on a generated board.
func (s *state) startLevel(n int, lb levelBoard) {
	s.level = n
	s.spec = levels[n-1]
	s.board = lb.board
	s.portal = lb.portal
	s.beans = lb.beans
	s.eaten = 0
	s.round = 0
	s.pac = lb.starts[0]
	copy(s.ghosts[:], lb.starts[1:])
	s.clearSkills()
	s.portalOpen = false
}

func (s *state) clearSkills() {
	s.skills = [numSkills]int{}
	s.active = [numSkills]int{}
}

// roundResult is what one round did, for the frame.
type roundResult struct {
	pacPath    []point // raw, wall bumps included
	ghostPaths [3][]point
	skills     [numSkills]int // at the start of the round (zeros if eaten)
	events     []int
	eatenCells []point // cells the Pac-Man cleared, in order
	caughtBy   int     // the ghost credited with a catch that counted, or −1
	levelOver  bool
	remaining  int // beans left when the round ended
}

// play runs one round with the submitted actions (spec "One round").
func (s *state) play(pacAction int, ghostActions [3]int) roundResult {
	res := roundResult{caughtBy: -1, events: []int{}}
	// 1.
	s.round++
	start := s.skills
	res.skills = start
	// 2.
	for _, k := range [...]int{skillDouble, skillMagnet, skillSpeed} {
		if s.skills[k] > 0 {
			s.skills[k]--
		}
	}
	if start[skillFreeze] > 0 {
		ghostActions = [3]int{}
		s.skills[skillFreeze]--
	}
	// 3. and 4.
	res.pacPath = []point{s.pac}
	steps := 1
	if start[skillSpeed] > 0 {
		steps = 2
	}
	for range steps {
		s.eat(&res)
		to := s.pac.add(actionDelta[pacAction])
		if s.board.at(to) == cellWall {
			res.pacPath = append(res.pacPath, to.add(point{pacmanHitOffset, pacmanHitOffset}))
			continue
		}
		s.pac = to
		res.pacPath = append(res.pacPath, to)
	}
	// 5.
	for j := range s.ghosts {
		res.ghostPaths[j] = []point{s.ghosts[j]}
		to := s.ghosts[j].add(actionDelta[ghostActions[j]])
		if s.board.at(to) == cellWall {
			res.ghostPaths[j] = append(res.ghostPaths[j], to.add(point{ghostHitOffset, ghostHitOffset}))
			continue
		}
		s.ghosts[j] = to
		res.ghostPaths[j] = append(res.ghostPaths[j], to)
	}
	// 6.
	pacSamples := catchSamples(res.pacPath)
	var ghostSamples [3][]point
	for j := range ghostSamples {
		ghostSamples[j] = catchSamples(res.ghostPaths[j])
	}
	// 7.
	s.eat(&res)
	remaining := s.beans - s.eaten
	// 8.
	caught, by := false, -1
	for k := 1; k <= 2; k++ {
		for j := range ghostSamples {
			if halfDistance(pacSamples[k], ghostSamples[j][k]) <= 1 {
				caught, by = true, j
				break
			}
		}
	}
	// 9.
	eaten := false
	if caught && s.invulnerable == 0 {
		res.caughtBy = by
		if s.active[skillShield] > 0 {
			s.skills[skillShield]--
			s.invulnerable = invulnerableShield
			s.score[1] += shieldBreakPoints
			s.survival = 0
			res.events = append(res.events, eventShieldBroken)
		} else {
			eaten = true
			s.invulnerable = invulnerableEaten
			s.score[0] -= eatenPenalty
			s.score[1] += catchPoints
			s.catches++
			s.survival = 0
			s.clearSkills()
			res.skills = [numSkills]int{}
			s.pac = s.respawnPoint()
			res.events = append(res.events, eventEaten)
		}
		if s.catches >= catchBonusEvery {
			s.score[1] += catchBonus
			s.catches = 0
		}
	} else {
		if s.invulnerable > 0 {
			s.invulnerable--
		}
		s.survival++
		if s.survival >= survivalRounds {
			s.score[0] += survivalBonus
			s.survival = 0
		}
	}
	// 10.
	s.active = s.skills
	res.remaining = remaining
	// 11.
	if s.portalOpen && !eaten {
		for _, p := range res.pacPath {
			if p == s.portal {
				s.finishLevel(&res, remaining)
				return res
			}
		}
	}
	// 12.
	if s.spec.portalAt > 0 && s.round >= s.spec.portalAt {
		s.portalOpen = true
	}
	// 13.
	if remaining == 0 {
		s.finishLevel(&res, remaining)
		return res
	}
	// 14.
	if s.round >= s.spec.maxRounds {
		s.score[1] += timeoutPoints
		s.endLevel()
		res.events = append(res.events, eventTimeout)
		res.levelOver = true
	}
	return res
}

func (p point) add(q point) point { return point{p.X + q.X, p.Y + q.Y} }

// finishLevel scores a finished level: +50 if every bean is eaten, plus
// floor((max rounds − round) × 0.43).
func (s *state) finishLevel(res *roundResult, remaining int) {
	if remaining == 0 {
		s.score[0] += allBeansBonus
	}
	s.score[0] += roundBonus(s.spec.maxRounds - s.round)
	s.endLevel()
	res.events = append(res.events, eventFinishedLevel)
	res.levelOver = true
}

// roundBonus is floor(left × 0.43) computed in float64, as the original
// did, so that values on the edge round the same way.
func roundBonus(left int) int {
	f := float64(left)
	return int(f * roundBonusFactor)
}

func (s *state) endLevel() {
	s.clearSkills()
	s.eaten = 0
	s.survival = 0
	s.catches = 0
}

// eat takes what lies on the Pac-Man's cell, or on the 3×3 square around
// it with the magnet in effect.
func (s *state) eat(res *roundResult) {
	if s.active[skillMagnet] == 0 {
		s.eatCell(s.pac, res)
		return
	}
	for dx := -1; dx <= 1; dx++ {
		for dy := -1; dy <= 1; dy++ {
			s.eatCell(point{s.pac.X + dx, s.pac.Y + dy}, res)
		}
	}
}

func (s *state) eatCell(p point, res *roundResult) {
	if !s.board.inside(p) {
		return
	}
	factor := 1
	if s.active[skillDouble] > 0 {
		factor = 2
	}
	switch s.board.at(p) {
	case cellBean:
		s.score[0] += beanPoints * factor
		s.eaten++
	case cellBonus:
		s.score[0] += bonusBeanPoints * factor
		s.eaten++
	case cellSpeed:
		s.skills[skillSpeed] = skillRounds[skillSpeed]
	case cellMagnet:
		s.skills[skillMagnet] = skillRounds[skillMagnet]
	case cellDouble:
		s.skills[skillDouble] = skillRounds[skillDouble]
	case cellFreeze:
		s.skills[skillFreeze] = skillRounds[skillFreeze]
	case cellShield:
		s.skills[skillShield]++
	default:
		return
	}
	s.board.set(p, cellEmpty)
	res.eatenCells = append(res.eatenCells, p)
}

// catchSamples turns a raw path into the three samples compared for a
// catch, in half cells: wall bumps become the last cell actually reached,
// and a one-move path gets its midpoint inserted.
func catchSamples(path []point) []point {
	out := make([]point, 0, 3)
	last := path[0]
	for _, p := range path {
		if p.X >= 0 && p.Y >= 0 {
			last = p
		}
		out = append(out, point{2 * last.X, 2 * last.Y})
	}
	if len(out) == 2 {
		out = []point{out[0], {(out[0].X + out[1].X) / 2, (out[0].Y + out[1].Y) / 2}, out[1]}
	}
	return out
}

// halfDistance is the Manhattan distance of two points in half cells.
func halfDistance(a, b point) int { return abs(a.X-b.X) + abs(a.Y-b.Y) }

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

// respawnPoint is the empty cell farthest from its nearest ghost, the first
// in row-major order among equals. Without any empty cell at distance > 0
// (impossible on a generated board) the Pac-Man stays where it is.
func (s *state) respawnPoint() point {
	best, bestDist := s.pac, 0
	for x := 0; x < s.board.size; x++ {
		for y := 0; y < s.board.size; y++ {
			p := point{x, y}
			if s.board.at(p) != cellEmpty {
				continue
			}
			d := -1
			for _, g := range s.ghosts {
				if dg := abs(g.X-x) + abs(g.Y-y); d < 0 || dg < d {
					d = dg
				}
			}
			if d > bestDist {
				best, bestDist = p, d
			}
		}
	}
	return best
}
