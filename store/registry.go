package store

import (
	"context"
	"fmt"
	"time"
)

// The registry's tags (schema version 3): every tag pushed to Arena's
// registry, with what was read of its image at the push, so that My bots
// and the bot fields list an owner's images without asking the registry.
// Owner is the repository's namespace (NAME/… or TEAM/…).
const registrySchema = `
CREATE TABLE registry_tags (
	repository TEXT NOT NULL,
	tag        TEXT NOT NULL,
	owner      TEXT NOT NULL,
	digest     TEXT NOT NULL,
	image_id   TEXT NOT NULL,
	size       INTEGER NOT NULL,
	game       TEXT NOT NULL DEFAULT '',
	authors    TEXT NOT NULL DEFAULT '',
	pushed_by  TEXT NOT NULL,
	pushed_at  TEXT NOT NULL,
	PRIMARY KEY (repository, tag)
);
CREATE INDEX registry_tags_owner ON registry_tags(owner);
`

// Tag is a tag of the registry as the store keeps it.
type Tag struct {
	Repository, Tag, Owner string
	// Digest is the manifest's; ImageID the config's (the engine's id).
	Digest, ImageID string
	Size            int64
	Game, Authors   string
	PushedBy        string
	PushedAt        time.Time
}

const tagColumns = `repository, tag, owner, digest, image_id, size, game, authors, pushed_by, pushed_at`

// RecordTag records a tag pushed (or pushed again: it replaces the last).
func (s *Store) RecordTag(ctx context.Context, t Tag) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO registry_tags (`+tagColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (repository, tag) DO UPDATE SET owner = excluded.owner, digest = excluded.digest, image_id = excluded.image_id, size = excluded.size,
		game = excluded.game, authors = excluded.authors, pushed_by = excluded.pushed_by, pushed_at = excluded.pushed_at`,
		t.Repository, t.Tag, t.Owner, t.Digest, t.ImageID, t.Size, t.Game, t.Authors, t.PushedBy, stamp(t.PushedAt))
	if err != nil {
		return fmt.Errorf("record tag %s:%s: %w", t.Repository, t.Tag, err)
	}
	return nil
}

// ForgetManifest forgets the tags of a repository that name a manifest
// (deleted from the registry); an empty digest forgets every tag of it.
func (s *Store) ForgetManifest(ctx context.Context, repo, digest string) error {
	_, err := s.db.ExecContext(ctx, `DELETE FROM registry_tags WHERE repository = ? AND (? = '' OR digest = ?)`, repo, digest, digest)
	if err != nil {
		return fmt.Errorf("forget %s@%s: %w", repo, digest, err)
	}
	return nil
}

// Tags lists the tags of the owners' repositories (all when none are
// given), newest first.
func (s *Store) Tags(ctx context.Context, owners ...string) ([]Tag, error) {
	q, args := `SELECT `+tagColumns+` FROM registry_tags`, []any{}
	if len(owners) > 0 {
		q += ` WHERE owner IN (` + placeholders(len(owners)) + `)`
		for _, o := range owners {
			args = append(args, o)
		}
	}
	rows, err := s.db.QueryContext(ctx, q+` ORDER BY pushed_at DESC, repository, tag`, args...)
	if err != nil {
		return nil, fmt.Errorf("list tags: %w", err)
	}
	defer rows.Close()
	out := []Tag{}
	for rows.Next() {
		var t Tag
		var at string
		if err := rows.Scan(&t.Repository, &t.Tag, &t.Owner, &t.Digest, &t.ImageID, &t.Size, &t.Game, &t.Authors, &t.PushedBy, &at); err != nil {
			return nil, fmt.Errorf("list tags: %w", err)
		}
		t.PushedAt = parseStamp(at)
		out = append(out, t)
	}
	return out, rows.Err()
}

// Usage is what an owner holds in the registry.
type Usage struct {
	Repositories, Tags int
	// Bytes counts each manifest's image once, however many tags name it
	// (layers shared between images are counted with each).
	Bytes int64
}

// RegistryUsage is what an owner holds in the registry.
func (s *Store) RegistryUsage(ctx context.Context, owner string) (Usage, error) {
	var u Usage
	err := s.db.QueryRowContext(ctx, `SELECT COUNT(DISTINCT repository), COUNT(*) FROM registry_tags WHERE owner = ?`, owner).Scan(&u.Repositories, &u.Tags)
	if err == nil {
		err = s.db.QueryRowContext(ctx, `SELECT COALESCE(SUM(size), 0) FROM (SELECT DISTINCT digest, size FROM registry_tags WHERE owner = ?)`, owner).Scan(&u.Bytes)
	}
	if err != nil {
		return Usage{}, fmt.Errorf("registry usage of %s: %w", owner, err)
	}
	return u, nil
}
