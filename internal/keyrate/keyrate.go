// Package keyrate is a token bucket per key (an account, a client, a
// person told of others' actions), over golang.org/x/time/rate. The
// buckets are kept in memory; past a bound, the full ones (no recent
// use) are dropped, so a flood of keys cannot grow it without end.
package keyrate

import (
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// maxKeys bounds the buckets kept; past it, full buckets are dropped.
const maxKeys = 10000

// Limits are the buckets of one limit: Burst at once, then one more
// every Every, per key.
type Limits struct {
	burst int
	every time.Duration
	mu    sync.Mutex
	m     map[string]*rate.Limiter
}

// New makes the buckets of burst at once, then one every every.
func New(burst int, every time.Duration) *Limits {
	return &Limits{burst: max(1, burst), every: every, m: map[string]*rate.Limiter{}}
}

// PerHour makes the buckets of n an hour: n at once, then one every
// hour/n. Nil when n is 0 or less: no limit (Take on nil takes).
func PerHour(n int) *Limits {
	if n <= 0 {
		return nil
	}
	return New(n, time.Hour/time.Duration(n))
}

// Bucket is key's bucket, made full when it has none.
func (l *Limits) Bucket(key string, now time.Time) *rate.Limiter {
	l.mu.Lock()
	defer l.mu.Unlock()
	b, ok := l.m[key]
	if !ok {
		if len(l.m) >= maxKeys {
			for k, x := range l.m {
				if x.TokensAt(now) >= float64(x.Burst()) {
					delete(l.m, k)
				}
			}
		}
		b = rate.NewLimiter(rate.Every(l.every), l.burst)
		l.m[key] = b
	}
	return b
}

// Forget drops key's bucket: it is full again.
func (l *Limits) Forget(key string) {
	l.mu.Lock()
	delete(l.m, key)
	l.mu.Unlock()
}

// Take takes one from key's bucket if it holds one, and returns 0; else
// it takes nothing and returns how long until it holds one. A nil
// Limits always takes.
func (l *Limits) Take(key string, now time.Time) time.Duration {
	if l == nil {
		return 0
	}
	b := l.Bucket(key, now)
	if b.AllowN(now, 1) {
		return 0
	}
	return max(WaitFor(b, now), time.Millisecond)
}

// WaitFor is how long until b holds a whole token again.
func WaitFor(b *rate.Limiter, now time.Time) time.Duration {
	tokens := b.TokensAt(now)
	if tokens >= 1 {
		return 0
	}
	return time.Duration((1 - tokens) / float64(b.Limit()) * float64(time.Second))
}
