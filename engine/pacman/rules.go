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

// stage is one named step of a round: a rule applied to the state.
type stage struct {
	name string
	run  func(s *state, r *roundState)
}

// pacmanStages are the steps of a round (spec "One round", steps 1 to 14),
// applied in this order. A stage that ends the level ends the round: the
// stages after it do not run.
var pacmanStages = []stage{
	{"start", startRound},                  // 1
	{"count down skills", countDownSkills}, // 2
	{"move pac-man", movePacman},           // 3 and 4
	{"move ghosts", moveGhosts},            // 5
	{"sample paths", samplePaths},          // 6
	{"eat", eatAfterMoves},                 // 7
	{"detect catch", detectCatch},          // 8
	{"resolve catch", resolveCatch},        // 9
	{"apply skills", applySkills},          // 10
	{"enter portal", enterPortal},          // 11
	{"open portal", openPortal},            // 12
	{"all beans", allBeansEaten},           // 13
	{"time limit", timeLimit},              // 14
}

// roundState is what the stages of one round share: the actions, what
// earlier stages found, and the result being built.
type roundState struct {
	pacAction    int
	ghostActions [3]int
	start        [numSkills]int // the skills at the start of the round
	pacSamples   []point        // the catch samples of each path
	ghostSamples [3][]point
	caught       bool // a ghost came close enough to catch the Pac-Man
	by           int  // the ghost credited with that catch
	eaten        bool // the catch ate the Pac-Man
	res          roundResult
}

// play runs one round with the submitted actions (spec "One round").
func (s *state) play(pacAction int, ghostActions [3]int) roundResult {
	r := &roundState{
		pacAction:    pacAction,
		ghostActions: ghostActions,
		by:           -1,
		res:          roundResult{caughtBy: -1, events: []int{}},
	}
	for _, st := range pacmanStages {
		if r.res.levelOver {
			break
		}
		st.run(s, r)
	}
	return r.res
}

// startRound counts the round and notes the skills it starts with.
func startRound(s *state, r *roundState) {
	s.round++
	r.start = s.skills
	r.res.skills = s.skills
}

// countDownSkills takes one round off double, magnet and speed. Freeze in
// effect keeps the ghosts still this round and counts down too.
func countDownSkills(s *state, r *roundState) {
	for _, k := range [...]int{skillDouble, skillMagnet, skillSpeed} {
		if s.skills[k] > 0 {
			s.skills[k]--
		}
	}
	if r.start[skillFreeze] > 0 {
		r.ghostActions = [3]int{}
		s.skills[skillFreeze]--
	}
}

// movePacman moves the Pac-Man one step, two with speed in effect. It eats
// before each step. A step into a wall is a bump: it stays.
func movePacman(s *state, r *roundState) {
	r.res.pacPath = []point{s.pac}
	steps := 1
	if r.start[skillSpeed] > 0 {
		steps = 2
	}
	for range steps {
		s.eat(&r.res)
		to := s.pac.add(actionDelta[r.pacAction])
		if s.board.at(to) == cellWall {
			r.res.pacPath = append(r.res.pacPath, to.add(point{pacmanHitOffset, pacmanHitOffset}))
			continue
		}
		s.pac = to
		r.res.pacPath = append(r.res.pacPath, to)
	}
}

// moveGhosts moves each ghost one step. A step into a wall is a bump: it
// stays.
func moveGhosts(s *state, r *roundState) {
	for j := range s.ghosts {
		r.res.ghostPaths[j] = []point{s.ghosts[j]}
		to := s.ghosts[j].add(actionDelta[r.ghostActions[j]])
		if s.board.at(to) == cellWall {
			r.res.ghostPaths[j] = append(r.res.ghostPaths[j], to.add(point{ghostHitOffset, ghostHitOffset}))
			continue
		}
		s.ghosts[j] = to
		r.res.ghostPaths[j] = append(r.res.ghostPaths[j], to)
	}
}

// samplePaths turns each path into the samples compared for a catch.
func samplePaths(_ *state, r *roundState) {
	r.pacSamples = catchSamples(r.res.pacPath)
	for j := range r.ghostSamples {
		r.ghostSamples[j] = catchSamples(r.res.ghostPaths[j])
	}
}

// eatAfterMoves takes what lies where the Pac-Man ended and counts the
// beans left.
func eatAfterMoves(s *state, r *roundState) {
	s.eat(&r.res)
	r.res.remaining = s.beans - s.eaten
}

// detectCatch compares the middle and the end samples: a ghost within one
// half cell catches the Pac-Man. At each sample the first such ghost is
// credited, and the end sample's ghost over the middle one's.
func detectCatch(_ *state, r *roundState) {
	for k := 1; k <= 2; k++ {
		for j := range r.ghostSamples {
			if halfDistance(r.pacSamples[k], r.ghostSamples[j][k]) <= 1 {
				r.caught, r.by = true, j
				break
			}
		}
	}
}

// resolveCatch applies a catch unless the Pac-Man is invulnerable: a
// shield breaks, or else the Pac-Man is eaten. Every fifth catch gives
// the ghosts a bonus. A round without a catch counts as survived.
func resolveCatch(s *state, r *roundState) {
	if !r.caught || s.invulnerable != 0 {
		s.survive()
		return
	}
	r.res.caughtBy = r.by
	if s.active[skillShield] > 0 {
		s.breakShield(&r.res)
	} else {
		r.eaten = true
		s.eatPacman(&r.res)
	}
	if s.catches >= catchBonusEvery {
		s.score[1] += catchBonus
		s.catches = 0
	}
}

// breakShield spends a shield on a catch: the ghosts score, and the
// Pac-Man cannot be caught next round.
func (s *state) breakShield(res *roundResult) {
	s.skills[skillShield]--
	s.invulnerable = invulnerableShield
	s.score[1] += shieldBreakPoints
	s.survival = 0
	res.events = append(res.events, eventShieldBroken)
}

// eatPacman scores a catch without a shield: the Pac-Man loses points and
// its skills and respawns far from the ghosts.
func (s *state) eatPacman(res *roundResult) {
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

// survive counts a round without a catch: invulnerability counts down, and
// every hundredth such round in a row gives the Pac-Man a bonus.
func (s *state) survive() {
	if s.invulnerable > 0 {
		s.invulnerable--
	}
	s.survival++
	if s.survival >= survivalRounds {
		s.score[0] += survivalBonus
		s.survival = 0
	}
}

// applySkills puts the skills as they now are in effect for the next
// round.
func applySkills(s *state, _ *roundState) { s.active = s.skills }

// enterPortal finishes the level when the Pac-Man's path crosses the open
// portal, unless it was eaten.
func enterPortal(s *state, r *roundState) {
	if !s.portalOpen || r.eaten {
		return
	}
	for _, p := range r.res.pacPath {
		if p == s.portal {
			s.finishLevel(&r.res, r.res.remaining)
			return
		}
	}
}

// openPortal opens the level's portal from its round on. The Pac-Man can
// use it from the next round.
func openPortal(s *state, _ *roundState) {
	if s.spec.portalAt > 0 && s.round >= s.spec.portalAt {
		s.portalOpen = true
	}
}

// allBeansEaten finishes the level when no bean is left.
func allBeansEaten(s *state, r *roundState) {
	if r.res.remaining == 0 {
		s.finishLevel(&r.res, r.res.remaining)
	}
}

// timeLimit ends the level at its round limit, and the ghosts score.
func timeLimit(s *state, r *roundState) {
	if s.round < s.spec.maxRounds {
		return
	}
	s.score[1] += timeoutPoints
	s.endLevel()
	r.res.events = append(r.res.events, eventTimeout)
	r.res.levelOver = true
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
