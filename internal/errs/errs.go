// Package errs is Arena's one error scheme: a few classes of error, by
// what the caller does about one. A package marks its errors with a
// class; the edges (the web API, the registry) answer by the class's
// status, HTTPStatus, the one map from a class to a status. Nothing else
// maps errors to statuses.
//
// The classes, and when to use each:
//
//   - ErrNotFound: the thing asked for is not there (no such match,
//     entry, contest, account), or the asker may not know it is (404).
//   - ErrInvalid: the caller's input is wrong, and the same request
//     fails again: a malformed name, an unknown map, a bot image the
//     engine does not hold (400). A lookup that finds nothing is
//     ErrNotFound; a request that names what is not there, ErrInvalid.
//   - ErrConflict: the request is sound but clashes with how things
//     are: a name taken, a full ladder, a contest past its freeze (409).
//   - ErrUnauthenticated: nobody is signed in, or the credentials are
//     wrong, expired or revoked (401).
//   - ErrDenied: the caller is known but may not do this: another's
//     bot, staff only, a quota that waiting does not lift (403).
//   - ErrUnavailable: the platform cannot do it now (it is shutting
//     down, the engine is down): try again later (503).
//   - ErrTooMany: a rate limit, or a line that is full: waiting lifts
//     it, and the error may say how long (429 with Retry-After).
//
// An error of no class is the platform's failure (500).
//
// To mark an error: Errorf or New for a new one, Mark for one made
// elsewhere, TooMany for one that says how long to wait. A package's
// own sentinel stays its own (callers test it with errors.Is) and joins
// a class when made by New:
//
//	var ErrNoEntry = errs.New(errs.ErrNotFound, "no such ladder entry")
//
// Marking never changes an error's message.
//
// To test an error: IsNotFound, IsInvalid and the others (not
// errors.Is with a class's sentinel, which misses the marker methods),
// which look through everything err wraps. They accept the sentinel
// (errors.Is) or a marker method, so an error type joins a class
// without importing this package: IsNotFound() bool returning true
// (IsInvalid, IsConflict, IsUnauthenticated, IsDenied, IsUnavailable,
// IsTooMany likewise), and for how long to wait, Wait() time.Duration.
// The markers are not containerd's (NotFound(), Conflict(), …): the
// Docker engine's errors carry those, and are the platform's failures,
// not the caller's mistakes. Class is the class an edge answers by.
package errs

import (
	"errors"
	"fmt"
	"time"
)

// The classes' sentinels.
var (
	ErrNotFound        error = notFound{}
	ErrInvalid         error = invalid{}
	ErrConflict        error = conflict{}
	ErrUnauthenticated error = unauthenticated{}
	ErrDenied          error = denied{}
	ErrUnavailable     error = unavailable{}
	ErrTooMany         error = tooMany{}
)

type notFound struct{}

func (notFound) Error() string    { return "not found" }
func (notFound) IsNotFound() bool { return true }

type invalid struct{}

func (invalid) Error() string   { return "invalid" }
func (invalid) IsInvalid() bool { return true }

type conflict struct{}

func (conflict) Error() string    { return "conflict" }
func (conflict) IsConflict() bool { return true }

type unauthenticated struct{}

func (unauthenticated) Error() string           { return "not signed in" }
func (unauthenticated) IsUnauthenticated() bool { return true }

type denied struct{}

func (denied) Error() string  { return "not allowed" }
func (denied) IsDenied() bool { return true }

type unavailable struct{}

func (unavailable) Error() string       { return "unavailable" }
func (unavailable) IsUnavailable() bool { return true }

type tooMany struct{}

func (tooMany) Error() string   { return "too many requests" }
func (tooMany) IsTooMany() bool { return true }

// class is a class's sentinel and its marker test.
type class struct {
	sentinel error
	marked   func(error) bool
}

var (
	notFoundClass = class{ErrNotFound, func(err error) bool {
		m, ok := err.(interface{ IsNotFound() bool })
		return ok && m.IsNotFound()
	}}
	invalidClass = class{ErrInvalid, func(err error) bool {
		m, ok := err.(interface{ IsInvalid() bool })
		return ok && m.IsInvalid()
	}}
	conflictClass = class{ErrConflict, func(err error) bool {
		m, ok := err.(interface{ IsConflict() bool })
		return ok && m.IsConflict()
	}}
	unauthenticatedClass = class{ErrUnauthenticated, func(err error) bool {
		m, ok := err.(interface{ IsUnauthenticated() bool })
		return ok && m.IsUnauthenticated()
	}}
	deniedClass = class{ErrDenied, func(err error) bool {
		m, ok := err.(interface{ IsDenied() bool })
		return ok && m.IsDenied()
	}}
	unavailableClass = class{ErrUnavailable, func(err error) bool {
		m, ok := err.(interface{ IsUnavailable() bool })
		return ok && m.IsUnavailable()
	}}
	tooManyClass = class{ErrTooMany, func(err error) bool {
		m, ok := err.(interface{ IsTooMany() bool })
		return ok && m.IsTooMany()
	}}
	// classes in the order Class tries them on one error.
	classes = []class{notFoundClass, invalidClass, conflictClass, unauthenticatedClass, deniedClass, unavailableClass, tooManyClass}
)

// in reports whether err itself (not what it wraps) is of class c: its
// marker says so, or its Is method matches the sentinel.
func (c class) in(err error) bool {
	if c.marked(err) {
		return true
	}
	is, ok := err.(interface{ Is(error) bool })
	return ok && is.Is(c.sentinel)
}

// walk calls f on err and on everything it wraps, depth first as
// errors.Is goes, until f returns true.
func walk(err error, f func(error) bool) bool {
	for err != nil {
		if f(err) {
			return true
		}
		switch u := err.(type) {
		case interface{ Unwrap() error }:
			err = u.Unwrap()
		case interface{ Unwrap() []error }:
			for _, e := range u.Unwrap() {
				if walk(e, f) {
					return true
				}
			}
			return false
		default:
			return false
		}
	}
	return false
}

func (c class) has(err error) bool { return walk(err, c.in) }

// IsNotFound reports whether err, or anything it wraps, is of ErrNotFound.
func IsNotFound(err error) bool { return notFoundClass.has(err) }

// IsInvalid reports whether err, or anything it wraps, is of ErrInvalid.
func IsInvalid(err error) bool { return invalidClass.has(err) }

// IsConflict reports whether err, or anything it wraps, is of ErrConflict.
func IsConflict(err error) bool { return conflictClass.has(err) }

// IsUnauthenticated reports whether err, or anything it wraps, is of
// ErrUnauthenticated.
func IsUnauthenticated(err error) bool { return unauthenticatedClass.has(err) }

// IsDenied reports whether err, or anything it wraps, is of ErrDenied.
func IsDenied(err error) bool { return deniedClass.has(err) }

// IsUnavailable reports whether err, or anything it wraps, is of
// ErrUnavailable.
func IsUnavailable(err error) bool { return unavailableClass.has(err) }

// IsTooMany reports whether err, or anything it wraps, is of ErrTooMany.
func IsTooMany(err error) bool { return tooManyClass.has(err) }

// Class is the class of err: the sentinel of the first error of a class
// found in it, outermost first (depth first, as errors.Is goes), so that
// an error marked again answers by its last mark. Nil for an error of no
// class (or nil).
func Class(err error) error {
	var found error
	walk(err, func(e error) bool {
		for _, c := range classes {
			if c.in(e) {
				found = c.sentinel
				return true
			}
		}
		return false
	})
	return found
}

// marked is an error put in a class: its message is err's, and it
// wraps both the class and err.
type marked struct {
	class, err error
}

func (m *marked) Error() string   { return m.err.Error() }
func (m *marked) Unwrap() []error { return []error{m.class, m.err} }

// Mark puts err in class: a class's sentinel, or a package's sentinel
// (errors.Is then matches it too, and err is of its class if it has
// one). The message stays err's. Mark(class, nil) is nil.
func Mark(class, err error) error {
	if err == nil {
		return nil
	}
	return &marked{class: class, err: err}
}

// Errorf is an error of class whose message is the formatted text only
// (the class shows in the tests, not in the words); %w wraps as
// fmt.Errorf does.
func Errorf(class error, format string, a ...any) error {
	return Mark(class, fmt.Errorf(format, a...))
}

// New is an error of class with the message msg: a package's sentinel
// that belongs to a class.
func New(class error, msg string) error {
	return Mark(class, errors.New(msg))
}

// waiting is an error of ErrTooMany that says how long to wait.
type waiting struct {
	err  error
	wait time.Duration
}

func (w *waiting) Error() string       { return w.err.Error() }
func (w *waiting) Unwrap() []error     { return []error{ErrTooMany, w.err} }
func (w *waiting) Wait() time.Duration { return w.wait }

// TooMany puts err in ErrTooMany, to be tried again after retryAfter (0:
// it does not say). The message stays err's.
func TooMany(err error, retryAfter time.Duration) error {
	if err == nil {
		return nil
	}
	return &waiting{err: err, wait: retryAfter}
}

// RetryAfter is how long err says to wait before trying again: the
// first positive Wait() time.Duration of it or of what it wraps; 0 when
// it does not say.
func RetryAfter(err error) time.Duration {
	var d time.Duration
	walk(err, func(e error) bool {
		if w, ok := e.(interface{ Wait() time.Duration }); ok && w.Wait() > 0 {
			d = w.Wait()
			return true
		}
		return false
	})
	return d
}
