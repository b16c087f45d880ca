package store

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// openUmask runs the rest of the test with no umask, so that only the
// modes the code asks for count.
func openUmask(t *testing.T) {
	old := unix.Umask(0)
	t.Cleanup(func() { unix.Umask(old) })
}

func wantMode(t *testing.T, path string, want os.FileMode) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Errorf("%s: %v", path, err)
		return
	}
	if got := fi.Mode().Perm(); got != want {
		t.Errorf("%s: mode %04o, want %04o", filepath.Base(path), got, want)
	}
}

// A new data folder is the server user's alone, whatever the umask: the
// folder and replays/ 0700, the database, its -wal and -shm (made by
// SQLite after the open) and the lock 0600; a folder an earlier release
// left open (0755, files 0644, a -wal left by a crash) is tightened when the store opens it.
func TestTheDataFolderIsPrivate(t *testing.T) {
	openUmask(t)
	dir := filepath.Join(t.TempDir(), "data")
	s, err := Open(dir, "test")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := s.Insert(ctx, Match{ID: "aaaaaaaaaaaa", Status: "queued", Game: "tanks", Map: "classic", CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "arena.db-wal")); err != nil {
		t.Fatalf("no -wal file while the store is open: %v", err)
	}
	wantMode(t, dir, 0o700)
	wantMode(t, filepath.Join(dir, "replays"), 0o700)
	for _, name := range []string{"arena.db", "arena.db-wal", "arena.db-shm", "arena.lock"} {
		wantMode(t, filepath.Join(dir, name), 0o600)
	}
	s.Close()

	// As an earlier release left it.
	for _, name := range []string{"arena.db", "arena.lock"} {
		os.Chmod(filepath.Join(dir, name), 0o644)
	}
	os.Chmod(dir, 0o755)
	// A -wal a crash left (empty: nothing to replay).
	if err := os.WriteFile(filepath.Join(dir, "arena.db-wal"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	s, err = Open(dir, "test")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Insert(ctx, Match{ID: "bbbbbbbbbbbb", Status: "queued", Game: "tanks", Map: "classic", CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	wantMode(t, dir, 0o700)
	for _, name := range []string{"arena.db", "arena.db-wal", "arena.db-shm", "arena.lock"} {
		wantMode(t, filepath.Join(dir, name), 0o600)
	}
}

// The database copy of a backup is 0600 whatever the umask.
func TestTheDatabaseSnapshotIsPrivate(t *testing.T) {
	openUmask(t)
	dir := t.TempDir()
	s, err := Open(dir, "test")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	copyPath := filepath.Join(t.TempDir(), "arena.db")
	if _, err := SnapshotDatabase(t.Context(), dir, copyPath); err != nil {
		t.Fatal(err)
	}
	wantMode(t, copyPath, 0o600)
}
