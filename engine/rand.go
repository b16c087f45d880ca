package engine

import "math/rand/v2"

// Rand is the deterministic random source of a match. Its outputs depend
// only on the seed and the stream, never on the Go release: the generator is
// PCG and the derived operations are implemented here, so recorded replays
// keep reproducing.
type Rand struct {
	src *rand.PCG
}

// NewRand returns a source for the given match seed. Distinct streams give
// independent sequences from the same seed.
func NewRand(seed, stream uint64) *Rand {
	return &Rand{src: rand.NewPCG(seed, stream)}
}

// Uint64 returns the next raw value.
func (r *Rand) Uint64() uint64 { return r.src.Uint64() }

// IntN returns a uniform value in [0, n). It panics if n <= 0.
func (r *Rand) IntN(n int) int {
	if n <= 0 {
		panic("engine: IntN with n <= 0")
	}
	bound := uint64(n)
	// Rejection sampling removes the modulo bias.
	limit := -bound % bound // (2^64 - bound) mod bound
	for {
		v := r.src.Uint64()
		if v >= limit {
			return int(v % bound)
		}
	}
}

// Shuffle permutes n elements uniformly (Fisher–Yates) through swap.
func (r *Rand) Shuffle(n int, swap func(i, j int)) {
	for i := n - 1; i > 0; i-- {
		swap(i, r.IntN(i+1))
	}
}
