package main

import (
	"net"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
)

// fakeEngine listens where DOCKER_HOST points and counts the connections
// it gets; it answers none of them.
func fakeEngine(t *testing.T) *atomic.Int32 {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "docker.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("DOCKER_HOST", "unix://"+sock)
	var contacts atomic.Int32
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			contacts.Add(1)
			c.Close()
		}
	}()
	t.Cleanup(func() {
		l.Close()
		wg.Wait()
	})
	return &contacts
}

// Commands that do not play matches never contact the engine, so they
// cannot remove anything there; arena cleanup does.
func TestOnlyCleaningCommandsContactTheEngine(t *testing.T) {
	contacts := fakeEngine(t)
	for _, args := range [][]string{
		{"help"},
		{"help", "cleanup"},
		{"replay", "verify", filepath.Join(t.TempDir(), "absent.json")},
		{"replay"},
		{"fight"},
		{"cleanup", "--colour"},
	} {
		arena(t, args...)
		if n := contacts.Load(); n != 0 {
			t.Fatalf("arena %v contacted the engine (%d connections)", args, n)
		}
	}
	if code, _, _ := arena(t, "cleanup"); code != exitPlatform || contacts.Load() == 0 {
		t.Errorf("arena cleanup: exit %d after %d connections, want it to try the engine", code, contacts.Load())
	}
}
