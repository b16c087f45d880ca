// Package poll is the tests' one way to wait for a condition: Until
// asks a function again and again until it returns nil, and fails the
// test with the last error it returned when the time is up. Wait and
// Every return that error instead, for the waits that must not fail the
// test themselves.
package poll

import (
	"testing"
	"time"
)

// First is how soon Until asks again; each wait doubles, up to Most, so
// a quick condition is seen at once and a long wait does not flood what
// it asks (often a server under test).
const (
	First = 20 * time.Millisecond
	Most  = 250 * time.Millisecond
)

// Until calls f until it returns nil; past timeout, the test fails with
// f's last error.
func Until(t testing.TB, timeout time.Duration, f func() error) {
	t.Helper()
	if err := Wait(timeout, f); err != nil {
		t.Fatalf("not so after %v: %v", timeout, err)
	}
}

// Wait is Until returning f's last error (nil once f held) instead of
// failing the test: for a wait in a goroutine of the test's, or one the
// test goes on from, condition or not.
func Wait(timeout time.Duration, f func() error) error {
	return ask(First, Most, timeout, f)
}

// Every is Wait asking f every interval, never less often: for a wait
// whose f also samples what must hold meanwhile, or a figure, as often
// as the test needs.
func Every(interval, timeout time.Duration, f func() error) error {
	return ask(interval, interval, timeout, f)
}

func ask(first, most, timeout time.Duration, f func() error) error {
	deadline := time.Now().Add(timeout)
	for wait := first; ; wait = min(2*wait, most) {
		err := f()
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(wait)
	}
}
