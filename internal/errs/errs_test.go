package errs

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

// typedNotFound and the types below each join a class by a marker
// method alone, as a type of another package would.
type typedNotFound struct{}

func (typedNotFound) Error() string    { return "no such thing" }
func (typedNotFound) IsNotFound() bool { return true }

type typedInvalid struct{}

func (typedInvalid) Error() string   { return "bad thing" }
func (typedInvalid) IsInvalid() bool { return true }

type typedConflict struct{}

func (typedConflict) Error() string    { return "thing taken" }
func (typedConflict) IsConflict() bool { return true }

type typedUnauthenticated struct{}

func (typedUnauthenticated) Error() string           { return "who are you" }
func (typedUnauthenticated) IsUnauthenticated() bool { return true }

type typedDenied struct{}

func (typedDenied) Error() string  { return "not yours" }
func (typedDenied) IsDenied() bool { return true }

type typedUnavailable struct{}

func (typedUnavailable) Error() string       { return "down" }
func (typedUnavailable) IsUnavailable() bool { return true }

type typedTooMany struct{ wait time.Duration }

func (typedTooMany) Error() string         { return "slow down" }
func (typedTooMany) IsTooMany() bool       { return true }
func (t typedTooMany) Wait() time.Duration { return t.wait }

// notReally has a marker method that says no.
type notReally struct{}

func (notReally) Error() string    { return "found after all" }
func (notReally) IsNotFound() bool { return false }

// tests are the classes' tests by sentinel.
var tests = map[error]func(error) bool{
	ErrNotFound: IsNotFound, ErrInvalid: IsInvalid, ErrConflict: IsConflict, ErrUnauthenticated: IsUnauthenticated,
	ErrDenied: IsDenied, ErrUnavailable: IsUnavailable, ErrTooMany: IsTooMany,
}

func TestClasses(t *testing.T) {
	for _, tc := range []struct {
		name     string
		sentinel error
		is       func(error) bool
		typed    error
	}{
		{"not found", ErrNotFound, IsNotFound, typedNotFound{}},
		{"invalid", ErrInvalid, IsInvalid, typedInvalid{}},
		{"conflict", ErrConflict, IsConflict, typedConflict{}},
		{"unauthenticated", ErrUnauthenticated, IsUnauthenticated, typedUnauthenticated{}},
		{"denied", ErrDenied, IsDenied, typedDenied{}},
		{"unavailable", ErrUnavailable, IsUnavailable, typedUnavailable{}},
		{"too many", ErrTooMany, IsTooMany, typedTooMany{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			own := New(tc.sentinel, "a package's own sentinel")
			cases := []struct {
				what string
				err  error
				msg  string
			}{
				{"the sentinel", tc.sentinel, tc.sentinel.Error()},
				{"Errorf", Errorf(tc.sentinel, "thing %d", 7), "thing 7"},
				{"New", own, "a package's own sentinel"},
				{"Mark", Mark(tc.sentinel, errors.New("made elsewhere")), "made elsewhere"},
				{"a marker method", tc.typed, tc.typed.Error()},
				{"a sentinel wrapped with %w", fmt.Errorf("%w: the detail", own), "a package's own sentinel: the detail"},
				{"wrapped deeper", fmt.Errorf("outer: %w", fmt.Errorf("middle: %w", Errorf(tc.sentinel, "inner"))), "outer: middle: inner"},
				{"a marker method wrapped", fmt.Errorf("outer: %w", tc.typed), "outer: " + tc.typed.Error()},
				{"joined", errors.Join(errors.New("first"), fmt.Errorf("second: %w", tc.typed)), "first\nsecond: " + tc.typed.Error()},
				{"an error of the class as the class", Errorf(own, "by the sentinel's class"), "by the sentinel's class"},
			}
			for _, c := range cases {
				if !tc.is(c.err) {
					t.Errorf("%s: not of the class", c.what)
				}
				if got := Class(c.err); got != tc.sentinel {
					t.Errorf("%s: Class = %v, want %v", c.what, got, tc.sentinel)
				}
				if got := c.err.Error(); got != c.msg {
					t.Errorf("%s: Error() = %q, want %q (marking changes no message)", c.what, got, c.msg)
				}
			}
			// A package's sentinel stays its own for errors.Is.
			if err := fmt.Errorf("wrapped: %w", own); !errors.Is(err, own) || !errors.Is(err, tc.sentinel) {
				t.Error("errors.Is misses the package's sentinel or its class")
			}
			if err := Errorf(own, "x"); !errors.Is(err, own) {
				t.Error("Errorf(sentinel, ...) is not errors.Is the sentinel")
			}
			// No other class says yes.
			for other, is := range tests {
				if other != tc.sentinel && is(Errorf(tc.sentinel, "x")) {
					t.Errorf("an error of the class is of %v too", other)
				}
			}
		})
	}
}

func TestNoClass(t *testing.T) {
	for _, err := range []error{nil, errors.New("plain"), fmt.Errorf("wrapped: %w", errors.New("plain")), notReally{}, fmt.Errorf("x: %w", notReally{})} {
		if Class(err) != nil {
			t.Errorf("%v: Class = %v, want nil", err, Class(err))
		}
		for _, is := range tests {
			if is(err) {
				t.Errorf("%v: of a class", err)
			}
		}
	}
	if Mark(ErrNotFound, nil) != nil || TooMany(nil, time.Second) != nil {
		t.Error("marking nil is not nil")
	}
}

// isMethod is an error that says its class by an Is method, as
// errors.Is asks.
type isMethod struct{}

func (isMethod) Error() string        { return "is" }
func (isMethod) Is(target error) bool { return target == ErrDenied }

func TestIsMethod(t *testing.T) {
	if !IsDenied(isMethod{}) || Class(fmt.Errorf("x: %w", isMethod{})) != ErrDenied {
		t.Error("an Is method is not asked")
	}
}

// TestOutermost: an error marked again answers by its last mark; the
// tests say yes to every class on the way.
func TestOutermost(t *testing.T) {
	inner := Errorf(ErrNotFound, "no image")
	outer := Mark(ErrInvalid, fmt.Errorf("the request names an absent image: %w", inner))
	if Class(outer) != ErrInvalid {
		t.Errorf("Class = %v, want invalid", Class(outer))
	}
	if !IsInvalid(outer) || !IsNotFound(outer) {
		t.Error("a test misses a class on the way")
	}
	if Class(fmt.Errorf("x: %w", outer)) != ErrInvalid {
		t.Error("wrapping changes the class")
	}
	joined := errors.Join(Errorf(ErrConflict, "a"), Errorf(ErrDenied, "b"))
	if Class(joined) != ErrConflict {
		t.Errorf("Class of joined = %v, want the first's", Class(joined))
	}
}

func TestRetryAfter(t *testing.T) {
	full := TooMany(errors.New("the queue is full"), 10*time.Second)
	for _, tc := range []struct {
		err  error
		want time.Duration
		msg  string
	}{
		{full, 10 * time.Second, "the queue is full"},
		{fmt.Errorf("%w: 3 waiting", full), 10 * time.Second, "the queue is full: 3 waiting"},
		{typedTooMany{wait: 3 * time.Second}, 3 * time.Second, "slow down"},
		{fmt.Errorf("sign-in: %w", typedTooMany{wait: time.Minute}), time.Minute, "sign-in: slow down"},
		{TooMany(errors.New("one at a time"), 0), 0, "one at a time"},
		{Errorf(ErrTooMany, "no wait said"), 0, "no wait said"},
		{errors.New("plain"), 0, "plain"},
	} {
		if got := RetryAfter(tc.err); got != tc.want {
			t.Errorf("%v: RetryAfter = %v, want %v", tc.err, got, tc.want)
		}
		if tc.err.Error() != tc.msg {
			t.Errorf("Error() = %q, want %q", tc.err.Error(), tc.msg)
		}
	}
	if !IsTooMany(full) || !errors.Is(full, ErrTooMany) || Class(fmt.Errorf("x: %w", full)) != ErrTooMany {
		t.Error("TooMany is not of ErrTooMany")
	}
	// A full queue's sentinel stays itself.
	if err := fmt.Errorf("%w: more", full); !errors.Is(err, full) {
		t.Error("errors.Is misses the sentinel made by TooMany")
	}
}
