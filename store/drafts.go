package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"arena/internal/errs"
)

// draftsSchema keeps the drafts people write in the page (schema version
// 17): a draft is an owner's (a user's, or a team's) by its name, of a
// game and a kit, and its saves, each whole: the files (a JSON object of
// path to text) and the main file as they were at that version. The
// draft's row says its newest version, which a save must name as its
// base. Only the last saves are kept (DraftLimits.History), and every one
// kept counts against its owner's quota (RegistryUsage).
const draftsSchema = `
CREATE TABLE drafts (
	id         INTEGER PRIMARY KEY AUTOINCREMENT,
	owner      TEXT NOT NULL,
	name       TEXT NOT NULL,
	game       TEXT NOT NULL,
	kit        TEXT NOT NULL,
	main       TEXT NOT NULL,
	version    INTEGER NOT NULL,
	size       INTEGER NOT NULL,
	created_by TEXT NOT NULL,
	created_at TEXT NOT NULL,
	updated_by TEXT NOT NULL,
	updated_at TEXT NOT NULL,
	UNIQUE (owner, name)
);
CREATE TABLE draft_saves (
	draft_id INTEGER NOT NULL,
	version  INTEGER NOT NULL,
	main     TEXT NOT NULL,
	files    BLOB NOT NULL,
	size     INTEGER NOT NULL,
	saved_by TEXT NOT NULL,
	saved_at TEXT NOT NULL,
	PRIMARY KEY (draft_id, version)
);
`

// Draft is a draft as the store keeps it: its newest version's main
// file, size (what its files weigh kept, names and texts), and who saved
// it when.
type Draft struct {
	ID                     int64
	Owner, Name, Game, Kit string
	Main                   string
	Version, Size          int64
	CreatedBy              string
	CreatedAt              time.Time
	UpdatedBy              string
	UpdatedAt              time.Time
}

// DraftSave is one save of a draft: its version, main file and files
// (path → text; nil in a list of saves), what they weigh kept, who saved
// it when.
type DraftSave struct {
	Version int64
	Main    string
	Files   map[string]string
	Size    int64
	SavedBy string
	SavedAt time.Time
}

// DraftLimits bound a draft's saves: how many are kept (at least one),
// and what the owner may hold in all, the registry's usage and the
// drafts' saves together (0: no bound).
type DraftLimits struct {
	History  int
	MaxBytes int64
}

var (
	// ErrNoDraft is a draft, or a save of one, that is not there.
	ErrNoDraft = errs.New(errs.ErrNotFound, "no such draft")
	// ErrDraftName is a name the owner has a draft of already.
	ErrDraftName = errs.New(errs.ErrConflict, "the owner has a draft of that name")
	// ErrDraftStale is a save whose base is not the draft's newest
	// version: the draft changed since.
	ErrDraftStale = errs.New(errs.ErrConflict, "the draft changed since the save's base version")
)

// QuotaError is a save that would take its owner past what they may
// hold: they hold Bytes (Drafts of it in drafts) and the save adds
// Adding (its bytes, less the old saves it drops), past Max.
type QuotaError struct {
	Owner                      string
	Bytes, Drafts, Adding, Max int64
}

func (e *QuotaError) Error() string {
	return fmt.Sprintf("quota: %s holds %d bytes (%d in drafts) and the save adds %d, past the %d one may hold", e.Owner, e.Bytes, e.Drafts, e.Adding, e.Max)
}

// IsDenied marks a quota as the caller's limit (errs.ErrDenied).
func (e *QuotaError) IsDenied() bool { return true }

const draftColumns = `id, owner, name, game, kit, main, version, size, created_by, created_at, updated_by, updated_at`

func scanDraft(row interface{ Scan(...any) error }) (Draft, error) {
	var d Draft
	var created, updated string
	err := row.Scan(&d.ID, &d.Owner, &d.Name, &d.Game, &d.Kit, &d.Main, &d.Version, &d.Size, &d.CreatedBy, &created, &d.UpdatedBy, &updated)
	d.CreatedAt, d.UpdatedAt = parseStamp(created), parseStamp(updated)
	return d, err
}

// draftIn reads a draft through q.
func draftIn(ctx context.Context, q rowQuerier, id int64) (Draft, error) {
	d, err := scanDraft(q.QueryRowContext(ctx, `SELECT `+draftColumns+` FROM drafts WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return Draft{}, ErrNoDraft
	}
	if err != nil {
		return Draft{}, fmt.Errorf("read draft %d: %w", id, err)
	}
	return d, nil
}

// draftFiles is a save's files as kept, and what they weigh kept: their
// names with their texts, as the quota counts them.
func draftFiles(files map[string]string) ([]byte, int64, error) {
	blob, err := json.Marshal(files)
	return blob, int64(len(blob)), err
}

// CreateDraft makes a draft with its first save (version 1), unless its
// owner has a draft of that name (ErrDraftName) or the save would take
// them past lim.MaxBytes (a *QuotaError). d names the draft (owner,
// name, game, kit, who made it when); save is its first files.
func (s *Store) CreateDraft(ctx context.Context, d Draft, save DraftSave, lim DraftLimits) (Draft, error) {
	blob, size, err := draftFiles(save.Files)
	if err != nil {
		return Draft{}, err
	}
	d.Main, d.Version, d.Size, d.UpdatedBy, d.UpdatedAt = save.Main, 1, size, save.SavedBy, save.SavedAt
	err = s.tx(ctx, func(tx *sql.Tx) error {
		var taken int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM drafts WHERE owner = ? AND name = ?`, d.Owner, d.Name).Scan(&taken); err != nil {
			return err
		}
		if taken > 0 {
			return fmt.Errorf("%w: %s/%s", ErrDraftName, d.Owner, d.Name)
		}
		if err := withinQuota(ctx, tx, d.Owner, size, lim); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO drafts (owner, name, game, kit, main, version, size, created_by, created_at, updated_by, updated_at)
			VALUES (?, ?, ?, ?, ?, 1, ?, ?, ?, ?, ?)`, d.Owner, d.Name, d.Game, d.Kit, d.Main, size, d.CreatedBy, stamp(d.CreatedAt), d.UpdatedBy, stamp(d.UpdatedAt))
		if err != nil {
			return err
		}
		if d.ID, err = res.LastInsertId(); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO draft_saves (draft_id, version, main, files, size, saved_by, saved_at) VALUES (?, 1, ?, ?, ?, ?, ?)`,
			d.ID, d.Main, blob, size, save.SavedBy, stamp(save.SavedAt))
		return err
	})
	if err != nil {
		return Draft{}, fmt.Errorf("make draft %s/%s: %w", d.Owner, d.Name, err)
	}
	return d, nil
}

// withinQuota refuses adding bytes to what owner holds when it would
// take them past lim.MaxBytes (a *QuotaError), read in tx.
func withinQuota(ctx context.Context, tx *sql.Tx, owner string, adding int64, lim DraftLimits) error {
	if lim.MaxBytes <= 0 || adding <= 0 {
		return nil
	}
	u, err := registryUsage(ctx, tx, owner)
	if err != nil {
		return err
	}
	if u.Bytes+adding > lim.MaxBytes {
		return &QuotaError{Owner: owner, Bytes: u.Bytes, Drafts: u.Drafts, Adding: adding, Max: lim.MaxBytes}
	}
	return nil
}

// SaveDraft saves a draft's next version (base+1) in one transaction:
// the version checked (a base that is not the newest is ErrDraftStale,
// with the draft as it is), the quota (a *QuotaError), the save written
// and the saves past lim.History dropped. It is whole or absent: a save
// that fails leaves the draft as it was. It returns the draft saved.
func (s *Store) SaveDraft(ctx context.Context, id, base int64, save DraftSave, lim DraftLimits) (Draft, error) {
	blob, size, err := draftFiles(save.Files)
	if err != nil {
		return Draft{}, err
	}
	var d Draft
	err = s.tx(ctx, func(tx *sql.Tx) error {
		if d, err = draftIn(ctx, tx, id); err != nil {
			return err
		}
		if d.Version != base {
			return ErrDraftStale
		}
		version, history := base+1, int64(max(1, lim.History))
		var dropped int64
		if err := tx.QueryRowContext(ctx, `SELECT COALESCE(SUM(size), 0) FROM draft_saves WHERE draft_id = ? AND version <= ?`, id, version-history).Scan(&dropped); err != nil {
			return err
		}
		if err := withinQuota(ctx, tx, d.Owner, size-dropped, lim); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE drafts SET version = ?, main = ?, size = ?, updated_by = ?, updated_at = ? WHERE id = ? AND version = ?`,
			version, save.Main, size, save.SavedBy, stamp(save.SavedAt), id, base); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO draft_saves (draft_id, version, main, files, size, saved_by, saved_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
			id, version, save.Main, blob, size, save.SavedBy, stamp(save.SavedAt)); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM draft_saves WHERE draft_id = ? AND version <= ?`, id, version-history); err != nil {
			return err
		}
		d.Version, d.Main, d.Size, d.UpdatedBy, d.UpdatedAt = version, save.Main, size, save.SavedBy, save.SavedAt
		return nil
	})
	if errors.Is(err, ErrDraftStale) {
		return d, err
	}
	if err != nil {
		return Draft{}, fmt.Errorf("save draft %d: %w", id, err)
	}
	return d, nil
}

// DraftOf is a draft.
func (s *Store) DraftOf(ctx context.Context, id int64) (Draft, error) {
	return draftIn(ctx, s.db, id)
}

// Drafts lists the owners' drafts (every one when none are given),
// the last saved first.
func (s *Store) Drafts(ctx context.Context, owners ...string) ([]Draft, error) {
	q, args := `SELECT `+draftColumns+` FROM drafts`, []any{}
	if len(owners) > 0 {
		q += ` WHERE owner IN (` + placeholders(len(owners)) + `)`
		for _, o := range owners {
			args = append(args, o)
		}
	}
	rows, err := s.db.QueryContext(ctx, q+` ORDER BY updated_at DESC, id DESC`, args...)
	if err != nil {
		return nil, fmt.Errorf("list drafts: %w", err)
	}
	defer rows.Close()
	out := []Draft{}
	for rows.Next() {
		d, err := scanDraft(rows)
		if err != nil {
			return nil, fmt.Errorf("list drafts: %w", err)
		}
		out = append(out, d)
	}
	return out, rows.Err()
}

// DraftWhole is a draft, its newest files and the saves kept, newest
// first (without their files), read together.
func (s *Store) DraftWhole(ctx context.Context, id int64) (Draft, map[string]string, []DraftSave, error) {
	var d Draft
	var files map[string]string
	var saves []DraftSave
	err := s.Snapshot(ctx, func(r Reader) error {
		var err error
		if d, err = draftIn(ctx, r.q, id); err != nil {
			return err
		}
		newest, err := draftSaveIn(ctx, r.q, id, d.Version)
		if err != nil {
			return err
		}
		files = newest.Files
		saves, err = draftSavesIn(ctx, r.q, id)
		return err
	})
	if err != nil {
		return Draft{}, nil, nil, err
	}
	return d, files, saves, nil
}

// draftSavesIn lists a draft's saves kept, newest first, without their
// files.
func draftSavesIn(ctx context.Context, q rowQuerier, id int64) ([]DraftSave, error) {
	rows, err := q.QueryContext(ctx, `SELECT version, main, size, saved_by, saved_at FROM draft_saves WHERE draft_id = ? ORDER BY version DESC`, id)
	if err != nil {
		return nil, fmt.Errorf("list the saves of draft %d: %w", id, err)
	}
	defer rows.Close()
	out := []DraftSave{}
	for rows.Next() {
		var v DraftSave
		var at string
		if err := rows.Scan(&v.Version, &v.Main, &v.Size, &v.SavedBy, &at); err != nil {
			return nil, fmt.Errorf("list the saves of draft %d: %w", id, err)
		}
		v.SavedAt = parseStamp(at)
		out = append(out, v)
	}
	return out, rows.Err()
}

// DraftSaveOf is a save of a draft, with its files; ErrNoDraft when it
// is not kept (or never was).
func (s *Store) DraftSaveOf(ctx context.Context, id, version int64) (DraftSave, error) {
	return draftSaveIn(ctx, s.db, id, version)
}

func draftSaveIn(ctx context.Context, q rowQuerier, id, version int64) (DraftSave, error) {
	v := DraftSave{Version: version}
	var blob []byte
	var at string
	err := q.QueryRowContext(ctx, `SELECT main, files, size, saved_by, saved_at FROM draft_saves WHERE draft_id = ? AND version = ?`, id, version).
		Scan(&v.Main, &blob, &v.Size, &v.SavedBy, &at)
	if errors.Is(err, sql.ErrNoRows) {
		return DraftSave{}, fmt.Errorf("%w: draft %d keeps no version %d", ErrNoDraft, id, version)
	}
	if err == nil {
		err = json.Unmarshal(blob, &v.Files)
	}
	if err != nil {
		return DraftSave{}, fmt.Errorf("read version %d of draft %d: %w", version, id, err)
	}
	v.SavedAt = parseStamp(at)
	return v, nil
}

// RenameDraft renames a draft, unless its owner has another of that
// name (ErrDraftName).
func (s *Store) RenameDraft(ctx context.Context, id int64, name string) (Draft, error) {
	var d Draft
	err := s.tx(ctx, func(tx *sql.Tx) error {
		var err error
		if d, err = draftIn(ctx, tx, id); err != nil {
			return err
		}
		var taken int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM drafts WHERE owner = ? AND name = ? AND id != ?`, d.Owner, name, id).Scan(&taken); err != nil {
			return err
		}
		if taken > 0 {
			return fmt.Errorf("%w: %s/%s", ErrDraftName, d.Owner, name)
		}
		_, err = tx.ExecContext(ctx, `UPDATE drafts SET name = ? WHERE id = ?`, name, id)
		d.Name = name
		return err
	})
	if err != nil {
		return Draft{}, fmt.Errorf("rename draft %d: %w", id, err)
	}
	return d, nil
}

// DeleteDraft deletes a draft and its saves.
func (s *Store) DeleteDraft(ctx context.Context, id int64) error {
	err := s.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM drafts WHERE id = ?`, id)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return ErrNoDraft
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM draft_saves WHERE draft_id = ?`, id)
		return err
	})
	if err != nil {
		return fmt.Errorf("delete draft %d: %w", id, err)
	}
	return nil
}
