package store

import (
	"context"
	"fmt"
	"time"

	"arena/internal/errs"
)

// The logic games an admin registered (schema version 7): a game whose
// rules are a logic image, offered beside the built-in games and those
// of ARENA_GAMES, from its registration until an admin removes it.
const gamesSchema = `
CREATE TABLE logic_games (
	name     TEXT PRIMARY KEY,
	image    TEXT NOT NULL,
	added_by TEXT NOT NULL,
	added_at TEXT NOT NULL
);
`

// The logic's pin and limits (schema version 10): a game registered
// since plays the image its name had then, by id, under the limits the
// admin gave (both empty for a game registered before: the id its
// image has at each start, the server's limits).
const gamesPinSchema = `
ALTER TABLE logic_games ADD COLUMN image_id TEXT NOT NULL DEFAULT '';
ALTER TABLE logic_games ADD COLUMN limits TEXT NOT NULL DEFAULT '';
`

// LogicGame is a logic game an admin registered.
type LogicGame struct {
	Name, Image, AddedBy string
	// ImageID pins the image ("": the one its name has at each start);
	// Limits are the logic's (JSON, judger.Limits; "": the server's).
	ImageID, Limits string
	AddedAt         time.Time
}

// ErrGameExists is returned (wrapped) by AddLogicGame for a name already
// registered.
var ErrGameExists = errs.New(errs.ErrConflict, "a game of that name is registered")

// AddLogicGame records a logic game.
func (s *Store) AddLogicGame(ctx context.Context, g LogicGame) error {
	res, err := s.db.ExecContext(ctx, `INSERT INTO logic_games (name, image, image_id, limits, added_by, added_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (name) DO NOTHING`,
		g.Name, g.Image, g.ImageID, g.Limits, g.AddedBy, stamp(g.AddedAt))
	if err != nil {
		return fmt.Errorf("register game %s: %w", g.Name, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("register game %s: %w", g.Name, ErrGameExists)
	}
	return nil
}

// RemoveLogicGame forgets a logic game, and says whether there was one.
func (s *Store) RemoveLogicGame(ctx context.Context, name string) (bool, error) {
	res, err := s.db.ExecContext(ctx, `DELETE FROM logic_games WHERE name = ?`, name)
	if err != nil {
		return false, fmt.Errorf("remove game %s: %w", name, err)
	}
	n, _ := res.RowsAffected()
	return n > 0, nil
}

// LogicGames are the registered logic games, oldest first.
func (s *Store) LogicGames(ctx context.Context) ([]LogicGame, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT name, image, image_id, limits, added_by, added_at FROM logic_games ORDER BY added_at, name`)
	if err != nil {
		return nil, fmt.Errorf("list the registered games: %w", err)
	}
	defer rows.Close()
	out := []LogicGame{}
	for rows.Next() {
		var g LogicGame
		var at string
		if err := rows.Scan(&g.Name, &g.Image, &g.ImageID, &g.Limits, &g.AddedBy, &at); err != nil {
			return nil, fmt.Errorf("list the registered games: %w", err)
		}
		g.AddedAt = parseStamp(at)
		out = append(out, g)
	}
	return out, rows.Err()
}
