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

// The check of each pushed version (schema version 4): a tag is pending
// until its image has played its check match, then ready or rejected
// (Reason says why, Stderr is what the bot wrote). Tags pushed before
// checks existed are pending, and checked at the server's next start.
const checksSchema = `
ALTER TABLE registry_tags ADD COLUMN state TEXT NOT NULL DEFAULT 'pending';
ALTER TABLE registry_tags ADD COLUMN check_match TEXT NOT NULL DEFAULT '';
ALTER TABLE registry_tags ADD COLUMN reason TEXT NOT NULL DEFAULT '';
ALTER TABLE registry_tags ADD COLUMN stderr TEXT NOT NULL DEFAULT '';
ALTER TABLE registry_tags ADD COLUMN checked_at TEXT NOT NULL DEFAULT '';
`

// The states of a pushed version.
const (
	TagPending  = "pending"
	TagReady    = "ready"
	TagRejected = "rejected"
	// TagRun is a draft's Run image (platform/runs.go): no version, no
	// check; nothing but its Run plays it.
	TagRun = "run"
)

// Tag is a tag of the registry as the store keeps it.
type Tag struct {
	Repository, Tag, Owner string
	// Digest is the manifest's; ImageID the config's (the engine's id).
	Digest, ImageID string
	Size            int64
	Game, Authors   string
	PushedBy        string
	PushedAt        time.Time
	// Its check: State (TagPending, TagReady or TagRejected), the match
	// that checked it, why it was rejected (or why its check did not
	// end), the bot's stderr in that match, and when.
	State, CheckMatch, Reason, Stderr string
	CheckedAt                         time.Time
}

const tagColumns = `repository, tag, owner, digest, image_id, size, game, authors, pushed_by, pushed_at, state, check_match, reason, stderr, checked_at`

// RecordTag records a tag pushed (or pushed again: it replaces the last),
// pending its check. The same image pushed again under the tag keeps
// its check.
func (s *Store) RecordTag(ctx context.Context, t Tag) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO registry_tags (repository, tag, owner, digest, image_id, size, game, authors, pushed_by, pushed_at, state)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending')
		ON CONFLICT (repository, tag) DO UPDATE SET owner = excluded.owner, image_id = excluded.image_id, size = excluded.size,
		game = excluded.game, authors = excluded.authors, pushed_by = excluded.pushed_by, pushed_at = excluded.pushed_at,
		state = CASE WHEN digest = excluded.digest THEN state ELSE 'pending' END,
		check_match = CASE WHEN digest = excluded.digest THEN check_match ELSE '' END,
		reason = CASE WHEN digest = excluded.digest THEN reason ELSE '' END,
		stderr = CASE WHEN digest = excluded.digest THEN stderr ELSE '' END,
		checked_at = CASE WHEN digest = excluded.digest THEN checked_at ELSE '' END,
		digest = excluded.digest`,
		t.Repository, t.Tag, t.Owner, t.Digest, t.ImageID, t.Size, t.Game, t.Authors, t.PushedBy, stamp(t.PushedAt))
	if err != nil {
		return fmt.Errorf("record tag %s:%s: %w", t.Repository, t.Tag, err)
	}
	return nil
}

// CheckTag records a check of a tag's version: the match that checks it
// (state pending), or its verdict. A tag pushed again since (another
// digest) is left alone: its own check decides. It reports whether the
// tag still names that digest.
func (s *Store) CheckTag(ctx context.Context, repo, tag, digest string, t Tag) (bool, error) {
	checked := ""
	if !t.CheckedAt.IsZero() {
		checked = stamp(t.CheckedAt)
	}
	res, err := s.db.ExecContext(ctx, `UPDATE registry_tags SET state = ?, check_match = ?, reason = ?, stderr = ?, checked_at = ?
		WHERE repository = ? AND tag = ? AND digest = ?`, t.State, t.CheckMatch, t.Reason, t.Stderr, checked, repo, tag, digest)
	if err != nil {
		return false, fmt.Errorf("record the check of %s:%s: %w", repo, tag, err)
	}
	n, _ := res.RowsAffected()
	return n > 0, nil
}

// TagOf is a repository's tag, if it was pushed.
func (s *Store) TagOf(ctx context.Context, repo, tag string) (Tag, bool, error) {
	tags, err := s.tags(ctx, ` WHERE repository = ? AND tag = ?`, repo, tag)
	if err != nil || len(tags) == 0 {
		return Tag{}, false, err
	}
	return tags[0], true, nil
}

// TagsOfImage are the tags that name an image, by its engine id (its
// config's digest), newest first.
func (s *Store) TagsOfImage(ctx context.Context, imageID string) ([]Tag, error) {
	return s.tags(ctx, ` WHERE image_id = ? ORDER BY pushed_at DESC, repository, tag`, imageID)
}

// PendingTags are the tags whose check has not ended, oldest first.
func (s *Store) PendingTags(ctx context.Context) ([]Tag, error) {
	return s.tags(ctx, ` WHERE state = 'pending' ORDER BY pushed_at, repository, tag`)
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
	q, args := "", []any{}
	if len(owners) > 0 {
		q += ` WHERE owner IN (` + placeholders(len(owners)) + `)`
		for _, o := range owners {
			args = append(args, o)
		}
	}
	return s.tags(ctx, q+` ORDER BY pushed_at DESC, repository, tag`, args...)
}

func (s *Store) tags(ctx context.Context, where string, args ...any) ([]Tag, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+tagColumns+` FROM registry_tags`+where, args...)
	if err != nil {
		return nil, fmt.Errorf("list tags: %w", err)
	}
	defer rows.Close()
	out := []Tag{}
	for rows.Next() {
		var t Tag
		var at, checked string
		if err := rows.Scan(&t.Repository, &t.Tag, &t.Owner, &t.Digest, &t.ImageID, &t.Size, &t.Game, &t.Authors, &t.PushedBy, &at,
			&t.State, &t.CheckMatch, &t.Reason, &t.Stderr, &checked); err != nil {
			return nil, fmt.Errorf("list tags: %w", err)
		}
		t.PushedAt = parseStamp(at)
		if checked != "" {
			t.CheckedAt = parseStamp(checked)
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// Usage is what an owner holds in the registry.
type Usage struct {
	Repositories, Tags int
	// Bytes counts each manifest's image once, however many tags name it
	// (layers shared between images are counted with each), the uploads
	// kept with the versions they built (sources.go), and the drafts'
	// saves (drafts.go).
	Bytes int64
	// Drafts is what the drafts' saves weigh, of Bytes.
	Drafts int64
}

// Manifests pushed by digest with no tag (schema version 16): what an
// owner stores that no tag names yet (an index's images, pushed before
// it) or ever will. Each counts against its owner's quota at once, until a
// tag names it (or an index a tag names: the tag's size holds it) or the
// registry's garbage collection removes it.
const untaggedSchema = `
CREATE TABLE registry_untagged (
	repository TEXT NOT NULL,
	digest     TEXT NOT NULL,
	owner      TEXT NOT NULL,
	size       INTEGER NOT NULL,
	pushed_at  TEXT NOT NULL,
	PRIMARY KEY (repository, digest)
);
CREATE INDEX registry_untagged_owner ON registry_untagged(owner);
`

// RecordUntagged records a manifest pushed by digest with no tag, and
// what it weighs with what it references.
func (s *Store) RecordUntagged(ctx context.Context, repo, digest, owner string, size int64, at time.Time) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO registry_untagged (repository, digest, owner, size, pushed_at) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (repository, digest) DO UPDATE SET size = excluded.size, pushed_at = excluded.pushed_at`, repo, digest, owner, size, stamp(at))
	if err != nil {
		return fmt.Errorf("record the manifest %s@%s: %w", repo, digest, err)
	}
	return nil
}

// ForgetUntagged forgets manifests of repo pushed by digest: those a
// tag now names, or an index a tag names (they count in its size), or
// that were deleted.
func (s *Store) ForgetUntagged(ctx context.Context, repo string, digests ...string) error {
	if len(digests) == 0 {
		return nil
	}
	args := []any{repo}
	for _, d := range digests {
		args = append(args, d)
	}
	if _, err := s.db.ExecContext(ctx, `DELETE FROM registry_untagged WHERE repository = ? AND digest IN (`+placeholders(len(digests))+`)`, args...); err != nil {
		return fmt.Errorf("forget the manifests of %s pushed by digest: %w", repo, err)
	}
	return nil
}

// UntaggedSizes are the sizes of those of digests of repo pushed by
// digest and counted (store.RecordUntagged).
func (s *Store) UntaggedSizes(ctx context.Context, repo string, digests ...string) (map[string]int64, error) {
	out := map[string]int64{}
	if len(digests) == 0 {
		return out, nil
	}
	args := []any{repo}
	for _, d := range digests {
		args = append(args, d)
	}
	rows, err := s.db.QueryContext(ctx, `SELECT digest, size FROM registry_untagged WHERE repository = ? AND digest IN (`+placeholders(len(digests))+`)`, args...)
	if err != nil {
		return nil, fmt.Errorf("read the manifests of %s pushed by digest: %w", repo, err)
	}
	defer rows.Close()
	for rows.Next() {
		var d string
		var n int64
		if err := rows.Scan(&d, &n); err != nil {
			return nil, err
		}
		out[d] = n
	}
	return out, rows.Err()
}

// CollectedUntagged forgets the manifests pushed by digest before a
// garbage collection that removes every manifest no tag names began.
func (s *Store) CollectedUntagged(ctx context.Context, before time.Time) error {
	if _, err := s.db.ExecContext(ctx, `DELETE FROM registry_untagged WHERE pushed_at < ?`, stamp(before)); err != nil {
		return fmt.Errorf("forget the collected manifests pushed by digest: %w", err)
	}
	return nil
}

// RegistryUsage is what an owner holds in the registry.
func (s *Store) RegistryUsage(ctx context.Context, owner string) (Usage, error) {
	return registryUsage(ctx, s.db, owner)
}

// registryUsage is RegistryUsage read through q (the database, or a
// transaction that must count it with what it writes).
func registryUsage(ctx context.Context, q rowQuerier, owner string) (Usage, error) {
	var u Usage
	err := q.QueryRowContext(ctx, `SELECT COUNT(DISTINCT repository), COUNT(*) FROM registry_tags WHERE owner = ?`, owner).Scan(&u.Repositories, &u.Tags)
	if err == nil {
		err = q.QueryRowContext(ctx, `SELECT COALESCE(SUM(size), 0) FROM (SELECT DISTINCT digest, size FROM registry_tags WHERE owner = ?)`, owner).Scan(&u.Bytes)
	}
	if err == nil {
		// So do the manifests pushed by digest that no tag names.
		var untagged int64
		err = q.QueryRowContext(ctx, `SELECT COALESCE(SUM(size), 0) FROM registry_untagged u WHERE owner = ?
			AND NOT EXISTS (SELECT 1 FROM registry_tags t WHERE t.repository = u.repository AND t.digest = u.digest)`, owner).Scan(&untagged)
		u.Bytes += untagged
	}
	if err == nil {
		// The uploads kept with their versions count too (sources.go).
		var kept int64
		err = q.QueryRowContext(ctx, `SELECT COALESCE(SUM(size), 0) FROM sources WHERE owner = ?`, owner).Scan(&kept)
		u.Bytes += kept
	}
	if err == nil {
		// And every save of the drafts kept (drafts.go).
		err = q.QueryRowContext(ctx, `SELECT COALESCE(SUM(s.size), 0) FROM draft_saves s JOIN drafts d ON d.id = s.draft_id WHERE d.owner = ?`, owner).Scan(&u.Drafts)
		u.Bytes += u.Drafts
	}
	if err != nil {
		return Usage{}, fmt.Errorf("registry usage of %s: %w", owner, err)
	}
	return u, nil
}

// PinnedImages are the image ids that ladders and contests still play:
// the listed ladder entries' and the final versions of contests not done.
func (s *Store) PinnedImages(ctx context.Context) ([]string, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT image_id FROM ladder_entries WHERE state IN ('active', 'paused')
		UNION SELECT e.final_id FROM contest_entries e JOIN contests c ON c.id = e.contest_id WHERE c.state != ? AND e.final_id != ''`, ContestDone)
	if err != nil {
		return nil, fmt.Errorf("pinned images: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("pinned images: %w", err)
		}
		out = append(out, id)
	}
	return out, rows.Err()
}

// RegistryCounts counts the registry's repositories and tags.
func (s *Store) RegistryCounts(ctx context.Context) (repositories, tags int, err error) {
	err = s.db.QueryRowContext(ctx, `SELECT COUNT(DISTINCT repository), COUNT(*) FROM registry_tags`).Scan(&repositories, &tags)
	if err != nil {
		err = fmt.Errorf("count the registry's tags: %w", err)
	}
	return repositories, tags, err
}
