package dockertest

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// The binaries' folders of test processes that are gone are removed;
// a live process's stays.
func TestSweepBinDirs(t *testing.T) {
	root := t.TempDir()
	mine := filepath.Join(root, fmt.Sprintf("%s%d", binDirPrefix, os.Getpid()))
	gone := filepath.Join(root, binDirPrefix+"2147483600") // no such pid
	odd := filepath.Join(root, binDirPrefix+"x7")          // not a pid: an old random name
	other := filepath.Join(root, "arena-other-1")
	for _, d := range []string{mine, gone, odd, other} {
		if err := os.MkdirAll(filepath.Join(d, "sub"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	sweepBinDirs(root)
	for d, want := range map[string]bool{mine: true, gone: false, odd: false, other: true} {
		if _, err := os.Stat(d); (err == nil) != want {
			t.Errorf("%s: kept %v, want %v", filepath.Base(d), err == nil, want)
		}
	}
}
