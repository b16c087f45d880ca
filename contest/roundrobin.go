package contest

import "slices"

// FormatRoundRobin is a final where every pair of entries meets, all its
// games made at the freeze.
const FormatRoundRobin = "round-robin"

func init() { register(roundRobin{}) }

// roundRobin is the round robin format: one round, the whole Schedule.
type roundRobin struct{}

func (roundRobin) Name() string { return FormatRoundRobin }

// Start is every game of the final.
func (roundRobin) Start(f Final) ([]Game, error) {
	return Schedule(f.Entries, f.Spec.Maps, f.Spec.Rounds, uint64(f.Spec.Seed)), nil
}

// Next is none: a round robin is done once its games are.
func (roundRobin) Next(Final) (Round, bool, error) {
	return Round{}, false, nil
}

// Schedule is a final's games: every pair of entries (by id) plays every
// map Rounds times, half with each seat order. The k-th pair of games of
// a map has the same seed for every pairing and both seat orders
// (SeedOf), so every entry meets the same situations. The order
// interleaves pairings, so that standings taken part-way are fair.
func Schedule(entries []int64, maps []string, rounds int, seed uint64) []Game {
	ids := slices.Clone(entries)
	slices.Sort(ids)
	var out []Game
	for k := 0; k < rounds/2; k++ {
		for _, m := range maps {
			s := SeedOf(seed, m, k)
			for i := 0; i < len(ids); i++ {
				for j := i + 1; j < len(ids); j++ {
					out = append(out, Game{First: ids[i], Second: ids[j], Map: m, Seed: s})
					out = append(out, Game{First: ids[j], Second: ids[i], Map: m, Seed: s})
				}
			}
		}
	}
	for i := range out {
		out[i].Idx = i
	}
	return out
}
