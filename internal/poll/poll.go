// Package poll is the tests' one way to wait for a condition: Until
// asks a function again and again until it returns nil, and fails the
// test with the last error it returned when the time is up.
package poll

import (
	"testing"
	"time"
)

// Every is how often Until asks.
const Every = 20 * time.Millisecond

// Until calls f every Every until it returns nil; past timeout, the test
// fails with f's last error.
func Until(t testing.TB, timeout time.Duration, f func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("not so after %v: %v", timeout, err)
		}
		time.Sleep(Every)
	}
}
