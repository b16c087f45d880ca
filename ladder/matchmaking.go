package ladder

import (
	"cmp"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"arena/engine"
	"arena/ladder/skill"
	"arena/store"
)

// Candidate is an active entry as matchmaking sees it.
type Candidate struct {
	ID     int64
	Name   string
	Rating skill.Rating
	// InFlight counts its ladder matches not yet over.
	InFlight int
}

// Tally counts what a game's ladder has played and is playing, per entry:
// on each map, and in each seat of each map.
type Tally struct {
	matches map[string]int // per map
	maps    map[mapKey]int
	seats   map[seatKey]int
}

type mapKey struct {
	entry int64
	m     string
}

type seatKey struct {
	mapKey
	seat int
}

// NewTally counts the matches given (void ones are left out).
func NewTally(matches []store.LadderMatch) *Tally {
	t := &Tally{matches: map[string]int{}, maps: map[mapKey]int{}, seats: map[seatKey]int{}}
	for _, lm := range matches {
		if lm.State == store.LadderVoid {
			continue
		}
		t.matches[lm.Map]++
		for _, s := range lm.Seats {
			t.add(s.EntryID, lm.Map, s.Seat)
		}
	}
	return t
}

func (t *Tally) add(entry int64, m string, seat int) {
	t.maps[mapKey{entry, m}]++
	t.seats[seatKey{mapKey{entry, m}, seat}]++
}

// Pairing is a match matchmaking chose.
type Pairing struct {
	Map string
	// Entries are the entries by seat.
	Entries []int64
	// Reason says why, for the people watching the ladder.
	Reason string
}

// Matchmaker chooses the ladder's next match.
type Matchmaker struct {
	Model skill.Model
	// Uniform picks the players uniformly at random instead (the baseline
	// the matchmaking is measured against).
	Uniform bool
}

// sharpness is how strongly matchmaking prefers close ratings: the
// weight of a pairing is its match quality to this power. Measured on
// simulated ladders of six entries (TestLadderConvergesOnTheKnownOrder,
// BenchmarkConvergence), 4 to 8 converge fastest.
const sharpness = 6

// ErrTooFew is returned when fewer than two entries can play.
var ErrTooFew = errors.New("fewer than two active entries")

// Pick chooses the next match among the candidates, on one of the maps,
// drawing from rng; the same arguments give the same match.
//
//   - The focal entry: a pair is drawn, with a weight that grows with
//     how uncertain its order is: the match's quality (close μ, so the
//     result is hard to predict) to the power sharpness, times the pair's
//     variance (σ² + σ², so new and unsettled entries play most), divided
//     by the matches they already have in flight; the pair's less certain
//     entry is the focal one. (Halite chose high-σ players first.)
//   - The map is the one the ladder played least (then the one the focal
//     entry played least, then the first in the game's order), with as
//     many players as it seats and the ladder has, up to four.
//   - Its opponents are drawn one by one with a weight of their match
//     quality with it to the power sharpness: near neighbours (close μ,
//     as Halite did) meet most, and everyone meets sometimes.
//   - Seats go to the order whose entries played those seats of that map
//     least, so every entry plays every seat evenly.
func (mm Matchmaker) Pick(cands []Candidate, maps []engine.MapInfo, t *Tally, rng *rand.Rand) (Pairing, error) {
	if len(cands) < 2 {
		return Pairing{}, ErrTooFew
	}
	cands = slices.Clone(cands)
	slices.SortFunc(cands, func(a, b Candidate) int { return cmp.Compare(a.ID, b.ID) })
	var focal int
	if mm.Uniform {
		focal = rng.IntN(len(cands))
	} else {
		focal = mm.focal(cands, rng)
	}
	f := cands[focal]
	var m engine.MapInfo
	best := [2]int{-1}
	for _, mi := range maps {
		if mi.MinPlayers > len(cands) {
			continue
		}
		n := [2]int{t.matches[mi.Name], t.maps[mapKey{f.ID, mi.Name}]}
		if best[0] < 0 || n[0] < best[0] || n[0] == best[0] && n[1] < best[1] {
			m, best = mi, n
		}
	}
	if best[0] < 0 {
		return Pairing{}, fmt.Errorf("no map of this game seats %d players", len(cands))
	}
	n := min(m.MaxPlayers, len(cands), 4)

	players := []Candidate{f}
	rest := slices.Delete(slices.Clone(cands), focal, focal+1)
	var why []string
	for len(players) < n {
		weights := make([]float64, len(rest))
		total := 0.0
		for i, c := range rest {
			weights[i] = 1
			if !mm.Uniform {
				weights[i] = math.Pow(mm.Model.Quality(f.Rating, c.Rating), sharpness) + 1e-12
			}
			total += weights[i]
		}
		x := rng.Float64() * total
		k := len(rest) - 1
		for i, w := range weights {
			if x < w {
				k = i
				break
			}
			x -= w
		}
		c := rest[k]
		why = append(why, fmt.Sprintf("%s (μ %.1f, %.0f%% likely to be drawn)", c.Name, c.Rating.Mu, 100*weights[k]/total))
		players = append(players, c)
		rest = slices.Delete(rest, k, k+1)
	}

	// Every seat order, shuffled so that ties fall either way, then the
	// one whose seats these entries played least on this map.
	orders := permutations(len(players))
	rng.Shuffle(len(orders), func(i, j int) { orders[i], orders[j] = orders[j], orders[i] })
	bestOrder, bestCost := orders[0], math.MaxInt
	for _, o := range orders {
		cost := 0
		for seat, p := range o {
			cost += t.seats[seatKey{mapKey{players[p].ID, m.Name}, seat}]
		}
		if cost < bestCost {
			bestOrder, bestCost = o, cost
		}
	}
	p := Pairing{Map: m.Name}
	t.matches[m.Name]++
	for seat, i := range bestOrder {
		p.Entries = append(p.Entries, players[i].ID)
		t.add(players[i].ID, m.Name, seat)
	}
	if mm.Uniform {
		p.Reason = "players drawn uniformly at random"
	} else {
		p.Reason = fmt.Sprintf("%s (μ %.1f, σ %.2f) against the entries whose order with it is least certain: %s; map %s, the one the ladder played least",
			f.Name, f.Rating.Mu, f.Rating.Sigma, strings.Join(why, ", "), m.Name)
	}
	return p, nil
}

// focal draws a pair (see Pick) and returns its less certain entry.
func (mm Matchmaker) focal(cands []Candidate, rng *rand.Rand) int {
	type pair struct {
		i, j int
		w    float64
	}
	var pairs []pair
	total := 0.0
	for i := range cands {
		for j := i + 1; j < len(cands); j++ {
			a, b := cands[i], cands[j]
			w := math.Pow(mm.Model.Quality(a.Rating, b.Rating), sharpness) *
				(a.Rating.Sigma*a.Rating.Sigma + b.Rating.Sigma*b.Rating.Sigma) / float64(1+a.InFlight+b.InFlight)
			pairs = append(pairs, pair{i, j, w + 1e-12})
			total += w + 1e-12
		}
	}
	x := rng.Float64() * total
	k := len(pairs) - 1
	for i, p := range pairs {
		if x < p.w {
			k = i
			break
		}
		x -= p.w
	}
	if p := pairs[k]; cands[p.j].Rating.Sigma > cands[p.i].Rating.Sigma {
		return p.j
	}
	return pairs[k].i
}

// permutations lists every order of 0…n-1.
func permutations(n int) [][]int {
	if n == 0 {
		return [][]int{{}}
	}
	var out [][]int
	for _, p := range permutations(n - 1) {
		for i := 0; i <= len(p); i++ {
			q := slices.Insert(slices.Clone(p), i, n-1)
			out = append(out, q)
		}
	}
	return out
}

// matchRand is the random source of a game's seq-th ladder match: the
// same game and number always draw the same choices and the same seed.
func matchRand(game string, seq int64) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(game))
	return rand.New(rand.NewPCG(h.Sum64(), uint64(seq)))
}
