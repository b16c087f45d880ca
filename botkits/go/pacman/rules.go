package pacman

// play replays one round of the rules (as Arena's
// engine/pacman plays it) on the submitted actions, so that the Game stays in step with
// the platform's board without being sent it.
func (g *Game) play(pac int, ghosts [3]int) {
	pac = legal(pac)
	g.Round++
	start := g.Skills // in effect during this round
	for _, k := range []int{SkillDouble, SkillMagnet, SkillSpeed} {
		if g.Skills[k] > 0 {
			g.Skills[k]--
		}
	}
	if start[SkillFreeze] > 0 {
		ghosts = [3]int{}
		g.Skills[SkillFreeze]--
	}

	// Moves. The paths are in half cells, for the catch test: the start,
	// the middle of a single step, the end.
	path := []Point{g.Pacman}
	steps := 1
	if start[SkillSpeed] > 0 {
		steps = 2
	}
	for range steps {
		g.eat(start)
		g.Pacman = g.Move(g.Pacman, pac)
		path = append(path, g.Pacman)
	}
	pacHalf := halves(path)
	var ghostHalf [3][3]Point
	for j := range g.Ghosts {
		from := g.Ghosts[j]
		g.Ghosts[j] = g.Move(from, legal(ghosts[j]))
		ghostHalf[j] = halves([]Point{from, g.Ghosts[j]})
	}
	g.eat(start)

	// Catch: a ghost within half a cell of the Pac-Man at the middle or
	// the end of the round.
	caught := false
	for k := 1; k <= 2; k++ {
		for j := range ghostHalf {
			d := ghostHalf[j][k]
			caught = caught || abs(d.X-pacHalf[k].X)+abs(d.Y-pacHalf[k].Y) <= 1
		}
	}
	eaten := false
	switch {
	case caught && g.Invulnerable == 0 && start[SkillShield] > 0:
		g.Skills[SkillShield]--
		g.Invulnerable = 1
		g.Score[1] += 10
		g.survival = 0
	case caught && g.Invulnerable == 0:
		eaten = true
		g.Invulnerable = 3
		g.Score[0] -= 60
		g.Score[1] += 50
		g.catches++
		g.survival = 0
		g.Skills = [5]int{}
		g.Pacman = g.respawn()
	default:
		if g.Invulnerable > 0 {
			g.Invulnerable--
		}
		g.survival++
		if g.survival >= 100 {
			g.Score[0] += 50
			g.survival = 0
		}
	}
	if g.catches >= 5 {
		g.Score[1] += 60
		g.catches = 0
	}

	// The level ends through the open portal, with every bean eaten, or
	// when time is up.
	onPortal := false
	for _, p := range path {
		onPortal = onPortal || p == g.Portal
	}
	if g.PortalOpen && !eaten && onPortal {
		g.finish()
		return
	}
	if g.portalAt > 0 && g.Round >= g.portalAt {
		g.PortalOpen = true
	}
	if g.BeansLeft <= 0 {
		g.finish()
		return
	}
	if g.Round >= g.MaxRounds {
		g.Score[1] += 75
		g.endLevel()
	}
}

// eat takes what lies under the Pac-Man (the 3×3 square with the magnet).
func (g *Game) eat(active [5]int) {
	r := 0
	if active[SkillMagnet] > 0 {
		r = 1
	}
	for x := g.Pacman.X - r; x <= g.Pacman.X+r; x++ {
		for y := g.Pacman.Y - r; y <= g.Pacman.Y+r; y++ {
			if x < 1 || y < 1 || x > g.Size-2 || y > g.Size-2 {
				continue
			}
			points := 1
			if active[SkillDouble] > 0 {
				points = 2
			}
			switch g.Board[x][y] {
			case Bean:
				g.Score[0] += points
				g.BeansLeft--
			case Bonus:
				g.Score[0] += 2 * points
				g.BeansLeft--
			case Speed:
				g.Skills[SkillSpeed] = 8
			case Magnet:
				g.Skills[SkillMagnet] = 8
			case Double:
				g.Skills[SkillDouble] = 8
			case Freeze:
				g.Skills[SkillFreeze] = 2
			case ShieldUp:
				g.Skills[SkillShield]++
			default:
				continue
			}
			g.Board[x][y] = Empty
		}
	}
}

// finish scores a level left through the portal or emptied of beans.
func (g *Game) finish() {
	if g.BeansLeft <= 0 {
		g.Score[0] += 50
	}
	g.Score[0] += int(float64(g.MaxRounds-g.Round) * 0.43)
	g.endLevel()
}

func (g *Game) endLevel() {
	g.Skills = [5]int{}
	g.survival, g.catches = 0, 0
	g.LevelOver = true
	g.GameOver = g.Level >= len(levels)
}

// respawn is where an eaten Pac-Man reappears: the Empty cell farthest
// from its nearest ghost, the first in row order among equals.
func (g *Game) respawn() Point {
	best, bestDist := g.Pacman, 0
	for x := range g.Size {
		for y := range g.Size {
			if g.Board[x][y] != Empty {
				continue
			}
			d := -1
			for _, gh := range g.Ghosts {
				if dg := abs(gh.X-x) + abs(gh.Y-y); d < 0 || dg < d {
					d = dg
				}
			}
			if d > bestDist {
				best, bestDist = Point{x, y}, d
			}
		}
	}
	return best
}

// halves turns a path of 2 or 3 cells into 3 samples in half cells: a
// single step gets its middle.
func halves(path []Point) [3]Point {
	h := func(p Point) Point { return Point{2 * p.X, 2 * p.Y} }
	if len(path) == 3 {
		return [3]Point{h(path[0]), h(path[1]), h(path[2])}
	}
	a, b := path[0], path[1]
	return [3]Point{h(a), {a.X + b.X, a.Y + b.Y}, h(b)}
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}
