package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"arena/internal/errs"
)

// Contests (schema version 5): a contest's settings (Spec, as JSON), its
// entries, the matches of its final (one row per game of the schedule,
// made at the freeze, each naming the match that plays it) and the audit
// log of its staff's actions.
const contestsSchema = `
CREATE TABLE contests (
	id         INTEGER PRIMARY KEY AUTOINCREMENT,
	name       TEXT NOT NULL,
	game       TEXT NOT NULL,
	spec       TEXT NOT NULL,
	freeze_at  TEXT NOT NULL,
	state      TEXT NOT NULL,
	created_by TEXT NOT NULL,
	created_at TEXT NOT NULL,
	final_at   TEXT NOT NULL DEFAULT '',
	done_at    TEXT NOT NULL DEFAULT ''
);
CREATE TABLE contest_entries (
	id         INTEGER PRIMARY KEY AUTOINCREMENT,
	contest_id INTEGER NOT NULL REFERENCES contests(id),
	owner      TEXT NOT NULL,
	bot        TEXT NOT NULL,
	image      TEXT NOT NULL,
	version    TEXT NOT NULL DEFAULT '',
	state      TEXT NOT NULL,
	reason     TEXT NOT NULL DEFAULT '',
	final_ref  TEXT NOT NULL DEFAULT '',
	final_id   TEXT NOT NULL DEFAULT '',
	final_digest TEXT NOT NULL DEFAULT '',
	authors    TEXT NOT NULL DEFAULT '',
	created_by TEXT NOT NULL,
	created_at TEXT NOT NULL
);
CREATE INDEX contest_entries_contest ON contest_entries(contest_id);
CREATE TABLE contest_games (
	contest_id INTEGER NOT NULL REFERENCES contests(id),
	idx        INTEGER NOT NULL,
	first      INTEGER NOT NULL,
	second     INTEGER NOT NULL,
	map        TEXT NOT NULL,
	seed       TEXT NOT NULL,
	match_id   TEXT NOT NULL DEFAULT '',
	tries      INTEGER NOT NULL DEFAULT 0,
	state      TEXT NOT NULL DEFAULT 'pending',
	outcome    TEXT NOT NULL DEFAULT '',
	note       TEXT NOT NULL DEFAULT '',
	PRIMARY KEY (contest_id, idx)
);
CREATE TABLE contest_practice (
	match_id   TEXT PRIMARY KEY,
	contest_id INTEGER NOT NULL REFERENCES contests(id),
	seq        INTEGER NOT NULL,
	first      INTEGER NOT NULL,
	second     INTEGER NOT NULL,
	state      TEXT NOT NULL DEFAULT 'pending',
	outcome    TEXT NOT NULL DEFAULT '',
	created_at TEXT NOT NULL
);
CREATE INDEX contest_practice_contest ON contest_practice(contest_id, seq);
CREATE TABLE contest_audit (
	id         INTEGER PRIMARY KEY AUTOINCREMENT,
	contest_id INTEGER NOT NULL REFERENCES contests(id),
	at         TEXT NOT NULL,
	actor      TEXT NOT NULL,
	action     TEXT NOT NULL,
	detail     TEXT NOT NULL
);
`

// A contest's states: open (registration and practice, until its freeze),
// final (its final tournament is being played), done (standings final).
const (
	ContestOpen  = "open"
	ContestFinal = "final"
	ContestDone  = "done"
)

// A contest entry's states.
const (
	EntryEntered      = "entered"
	EntryWithdrawn    = "withdrawn"
	EntryDisqualified = "disqualified"
	// EntryNoVersion: at the freeze it had no ready version pushed
	// before the deadline; it plays no final.
	EntryNoVersion = "no_version"
)

// A final game's states: pending (to play, or playing: MatchID names
// the match), scored, void (the platform could not play it, past its
// tries: not scored).
const (
	GamePending = "pending"
	GameScored  = "scored"
	GameVoid    = "void"
)

// Contest is a contest as the store keeps it: Spec is its settings as
// JSON (package contest reads it).
type Contest struct {
	ID              int64
	Name, Game      string
	Spec            json.RawMessage
	FreezeAt        time.Time
	State           string
	CreatedBy       string
	CreatedAt       time.Time
	FinalAt, DoneAt time.Time
}

// ContestEntry is a bot entered in a contest by its owner (a user or a
// team): Bot is its registry repository (NAME/bot) or, for an image of
// the engine entered by an admin, empty; Image is the reference entered;
// Version the tag the owner chose for the final ("" for the latest).
// At the freeze, its final version is pinned: FinalRef, FinalID (the
// engine's image id) and FinalDigest (the registry's, "" for an image of
// the engine).
type ContestEntry struct {
	ID, ContestID                  int64
	Owner, Bot, Image, Version     string
	State, Reason                  string
	FinalRef, FinalID, FinalDigest string
	Authors                        string
	CreatedBy                      string
	CreatedAt                      time.Time
}

// ContestGame is one game of a final's schedule: First plays the first
// seat, Second the second (entry ids). Outcome, once scored, is "1-0",
// "0-1" or "½-½" seen from First, with each bot's status after a colon
// when one faulted ("0-1:crashed,ok").
type ContestGame struct {
	ContestID int64
	Idx       int
	// Round is the Swiss system's round the game belongs to (0 in a
	// round robin, whose games are all made at the freeze).
	Round                int
	First, Second        int64
	Map                  string
	Seed                 uint64
	MatchID              string
	Tries                int
	State, Outcome, Note string
}

// The Swiss system's rounds (schema version 6): each final game's round.
const swissSchema = `
ALTER TABLE contest_games ADD COLUMN round INTEGER NOT NULL DEFAULT 0;
`

// AuditRecord is a staff action on a contest.
type AuditRecord struct {
	At     time.Time `json:"at"`
	Actor  string    `json:"actor"`
	Action string    `json:"action"`
	Detail string    `json:"detail"`
}

// ErrNoContest: no such contest (or entry of it).
var ErrNoContest = errs.New(errs.ErrNotFound, "no such contest")

// CreateContest records a new contest, open, and its creation in its
// audit log.
func (s *Store) CreateContest(ctx context.Context, c Contest) (Contest, error) {
	err := s.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO contests (name, game, spec, freeze_at, state, created_by, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
			c.Name, c.Game, string(c.Spec), stamp(c.FreezeAt), ContestOpen, c.CreatedBy, stamp(c.CreatedAt))
		if err != nil {
			return err
		}
		c.ID, _ = res.LastInsertId()
		c.State = ContestOpen
		return audit(ctx, tx, c.ID, c.CreatedAt, c.CreatedBy, "create", string(c.Spec))
	})
	if err != nil {
		return Contest{}, fmt.Errorf("record contest %s: %w", c.Name, err)
	}
	return c, nil
}

func audit(ctx context.Context, tx execer, id int64, at time.Time, actor, action, detail string) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO contest_audit (contest_id, at, actor, action, detail) VALUES (?, ?, ?, ?, ?)`, id, stamp(at), actor, action, detail)
	return err
}

// Audit records a staff action on a contest.
func (s *Store) Audit(ctx context.Context, id int64, at time.Time, actor, action, detail string) error {
	if err := audit(ctx, s.db, id, at, actor, action, detail); err != nil {
		return fmt.Errorf("record the audit of contest %d: %w", id, err)
	}
	return nil
}

// AuditLog is a contest's audit log, oldest first.
func (s *Store) AuditLog(ctx context.Context, id int64) ([]AuditRecord, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT at, actor, action, detail FROM contest_audit WHERE contest_id = ? ORDER BY id`, id)
	if err != nil {
		return nil, fmt.Errorf("read the audit of contest %d: %w", id, err)
	}
	defer rows.Close()
	out := []AuditRecord{}
	for rows.Next() {
		var a AuditRecord
		var at string
		if err := rows.Scan(&at, &a.Actor, &a.Action, &a.Detail); err != nil {
			return nil, err
		}
		a.At = parseStamp(at)
		out = append(out, a)
	}
	return out, rows.Err()
}

const contestColumns = `id, name, game, spec, freeze_at, state, created_by, created_at, final_at, done_at`

func scanContest(row interface{ Scan(...any) error }) (Contest, error) {
	var c Contest
	var spec, freeze, created, final, done string
	if err := row.Scan(&c.ID, &c.Name, &c.Game, &spec, &freeze, &c.State, &c.CreatedBy, &created, &final, &done); err != nil {
		return Contest{}, err
	}
	c.Spec = json.RawMessage(spec)
	c.FreezeAt, c.CreatedAt, c.FinalAt, c.DoneAt = parseStamp(freeze), parseStamp(created), parseStamp(final), parseStamp(done)
	return c, nil
}

// Contest returns a contest.
func (s *Store) Contest(ctx context.Context, id int64) (Contest, error) {
	c, err := scanContest(s.db.QueryRowContext(ctx, `SELECT `+contestColumns+` FROM contests WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return Contest{}, ErrNoContest
	}
	if err != nil {
		return Contest{}, fmt.Errorf("read contest %d: %w", id, err)
	}
	return c, nil
}

// Contests lists the contests, newest first; states, when given, keep
// those in them.
func (s *Store) Contests(ctx context.Context, states ...string) ([]Contest, error) {
	q, args := `SELECT `+contestColumns+` FROM contests`, []any{}
	if len(states) > 0 {
		q += ` WHERE state IN (` + placeholders(len(states)) + `)`
		for _, st := range states {
			args = append(args, st)
		}
	}
	rows, err := s.db.QueryContext(ctx, q+` ORDER BY id DESC`, args...)
	if err != nil {
		return nil, fmt.Errorf("list contests: %w", err)
	}
	defer rows.Close()
	out := []Contest{}
	for rows.Next() {
		c, err := scanContest(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// UpdateContest changes an open contest's settings and deadline (spec
// and freezeAt), recording the change in its audit log. A contest no
// longer open is not changed: ErrContestClosed.
func (s *Store) UpdateContest(ctx context.Context, id int64, spec json.RawMessage, freezeAt, at time.Time, actor, action, detail string) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE contests SET spec = ?, freeze_at = ? WHERE id = ? AND state = ?`, string(spec), stamp(freezeAt), id, ContestOpen)
		if err != nil {
			return fmt.Errorf("update contest %d: %w", id, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return ErrContestClosed
		}
		return audit(ctx, tx, id, at, actor, action, detail)
	})
}

// ErrContestClosed: the contest is past its freeze.
var ErrContestClosed = errs.New(errs.ErrConflict, "the contest is past its freeze")

// AddContestEntry records an entry of an open contest. admit, when not
// nil, says in the same transaction whether the entry may be made (its
// error, returned as it is, refuses it): it is given the contest, its
// entered entries and the people each of their owners and the new
// entry's owner counts for (personsOf). No other entry, and no change
// of a team, comes between its answer and the insert: the store has one
// connection, held by the transaction, and a data folder one process.
func (s *Store) AddContestEntry(ctx context.Context, e ContestEntry, admit func(ct Contest, entered []ContestEntry, persons map[string][]string) error) (ContestEntry, error) {
	var refused error
	err := s.tx(ctx, func(tx *sql.Tx) error {
		ct, err := scanContest(tx.QueryRowContext(ctx, `SELECT `+contestColumns+` FROM contests WHERE id = ?`, e.ContestID))
		if err != nil {
			if errors.Is(err, sql.ErrNoRows) {
				return ErrNoContest
			}
			return err
		}
		if ct.State != ContestOpen {
			return ErrContestClosed
		}
		if admit != nil {
			all, err := contestEntries(ctx, tx, e.ContestID)
			if err != nil {
				return err
			}
			var entered []ContestEntry
			owners := []string{e.Owner}
			for _, o := range all {
				if o.State == EntryEntered {
					entered = append(entered, o)
					owners = append(owners, o.Owner)
				}
			}
			persons := map[string][]string{}
			for _, o := range owners {
				if _, ok := persons[o]; !ok {
					if persons[o], err = personsOf(ctx, tx, o); err != nil {
						return err
					}
				}
			}
			if refused = admit(ct, entered, persons); refused != nil {
				return refused
			}
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO contest_entries (contest_id, owner, bot, image, version, state, final_ref, final_id, final_digest, authors, created_by, created_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, e.ContestID, e.Owner, e.Bot, e.Image, e.Version, EntryEntered, e.FinalRef, e.FinalID, e.FinalDigest, e.Authors, e.CreatedBy, stamp(e.CreatedAt))
		if err != nil {
			return err
		}
		e.ID, _ = res.LastInsertId()
		e.State = EntryEntered
		return nil
	})
	if refused != nil {
		return ContestEntry{}, refused
	}
	if err != nil && !errors.Is(err, ErrNoContest) && !errors.Is(err, ErrContestClosed) {
		err = fmt.Errorf("record the entry: %w", err)
	}
	return e, err
}

// personsOf are the people an owner's entry counts for, as the teams
// are now: a team's members (those in it, not the invited), or the user.
func personsOf(ctx context.Context, q rowQuerier, owner string) ([]string, error) {
	var team bool
	if err := q.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM teams WHERE name = ?)`, owner).Scan(&team); err != nil {
		return nil, fmt.Errorf("read team %s: %w", owner, err)
	}
	if !team {
		return []string{owner}, nil
	}
	rows, err := q.QueryContext(ctx, `SELECT user FROM team_members WHERE team = ? AND state = ? ORDER BY user`, owner, MemberIn)
	if err != nil {
		return nil, fmt.Errorf("read team %s: %w", owner, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var u string
		if err := rows.Scan(&u); err != nil {
			return nil, err
		}
		out = append(out, u)
	}
	return out, rows.Err()
}

// rowQuerier reads: the database, or a transaction.
type rowQuerier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

const entryColumnsC = `id, contest_id, owner, bot, image, version, state, reason, final_ref, final_id, final_digest, authors, created_by, created_at`

// ContestEntries lists a contest's entries, oldest first.
func (s *Store) ContestEntries(ctx context.Context, id int64) ([]ContestEntry, error) {
	return contestEntries(ctx, s.db, id)
}

func contestEntries(ctx context.Context, q rowQuerier, id int64) ([]ContestEntry, error) {
	rows, err := q.QueryContext(ctx, `SELECT `+entryColumnsC+` FROM contest_entries WHERE contest_id = ? ORDER BY id`, id)
	if err != nil {
		return nil, fmt.Errorf("list the entries of contest %d: %w", id, err)
	}
	defer rows.Close()
	out := []ContestEntry{}
	for rows.Next() {
		var e ContestEntry
		var created string
		if err := rows.Scan(&e.ID, &e.ContestID, &e.Owner, &e.Bot, &e.Image, &e.Version, &e.State, &e.Reason, &e.FinalRef, &e.FinalID, &e.FinalDigest, &e.Authors, &e.CreatedBy, &created); err != nil {
			return nil, err
		}
		e.CreatedAt = parseStamp(created)
		out = append(out, e)
	}
	return out, rows.Err()
}

// SetContestEntry changes an entry's version choice or state (and why),
// while its contest is open unless anyTime (a disqualification);
// actor's change is audited when action is set.
func (s *Store) SetContestEntry(ctx context.Context, e ContestEntry, anyTime bool, at time.Time, actor, action, detail string) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		var state string
		if err := tx.QueryRowContext(ctx, `SELECT state FROM contests WHERE id = ?`, e.ContestID).Scan(&state); err != nil {
			if errors.Is(err, sql.ErrNoRows) {
				return ErrNoContest
			}
			return err
		}
		if state != ContestOpen && !anyTime {
			return ErrContestClosed
		}
		res, err := tx.ExecContext(ctx, `UPDATE contest_entries SET version = ?, state = ?, reason = ? WHERE id = ? AND contest_id = ?`, e.Version, e.State, e.Reason, e.ID, e.ContestID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return ErrNoContest
		}
		if action == "" {
			return nil
		}
		return audit(ctx, tx, e.ContestID, at, actor, action, detail)
	})
}

// StartFinal moves an open contest to its final: each entry's final
// version (as pinned by the caller: FinalRef, FinalID, FinalDigest, or
// the state no_version) and the final's schedule, in one transaction.
// A contest no longer open is left alone (false).
func (s *Store) StartFinal(ctx context.Context, id int64, entries []ContestEntry, games []ContestGame, at time.Time) (bool, error) {
	started := false
	err := s.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE contests SET state = ?, final_at = ? WHERE id = ? AND state = ?`, ContestFinal, stamp(at), id, ContestOpen)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return nil
		}
		started = true
		for _, e := range entries {
			if _, err := tx.ExecContext(ctx, `UPDATE contest_entries SET state = ?, reason = ?, final_ref = ?, final_id = ?, final_digest = ?, authors = ? WHERE id = ? AND contest_id = ?`,
				e.State, e.Reason, e.FinalRef, e.FinalID, e.FinalDigest, e.Authors, e.ID, id); err != nil {
				return err
			}
		}
		for _, g := range games {
			if err := insertGame(ctx, tx, id, g); err != nil {
				return err
			}
		}
		return audit(ctx, tx, id, at, "arena", "freeze", fmt.Sprintf("the final starts: %d games", len(games)))
	})
	if err != nil {
		return false, fmt.Errorf("start the final of contest %d: %w", id, err)
	}
	return started, nil
}

func insertGame(ctx context.Context, tx *sql.Tx, id int64, g ContestGame) error {
	state := g.State
	if state == "" {
		state = GamePending
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO contest_games (contest_id, idx, round, first, second, map, seed, state, outcome, note) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		id, g.Idx, g.Round, g.First, g.Second, g.Map, strconv.FormatUint(g.Seed, 10), state, g.Outcome, g.Note)
	return err
}

// AddContestRound adds the games of a Swiss system's next round to a
// final, in one transaction, audited: once only (false when the round
// is there already, or the contest is not in its final).
func (s *Store) AddContestRound(ctx context.Context, id int64, round int, games []ContestGame, at time.Time, detail string) (bool, error) {
	added := false
	err := s.tx(ctx, func(tx *sql.Tx) error {
		var state string
		var have int
		if err := tx.QueryRowContext(ctx, `SELECT state, (SELECT COUNT(*) FROM contest_games WHERE contest_id = ? AND round >= ?) FROM contests WHERE id = ?`, id, round, id).Scan(&state, &have); err != nil {
			return err
		}
		if state != ContestFinal || have > 0 {
			return nil
		}
		for _, g := range games {
			g.Round = round
			if err := insertGame(ctx, tx, id, g); err != nil {
				return err
			}
		}
		added = true
		return audit(ctx, tx, id, at, "arena", "round", detail)
	})
	if err != nil {
		return false, fmt.Errorf("add round %d to contest %d: %w", round+1, id, err)
	}
	return added, nil
}

// ContestGames lists a final's games in schedule order.
func (s *Store) ContestGames(ctx context.Context, id int64) ([]ContestGame, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT contest_id, idx, round, first, second, map, seed, match_id, tries, state, outcome, note FROM contest_games WHERE contest_id = ? ORDER BY idx`, id)
	if err != nil {
		return nil, fmt.Errorf("list the games of contest %d: %w", id, err)
	}
	defer rows.Close()
	out := []ContestGame{}
	for rows.Next() {
		var g ContestGame
		var seed string
		if err := rows.Scan(&g.ContestID, &g.Idx, &g.Round, &g.First, &g.Second, &g.Map, &seed, &g.MatchID, &g.Tries, &g.State, &g.Outcome, &g.Note); err != nil {
			return nil, err
		}
		g.Seed, _ = strconv.ParseUint(seed, 10, 64)
		out = append(out, g)
	}
	return out, rows.Err()
}

// InsertContestMatch records match m as the next try of a final's game,
// in one transaction: only while the game is pending and has no match
// playing it (else ErrGameTaken), so that no game is ever played by two
// matches at once.
func (s *Store) InsertContestMatch(ctx context.Context, m Match, contest int64, idx int) error {
	return s.claimGame(ctx, m, `UPDATE contest_games SET match_id = ?, tries = tries + 1 WHERE contest_id = ? AND idx = ? AND state = ? AND match_id = ''`,
		m.ID, contest, idx, GamePending)
}

// claimGame runs claim, which sets match m on a game only while it is
// free, and records m, in one transaction (ErrGameTaken when claim set
// nothing). A contest's matches are the platform's.
func (s *Store) claimGame(ctx context.Context, m Match, claim string, args ...any) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, claim, args...)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return ErrGameTaken
		}
		m.Owner, m.Ladder = "", true
		return insertMatch(ctx, tx, m)
	})
}

// ErrGameTaken: the final's game is being played or is over.
var ErrGameTaken = errs.New(errs.ErrConflict, "the game is being played or is over")

// SettleContestGame records how the match playing a final's game ended:
// scored with its outcome, void (past its tries), or given back to be
// played again (state pending: the match is forgotten, kept in the
// history). It changes nothing unless matchID still plays the game.
func (s *Store) SettleContestGame(ctx context.Context, contest int64, idx int, matchID, state, outcome, note string) (bool, error) {
	keep := matchID
	if state == GamePending {
		keep = ""
	}
	res, err := s.db.ExecContext(ctx, `UPDATE contest_games SET state = ?, outcome = ?, note = ?, match_id = ? WHERE contest_id = ? AND idx = ? AND match_id = ? AND state = ?`,
		state, outcome, note, keep, contest, idx, matchID, GamePending)
	if err != nil {
		return false, fmt.Errorf("settle game %d of contest %d: %w", idx, contest, err)
	}
	n, _ := res.RowsAffected()
	return n > 0, nil
}

// ReopenContestGames gives scored or void games back to be played again
// (a staff's rerun of a pairing), audited.
func (s *Store) ReopenContestGames(ctx context.Context, contest int64, idxs []int, at time.Time, actor, detail string) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		for _, i := range idxs {
			if _, err := tx.ExecContext(ctx, `UPDATE contest_games SET state = ?, outcome = '', note = '', match_id = '' WHERE contest_id = ? AND idx = ?`, GamePending, contest, i); err != nil {
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, `UPDATE contests SET state = ?, done_at = '' WHERE id = ? AND state = ?`, ContestFinal, contest, ContestDone); err != nil {
			return err
		}
		return audit(ctx, tx, contest, at, actor, "rerun", detail)
	})
}

// FinishContest marks a contest in its final done.
func (s *Store) FinishContest(ctx context.Context, id int64, at time.Time) error {
	_, err := s.db.ExecContext(ctx, `UPDATE contests SET state = ?, done_at = ? WHERE id = ? AND state = ?`, ContestDone, stamp(at), id, ContestFinal)
	if err != nil {
		return fmt.Errorf("finish contest %d: %w", id, err)
	}
	return nil
}

// PracticeGame is a match of a contest's practice ladder, between two of
// its entries (First in the first seat); its state and outcome as a
// final game's.
type PracticeGame struct {
	ContestID      int64
	MatchID        string
	Seq            int64
	First, Second  int64
	State, Outcome string
	CreatedAt      time.Time
}

// InsertPracticeMatch records match m as the next practice game of a
// contest, in one transaction; only while the contest is open.
func (s *Store) InsertPracticeMatch(ctx context.Context, m Match, p PracticeGame) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		var state string
		if err := tx.QueryRowContext(ctx, `SELECT state FROM contests WHERE id = ?`, p.ContestID).Scan(&state); err != nil {
			return err
		}
		if state != ContestOpen {
			return ErrContestClosed
		}
		var seq int64
		if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(seq), 0) + 1 FROM contest_practice WHERE contest_id = ?`, p.ContestID).Scan(&seq); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO contest_practice (match_id, contest_id, seq, first, second, created_at) VALUES (?, ?, ?, ?, ?, ?)`,
			m.ID, p.ContestID, seq, p.First, p.Second, stamp(m.CreatedAt)); err != nil {
			return err
		}
		m.Owner, m.Ladder = "", true
		return insertMatch(ctx, tx, m)
	})
}

// PracticeGames lists a contest's practice games in the order they were
// made.
func (s *Store) PracticeGames(ctx context.Context, id int64) ([]PracticeGame, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT contest_id, match_id, seq, first, second, state, outcome, created_at FROM contest_practice WHERE contest_id = ? ORDER BY seq`, id)
	if err != nil {
		return nil, fmt.Errorf("list the practice of contest %d: %w", id, err)
	}
	return scanPracticeGames(rows)
}

// PendingPracticeGames lists every contest's practice games not settled
// yet, in the order they were made.
func (s *Store) PendingPracticeGames(ctx context.Context) ([]PracticeGame, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT contest_id, match_id, seq, first, second, state, outcome, created_at FROM contest_practice WHERE state = ? ORDER BY contest_id, seq`, GamePending)
	if err != nil {
		return nil, fmt.Errorf("list the pending practice games: %w", err)
	}
	return scanPracticeGames(rows)
}

func scanPracticeGames(rows *sql.Rows) ([]PracticeGame, error) {
	defer rows.Close()
	out := []PracticeGame{}
	for rows.Next() {
		var p PracticeGame
		var created string
		if err := rows.Scan(&p.ContestID, &p.MatchID, &p.Seq, &p.First, &p.Second, &p.State, &p.Outcome, &created); err != nil {
			return nil, err
		}
		p.CreatedAt = parseStamp(created)
		out = append(out, p)
	}
	return out, rows.Err()
}

// SettlePracticeGame records how a practice match ended (scored with its
// outcome, or void), once.
func (s *Store) SettlePracticeGame(ctx context.Context, matchID, state, outcome string) error {
	_, err := s.db.ExecContext(ctx, `UPDATE contest_practice SET state = ?, outcome = ? WHERE match_id = ? AND state = ?`, state, outcome, matchID, GamePending)
	if err != nil {
		return fmt.Errorf("settle practice match %s: %w", matchID, err)
	}
	return nil
}
