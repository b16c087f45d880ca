package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"arena/internal/errs"
)

// The ladders' tables, added beside the match history (CREATE … IF NOT
// EXISTS: an existing database gains them when it is opened).
//
//   - ladder_entries: a registered bot, one row per version (the image id
//     it was pinned to), with its current rating.
//   - ladder_matches: the matches a ladder created: the match itself is a
//     row of matches; this says how it stands for the ladder (pending,
//     rated, void) and, once rated, in which order (rated_seq) its result
//     was applied, which is the order a recomputation replays.
//   - ladder_seats: which entry played which seat, and once rated, its
//     place, outcome and status and its rating before and after.
const ladderSchema = `
CREATE TABLE IF NOT EXISTS ladder_entries (
	id         INTEGER PRIMARY KEY AUTOINCREMENT,
	game       TEXT NOT NULL,
	name       TEXT NOT NULL,
	version    INTEGER NOT NULL,
	image      TEXT NOT NULL,
	image_id   TEXT NOT NULL,
	state      TEXT NOT NULL,
	note       TEXT NOT NULL DEFAULT '',
	mu         REAL NOT NULL,
	sigma      REAL NOT NULL,
	created_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS ladder_entries_game ON ladder_entries(game, state);
CREATE TABLE IF NOT EXISTS ladder_matches (
	match_id   TEXT PRIMARY KEY,
	game       TEXT NOT NULL,
	seq        INTEGER NOT NULL,
	map        TEXT NOT NULL,
	state      TEXT NOT NULL,
	note       TEXT NOT NULL DEFAULT '',
	rated_seq  INTEGER NOT NULL DEFAULT 0,
	created_at TEXT NOT NULL,
	settled_at TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS ladder_matches_game ON ladder_matches(game, state);
CREATE TABLE IF NOT EXISTS ladder_seats (
	match_id     TEXT NOT NULL,
	seat         INTEGER NOT NULL,
	entry_id     INTEGER NOT NULL,
	place        INTEGER NOT NULL DEFAULT 0,
	outcome      TEXT NOT NULL DEFAULT '',
	status       TEXT NOT NULL DEFAULT '',
	mu_before    REAL NOT NULL DEFAULT 0,
	sigma_before REAL NOT NULL DEFAULT 0,
	mu           REAL NOT NULL DEFAULT 0,
	sigma        REAL NOT NULL DEFAULT 0,
	PRIMARY KEY (match_id, seat)
);
CREATE INDEX IF NOT EXISTS ladder_seats_entry ON ladder_seats(entry_id);
`

// The states of a ladder entry.
const (
	EntryActive  = "active"  // plays
	EntryPaused  = "paused"  // listed, does not play
	EntryRetired = "retired" // a newer version of the same name replaced it
	EntryRemoved = "removed" // taken off the ladder; its matches stay
)

// The states of a ladder match.
const (
	LadderPending = "pending" // not over, or over and not yet settled
	LadderRated   = "rated"
	LadderVoid    = "void" // over without a result the ladder counts
)

// Entry is a bot on a game's ladder: one version of a name, pinned to an
// image id.
type Entry struct {
	ID      int64
	Game    string
	Name    string
	Version int
	// Image is the reference as registered; ImageID is what it resolved
	// to then, and what the entry plays.
	Image, ImageID string
	State          string
	// Note says why the ladder paused the entry, if it did.
	Note      string
	Mu, Sigma float64
	CreatedAt time.Time
	// Owner is the user or team the entry belongs to; CreatedBy the user
	// who registered it.
	Owner, CreatedBy string
}

// Listed reports whether the entry is on the leaderboard (active or
// paused).
func (e Entry) Listed() bool { return e.State == EntryActive || e.State == EntryPaused }

// ErrNoEntry is returned for an unknown entry id.
var ErrNoEntry = errs.New(errs.ErrNotFound, "no such ladder entry")

// ErrNameTaken is wrapped by RegisterEntry's error when the name belongs
// to an entry of another image.
var ErrNameTaken = errs.New(errs.ErrConflict, "name taken")

// ErrLadderFull is wrapped by RegisterEntry's error when the ladder holds
// its most entries.
var ErrLadderFull = errs.New(errs.ErrConflict, "ladder full")

const entryColumns = `id, game, name, version, image, image_id, state, note, mu, sigma, created_at, owner, created_by`

func scanEntry(row interface{ Scan(...any) error }) (Entry, error) {
	var e Entry
	var created string
	if err := row.Scan(&e.ID, &e.Game, &e.Name, &e.Version, &e.Image, &e.ImageID, &e.State, &e.Note, &e.Mu, &e.Sigma, &created, &e.Owner, &e.CreatedBy); err != nil {
		return Entry{}, err
	}
	e.CreatedAt = parseStamp(created)
	return e, nil
}

// EntryLimits bound a game's listed ladder entries: in all, and of one
// owner (0: no bound).
type EntryLimits struct{ Listed, PerOwner int }

// RegisterEntry puts e (game, name, image, image id, rating, time) on its
// game's ladder as an active entry, in one transaction:
//   - a listed entry of the same name and another owner or image
//     reference: the name is taken (ErrNameTaken);
//   - a listed entry of the same name and image id: nothing changes, and
//     that entry is returned with created false;
//   - a listed entry of the same name and image reference with another
//     image id is an older version: it is retired (its history stays) and
//     e becomes the next version;
//   - past lim.Listed listed entries of the game, or lim.PerOwner of its
//     owner (0: no limit; a new version takes no more room than the one it
//     replaces), the ladder is full (ErrLadderFull).
func (s *Store) RegisterEntry(ctx context.Context, e Entry, lim EntryLimits) (out Entry, created bool, err error) {
	err = s.tx(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT `+entryColumns+` FROM ladder_entries WHERE game = ? AND name = ? AND state IN ('active', 'paused')`, e.Game, e.Name)
		if err != nil {
			return err
		}
		var same []Entry
		for rows.Next() {
			x, err := scanEntry(rows)
			if err != nil {
				rows.Close()
				return err
			}
			same = append(same, x)
		}
		rows.Close()
		for _, x := range same {
			if x.Owner != e.Owner {
				return fmt.Errorf("%w: %s belongs to %s (entry %d); register your bot under another name", ErrNameTaken, e.Name, x.Owner, x.ID)
			}
			if x.Image != e.Image {
				return fmt.Errorf("%w: %s is registered with image %s (entry %d); register this image under another name", ErrNameTaken, e.Name, x.Image, x.ID)
			}
			if x.ImageID == e.ImageID {
				out = x
				return nil
			}
		}
		for _, x := range same {
			if _, err := tx.ExecContext(ctx, `UPDATE ladder_entries SET state = ?, note = ? WHERE id = ?`, EntryRetired, "replaced by a newer version of the image", x.ID); err != nil {
				return err
			}
		}
		var listed, version int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM ladder_entries WHERE game = ? AND state IN ('active', 'paused')`, e.Game).Scan(&listed); err != nil {
			return err
		}
		if lim.Listed > 0 && listed >= lim.Listed {
			return fmt.Errorf("%w: the %s ladder holds %d entries, its most (ARENA_LADDER_MAX_ENTRIES); remove one first", ErrLadderFull, e.Game, listed)
		}
		if lim.PerOwner > 0 && len(same) == 0 {
			var owned int
			if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM ladder_entries WHERE game = ? AND owner = ? AND state IN ('active', 'paused')`, e.Game, e.Owner).Scan(&owned); err != nil {
				return err
			}
			if owned >= lim.PerOwner {
				return fmt.Errorf("%w: %s has %d entries on the %s ladder, the most one may (ARENA_LADDER_ENTRIES_PER_OWNER); remove one, or register a new version under one of their names", ErrLadderFull, e.Owner, owned, e.Game)
			}
			// A team's entries count for each of its members, as a
			// contest's do: five teams are not fifteen more places.
			person, n, err := overCount(ctx, tx, e.Game, e.Owner, lim.PerOwner-1)
			if err != nil {
				return err
			}
			if person != "" {
				return fmt.Errorf("%w: %s counts %d entries on the %s ladder with their teams', the most one may (ARENA_LADDER_ENTRIES_PER_OWNER: a team's entries count for each member); remove one first", ErrLadderFull, person, n, e.Game)
			}
		}
		if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM ladder_entries WHERE game = ? AND name = ?`, e.Game, e.Name).Scan(&version); err != nil {
			return err
		}
		e.Version, e.State, e.Note = version+1, EntryActive, ""
		res, err := tx.ExecContext(ctx, `INSERT INTO ladder_entries (game, name, version, image, image_id, state, mu, sigma, created_at, owner, created_by) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			e.Game, e.Name, e.Version, e.Image, e.ImageID, e.State, e.Mu, e.Sigma, stamp(e.CreatedAt), e.Owner, e.CreatedBy)
		if err != nil {
			return err
		}
		if e.ID, err = res.LastInsertId(); err != nil {
			return err
		}
		out, created = e, true
		return nil
	})
	if err != nil && !errors.Is(err, ErrNameTaken) && !errors.Is(err, ErrLadderFull) {
		err = fmt.Errorf("register %s on the %s ladder: %w", e.Name, e.Game, err)
	}
	return out, created, err
}

// countsFor are the listed entries that count for a person on a ladder:
// their own and their teams' (as a member, not invited).
const countsFor = `state IN ('active', 'paused') AND (owner = ? OR owner IN (SELECT team FROM team_members WHERE user = ? AND state = '` + MemberIn + `'))`

// overCount is the first person owner's entries count for (the user, or
// a team's members; admins are not bounded) who counts more than most
// listed entries on game's ladder, and how many; "" when none does.
func overCount(ctx context.Context, q rowQuerier, game, owner string, most int) (string, int, error) {
	persons, err := personsOf(ctx, q, owner)
	if err != nil {
		return "", 0, err
	}
	for _, p := range persons {
		var admin bool
		if err := q.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM users WHERE name = ? AND role = 'admin')`, p).Scan(&admin); err != nil {
			return "", 0, err
		}
		if admin {
			continue
		}
		var n int
		if err := q.QueryRowContext(ctx, `SELECT COUNT(*) FROM ladder_entries WHERE game = ? AND `+countsFor, game, p, p).Scan(&n); err != nil {
			return "", 0, err
		}
		if n > most {
			return p, n, nil
		}
	}
	return "", 0, nil
}

// OverCount is the first person an entry counts for who counts more than
// most listed entries on its ladder (with their teams'), and how many;
// "" when none does.
func (s *Store) OverCount(ctx context.Context, e Entry, most int) (string, int, error) {
	return overCount(ctx, s.db, e.Game, e.Owner, most)
}

// PauseOverCount pauses the active entries past most of a person on a
// ladder (their own and their teams' together, oldest kept; admins are
// not bounded), with a note saying why, and returns them. Paused entries
// still count: the person removes one to let another play.
func (s *Store) PauseOverCount(ctx context.Context, most int) ([]Entry, error) {
	if most <= 0 {
		return nil, nil
	}
	var paused []Entry
	err := s.tx(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT e.id, e.game, e.state, p.person FROM ladder_entries e JOIN (
				SELECT name AS owner, name AS person FROM users WHERE role != 'admin'
				UNION ALL SELECT m.team, m.user FROM team_members m JOIN users u ON u.name = m.user WHERE m.state = ? AND u.role != 'admin'
			) p ON p.owner = e.owner WHERE e.state IN ('active', 'paused') ORDER BY p.person, e.game, e.id`, MemberIn)
		if err != nil {
			return err
		}
		type row struct {
			id                  int64
			game, state, person string
		}
		var all []row
		for rows.Next() {
			var r row
			if err := rows.Scan(&r.id, &r.game, &r.state, &r.person); err != nil {
				rows.Close()
				return err
			}
			all = append(all, r)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		done := map[int64]bool{}
		for i := 0; i < len(all); {
			j := i
			for j < len(all) && all[j].person == all[i].person && all[j].game == all[i].game {
				j++
			}
			if n := j - i; n > most {
				for _, r := range all[i+most : j] {
					if r.state != EntryActive || done[r.id] {
						continue
					}
					done[r.id] = true
					note := fmt.Sprintf("paused: %s counts %d entries on the %s ladder with their teams', the most one may is %d (ARENA_LADDER_ENTRIES_PER_OWNER); remove one to let this one play", r.person, n, r.game, most)
					if _, err := tx.ExecContext(ctx, `UPDATE ladder_entries SET state = ?, note = ? WHERE id = ?`, EntryPaused, note, r.id); err != nil {
						return err
					}
					e, err := scanEntry(tx.QueryRowContext(ctx, `SELECT `+entryColumns+` FROM ladder_entries WHERE id = ?`, r.id))
					if err != nil {
						return err
					}
					paused = append(paused, e)
				}
			}
			i = j
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("pause the ladder entries over the count: %w", err)
	}
	return paused, nil
}

// tx runs f in a transaction, committed when f returns nil.
func (s *Store) tx(ctx context.Context, f func(*sql.Tx) error) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := f(tx); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

// Reader reads the ladders (and the matches) as the Store's methods of the
// same names do. A Reader from Snapshot reads within one read
// transaction: every read sees the database as the first one did, and no
// write falls between them.
type Reader struct{ q rowQuerier }

// read is a Reader over the database itself, each read its own.
func (s *Store) read() Reader { return Reader{q: s.db} }

// Snapshot runs f with a Reader whose reads all see one state of the
// database: what must agree, such as a board's entries, their counts of
// matches and faults and the matches listed (issue #60: a board showed a
// bot crashing in 15 of 14 matches, a match having been settled between
// two of its reads), is read through one Snapshot.
//
// The store has one connection (Open), which f holds until it returns:
// writes wait meanwhile, so f only reads, and only through r; a call to
// the Store itself within f would wait for the connection f holds, until
// ctx ends.
func (s *Store) Snapshot(ctx context.Context, f func(r Reader) error) error {
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return fmt.Errorf("begin a read of the store: %w", err)
	}
	defer tx.Rollback() // once committed, a no-op
	if err := f(Reader{q: tx}); err != nil {
		return err
	}
	return tx.Commit()
}

// snapshot runs one read of several statements (f, a Reader's method) in
// a Snapshot of its own, so that they agree.
func snapshot[T any](ctx context.Context, s *Store, f func(Reader) (T, error)) (T, error) {
	var out T
	err := s.Snapshot(ctx, func(r Reader) error {
		var err error
		out, err = f(r)
		return err
	})
	return out, err
}

// Entry returns one entry.
func (s *Store) Entry(ctx context.Context, id int64) (Entry, error) {
	return s.read().Entry(ctx, id)
}

// Entry returns one entry.
func (r Reader) Entry(ctx context.Context, id int64) (Entry, error) {
	e, err := scanEntry(r.q.QueryRowContext(ctx, `SELECT `+entryColumns+` FROM ladder_entries WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return Entry{}, ErrNoEntry
	}
	if err != nil {
		return Entry{}, fmt.Errorf("read ladder entry %d: %w", id, err)
	}
	return e, nil
}

// Entries returns a game's entries in the given states (all when none),
// oldest first; an empty game gives every game's.
func (s *Store) Entries(ctx context.Context, game string, states ...string) ([]Entry, error) {
	return s.read().Entries(ctx, game, states...)
}

// Entries returns a game's entries, as Store.Entries does.
func (r Reader) Entries(ctx context.Context, game string, states ...string) ([]Entry, error) {
	q := `SELECT ` + entryColumns + ` FROM ladder_entries WHERE (? = '' OR game = ?)`
	args := []any{game, game}
	if len(states) > 0 {
		q += ` AND state IN (?` + strings.Repeat(", ?", len(states)-1) + `)`
		for _, st := range states {
			args = append(args, st)
		}
	}
	rows, err := r.q.QueryContext(ctx, q+` ORDER BY id`, args...)
	if err != nil {
		return nil, fmt.Errorf("list ladder entries: %w", err)
	}
	defer rows.Close()
	var out []Entry
	for rows.Next() {
		e, err := scanEntry(rows)
		if err != nil {
			return nil, fmt.Errorf("list ladder entries: %w", err)
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

// SetEntryState moves an entry to a state, with a note saying why (empty
// clears it). It returns the entry as it is then.
func (s *Store) SetEntryState(ctx context.Context, id int64, state, note string) (Entry, error) {
	res, err := s.db.ExecContext(ctx, `UPDATE ladder_entries SET state = ?, note = ? WHERE id = ?`, state, note, id)
	if err != nil {
		return Entry{}, fmt.Errorf("update ladder entry %d: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return Entry{}, ErrNoEntry
	}
	return s.Entry(ctx, id)
}

// RenameEntry gives an entry's name, every version of it, a new one
// that no other entry of the game has had (ErrNameTaken).
func (s *Store) RenameEntry(ctx context.Context, id int64, name string) (Entry, error) {
	err := s.tx(ctx, func(tx *sql.Tx) error {
		e, err := scanEntry(tx.QueryRowContext(ctx, `SELECT `+entryColumns+` FROM ladder_entries WHERE id = ?`, id))
		if errors.Is(err, sql.ErrNoRows) {
			return ErrNoEntry
		}
		if err != nil {
			return err
		}
		if e.Name == name {
			return nil
		}
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM ladder_entries WHERE game = ? AND name = ?`, e.Game, name).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			return fmt.Errorf("%w: the %s ladder has had an entry named %s", ErrNameTaken, e.Game, name)
		}
		_, err = tx.ExecContext(ctx, `UPDATE ladder_entries SET name = ? WHERE game = ? AND name = ?`, name, e.Game, e.Name)
		return err
	})
	if err != nil {
		if !errors.Is(err, ErrNameTaken) && !errors.Is(err, ErrNoEntry) {
			err = fmt.Errorf("rename ladder entry %d: %w", id, err)
		}
		return Entry{}, err
	}
	return s.Entry(ctx, id)
}

// LadderMatch is a match a ladder created, as it stands for the ladder.
type LadderMatch struct {
	MatchID string
	Game    string
	// Seq numbers the game's ladder matches from 1, in creation order.
	Seq   int64
	Map   string
	State string
	// Note says why the match was made (pending, rated) or why it does
	// not count (void).
	Note string
	// RatedSeq orders the rated matches of a game as they were rated.
	RatedSeq  int64
	CreatedAt time.Time
	SettledAt time.Time
	Seats     []LadderSeat
}

// LadderSeat is one entry's part in a ladder match.
type LadderSeat struct {
	Seat    int
	EntryID int64
	// Set once rated: the place (0 is first), win, draw or loss, the
	// bot's status and its rating before and after the match.
	Place                 int
	Outcome, Status       string
	MuBefore, SigmaBefore float64
	Mu, Sigma             float64
}

// NextLadderSeq is the Seq the game's next ladder match will have.
func (s *Store) NextLadderSeq(ctx context.Context, game string) (int64, error) {
	var n int64
	if err := s.db.QueryRowContext(ctx, `SELECT COALESCE(MAX(seq), 0) + 1 FROM ladder_matches WHERE game = ?`, game).Scan(&n); err != nil {
		return 0, fmt.Errorf("number the next %s ladder match: %w", game, err)
	}
	return n, nil
}

// InsertLadderMatch records a new match (as Insert does) and, in the same
// transaction, that the ladder made it with these entries in these seats.
func (s *Store) InsertLadderMatch(ctx context.Context, m Match, lm LadderMatch) error {
	err := s.tx(ctx, func(tx *sql.Tx) error {
		m.Owner, m.Ladder = "", true
		if err := insertMatch(ctx, tx, m); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO ladder_matches (match_id, game, seq, map, state, note, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
			m.ID, m.Game, lm.Seq, m.Map, LadderPending, lm.Note, stamp(m.CreatedAt)); err != nil {
			return err
		}
		for _, st := range lm.Seats {
			if _, err := tx.ExecContext(ctx, `INSERT INTO ladder_seats (match_id, seat, entry_id) VALUES (?, ?, ?)`, m.ID, st.Seat, st.EntryID); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("record ladder match %s: %w", m.ID, err)
	}
	return nil
}

const ladderMatchColumns = `match_id, game, seq, map, state, note, rated_seq, created_at, settled_at`

func scanLadderMatch(row interface{ Scan(...any) error }) (LadderMatch, error) {
	var lm LadderMatch
	var created, settled string
	if err := row.Scan(&lm.MatchID, &lm.Game, &lm.Seq, &lm.Map, &lm.State, &lm.Note, &lm.RatedSeq, &created, &settled); err != nil {
		return LadderMatch{}, err
	}
	lm.CreatedAt, lm.SettledAt = parseStamp(created), parseStamp(settled)
	return lm, nil
}

type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// ladderMatches reads ladder matches with their seats.
func ladderMatches(ctx context.Context, q querier, where string, args ...any) ([]LadderMatch, error) {
	rows, err := q.QueryContext(ctx, `SELECT `+ladderMatchColumns+` FROM ladder_matches `+where, args...)
	if err != nil {
		return nil, err
	}
	var out []LadderMatch
	index := map[string]int{}
	for rows.Next() {
		lm, err := scanLadderMatch(rows)
		if err != nil {
			rows.Close()
			return nil, err
		}
		index[lm.MatchID] = len(out)
		out = append(out, lm)
	}
	rows.Close()
	if err := rows.Err(); err != nil || len(out) == 0 {
		return out, err
	}
	ids := make([]any, 0, len(out))
	for _, lm := range out {
		ids = append(ids, lm.MatchID)
	}
	// In chunks: SQLite bounds the parameters of one statement.
	for len(ids) > 0 {
		chunk := ids[:min(len(ids), 500)]
		ids = ids[len(chunk):]
		rows, err := q.QueryContext(ctx, `SELECT match_id, seat, entry_id, place, outcome, status, mu_before, sigma_before, mu, sigma FROM ladder_seats WHERE match_id IN (?`+strings.Repeat(", ?", len(chunk)-1)+`) ORDER BY match_id, seat`, chunk...)
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			var id string
			var st LadderSeat
			if err := rows.Scan(&id, &st.Seat, &st.EntryID, &st.Place, &st.Outcome, &st.Status, &st.MuBefore, &st.SigmaBefore, &st.Mu, &st.Sigma); err != nil {
				rows.Close()
				return nil, err
			}
			lm := &out[index[id]]
			lm.Seats = append(lm.Seats, st)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// LadderMatchOf returns a ladder match with its seats; ErrNotFound when
// the ladder did not make that match.
func (s *Store) LadderMatchOf(ctx context.Context, id string) (LadderMatch, error) {
	return snapshot(ctx, s, func(r Reader) (LadderMatch, error) { return r.LadderMatchOf(ctx, id) })
}

// LadderMatchOf returns a ladder match with its seats, as
// Store.LadderMatchOf does.
func (r Reader) LadderMatchOf(ctx context.Context, id string) (LadderMatch, error) {
	list, err := ladderMatches(ctx, r.q, `WHERE match_id = ?`, id)
	if err != nil {
		return LadderMatch{}, fmt.Errorf("read ladder match %s: %w", id, err)
	}
	if len(list) == 0 {
		return LadderMatch{}, ErrNotFound
	}
	return list[0], nil
}

// LadderMatches returns a game's ladder matches in the given states (all
// when none) with their seats, in creation order.
func (s *Store) LadderMatches(ctx context.Context, game string, states ...string) ([]LadderMatch, error) {
	return snapshot(ctx, s, func(r Reader) ([]LadderMatch, error) { return r.LadderMatches(ctx, game, states...) })
}

// LadderMatches returns a game's ladder matches, as Store.LadderMatches
// does.
func (r Reader) LadderMatches(ctx context.Context, game string, states ...string) ([]LadderMatch, error) {
	where := `WHERE game = ?`
	args := []any{game}
	if len(states) > 0 {
		where += ` AND state IN (?` + strings.Repeat(", ?", len(states)-1) + `)`
		for _, st := range states {
			args = append(args, st)
		}
	}
	list, err := ladderMatches(ctx, r.q, where+` ORDER BY seq`, args...)
	if err != nil {
		return nil, fmt.Errorf("list %s ladder matches: %w", game, err)
	}
	return list, nil
}

// RatedMatches returns a game's rated ladder matches in the order they
// were rated, with their seats: the history a recomputation replays.
func (s *Store) RatedMatches(ctx context.Context, game string) ([]LadderMatch, error) {
	return snapshot(ctx, s, func(r Reader) ([]LadderMatch, error) { return r.RatedMatches(ctx, game) })
}

// RatedMatches returns a game's rated ladder matches, as
// Store.RatedMatches does.
func (r Reader) RatedMatches(ctx context.Context, game string) ([]LadderMatch, error) {
	list, err := ladderMatches(ctx, r.q, `WHERE game = ? AND state = 'rated' ORDER BY rated_seq`, game)
	if err != nil {
		return nil, fmt.Errorf("list rated %s ladder matches: %w", game, err)
	}
	return list, nil
}

// PendingLadderMatches returns the ids of the ladder matches not yet
// settled, of every game.
func (s *Store) PendingLadderMatches(ctx context.Context) ([]string, error) {
	return s.textColumn(ctx, "list pending ladder matches", `SELECT match_id FROM ladder_matches WHERE state = 'pending' ORDER BY game, seq`)
}

// Settlement is how a ladder counts a match that is over.
type Settlement struct {
	// Void, when set, says why the match is not rated.
	Void string
	// Seats are, for a rated match, each seat's place, outcome, status
	// and new rating (Mu, Sigma), in the seats' order.
	Seats []LadderSeat
}

// SettleLadderMatch settles a pending ladder match once, in one
// transaction: decide gets the ladder match (with its seats), the match
// as the history has it and the seats' entries as they are now, and
// says how the match counts. A rated match gets the game's next rated_seq
// and moves its entries' ratings; settled reports false when the match
// was not pending (already settled: nothing is done).
func (s *Store) SettleLadderMatch(ctx context.Context, id string, at time.Time, decide func(lm LadderMatch, m Match, entries []Entry) (Settlement, error)) (settled bool, err error) {
	err = s.tx(ctx, func(tx *sql.Tx) error {
		list, err := ladderMatches(ctx, tx, `WHERE match_id = ?`, id)
		if err != nil {
			return err
		}
		if len(list) == 0 {
			return ErrNotFound
		}
		lm := list[0]
		if lm.State != LadderPending {
			return nil
		}
		m, err := scan(tx.QueryRowContext(ctx, `SELECT `+columns+` FROM matches WHERE id = ?`, id))
		if err != nil {
			return err
		}
		entries := make([]Entry, len(lm.Seats))
		for i, st := range lm.Seats {
			if entries[i], err = scanEntry(tx.QueryRowContext(ctx, `SELECT `+entryColumns+` FROM ladder_entries WHERE id = ?`, st.EntryID)); err != nil {
				return fmt.Errorf("entry %d: %w", st.EntryID, err)
			}
		}
		set, err := decide(lm, m, entries)
		if err != nil {
			return err
		}
		settled = true
		if set.Void != "" {
			_, err := tx.ExecContext(ctx, `UPDATE ladder_matches SET state = ?, note = ?, settled_at = ? WHERE match_id = ?`, LadderVoid, set.Void, stamp(at), id)
			return err
		}
		if len(set.Seats) != len(lm.Seats) {
			return fmt.Errorf("settlement of %d seats for a match of %d", len(set.Seats), len(lm.Seats))
		}
		var next int64
		if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(rated_seq), 0) + 1 FROM ladder_matches WHERE game = ?`, lm.Game).Scan(&next); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE ladder_matches SET state = ?, rated_seq = ?, settled_at = ? WHERE match_id = ?`, LadderRated, next, stamp(at), id); err != nil {
			return err
		}
		for i, st := range set.Seats {
			e := entries[i]
			if _, err := tx.ExecContext(ctx, `UPDATE ladder_seats SET place = ?, outcome = ?, status = ?, mu_before = ?, sigma_before = ?, mu = ?, sigma = ? WHERE match_id = ? AND seat = ?`,
				st.Place, st.Outcome, st.Status, e.Mu, e.Sigma, st.Mu, st.Sigma, id, lm.Seats[i].Seat); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `UPDATE ladder_entries SET mu = ?, sigma = ? WHERE id = ?`, st.Mu, st.Sigma, e.ID); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil && !errors.Is(err, ErrNotFound) {
		err = fmt.Errorf("settle ladder match %s: %w", id, err)
	}
	return settled, err
}

// Rerating is one rated seat's new figures in a recomputation.
type Rerating struct {
	MatchID         string
	Seat            int
	Place           int
	Outcome, Status string
	// Before and after the match.
	MuBefore, SigmaBefore, Mu, Sigma float64
}

// ReplaceRatings writes a recomputation of a game's ladder in one
// transaction: every rated seat's figures, and every entry's rating
// (entries not in ratings get their default, def).
func (s *Store) ReplaceRatings(ctx context.Context, game string, seats []Rerating, ratings map[int64][2]float64, def [2]float64) error {
	err := s.tx(ctx, func(tx *sql.Tx) error {
		for _, st := range seats {
			if _, err := tx.ExecContext(ctx, `UPDATE ladder_seats SET place = ?, outcome = ?, status = ?, mu_before = ?, sigma_before = ?, mu = ?, sigma = ? WHERE match_id = ? AND seat = ?`,
				st.Place, st.Outcome, st.Status, st.MuBefore, st.SigmaBefore, st.Mu, st.Sigma, st.MatchID, st.Seat); err != nil {
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, `UPDATE ladder_entries SET mu = ?, sigma = ? WHERE game = ?`, def[0], def[1], game); err != nil {
			return err
		}
		for id, r := range ratings {
			if _, err := tx.ExecContext(ctx, `UPDATE ladder_entries SET mu = ?, sigma = ? WHERE id = ?`, r[0], r[1], id); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("write the recomputed %s ratings: %w", game, err)
	}
	return nil
}

// EntryMatches returns the ladder matches an entry played, newest first,
// at most limit (0: all), with every seat.
func (s *Store) EntryMatches(ctx context.Context, entryID int64, limit int) ([]LadderMatch, error) {
	return snapshot(ctx, s, func(r Reader) ([]LadderMatch, error) { return r.EntryMatches(ctx, entryID, limit) })
}

// EntryMatches returns the ladder matches an entry played, as
// Store.EntryMatches does.
func (r Reader) EntryMatches(ctx context.Context, entryID int64, limit int) ([]LadderMatch, error) {
	q := `WHERE match_id IN (SELECT match_id FROM ladder_seats WHERE entry_id = ?) ORDER BY created_at DESC, seq DESC`
	if limit > 0 {
		q += ` LIMIT ` + strconv.Itoa(limit)
	}
	list, err := ladderMatches(ctx, r.q, q, entryID)
	if err != nil {
		return nil, fmt.Errorf("list the matches of ladder entry %d: %w", entryID, err)
	}
	return list, nil
}

// EntryStats are an entry's figures over its rated matches.
type EntryStats struct {
	Matches, Wins, Draws, Losses int
	// Faults counts, per fault status (timeout, crashed, …), the rated
	// matches the entry ended with it, with the latest such match.
	Faults map[string]FaultCount
}

// FaultCount is how often an entry ended a match with one status.
type FaultCount struct {
	N int
	// Latest is the latest such match, LatestSeq its rated_seq.
	Latest    string
	LatestSeq int64
}

// LadderStats returns the figures of every entry of a game that played a
// rated match, by entry id. Its two statements (the results, the faults)
// read in one Snapshot: a match settled between them would count a fault
// of a match the results do not.
func (s *Store) LadderStats(ctx context.Context, game string) (map[int64]EntryStats, error) {
	return snapshot(ctx, s, func(r Reader) (map[int64]EntryStats, error) { return r.LadderStats(ctx, game) })
}

// LadderStats returns the figures of a game's entries, as
// Store.LadderStats does.
func (r Reader) LadderStats(ctx context.Context, game string) (map[int64]EntryStats, error) {
	out := map[int64]EntryStats{}
	rows, err := r.q.QueryContext(ctx, `SELECT s.entry_id, COUNT(*), SUM(s.outcome = 'win'), SUM(s.outcome = 'draw'), SUM(s.outcome = 'loss')
		FROM ladder_seats s JOIN ladder_matches m ON m.match_id = s.match_id
		WHERE m.game = ? AND m.state = 'rated' GROUP BY s.entry_id`, game)
	if err != nil {
		return nil, fmt.Errorf("count the %s ladder's results: %w", game, err)
	}
	for rows.Next() {
		var id int64
		var st EntryStats
		if err := rows.Scan(&id, &st.Matches, &st.Wins, &st.Draws, &st.Losses); err != nil {
			rows.Close()
			return nil, err
		}
		st.Faults = map[string]FaultCount{}
		out[id] = st
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	// SQLite gives a bare column the values of the row that has the MAX.
	rows, err = r.q.QueryContext(ctx, `SELECT s.entry_id, s.status, COUNT(*), s.match_id, MAX(m.rated_seq)
		FROM ladder_seats s JOIN ladder_matches m ON m.match_id = s.match_id
		WHERE m.game = ? AND m.state = 'rated' AND s.status NOT IN ('ok', '') GROUP BY s.entry_id, s.status`, game)
	if err != nil {
		return nil, fmt.Errorf("count the %s ladder's faults: %w", game, err)
	}
	defer rows.Close()
	for rows.Next() {
		var id, seq int64
		var status, latest string
		var n int
		if err := rows.Scan(&id, &status, &n, &latest, &seq); err != nil {
			return nil, err
		}
		if st, ok := out[id]; ok {
			st.Faults[status] = FaultCount{N: n, Latest: latest, LatestSeq: seq}
		}
	}
	return out, rows.Err()
}

// LadderGames counts the listed and active entries of every game that has
// any.
func (s *Store) LadderGames(ctx context.Context) (listed, active map[string]int, err error) {
	return s.read().LadderGames(ctx)
}

// LadderGames counts the listed and active entries of every game, as
// Store.LadderGames does.
func (r Reader) LadderGames(ctx context.Context) (listed, active map[string]int, err error) {
	rows, err := r.q.QueryContext(ctx, `SELECT game, state, COUNT(*) FROM ladder_entries WHERE state IN ('active', 'paused') GROUP BY game, state`)
	if err != nil {
		return nil, nil, fmt.Errorf("count ladder entries: %w", err)
	}
	defer rows.Close()
	listed, active = map[string]int{}, map[string]int{}
	for rows.Next() {
		var game, state string
		var n int
		if err := rows.Scan(&game, &state, &n); err != nil {
			return nil, nil, err
		}
		listed[game] += n
		if state == EntryActive {
			active[game] += n
		}
	}
	return listed, active, rows.Err()
}

// RecentLadderMatches returns a game's latest settled ladder matches,
// newest first, at most limit.
func (s *Store) RecentLadderMatches(ctx context.Context, game string, limit int) ([]LadderMatch, error) {
	return snapshot(ctx, s, func(r Reader) ([]LadderMatch, error) { return r.RecentLadderMatches(ctx, game, limit) })
}

// RecentLadderMatches returns a game's latest settled ladder matches, as
// Store.RecentLadderMatches does.
func (r Reader) RecentLadderMatches(ctx context.Context, game string, limit int) ([]LadderMatch, error) {
	list, err := ladderMatches(ctx, r.q, `WHERE game = ? AND state != 'pending' ORDER BY settled_at DESC, seq DESC LIMIT `+strconv.Itoa(limit), game)
	if err != nil {
		return nil, fmt.Errorf("list recent %s ladder matches: %w", game, err)
	}
	return list, nil
}

// CountLadderMatches counts a game's ladder matches in a state.
func (s *Store) CountLadderMatches(ctx context.Context, game, state string) (int, error) {
	return s.read().CountLadderMatches(ctx, game, state)
}

// CountLadderMatches counts a game's ladder matches in a state, as
// Store.CountLadderMatches does.
func (r Reader) CountLadderMatches(ctx context.Context, game, state string) (int, error) {
	var n int
	if err := r.q.QueryRowContext(ctx, `SELECT COUNT(*) FROM ladder_matches WHERE game = ? AND state = ?`, game, state).Scan(&n); err != nil {
		return 0, fmt.Errorf("count %s ladder matches: %w", game, err)
	}
	return n, nil
}
