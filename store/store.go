// Package store keeps the match history: an embedded SQLite index of
// matches and their results, and the replay files in a data folder; and
// the ladders: their entries, which matches they made and how each was
// rated (ladder.go).
package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/alexedwards/scs/sqlite3store"
	_ "modernc.org/sqlite" // the database/sql driver "sqlite"

	"arena/internal/errs"
	"arena/matches"
)

// Match is one match as the history keeps it.
type Match struct {
	// Seq orders matches by creation; it is the pagination cursor.
	Seq        int64
	ID         string
	Status     string
	Game       string
	Map        string
	Seed       uint64
	Bots       []string
	Settings   json.RawMessage
	Error      string
	Result     json.RawMessage
	CreatedAt  time.Time
	StartedAt  time.Time
	FinishedAt time.Time
	// HasReplay is true once the replay file is saved, until it
	// expires (ReplayExpired; see ExpireReplays).
	HasReplay     bool
	ReplayExpired bool
	// Kind is what the match is for (matches.Kind).
	Kind string
	// Owner is who started the match: a user's name ("admin" for what
	// was started before accounts, or by anyone in local mode); empty for
	// a ladder's match, which Ladder marks.
	Owner  string
	Ladder bool
}

// ErrNotFound is returned for an unknown match id.
var ErrNotFound = errs.New(errs.ErrNotFound, "no such match")

// Store is the match history in a data folder: arena.db and replays/.
// One process at a time holds a data folder (see Open).
type Store struct {
	db   *sql.DB
	dir  string
	lock *os.File

	sessionsOnce sync.Once
	sessions     *sqlite3store.SQLite3Store
}

const schema = `
CREATE TABLE IF NOT EXISTS matches (
	seq         INTEGER PRIMARY KEY AUTOINCREMENT,
	id          TEXT NOT NULL UNIQUE,
	status      TEXT NOT NULL,
	game        TEXT NOT NULL,
	map         TEXT NOT NULL,
	seed        TEXT NOT NULL,
	bots        TEXT NOT NULL,
	settings    TEXT NOT NULL DEFAULT '',
	error       TEXT NOT NULL DEFAULT '',
	result      TEXT NOT NULL DEFAULT '',
	replay      INTEGER NOT NULL DEFAULT 0,
	created_at  TEXT NOT NULL,
	started_at  TEXT NOT NULL DEFAULT '',
	finished_at TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS matches_status ON matches(status);
`

// Open opens (creating if needed) the store in dir and holds the folder
// until Close: a second Open of the same folder, in this process or
// another, fails with ErrLocked, naming the holder as the first one
// described itself (holder, e.g. "arena serve (pid 42 on host h)").
//
// The data folder is the server user's alone (see PrivateFolder and
// privateDatabase): Open makes it 0700, tightening one that others may
// read, and the database's files 0600.
func Open(dir, holder string) (*Store, error) {
	if err := PrivateFolder(dir); err != nil {
		return nil, fmt.Errorf("data folder %s: %w", dir, err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "replays"), 0o700); err != nil {
		return nil, fmt.Errorf("data folder %s: %w", dir, err)
	}
	lk, err := lock(dir, holder)
	if err != nil {
		return nil, err
	}
	if err := privateDatabase(filepath.Join(dir, "arena.db")); err != nil {
		lk.Close()
		return nil, fmt.Errorf("data folder %s: %w", dir, err)
	}
	dsn := "file:" + filepath.Join(dir, "arena.db") + "?_pragma=journal_mode(WAL)&_pragma=busy_timeout(5000)&_pragma=synchronous(NORMAL)"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		lk.Close()
		return nil, fmt.Errorf("open the match store: %w", err)
	}
	// One writer at a time is what SQLite does anyway; one connection
	// keeps database/sql from tripping over its own locks.
	db.SetMaxOpenConns(1)
	if err := migrate(context.Background(), db); err != nil {
		db.Close()
		lk.Close()
		return nil, fmt.Errorf("open the match store in %s: %w", dir, err)
	}
	return &Store{db: db, dir: dir, lock: lk}, nil
}

// PrivateFolder makes dir (and its missing parents) with mode 0700, or
// makes an existing folder 0700 when its group or others have any access:
// a data folder (or a backup) holds the sessions, the webhooks' signing
// secrets and the pushed bots. Access for another user (a backup agent) is
// granted on a backup, deliberately, never by loosening the data folder
// (docs/operations.md#backups). A folder this user may not chmod (not its
// owner) is an error naming the fix.
func PrivateFolder(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a folder", dir)
	}
	if fi.Mode().Perm()&0o077 == 0 {
		return nil
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return fmt.Errorf("%s may be read by other users (mode %04o) and could not be made 0700: %w (make it this user's, mode 0700)", dir, fi.Mode().Perm(), err)
	}
	return nil
}

// privateDatabase makes the database file db 0600 before SQLite opens it:
// created empty with that mode when missing (SQLite takes an empty file
// for a new database), tightened when more open, and so its -wal and -shm
// files: SQLite's unix VFS gives the -wal, -shm and -journal files it
// creates the database file's mode, past the umask, so they stay 0600
// whenever they are made again. A process umask would not do: a database
// an earlier release made 0644 gets -wal and -shm files 0644 under a
// umask of 077 (tried), and a umask would cover only the commands that
// set it, and every other file of the process besides.
func privateDatabase(db string) error {
	f, err := os.OpenFile(db, os.O_RDONLY|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("the database: %w", err)
	}
	f.Close()
	for _, p := range []string{db, db + "-wal", db + "-shm", db + "-journal"} {
		fi, err := os.Stat(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		if fi.Mode().Perm()&0o077 == 0 {
			continue
		}
		if err := os.Chmod(p, 0o600); err != nil {
			return fmt.Errorf("%s may be read by other users (mode %04o) and could not be made 0600: %w", p, fi.Mode().Perm(), err)
		}
	}
	return nil
}

// Close closes the database and lets the folder go.
func (s *Store) Close() error {
	if s.sessions != nil {
		s.sessions.StopCleanup()
	}
	err := s.db.Close()
	s.lock.Close()
	return err
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

func parseStamp(s string) time.Time {
	t, _ := time.Parse(time.RFC3339Nano, s)
	return t
}

// Insert records a new match.
func (s *Store) Insert(ctx context.Context, m Match) error {
	return insertMatch(ctx, s.db, m)
}

type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

func insertMatch(ctx context.Context, db execer, m Match) error {
	bots, _ := json.Marshal(m.Bots)
	_, err := db.ExecContext(ctx, `INSERT INTO matches (id, status, game, map, seed, bots, settings, created_at, owner, ladder, kind) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		m.ID, m.Status, m.Game, m.Map, strconv.FormatUint(m.Seed, 10), string(bots), string(m.Settings), stamp(m.CreatedAt), m.Owner, m.Ladder, string(matches.Kind(m.Kind).OrHand()))
	if err != nil {
		return fmt.Errorf("record match %s: %w", m.ID, err)
	}
	return nil
}

// SetStatus moves a match to a new status; started marks when it began.
func (s *Store) SetStatus(ctx context.Context, id, status string, started time.Time) error {
	_, err := s.db.ExecContext(ctx, `UPDATE matches SET status = ?, started_at = CASE WHEN ? != '' AND started_at = '' THEN ? ELSE started_at END WHERE id = ?`,
		status, stamp(started), stamp(started), id)
	if err != nil {
		return fmt.Errorf("update match %s: %w", id, err)
	}
	return nil
}

// Outcome is how a match ended, as the history keeps it.
type Outcome struct {
	Status string
	Error  string
	Result json.RawMessage
	// Replay is the replay file's content; nil when there is none. Or
	// WriteReplay writes the file at the path given, atomically (a
	// replay encoded straight to its file, not into memory first).
	Replay      []byte
	WriteReplay func(path string) error
}

// Finish records how a match ended: its replay file first (atomically,
// so a reader never sees half of it), then its row, which says whether
// the replay is there. A replay that cannot be written is reported in the
// error, and the row is still written, without the replay.
func (s *Store) Finish(ctx context.Context, id string, o Outcome, at time.Time) error {
	var replayErr error
	saved := false
	switch {
	case o.WriteReplay != nil:
		if replayErr = o.WriteReplay(s.ReplayPath(id)); replayErr != nil {
			replayErr = fmt.Errorf("save the replay of match %s: %w", id, replayErr)
		} else {
			saved = true
		}
	case o.Replay != nil:
		if replayErr = matches.WriteReplayBytes(s.ReplayPath(id), o.Replay); replayErr != nil {
			replayErr = fmt.Errorf("save the replay of match %s: %w", id, replayErr)
		} else {
			saved = true
		}
	}
	_, err := s.db.ExecContext(ctx, `UPDATE matches SET status = ?, error = ?, result = ?, replay = ?, finished_at = ? WHERE id = ?`,
		o.Status, o.Error, string(o.Result), saved, stamp(at), id)
	if err != nil {
		err = fmt.Errorf("update match %s: %w", id, err)
	}
	return errors.Join(replayErr, err)
}

const columns = `seq, id, status, game, map, seed, bots, settings, error, result, replay, created_at, started_at, finished_at, owner, ladder, kind`

func scan(row interface{ Scan(...any) error }) (Match, error) {
	var m Match
	var seed, bots, settings, result, created, started, finished string
	var replay int
	if err := row.Scan(&m.Seq, &m.ID, &m.Status, &m.Game, &m.Map, &seed, &bots, &settings, &m.Error, &result, &replay, &created, &started, &finished, &m.Owner, &m.Ladder, &m.Kind); err != nil {
		return Match{}, err
	}
	m.HasReplay, m.ReplayExpired = replay == replaySaved, replay == replayExpired
	m.Seed, _ = strconv.ParseUint(seed, 10, 64)
	_ = json.Unmarshal([]byte(bots), &m.Bots)
	if settings != "" {
		m.Settings = json.RawMessage(settings)
	}
	if result != "" {
		m.Result = json.RawMessage(result)
	}
	m.CreatedAt, m.StartedAt, m.FinishedAt = parseStamp(created), parseStamp(started), parseStamp(finished)
	return m, nil
}

// Get returns one match.
func (s *Store) Get(ctx context.Context, id string) (Match, error) {
	return s.read().Get(ctx, id)
}

// Get returns one match, as Store.Get does.
func (r Reader) Get(ctx context.Context, id string) (Match, error) {
	m, err := scan(r.q.QueryRowContext(ctx, `SELECT `+columns+` FROM matches WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return Match{}, ErrNotFound
	}
	if err != nil {
		return Match{}, fmt.Errorf("read match %s: %w", id, err)
	}
	return m, nil
}

// Filter narrows a list of matches; its zero value lists them all.
type Filter struct {
	// Owners keeps the matches started by one of these (none: anyone's).
	Owners []string
	// NoLadder leaves the ladders' matches out.
	NoLadder bool
	// Game keeps one game's matches.
	Game string
}

// List returns up to limit matches that pass f, newest first, older than
// the cursor before (0: from the newest). next is the cursor of the
// following page, 0 when there is none.
func (s *Store) List(ctx context.Context, f Filter, before int64, limit int) (matches []Match, next int64, err error) {
	if before <= 0 {
		before = 1<<63 - 1
	}
	where, args := `seq < ?`, []any{before}
	if len(f.Owners) > 0 {
		where += ` AND owner IN (` + placeholders(len(f.Owners)) + `)`
		for _, o := range f.Owners {
			args = append(args, o)
		}
	}
	if f.NoLadder {
		where += ` AND ladder = 0`
	}
	if f.Game != "" {
		where += ` AND game = ?`
		args = append(args, f.Game)
	}
	rows, err := s.db.QueryContext(ctx, `SELECT `+columns+` FROM matches WHERE `+where+` ORDER BY seq DESC LIMIT ?`, append(args, limit+1)...)
	if err != nil {
		return nil, 0, fmt.Errorf("list matches: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		m, err := scan(rows)
		if err != nil {
			return nil, 0, fmt.Errorf("list matches: %w", err)
		}
		matches = append(matches, m)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("list matches: %w", err)
	}
	if len(matches) > limit {
		matches = matches[:limit]
		next = matches[limit-1].Seq
	}
	return matches, next, nil
}

// placeholders is "?, ?, …" for n values.
func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
}

// Unfinished returns the ids of matches that were not over: after a
// restart these were interrupted.
func (s *Store) Unfinished(ctx context.Context) ([]string, error) {
	return s.textColumn(ctx, "list unfinished matches", `SELECT id FROM matches WHERE status IN ('queued', 'starting', 'running')`)
}

// textColumn runs a query of one text column and returns its values; what
// names the query in an error.
func (s *Store) textColumn(ctx context.Context, what, query string, args ...any) ([]string, error) {
	rows, err := s.db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return out, nil
}

// Dir is the data folder.
func (s *Store) Dir() string { return s.dir }

// ReplayPath is where a match's replay file is written (by Finish),
// compressed; see OpenReplay for reading one.
func (s *Store) ReplayPath(id string) string {
	return filepath.Join(s.dir, "replays", ReplayNames(id)[0])
}

// ReplayFile is the file that holds a match's replay: the compressed one,
// or the plain JSON an earlier release wrote; os.ErrNotExist if neither.
func (s *Store) ReplayFile(id string) (string, error) {
	for _, name := range ReplayNames(id) {
		p := filepath.Join(s.dir, "replays", name)
		if _, err := os.Stat(p); err == nil || !errors.Is(err, os.ErrNotExist) {
			return p, err
		}
	}
	return "", fmt.Errorf("the replay of match %s: %w", id, os.ErrNotExist)
}

// OpenReplay opens a match's replay as JSON, whichever form it was
// written in.
func (s *Store) OpenReplay(id string) (io.ReadCloser, error) {
	p, err := s.ReplayFile(id)
	if err != nil {
		return nil, err
	}
	return matches.OpenReplay(p)
}
