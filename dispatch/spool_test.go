package dispatch

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// A worker starting on a spool removes the replays a killed worker left
// there, and nothing else.
func TestAWorkerClearsItsSpool(t *testing.T) {
	r := newRig(t, Config{})
	dir := t.TempDir()
	for _, name := range []string{spoolPrefix + "123", spoolPrefix + "456", "keep.txt"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	r.worker("w1", bots(nil), WorkerConfig{Spool: dir})
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, e := range entries {
		left = append(left, e.Name())
	}
	if !slices.Equal(left, []string{"keep.txt"}) {
		t.Errorf("left in the spool: %v", left)
	}
}
