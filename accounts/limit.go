package accounts

import (
	"fmt"
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Limits bound wrong passwords: per account (whoever tries them) and per
// client address (whichever accounts it tries). Each is a bucket of
// failures: Burst in a row, then one more every Every. Past either, a
// sign-in is refused before its password is compared, with how long to
// wait; a right password clears the account's bucket.
type Limits struct {
	AccountBurst int
	AccountEvery time.Duration
	ClientBurst  int
	ClientEvery  time.Duration
}

// DefaultLimits: 10 wrong passwords for an account, then one a minute;
// 20 from a client, then one every 30 s.
var DefaultLimits = Limits{AccountBurst: 10, AccountEvery: time.Minute, ClientBurst: 20, ClientEvery: 30 * time.Second}

// TooManyError is a sign-in refused for too many wrong passwords: of
// errs.ErrTooMany, to try again after RetryAfter.
type TooManyError struct {
	// Of is "account NAME" or "client ADDRESS".
	Of         string
	RetryAfter time.Duration
}

func (e *TooManyError) Error() string {
	return fmt.Sprintf("too many wrong passwords for %s: try again in %d s", e.Of, int(math.Ceil(e.RetryAfter.Seconds())))
}

// IsTooMany puts the error in errs.ErrTooMany.
func (e *TooManyError) IsTooMany() bool { return true }

// Wait is how long to wait before trying again (errs.RetryAfter).
func (e *TooManyError) Wait() time.Duration { return e.RetryAfter }

type limits struct {
	cfg      Limits
	mu       sync.Mutex
	accounts map[string]*rate.Limiter
	clients  map[string]*rate.Limiter
}

// maxKeys bounds each map; past it, buckets that are full again (no
// recent failure) are dropped.
const maxKeys = 10000

func newLimits(l Limits) *limits {
	d := DefaultLimits
	if l.AccountBurst <= 0 {
		l.AccountBurst = d.AccountBurst
	}
	if l.AccountEvery <= 0 {
		l.AccountEvery = d.AccountEvery
	}
	if l.ClientBurst <= 0 {
		l.ClientBurst = d.ClientBurst
	}
	if l.ClientEvery <= 0 {
		l.ClientEvery = d.ClientEvery
	}
	return &limits{cfg: l, accounts: map[string]*rate.Limiter{}, clients: map[string]*rate.Limiter{}}
}

// attempt starts a sign-in: refused when its account or client has no
// failure left; else it takes one failure from each at once, before any
// password is compared, so that attempts made at the same moment cannot
// all pass a check made before any of them failed. done(true), for a
// right password, gives the client's back and clears the account's.
func (l *limits) attempt(account, client string, now time.Time) (done func(ok bool), err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	a := bucket(l.accounts, account, l.cfg.AccountBurst, l.cfg.AccountEvery, now)
	if wait := waitFor(a, now); wait > 0 {
		return nil, &TooManyError{Of: "account " + account, RetryAfter: wait}
	}
	c := bucket(l.clients, client, l.cfg.ClientBurst, l.cfg.ClientEvery, now)
	if wait := waitFor(c, now); wait > 0 {
		return nil, &TooManyError{Of: "client " + client, RetryAfter: wait}
	}
	a.ReserveN(now, 1)
	rc := c.ReserveN(now, 1)
	return func(ok bool) {
		if !ok {
			return
		}
		l.mu.Lock()
		defer l.mu.Unlock()
		rc.CancelAt(now)
		delete(l.accounts, account)
	}, nil
}

// waitFor is how long until the bucket holds a whole failure again.
func waitFor(b *rate.Limiter, now time.Time) time.Duration {
	tokens := b.TokensAt(now)
	if tokens >= 1 {
		return 0
	}
	return time.Duration((1 - tokens) / float64(b.Limit()) * float64(time.Second))
}

// bucket is a key's bucket, made full when it has none.
func bucket(m map[string]*rate.Limiter, key string, burst int, every time.Duration, now time.Time) *rate.Limiter {
	b, ok := m[key]
	if !ok {
		if len(m) >= maxKeys {
			for k, x := range m {
				if x.TokensAt(now) >= float64(x.Burst()) {
					delete(m, k)
				}
			}
		}
		b = rate.NewLimiter(rate.Every(every), burst)
		m[key] = b
	}
	return b
}
