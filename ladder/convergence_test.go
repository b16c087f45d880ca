package ladder

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"arena/engine"
	"arena/ladder/skill"
)

// tanksMaps are the Tanks maps' seats: matchmaking plays 2-, 3- and
// 4-player matches on them.
var tanksMaps = []engine.MapInfo{
	{Name: "classic", MinPlayers: 2, MaxPlayers: 2},
	{Name: "triad", MinPlayers: 2, MaxPlayers: 3},
	{Name: "crossroads", MinPlayers: 2, MaxPlayers: 4},
}

// kendallTau compares two rankings of the same ids: 1 when they agree on
// every pair, -1 when they disagree on every pair.
func kendallTau(a, b []int64) float64 {
	pos := map[int64]int{}
	for i, id := range b {
		pos[id] = i
	}
	agree, pairs := 0, 0
	for i := range a {
		for j := i + 1; j < len(a); j++ {
			pairs++
			if pos[a[i]] < pos[a[j]] {
				agree++
			} else {
				agree--
			}
		}
	}
	return float64(agree) / float64(pairs)
}

// sim is a ladder of entries of known strength: a match's places come
// from each player's strength plus normal noise (so an entry beats the
// next weaker one 64% of the time), through the ladder's own
// matchmaking and rating.
type sim struct {
	mm       Matchmaker
	strength map[int64]float64
	truth    []int64 // strongest first
	ratings  map[int64]skill.Rating
	tally    *Tally
	maps     []engine.MapInfo
	rng      *rand.Rand
	played   int
}

func newSim(mm Matchmaker, seed uint64, n int) *sim {
	s := &sim{mm: mm, strength: map[int64]float64{}, ratings: map[int64]skill.Rating{}, tally: NewTally(nil), maps: tanksMaps, rng: rand.New(rand.NewPCG(seed, 99))}
	for i := range n {
		id := int64(i + 1)
		s.strength[id] = 0.5 * float64(n-i)
		s.truth = append(s.truth, id)
		s.ratings[id] = mm.Model.New()
	}
	return s
}

func (s *sim) play() {
	var cands []Candidate
	for _, id := range s.truth {
		cands = append(cands, Candidate{ID: id, Name: fmt.Sprint(id), Rating: s.ratings[id]})
	}
	s.played++
	p, err := s.mm.Pick(cands, s.maps, s.tally, matchRand("tanks", int64(s.played)))
	if err != nil {
		panic(err)
	}
	perf := make([]float64, len(p.Entries))
	for i, id := range p.Entries {
		perf[i] = s.strength[id] + s.rng.NormFloat64()
	}
	places := make([]int, len(perf))
	for i := range perf {
		for j := range perf {
			if perf[j] > perf[i] {
				places[i]++
			}
		}
	}
	before := make([]skill.Rating, len(p.Entries))
	for i, id := range p.Entries {
		before[i] = s.ratings[id]
	}
	after, err := s.mm.Model.Rate(before, places)
	if err != nil {
		panic(err)
	}
	for i, id := range p.Entries {
		s.ratings[id] = after[i]
	}
}

// board is the ladder's order: by ordinal, best first.
func (s *sim) board() []int64 {
	ids := slices.Clone(s.truth)
	slices.SortStableFunc(ids, func(a, b int64) int { return cmp.Compare(s.ratings[b].Ordinal(), s.ratings[a].Ordinal()) })
	return ids
}

// converge plays up to limit matches and returns after how many the
// board's order agreed with the truth (Kendall τ ≥ 0.8) and kept agreeing
// to the end; limit+1 when it never settled.
func converge(mm Matchmaker, maps []engine.MapInfo, seed uint64, limit int) int {
	s := newSim(mm, seed, 6)
	s.maps = maps
	at := limit + 1
	for s.played < limit {
		s.play()
		if kendallTau(s.board(), s.truth) >= 0.8 {
			if at > limit {
				at = s.played
			}
		} else {
			at = limit + 1
		}
	}
	return at
}

const convergenceLimit = 400

func medianConvergence(mm Matchmaker, maps []engine.MapInfo, runs int) (median, worst int) {
	var at []int
	for seed := range runs {
		at = append(at, converge(mm, maps, uint64(seed), convergenceLimit))
	}
	slices.Sort(at)
	return at[len(at)/2], at[len(at)-1]
}

// Six entries of known strength order: the ladder's board agrees with it
// (Kendall τ ≥ 0.8) within a bounded number of matches, and matchmaking
// gets there sooner than uniformly random pairing.
func TestLadderConvergesOnTheKnownOrder(t *testing.T) {
	const runs = 60
	for _, tt := range []struct {
		name  string
		maps  []engine.MapInfo
		bound int
	}{
		{"Tanks maps (2, 3 and 4 players)", tanksMaps, 90},
		{"one two-player map", tanksMaps[:1], 150},
	} {
		smart, smartWorst := medianConvergence(Matchmaker{Model: skill.Default()}, tt.maps, runs)
		uniform, uniformWorst := medianConvergence(Matchmaker{Model: skill.Default(), Uniform: true}, tt.maps, runs)
		t.Logf("%s, 6 entries, %d ladders each: τ ≥ 0.8 for good after a median of %d matches (worst %d) with matchmaking, %d (worst %d) with uniform random pairing",
			tt.name, runs, smart, smartWorst, uniform, uniformWorst)
		if smart > tt.bound {
			t.Errorf("%s: median convergence after %d matches, want at most %d", tt.name, smart, tt.bound)
		}
		if smartWorst > convergenceLimit {
			t.Errorf("%s: a ladder had not settled after %d matches", tt.name, convergenceLimit)
		}
		if smart >= uniform {
			t.Errorf("%s: matchmaking converged after %d matches, uniform pairing after %d", tt.name, smart, uniform)
		}
	}
}

// BenchmarkConvergence reports how many matches six entries of known
// strength need before the board's order agrees with it (τ ≥ 0.8) for
// good: with the ladder's matchmaking, and with uniform random pairing.
func BenchmarkConvergence(b *testing.B) {
	for _, bc := range []struct {
		name string
		mm   Matchmaker
	}{
		{"matchmaking", Matchmaker{Model: skill.Default()}},
		{"uniform", Matchmaker{Model: skill.Default(), Uniform: true}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			total, seed := 0, uint64(0)
			for b.Loop() {
				total += converge(bc.mm, tanksMaps, seed, convergenceLimit)
				seed++
			}
			b.ReportMetric(float64(total)/float64(seed), "matches/ladder")
		})
	}
}

// Matchmaking is even: over many matches, every map is played as often,
// and every entry plays every seat of a map about as often.
func TestMatchmakingIsEven(t *testing.T) {
	s := newSim(Matchmaker{Model: skill.Default()}, 1, 4)
	for range 240 {
		s.play()
	}
	var perMap []int
	for _, m := range tanksMaps {
		perMap = append(perMap, s.tally.matches[m.Name])
		for _, id := range s.truth {
			var seats []int
			for seat := range m.MaxPlayers {
				seats = append(seats, s.tally.seats[seatKey{mapKey{id, m.Name}, seat}])
			}
			if slices.Max(seats)-slices.Min(seats) > 3 {
				t.Errorf("entry %d on %s: seats played %v", id, m.Name, seats)
			}
		}
	}
	if slices.Max(perMap)-slices.Min(perMap) > 1 {
		t.Errorf("matches per map: %v", perMap)
	}
}

func TestPickIsDeterministic(t *testing.T) {
	cands := []Candidate{{ID: 1, Name: "a", Rating: skill.Rating{Mu: 30, Sigma: 2}}, {ID: 2, Name: "b", Rating: skill.Rating{Mu: 25, Sigma: 8}}, {ID: 3, Name: "c", Rating: skill.Rating{Mu: 26, Sigma: 3}}}
	mm := Matchmaker{Model: skill.Default()}
	p1, err := mm.Pick(cands, tanksMaps[:1], NewTally(nil), matchRand("tanks", 5))
	if err != nil {
		t.Fatal(err)
	}
	p2, _ := mm.Pick(cands, tanksMaps[:1], NewTally(nil), matchRand("tanks", 5))
	if !slices.Equal(p1.Entries, p2.Entries) || p1.Reason != p2.Reason {
		t.Errorf("%v then %v", p1, p2)
	}
	if !slices.Contains(p1.Entries, 2) {
		t.Errorf("the least certain entry does not play: %v", p1)
	}
	t.Log(p1.Reason)
	if _, err := mm.Pick(cands[:1], tanksMaps, NewTally(nil), matchRand("tanks", 1)); err != ErrTooFew {
		t.Errorf("one candidate: %v", err)
	}
}
