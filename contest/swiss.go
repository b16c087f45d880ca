package contest

import (
	"fmt"
	"slices"

	"arena/store"
)

// FormatSwiss is a final by Swiss system: rounds in which entries of
// equal points meet, each round paired once the one before is over.
const FormatSwiss = "swiss"

func init() { register(swiss{}) }

// swiss is the Swiss system format.
type swiss struct{}

func (swiss) Name() string { return FormatSwiss }

// Start is the first round, paired by the entries' seeding.
func (swiss) Start(f Final) ([]Game, error) {
	order, err := f.Seeding(f.Entries)
	if err != nil {
		return nil, err
	}
	pairs, bye := SwissPairs(order, nil, nil, nil)
	return SwissRound(pairs, bye, f.Spec.Maps, f.Spec.Rounds, uint64(f.Spec.Seed), 0, 0), nil
}

// Next pairs the next round from the points so far; false once the
// final has played all its rounds, or fewer than two entries are left.
func (swiss) Next(f Final) (Round, bool, error) {
	last := 0
	for _, g := range f.Games {
		last = max(last, g.Round)
	}
	rounds := swissRounds(f.Spec, len(f.Entries))
	if last+1 >= rounds {
		return Round{}, false, nil
	}
	points := map[int64]float64{}
	met := map[[2]int64]bool{}
	byes := map[int64]bool{}
	for _, g := range f.Games {
		if g.Second == 0 {
			byes[g.First] = true
			points[g.First]++
			continue
		}
		met[pairOf(g.First, g.Second)] = true
		if r, err := DecodeOutcome(g.Outcome); err == nil && g.State == store.GameScored {
			points[g.First] += r.First
			points[g.Second] += r.Second
		}
	}
	order, err := f.Seeding(f.Entries)
	if err != nil {
		return Round{}, false, err
	}
	// A disqualified entry plays no more rounds.
	order = slices.DeleteFunc(order, func(e int64) bool { return f.Disqualified[e] })
	if len(order) < 2 {
		return Round{}, false, nil
	}
	pairs, bye := SwissPairs(order, points, met, byes)
	next := SwissRound(pairs, bye, f.Spec.Maps, f.Spec.Rounds, uint64(f.Spec.Seed), last+1, len(f.Games))
	detail := fmt.Sprintf("round %d of %d: %d pairings", last+2, rounds, len(pairs))
	if bye != 0 {
		detail += fmt.Sprintf(", a bye for entry %d", bye)
	}
	return Round{N: last + 1, Games: next, Detail: detail}, true, nil
}

// swissRounds is how many rounds a final of n entries plays: the spec's
// SwissRounds (at most n − 1), else SwissRounds(n).
func swissRounds(s Spec, n int) int {
	if s.SwissRounds > 0 {
		return min(s.SwissRounds, max(1, n-1))
	}
	return SwissRounds(n)
}

// SwissRounds is how many rounds a Swiss system of n entries plays
// unless the contest says: ⌈log₂ n⌉ + 2, so the top entries have met
// and the top is decided by games between them, at most n − 1.
func SwissRounds(n int) int {
	r := 2
	for p := 1; p < n; p *= 2 {
		r++
	}
	return max(1, min(r, n-1))
}

// SwissPairs pairs a Swiss system's round (pure). order is the entries
// in their seeding order (strongest first: the practice board), points
// their points so far, met the pairs that have met, byes those that had
// a bye. With an odd number of entries the lowest placed that has had no
// bye (the lowest of all if every one has) sits the round out. The rest
// are ranked by points, then seeding; the highest unpaired entry takes
// its partner in order of preference: the least difference of points,
// then the nearest to the place half its score group below it (so in a
// group the top half meets the bottom half, the first the first). No
// pair meets twice if any pairing of the round avoids it (a search that
// backs off a choice that leaves no such pairing); else the preferred
// partners, met or not.
func SwissPairs(order []int64, points map[int64]float64, met map[[2]int64]bool, byes map[int64]bool) (pairs [][2]int64, bye int64) {
	seed := map[int64]int{}
	for i, e := range order {
		seed[e] = i
	}
	rank := slices.Clone(order)
	slices.SortStableFunc(rank, func(a, b int64) int {
		if points[a] != points[b] {
			if points[a] > points[b] {
				return -1
			}
			return 1
		}
		return seed[a] - seed[b]
	})
	if len(rank)%2 == 1 {
		at := len(rank) - 1
		for i := len(rank) - 1; i >= 0; i-- {
			if !byes[rank[i]] {
				at = i
				break
			}
		}
		bye = rank[at]
		rank = slices.Delete(rank, at, at+1)
	}
	// preferred is the partners of rest[0] among rest[1:], best first.
	preferred := func(rest []int64) []int64 {
		a := rest[0]
		group := 0
		for _, e := range rest {
			if points[e] == points[a] {
				group++
			}
		}
		target := group / 2
		cands := slices.Clone(rest[1:])
		pos := map[int64]int{}
		for j, e := range rest {
			pos[e] = j
		}
		diff := func(b int64) float64 { return max(points[a]-points[b], points[b]-points[a]) }
		dist := func(b int64) int { return max(pos[b]-target, target-pos[b]) }
		slices.SortStableFunc(cands, func(x, y int64) int {
			if dx, dy := diff(x), diff(y); dx != dy {
				if dx < dy {
					return -1
				}
				return 1
			}
			return dist(x) - dist(y)
		})
		return cands
	}
	budget := 200_000
	var search func(rest []int64, fresh bool) [][2]int64
	search = func(rest []int64, fresh bool) [][2]int64 {
		if len(rest) == 0 {
			return [][2]int64{}
		}
		a := rest[0]
		for _, b := range preferred(rest) {
			if fresh && met[pairOf(a, b)] {
				continue
			}
			if budget--; budget < 0 {
				return nil
			}
			left := slices.DeleteFunc(slices.Clone(rest[1:]), func(e int64) bool { return e == b })
			if more := search(left, fresh); more != nil {
				return append([][2]int64{{a, b}}, more...)
			}
			if !fresh {
				break
			}
		}
		return nil
	}
	if pairs = search(rank, true); pairs == nil {
		budget = len(rank)
		pairs = search(rank, false)
	}
	return pairs, bye
}

// SwissRound is the games of a Swiss system's round r: each pair plays
// every map rounds times, half in each seat order, the k-th pair of
// games on a map with the same seed for every pairing of the round (a
// seed of its own for each round); a bye is a game against no one
// (Second 0) on each map and round, won. Idx counts from first.
func SwissRound(pairs [][2]int64, bye int64, maps []string, rounds int, seed uint64, r, first int) []Game {
	var out []Game
	for k := 0; k < rounds/2; k++ {
		for _, m := range maps {
			s := SeedOf(seed, m, r*(rounds/2)+k)
			for _, p := range pairs {
				a, b := min(p[0], p[1]), max(p[0], p[1])
				out = append(out, Game{First: a, Second: b, Map: m, Seed: s}, Game{First: b, Second: a, Map: m, Seed: s})
			}
			if bye != 0 {
				out = append(out, Game{First: bye, Map: m, Seed: s}, Game{First: bye, Map: m, Seed: s})
			}
		}
	}
	for i := range out {
		out[i].Idx = first + i
	}
	return out
}
