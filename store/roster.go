package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"arena/internal/errs"
)

// A course's roster: accounts gain an optional email, and an account an
// admin makes (by a roster import, or anew) gets a single-use link to set
// its password; until then it has none (NoPassword).
const rosterSchema = `
ALTER TABLE users ADD COLUMN email TEXT NOT NULL DEFAULT '';
CREATE TABLE password_links (
	hash       TEXT PRIMARY KEY,
	user       TEXT NOT NULL,
	created_by TEXT NOT NULL,
	created_at TEXT NOT NULL,
	expires_at TEXT NOT NULL,
	used_at    TEXT NOT NULL DEFAULT ''
);
CREATE INDEX password_links_user ON password_links(user);
`

// NoPassword is the password hash of an account whose password is not set
// yet: no password matches it.
const NoPassword = "!"

// ErrLinkUsed is returned by SetPasswordByLink for a link that is
// unknown, used or expired.
var ErrLinkUsed = errs.New(errs.ErrDenied, "the link is unknown, used or expired: ask an admin for a new one")

// RosterAccount is an account of a roster: made (with the link of its
// hash) unless an account of its name is there already.
type RosterAccount struct {
	Name, Email, Role string
	// Team, when set, is the team the account is a member of (made if
	// it is not there).
	Team string
	// LinkHash is the digest of the link that sets its password.
	LinkHash string
}

// ImportRoster makes, in one transaction, the roster's accounts that are
// not there (each with its password link, valid until expires) and its
// teams, and makes each listed account a member of its team. It returns
// the names of the accounts made. A name taken by a team (for an
// account) or by an account (for a team) fails the whole import with
// ErrNameInUse.
func (s *Store) ImportRoster(ctx context.Context, accounts []RosterAccount, by string, at, expires time.Time) ([]string, error) {
	var made []string
	err := s.tx(ctx, func(tx *sql.Tx) error {
		made = nil
		for _, a := range accounts {
			kind, err := nameKind(ctx, tx, a.Name)
			if err != nil {
				return err
			}
			switch kind {
			case "user":
				continue
			case "team":
				return fmt.Errorf("%w: %s is a team's name", ErrNameInUse, a.Name)
			}
			if err := claimName(ctx, tx, a.Name, "user"); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO users (name, password, role, epoch, disabled, created_at, email) VALUES (?, ?, ?, 1, 0, ?, ?)`,
				a.Name, NoPassword, a.Role, stamp(at), a.Email); err != nil {
				return err
			}
			if err := insertLink(ctx, tx, a.LinkHash, a.Name, by, at, expires); err != nil {
				return err
			}
			made = append(made, a.Name)
		}
		for _, a := range accounts {
			if a.Team == "" {
				continue
			}
			kind, err := nameKind(ctx, tx, a.Team)
			if err != nil {
				return err
			}
			switch kind {
			case "user":
				return fmt.Errorf("%w: %s is an account's name", ErrNameInUse, a.Team)
			case "":
				if err := claimName(ctx, tx, a.Team, "team"); err != nil {
					return err
				}
				if _, err := tx.ExecContext(ctx, `INSERT INTO teams (name, created_by, created_at) VALUES (?, ?, ?)`, a.Team, by, stamp(at)); err != nil {
					return err
				}
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO team_members (team, user, state, invited_by, created_at) VALUES (?, ?, ?, ?, ?)
				ON CONFLICT (team, user) DO UPDATE SET state = excluded.state`, a.Team, a.Name, MemberIn, by, stamp(at)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil && !errors.Is(err, ErrNameInUse) {
		err = fmt.Errorf("import a roster: %w", err)
	}
	return made, err
}

// nameKind is what holds a name in a transaction: "user", "team" or ""
// (free).
func nameKind(ctx context.Context, tx *sql.Tx, name string) (string, error) {
	var kind string
	err := tx.QueryRowContext(ctx, `SELECT kind FROM names WHERE name = ?`, name).Scan(&kind)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return kind, err
}

func insertLink(ctx context.Context, tx *sql.Tx, hash, user, by string, at, expires time.Time) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO password_links (hash, user, created_by, created_at, expires_at) VALUES (?, ?, ?, ?, ?)`,
		hash, user, by, stamp(at), stamp(expires))
	return err
}

// CreatePasswordLink records a new link (by its hash) that sets a user's
// password; the user's earlier links that are not used are withdrawn.
func (s *Store) CreatePasswordLink(ctx context.Context, hash, user, by string, at, expires time.Time) error {
	err := s.tx(ctx, func(tx *sql.Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM users WHERE name = ?`, user).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			return ErrNoUser
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM password_links WHERE user = ? AND used_at = ''`, user); err != nil {
			return err
		}
		return insertLink(ctx, tx, hash, user, by, at, expires)
	})
	if err != nil && !errors.Is(err, ErrNoUser) {
		err = fmt.Errorf("make a password link for %s: %w", user, err)
	}
	return err
}

// PasswordLinkUser is the user whose password a link (by its hash) sets,
// if it can still be used at now.
func (s *Store) PasswordLinkUser(ctx context.Context, hash string, now time.Time) (string, error) {
	var user string
	err := s.db.QueryRowContext(ctx, `SELECT user FROM password_links WHERE hash = ? AND used_at = '' AND expires_at > ?`, hash, stamp(now)).Scan(&user)
	if errors.Is(err, sql.ErrNoRows) {
		return "", ErrLinkUsed
	}
	if err != nil {
		return "", fmt.Errorf("read a password link: %w", err)
	}
	return user, nil
}

// SetPasswordByLink uses up a link (by its hash) and sets its user's
// password hash, moving the account's epoch on (its sessions end). It
// returns the account as it is then (ErrLinkUsed for a link that is
// unknown, used or expired).
func (s *Store) SetPasswordByLink(ctx context.Context, hash, password string, now time.Time) (User, error) {
	var user string
	err := s.tx(ctx, func(tx *sql.Tx) error {
		err := tx.QueryRowContext(ctx, `SELECT user FROM password_links WHERE hash = ? AND used_at = '' AND expires_at > ?`, hash, stamp(now)).Scan(&user)
		if errors.Is(err, sql.ErrNoRows) {
			return ErrLinkUsed
		}
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE password_links SET used_at = ? WHERE hash = ?`, stamp(now), hash); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE users SET password = ?, epoch = epoch + 1 WHERE name = ?`, password, user)
		return err
	})
	if errors.Is(err, ErrLinkUsed) {
		return User{}, err
	}
	if err != nil {
		return User{}, fmt.Errorf("set a password by link: %w", err)
	}
	return s.User(ctx, user)
}
