package contest

import (
	"encoding/binary"
	"hash/fnv"
)

// Game is one game of a final: First takes the first seat.
type Game struct {
	Idx           int
	First, Second int64
	Map           string
	Seed          uint64
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
