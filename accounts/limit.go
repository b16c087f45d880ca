package accounts

import (
	"fmt"
	"math"
	"sync"
	"time"

	"arena/internal/keyrate"
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
	accounts *keyrate.Limits
	clients  *keyrate.Limits
}

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
	return &limits{cfg: l, accounts: keyrate.New(l.AccountBurst, l.AccountEvery), clients: keyrate.New(l.ClientBurst, l.ClientEvery)}
}

// attempt starts a sign-in: refused when its account or client has no
// failure left; else it takes one failure from each at once, before any
// password is compared, so that attempts made at the same moment cannot
// all pass a check made before any of them failed. done(true), for a
// right password, gives the client's back and refills the account's.
func (l *limits) attempt(account, client string, now time.Time) (done func(ok bool), err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	a := l.accounts.Bucket(account, now)
	if wait := keyrate.WaitFor(a, now); wait > 0 {
		return nil, &TooManyError{Of: "account " + account, RetryAfter: wait}
	}
	c := l.clients.Bucket(client, now)
	if wait := keyrate.WaitFor(c, now); wait > 0 {
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
		l.accounts.Forget(account)
	}, nil
}
