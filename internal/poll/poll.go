// Package poll is the tests' one way to wait for a condition: Until
// asks a function again and again until it returns nil, and fails the
// test with the last error it returned when the time is up.
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
	deadline := time.Now().Add(timeout)
	for wait := First; ; wait = min(2*wait, Most) {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("not so after %v: %v", timeout, err)
		}
		time.Sleep(wait)
	}
}
