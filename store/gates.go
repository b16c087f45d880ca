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

// A contest's gates: games of an entry's version against a reference bot
// (contest.Gate), played after the final for each final version (kind
// GateFinal) and, on an entrant's request before the deadline, for their
// newest ready version (GateRequest: a new request replaces the last).
const gatesSchema = `
CREATE TABLE contest_gate_games (
	contest_id INTEGER NOT NULL REFERENCES contests(id),
	entry      INTEGER NOT NULL,
	kind       TEXT NOT NULL,
	gate       INTEGER NOT NULL,
	idx        INTEGER NOT NULL,
	ref        TEXT NOT NULL,
	version    TEXT NOT NULL,
	map        TEXT NOT NULL,
	seed       TEXT NOT NULL,
	seat       INTEGER NOT NULL,
	match_id   TEXT NOT NULL DEFAULT '',
	tries      INTEGER NOT NULL DEFAULT 0,
	state      TEXT NOT NULL DEFAULT 'pending',
	outcome    TEXT NOT NULL DEFAULT '',
	note       TEXT NOT NULL DEFAULT '',
	made_at    TEXT NOT NULL,
	PRIMARY KEY (contest_id, entry, kind, gate, idx)
);
`

// Gate game kinds.
const (
	GateFinal   = "final"
	GateRequest = "request"
)

// GateGame is one game of a gate: the entry's version (Ref, its image id
// Version) in seat Seat, the reference bot in the other; its state and
// outcome as a final game's, seen from the first seat.
type GateGame struct {
	ContestID, Entry int64
	Kind             string
	Gate, Idx        int
	Ref, Version     string
	Map              string
	Seed             uint64
	Seat             int
	MatchID          string
	Tries            int
	State, Outcome   string
	Note             string
	MadeAt           time.Time
}

// AddGateGames records gate games; games already there are kept as they
// are.
func (s *Store) AddGateGames(ctx context.Context, games []GateGame) error {
	err := s.tx(ctx, func(tx *sql.Tx) error { return insertGateGames(ctx, tx, games) })
	if err != nil {
		return fmt.Errorf("record gate games: %w", err)
	}
	return nil
}

func insertGateGames(ctx context.Context, tx *sql.Tx, games []GateGame) error {
	for _, g := range games {
		if _, err := tx.ExecContext(ctx, `INSERT INTO contest_gate_games (contest_id, entry, kind, gate, idx, ref, version, map, seed, seat, made_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
			g.ContestID, g.Entry, g.Kind, g.Gate, g.Idx, g.Ref, g.Version, g.Map, strconv.FormatUint(g.Seed, 10), g.Seat, stamp(g.MadeAt)); err != nil {
			return err
		}
	}
	return nil
}

// ErrGatesPlaying: an entry's last request is still being played.
var ErrGatesPlaying = errs.New(errs.ErrTooMany, "the gates of your last request are still being played: wait for them")

// RequestGates replaces an entry's request's gate games with games, in
// one transaction: refused (ErrGatesPlaying) while one of the last
// request's games is not over.
func (s *Store) RequestGates(ctx context.Context, contest, entry int64, games []GateGame) error {
	err := s.tx(ctx, func(tx *sql.Tx) error {
		var pending int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM contest_gate_games WHERE contest_id = ? AND entry = ? AND kind = ? AND state = ?`,
			contest, entry, GateRequest, GamePending).Scan(&pending); err != nil {
			return err
		}
		if pending > 0 {
			return ErrGatesPlaying
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM contest_gate_games WHERE contest_id = ? AND entry = ? AND kind = ?`, contest, entry, GateRequest); err != nil {
			return err
		}
		return insertGateGames(ctx, tx, games)
	})
	if err != nil && !errors.Is(err, ErrGatesPlaying) {
		err = fmt.Errorf("request the gates of entry %d: %w", entry, err)
	}
	return err
}

// GateGames lists a contest's gate games, by entry, kind, gate and index.
func (s *Store) GateGames(ctx context.Context, contest int64) ([]GateGame, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT contest_id, entry, kind, gate, idx, ref, version, map, seed, seat, match_id, tries, state, outcome, note, made_at
		FROM contest_gate_games WHERE contest_id = ? ORDER BY entry, kind, gate, idx`, contest)
	if err != nil {
		return nil, fmt.Errorf("list the gate games of contest %d: %w", contest, err)
	}
	defer rows.Close()
	var out []GateGame
	for rows.Next() {
		var g GateGame
		var seed, made string
		if err := rows.Scan(&g.ContestID, &g.Entry, &g.Kind, &g.Gate, &g.Idx, &g.Ref, &g.Version, &g.Map, &seed, &g.Seat, &g.MatchID, &g.Tries, &g.State, &g.Outcome, &g.Note, &made); err != nil {
			return nil, err
		}
		g.Seed, _ = strconv.ParseUint(seed, 10, 64)
		g.MadeAt = parseStamp(made)
		out = append(out, g)
	}
	return out, rows.Err()
}

const gateKey = `contest_id = ? AND entry = ? AND kind = ? AND gate = ? AND idx = ?`

// InsertGateMatch records match m as the next try of a gate game, as
// InsertContestMatch does a final's (ErrGameTaken when the game is being
// played or is over).
func (s *Store) InsertGateMatch(ctx context.Context, m Match, g GateGame) error {
	return s.claimGame(ctx, m, `UPDATE contest_gate_games SET match_id = ?, tries = tries + 1 WHERE `+gateKey+` AND state = ? AND match_id = ''`,
		m.ID, g.ContestID, g.Entry, g.Kind, g.Gate, g.Idx, GamePending)
}

// SettleGateGame records how the match playing a gate game ended, as
// SettleContestGame does a final's.
func (s *Store) SettleGateGame(ctx context.Context, g GateGame, matchID, state, outcome, note string) error {
	keep := matchID
	if state == GamePending {
		keep = ""
	}
	_, err := s.db.ExecContext(ctx, `UPDATE contest_gate_games SET state = ?, outcome = ?, note = ?, match_id = ? WHERE `+gateKey+` AND match_id = ? AND state = ?`,
		state, outcome, note, keep, g.ContestID, g.Entry, g.Kind, g.Gate, g.Idx, matchID, GamePending)
	if err != nil {
		return fmt.Errorf("settle a gate game of contest %d: %w", g.ContestID, err)
	}
	return nil
}
