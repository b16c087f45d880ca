package keyrate

import (
	"testing"
	"time"
)

// A bucket of 3 an hour takes 3 at once, then refuses saying how long
// to wait (20 min for the next), keeps keys apart, and refills.
func TestPerHour(t *testing.T) {
	l := PerHour(3)
	now := time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)
	for i := range 3 {
		if w := l.Take("mallory", now); w != 0 {
			t.Fatalf("take %d: wait %v", i+1, w)
		}
	}
	if w := l.Take("mallory", now); w < 19*time.Minute || w > 20*time.Minute {
		t.Errorf("the 4th: wait %v, want 20 min", w)
	}
	if w := l.Take("alice", now); w != 0 {
		t.Errorf("another key waits %v", w)
	}
	if w := l.Take("mallory", now.Add(20*time.Minute)); w != 0 {
		t.Errorf("20 min later: wait %v", w)
	}
	if PerHour(0).Take("x", now) != 0 {
		t.Error("no limit refused")
	}
}
