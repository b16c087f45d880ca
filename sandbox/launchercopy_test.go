package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Processes of the same build share one copy, named by the build; it is
// removed only once nobody holds it, and made again when needed.
func TestLauncherCopies(t *testing.T) {
	dir := t.TempDir()
	launcher := filepath.Join(t.TempDir(), "arena")
	if err := os.WriteFile(launcher, []byte("build one"), 0o755); err != nil {
		t.Fatal(err)
	}
	a, heldA, err := holdLauncherCopy(dir, launcher)
	if err != nil {
		t.Fatal(err)
	}
	b, heldB, err := holdLauncherCopy(dir, launcher)
	if err != nil || a != b || !strings.HasPrefix(filepath.Base(a), launcherPrefix) {
		t.Fatalf("copies %s and %s, %v", a, b, err)
	}
	if data, _ := os.ReadFile(a); string(data) != "build one" {
		t.Errorf("the copy holds %q", data)
	}
	if removed, err := removeUnusedLauncherCopy(a); removed || err != nil {
		t.Fatalf("a held copy was removed (%v)", err)
	}
	heldA.Close()
	if removed, _ := removeUnusedLauncherCopy(a); removed {
		t.Fatal("a copy still held by one was removed")
	}
	heldB.Close()
	if removed, err := removeUnusedLauncherCopy(a); !removed || err != nil {
		t.Fatalf("an unused copy was kept (%v)", err)
	}
	if _, err := os.Stat(a); !os.IsNotExist(err) {
		t.Errorf("the copy is still there: %v", err)
	}
	// Another build gets another copy.
	if err := os.WriteFile(launcher, []byte("build two"), 0o755); err != nil {
		t.Fatal(err)
	}
	c, heldC, err := holdLauncherCopy(dir, launcher)
	if err != nil || c == a {
		t.Fatalf("the new build's copy %s, %v", c, err)
	}
	heldC.Close()
	// Nothing but the copies was left in the folder.
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("the folder holds %d entries", len(entries))
	}
}
