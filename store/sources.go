package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// sourcesSchema keeps the source of each version built from an upload
// (schema version 13), for the similarity report: the upload as a
// .tar.gz, by the digest of the version it built. It counts against its
// owner's registry quota, and goes when no tag names its version any
// more (the triggers: a tag deleted, a repository deleted, a tag pushed
// again with another version).
const sourcesSchema = `
CREATE TABLE sources (
	digest     TEXT PRIMARY KEY,
	owner      TEXT NOT NULL,
	archive    BLOB NOT NULL,
	size       INTEGER NOT NULL,
	created_at TEXT NOT NULL
);
CREATE INDEX sources_owner ON sources(owner);
CREATE TRIGGER sources_go_with_a_deleted_tag AFTER DELETE ON registry_tags
WHEN NOT EXISTS (SELECT 1 FROM registry_tags WHERE digest = OLD.digest)
BEGIN DELETE FROM sources WHERE digest = OLD.digest; END;
CREATE TRIGGER sources_go_with_a_moved_tag AFTER UPDATE OF digest ON registry_tags
WHEN NOT EXISTS (SELECT 1 FROM registry_tags WHERE digest = OLD.digest)
BEGIN DELETE FROM sources WHERE digest = OLD.digest; END;
`

// sourcesPinnedSchema (schema version 14) keeps the source of a version
// a contest's entry plays as its final, as the registry keeps its image:
// staff compare the versions pinned at the deadline, pushed again since
// or not. Contests' entries are never deleted.
const sourcesPinnedSchema = `
DROP TRIGGER sources_go_with_a_deleted_tag;
DROP TRIGGER sources_go_with_a_moved_tag;
CREATE TRIGGER sources_go_with_a_deleted_tag AFTER DELETE ON registry_tags
WHEN NOT EXISTS (SELECT 1 FROM registry_tags WHERE digest = OLD.digest)
AND NOT EXISTS (SELECT 1 FROM contest_entries WHERE substr(final_digest, instr(final_digest, '@') + 1) = OLD.digest)
BEGIN DELETE FROM sources WHERE digest = OLD.digest; END;
CREATE TRIGGER sources_go_with_a_moved_tag AFTER UPDATE OF digest ON registry_tags
WHEN NOT EXISTS (SELECT 1 FROM registry_tags WHERE digest = OLD.digest)
AND NOT EXISTS (SELECT 1 FROM contest_entries WHERE substr(final_digest, instr(final_digest, '@') + 1) = OLD.digest)
BEGIN DELETE FROM sources WHERE digest = OLD.digest; END;
`

// KeepSource keeps the upload a version was built from (archive, a
// .tar.gz), if a tag names the version; false when none does (it went
// meanwhile).
func (s *Store) KeepSource(ctx context.Context, digest, owner string, archive []byte, at time.Time) (bool, error) {
	res, err := s.db.ExecContext(ctx, `INSERT OR REPLACE INTO sources (digest, owner, archive, size, created_at)
		SELECT ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM registry_tags WHERE digest = ?)`, digest, owner, archive, len(archive), stamp(at), digest)
	if err != nil {
		return false, fmt.Errorf("keep the source of %s: %w", digest, err)
	}
	n, _ := res.RowsAffected()
	return n > 0, nil
}

// Source is the upload a version was built from (a .tar.gz); false when
// none is kept.
func (s *Store) Source(ctx context.Context, digest string) ([]byte, bool, error) {
	var archive []byte
	err := s.db.QueryRowContext(ctx, `SELECT archive FROM sources WHERE digest = ?`, digest).Scan(&archive)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("read the source of %s: %w", digest, err)
	}
	return archive, true, nil
}
