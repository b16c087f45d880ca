package store

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
)

// SnapshotDatabase writes a consistent copy of the database of the data
// folder dir to path (VACUUM INTO, in one read transaction), while a
// server may be using it: it neither takes the folder's lock nor writes
// to the database. It returns the copy's schema version. path must not
// exist; the copy is made 0600.
func SnapshotDatabase(ctx context.Context, dir, path string) (int, error) {
	src := filepath.Join(dir, "arena.db")
	if _, err := os.Stat(src); err != nil {
		return 0, fmt.Errorf("no database in %s: %w", dir, err)
	}
	db, err := sql.Open("sqlite", "file:"+src+"?mode=ro&_pragma=busy_timeout(10000)")
	if err != nil {
		return 0, fmt.Errorf("open the database: %w", err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	var version int
	if err := db.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&version); err != nil {
		return 0, fmt.Errorf("read the database: %w", err)
	}
	if version > SchemaVersion() {
		return 0, fmt.Errorf("the database is at schema version %d, newer than this arena's %d: use a newer arena", version, SchemaVersion())
	}
	// The copy is made empty with mode 0600 first (VACUUM INTO takes an
	// empty file, and its mode): it holds what the database does.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return 0, fmt.Errorf("copy the database: %w", err)
	}
	f.Close()
	if _, err := db.ExecContext(ctx, `VACUUM INTO ?`, path); err != nil {
		os.Remove(path)
		return 0, fmt.Errorf("copy the database: %w", err)
	}
	return version, nil
}

// SavedReplays lists the matches whose replay is saved, oldest first.
func (s *Store) SavedReplays(ctx context.Context) ([]string, error) {
	return s.textColumn(ctx, "list the replays", `SELECT id FROM matches WHERE replay = ? ORDER BY seq`, replaySaved)
}

// MarkExpired marks matches' replays expired (a backup's copy, for the
// replays gone before they were copied).
func (s *Store) MarkExpired(ctx context.Context, ids []string) error {
	for _, id := range ids {
		if _, err := s.db.ExecContext(ctx, `UPDATE matches SET replay = ? WHERE id = ?`, replayExpired, id); err != nil {
			return fmt.Errorf("mark the replay of match %s expired: %w", id, err)
		}
	}
	return nil
}

// ReplayNames are the file names a match's replay may have in replays/,
// the compressed one first.
func ReplayNames(id string) []string { return []string{id + ".json.zst", id + ".json"} }

// OpenSnapshot opens a database file no server uses (a backup's copy),
// without a data folder's lock or migrations.
func OpenSnapshot(path string) (*Store, error) {
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	return &Store{db: db, dir: filepath.Dir(path), lock: nil}, nil
}

// CountMatches counts the matches.
func (s *Store) CountMatches(ctx context.Context) (int, error) {
	var n int
	err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM matches`).Scan(&n)
	return n, err
}
