package contest

import (
	"encoding/binary"
	"hash/fnv"
	"slices"
)

// Game is one game of a final: First takes the first seat.
type Game struct {
	Idx           int
	First, Second int64
	Map           string
	Seed          uint64
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

// SeedOf is the seed of the k-th pair of games on a map, from the
// contest's seed: anyone can work out (and rerun) every final match from
// the published seed. Seeds stay below 2^53, as a JSON number holds them.
func SeedOf(seed uint64, mapName string, k int) uint64 {
	h := fnv.New64a()
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], seed)
	binary.BigEndian.PutUint64(b[8:], uint64(k))
	h.Write(b[:])
	h.Write([]byte(mapName))
	return h.Sum64() >> 11
}
