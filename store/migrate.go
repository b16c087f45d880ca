package store

import (
	"context"
	"database/sql"
	"fmt"
)

// migrations are the database's versions in order: a database at version
// N (PRAGMA user_version) gets every migration after the Nth when it is
// opened, each in a transaction of its own with the version it reaches.
// A migration is never edited once released: a change is a new one.
//
// The first is the schema of every release before accounts, written with
// IF NOT EXISTS: their databases (at version 0) already hold it, and pass
// through it unchanged.
var migrations = []string{
	1:  schema + ladderSchema,
	2:  accountsSchema,
	3:  registrySchema,
	4:  checksSchema,
	5:  contestsSchema,
	6:  swissSchema,
	7:  gamesSchema,
	8:  rosterSchema,
	9:  gatesSchema,
	10: gamesPinSchema,
	11: challengesSchema,
	12: replaysSchema,
	13: sourcesSchema,
	14: sourcesPinnedSchema,
	15: notificationsSchema,
	16: untaggedSchema,
	17: draftsSchema,
}

// SchemaVersion is the version a database has once opened.
func SchemaVersion() int { return len(migrations) - 1 }

// migrate brings db to the newest version. A database newer than this
// build (a downgrade) is refused rather than written to.
func migrate(ctx context.Context, db *sql.DB) error {
	var at int
	if err := db.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&at); err != nil {
		return fmt.Errorf("read the schema version: %w", err)
	}
	if at > SchemaVersion() {
		return fmt.Errorf("the database is at schema version %d, newer than this arena's %d: use a newer arena", at, SchemaVersion())
	}
	for v := at + 1; v <= SchemaVersion(); v++ {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, migrations[v]); err != nil {
			tx.Rollback()
			return fmt.Errorf("migrate the database to schema version %d: %w", v, err)
		}
		// PRAGMA takes no parameters; v is a number of ours.
		if _, err := tx.ExecContext(ctx, fmt.Sprintf(`PRAGMA user_version = %d`, v)); err != nil {
			tx.Rollback()
			return fmt.Errorf("migrate the database to schema version %d: %w", v, err)
		}
		if err := tx.Commit(); err != nil {
			return fmt.Errorf("migrate the database to schema version %d: %w", v, err)
		}
	}
	return nil
}
