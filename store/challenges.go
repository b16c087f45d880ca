package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"time"

	"arena/internal/errs"
)

// Challenges (schema version 11): a user's bot against another's, for a
// number of games (challenges), and which match plays each game
// (challenge_matches). The matches themselves are rows of matches.
const challengesSchema = `
CREATE TABLE challenges (
	id             INTEGER PRIMARY KEY AUTOINCREMENT,
	game           TEXT NOT NULL,
	created_by     TEXT NOT NULL,
	owner          TEXT NOT NULL,
	bot            TEXT NOT NULL,
	opponent       TEXT NOT NULL,
	opponent_owner TEXT NOT NULL,
	opponent_bot   TEXT NOT NULL,
	map            TEXT NOT NULL DEFAULT '',
	games          INTEGER NOT NULL,
	ranked         INTEGER NOT NULL DEFAULT 0,
	created_at     TEXT NOT NULL
);
CREATE INDEX challenges_by ON challenges(created_by, created_at);
CREATE INDEX challenges_owner ON challenges(owner);
CREATE INDEX challenges_opponent_owner ON challenges(opponent_owner);
CREATE TABLE challenge_matches (
	challenge_id INTEGER NOT NULL,
	idx          INTEGER NOT NULL,
	match_id     TEXT NOT NULL,
	seat         INTEGER NOT NULL,
	map          TEXT NOT NULL,
	seed         TEXT NOT NULL,
	PRIMARY KEY (challenge_id, idx)
);
CREATE INDEX challenge_matches_match ON challenge_matches(match_id);
`

// Challenge is a bot challenging another for a number of games.
type Challenge struct {
	ID   int64
	Game string
	// CreatedBy is the user who made it; Owner the user or team whose bot
	// Bot (the reference as given) challenges.
	CreatedBy, Owner, Bot string
	// Opponent says how the opponent was named ("ladder tanks entry 4",
	// "contest 2 entry 7", "bot alice/tank:v1"); OpponentOwner is its
	// owner ("" for the server's own bots), OpponentBot its name as its
	// matches show it.
	Opponent, OpponentOwner, OpponentBot string
	// Map is the map of every game ("": each of the game's maps in turn).
	Map   string
	Games int
	// Ranked challenges are a ladder's rated matches.
	Ranked    bool
	CreatedAt time.Time
	Matches   []ChallengeMatch
}

// ChallengeMatch is one game of a challenge: the match that plays it,
// the challenger's seat, its map and seed.
type ChallengeMatch struct {
	Idx     int
	MatchID string
	Seat    int
	Map     string
	Seed    uint64
}

// ErrNoChallenge is returned for an unknown challenge.
var ErrNoChallenge = errs.New(errs.ErrNotFound, "no such challenge")

const challengeColumns = `id, game, created_by, owner, bot, opponent, opponent_owner, opponent_bot, map, games, ranked, created_at`

// CreateChallenge records a challenge (its matches are added as they are
// queued, InsertChallengeMatch) and returns it with its id.
func (s *Store) CreateChallenge(ctx context.Context, c Challenge) (Challenge, error) {
	res, err := s.db.ExecContext(ctx, `INSERT INTO challenges (game, created_by, owner, bot, opponent, opponent_owner, opponent_bot, map, games, ranked, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, c.Game, c.CreatedBy, c.Owner, c.Bot, c.Opponent, c.OpponentOwner, c.OpponentBot, c.Map, c.Games, c.Ranked, stamp(c.CreatedAt))
	if err != nil {
		return Challenge{}, fmt.Errorf("record the challenge: %w", err)
	}
	c.ID, err = res.LastInsertId()
	return c, err
}

// DeleteChallenge forgets a challenge none of whose games was queued.
func (s *Store) DeleteChallenge(ctx context.Context, id int64) error {
	_, err := s.db.ExecContext(ctx, `DELETE FROM challenges WHERE id = ? AND NOT EXISTS (SELECT 1 FROM challenge_matches WHERE challenge_id = ?)`, id, id)
	return err
}

// InsertChallengeMatch records a new match (as Insert does) and, in the
// same transaction, that it plays game cm of challenge id.
func (s *Store) InsertChallengeMatch(ctx context.Context, m Match, id int64, cm ChallengeMatch) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		if err := insertMatch(ctx, tx, m); err != nil {
			return err
		}
		return linkChallengeMatch(ctx, tx, id, cm)
	})
}

// LinkChallengeMatch records that a match recorded already (a ladder's
// rated match) plays game cm of challenge id.
func (s *Store) LinkChallengeMatch(ctx context.Context, id int64, cm ChallengeMatch) error {
	return linkChallengeMatch(ctx, s.db, id, cm)
}

func linkChallengeMatch(ctx context.Context, db execer, id int64, cm ChallengeMatch) error {
	_, err := db.ExecContext(ctx, `INSERT INTO challenge_matches (challenge_id, idx, match_id, seat, map, seed) VALUES (?, ?, ?, ?, ?, ?)`,
		id, cm.Idx, cm.MatchID, cm.Seat, cm.Map, strconv.FormatUint(cm.Seed, 10))
	if err != nil {
		return fmt.Errorf("record game %d of challenge %d: %w", cm.Idx, id, err)
	}
	return nil
}

// Challenge reads a challenge with its matches.
func (s *Store) Challenge(ctx context.Context, id int64) (Challenge, error) {
	list, err := s.challenges(ctx, ` WHERE id = ?`, id)
	if err != nil {
		return Challenge{}, err
	}
	if len(list) == 0 {
		return Challenge{}, ErrNoChallenge
	}
	return list[0], nil
}

// Challenges lists, newest first, the challenges made by or for any of
// owners, or against their bots (at most limit).
func (s *Store) Challenges(ctx context.Context, owners []string, limit int) ([]Challenge, error) {
	if len(owners) == 0 {
		return []Challenge{}, nil
	}
	args := []any{}
	for range 3 {
		for _, o := range owners {
			args = append(args, o)
		}
	}
	in := `(` + placeholders(len(owners)) + `)`
	return s.challenges(ctx, ` WHERE created_by IN `+in+` OR owner IN `+in+` OR opponent_owner IN `+in+` ORDER BY id DESC LIMIT `+strconv.Itoa(limit), args...)
}

// ChallengesSince counts the challenges a user made since a time.
func (s *Store) ChallengesSince(ctx context.Context, by string, since time.Time) (int, error) {
	var n int
	err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM challenges WHERE created_by = ? AND created_at >= ?`, by, stamp(since)).Scan(&n)
	return n, err
}

func (s *Store) challenges(ctx context.Context, where string, args ...any) ([]Challenge, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+challengeColumns+` FROM challenges`+where, args...)
	if err != nil {
		return nil, fmt.Errorf("read challenges: %w", err)
	}
	out := []Challenge{}
	for rows.Next() {
		var c Challenge
		var at string
		if err := rows.Scan(&c.ID, &c.Game, &c.CreatedBy, &c.Owner, &c.Bot, &c.Opponent, &c.OpponentOwner, &c.OpponentBot, &c.Map, &c.Games, &c.Ranked, &at); err != nil {
			rows.Close()
			return nil, fmt.Errorf("read challenges: %w", err)
		}
		c.CreatedAt = parseStamp(at)
		out = append(out, c)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for i := range out {
		if out[i].Matches, err = s.challengeMatches(ctx, out[i].ID); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (s *Store) challengeMatches(ctx context.Context, id int64) ([]ChallengeMatch, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT idx, match_id, seat, map, seed FROM challenge_matches WHERE challenge_id = ? ORDER BY idx`, id)
	if err != nil {
		return nil, fmt.Errorf("read challenge %d's games: %w", id, err)
	}
	defer rows.Close()
	out := []ChallengeMatch{}
	for rows.Next() {
		var cm ChallengeMatch
		var seed string
		if err := rows.Scan(&cm.Idx, &cm.MatchID, &cm.Seat, &cm.Map, &seed); err != nil {
			return nil, fmt.Errorf("read challenge %d's games: %w", id, err)
		}
		cm.Seed, _ = strconv.ParseUint(seed, 10, 64)
		out = append(out, cm)
	}
	return out, rows.Err()
}

// ChallengeOf is the challenge a match plays a game of (ErrNoChallenge:
// none).
func (s *Store) ChallengeOf(ctx context.Context, matchID string) (int64, error) {
	var id int64
	err := s.db.QueryRowContext(ctx, `SELECT challenge_id FROM challenge_matches WHERE match_id = ?`, matchID).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, ErrNoChallenge
	}
	return id, err
}
