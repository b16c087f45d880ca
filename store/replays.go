package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// replaysSchema gives every match its kind (what it is for), filled in
// for the matches of earlier releases from the tables that name them,
// and lets a replay be marked expired (matches.replay: 0 none, 1 saved,
// 2 expired).
const replaysSchema = `
ALTER TABLE matches ADD COLUMN kind TEXT NOT NULL DEFAULT 'hand';
UPDATE matches SET kind = 'ladder' WHERE ladder = 1;
UPDATE matches SET kind = 'challenge' WHERE id IN (SELECT match_id FROM challenge_matches);
UPDATE matches SET kind = 'practice' WHERE id IN (SELECT match_id FROM contest_practice);
UPDATE matches SET kind = 'gate' WHERE id IN (SELECT match_id FROM contest_gate_games);
UPDATE matches SET kind = 'contest' WHERE id IN (SELECT match_id FROM contest_games);
UPDATE matches SET kind = 'check' WHERE id IN (SELECT check_match FROM registry_tags);
CREATE INDEX matches_expiry ON matches(replay, kind, finished_at);
`

// The states of a match's replay (matches.replay; 0: none).
const (
	replaySaved   = 1
	replayExpired = 2
)

// ExpireReplays removes the replay files of the finished matches of the
// given kinds that finished before before, at most limit of them, and
// marks them expired; their rows, results and ratings stay. It returns
// how many it removed and the bytes freed.
func (s *Store) ExpireReplays(ctx context.Context, kinds []string, before time.Time, limit int) (n int, freed int64, err error) {
	if len(kinds) == 0 {
		return 0, 0, nil
	}
	args := []any{replaySaved}
	for _, k := range kinds {
		args = append(args, k)
	}
	args = append(args, stamp(before), limit)
	ids, err := s.textColumn(ctx, "list expired replays", `SELECT id FROM matches WHERE replay = ? AND kind IN (`+placeholders(len(kinds))+`) AND finished_at != '' AND finished_at < ? ORDER BY finished_at LIMIT ?`, args...)
	if err != nil {
		return 0, 0, err
	}
	for _, id := range ids {
		// The row first: a reader that finds the row expired never looks
		// for the file; one that read the row just before gets a clear
		// "no replay" when it opens the file.
		if _, err := s.db.ExecContext(ctx, `UPDATE matches SET replay = ? WHERE id = ? AND replay = ?`, replayExpired, id, replaySaved); err != nil {
			return n, freed, fmt.Errorf("expire the replay of match %s: %w", id, err)
		}
		for _, name := range ReplayNames(id) {
			p := filepath.Join(s.dir, "replays", name)
			if fi, err := os.Stat(p); err == nil {
				if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
					return n, freed, fmt.Errorf("expire the replay of match %s: %w", id, err)
				}
				freed += fi.Size()
			}
		}
		n++
	}
	return n, freed, nil
}

// DiskUsage is what the data folder holds, in bytes.
type DiskUsage struct {
	Replays  int64 `json:"replays_bytes"`
	Files    int   `json:"replay_files"`
	Database int64 `json:"database_bytes"`
}

// Usage measures the replays folder and the database (with its WAL).
func (s *Store) Usage() (DiskUsage, error) {
	var u DiskUsage
	var err error
	if u.Replays, u.Files, err = FolderBytes(filepath.Join(s.dir, "replays")); err != nil {
		return u, fmt.Errorf("measure the replays: %w", err)
	}
	for _, name := range []string{"arena.db", "arena.db-wal", "arena.db-shm"} {
		if fi, err := os.Stat(filepath.Join(s.dir, name)); err == nil {
			u.Database += fi.Size()
		}
	}
	return u, nil
}

// FolderBytes adds up the sizes of the files under dir and counts those
// that are not temporary (dot files); a folder that is not there holds
// nothing.
func FolderBytes(dir string) (bytes int64, files int, err error) {
	err = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.IsDir() {
			return nil
		}
		if fi, err := d.Info(); err == nil {
			bytes += fi.Size()
			if !strings.HasPrefix(d.Name(), ".") {
				files++
			}
		}
		return nil
	})
	return bytes, files, err
}
