package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/alexedwards/scs/sqlite3store"

	"arena/internal/errs"
)

// The accounts' tables (schema version 2), and who owns what:
//
//   - users: an account, its password's argon2id hash, its role, and
//     its epoch, moved on at every password change so the sessions made
//     before it end.
//   - teams and team_members: a team and its people; a member row is
//     'invited' until the user accepts, then 'member'. Users and teams
//     share one namespace of names (names), as an image's first path
//     component does (NAME/bot, TEAM/bot).
//   - api_tokens: a user's tokens, by the SHA-256 of the token (the token
//     itself is shown once and kept nowhere).
//   - invites: single-use sign-up invitations, by the SHA-256 of theirs.
//   - sessions: the session store's (alexedwards/scs sqlite3store).
//   - matches.owner: who started a match (” for a ladder's), and
//     matches.ladder whether a ladder made it; ladder_entries.owner: the
//     user or team an entry belongs to, created_by who registered it.
//     What the releases before accounts recorded becomes the admin's.
const accountsSchema = `
ALTER TABLE matches ADD COLUMN owner TEXT NOT NULL DEFAULT '';
ALTER TABLE matches ADD COLUMN ladder INTEGER NOT NULL DEFAULT 0;
UPDATE matches SET ladder = 1 WHERE id IN (SELECT match_id FROM ladder_matches);
UPDATE matches SET owner = 'admin' WHERE ladder = 0;
CREATE INDEX matches_owner ON matches(owner, seq);
CREATE INDEX matches_ladder ON matches(ladder, seq);
ALTER TABLE ladder_entries ADD COLUMN owner TEXT NOT NULL DEFAULT 'admin';
ALTER TABLE ladder_entries ADD COLUMN created_by TEXT NOT NULL DEFAULT 'admin';
CREATE INDEX ladder_entries_owner ON ladder_entries(owner);
CREATE TABLE names (
	name TEXT PRIMARY KEY,
	kind TEXT NOT NULL
);
CREATE TABLE users (
	name       TEXT PRIMARY KEY REFERENCES names(name),
	password   TEXT NOT NULL,
	role       TEXT NOT NULL,
	epoch      INTEGER NOT NULL DEFAULT 1,
	disabled   INTEGER NOT NULL DEFAULT 0,
	created_at TEXT NOT NULL
);
CREATE TABLE teams (
	name       TEXT PRIMARY KEY REFERENCES names(name),
	created_by TEXT NOT NULL,
	created_at TEXT NOT NULL
);
CREATE TABLE team_members (
	team       TEXT NOT NULL,
	user       TEXT NOT NULL,
	state      TEXT NOT NULL,
	invited_by TEXT NOT NULL,
	created_at TEXT NOT NULL,
	PRIMARY KEY (team, user)
);
CREATE INDEX team_members_user ON team_members(user, state);
CREATE TABLE api_tokens (
	id           INTEGER PRIMARY KEY AUTOINCREMENT,
	user         TEXT NOT NULL,
	name         TEXT NOT NULL,
	hash         TEXT NOT NULL UNIQUE,
	created_at   TEXT NOT NULL,
	last_used_at TEXT NOT NULL DEFAULT '',
	revoked_at   TEXT NOT NULL DEFAULT ''
);
CREATE INDEX api_tokens_user ON api_tokens(user);
CREATE TABLE invites (
	id         INTEGER PRIMARY KEY AUTOINCREMENT,
	hash       TEXT NOT NULL UNIQUE,
	created_by TEXT NOT NULL,
	created_at TEXT NOT NULL,
	expires_at TEXT NOT NULL,
	used_by    TEXT NOT NULL DEFAULT '',
	used_at    TEXT NOT NULL DEFAULT ''
);
CREATE TABLE sessions (
	token  TEXT PRIMARY KEY,
	data   BLOB NOT NULL,
	expiry REAL NOT NULL
);
CREATE INDEX sessions_expiry_idx ON sessions(expiry);
`

// Errors of the accounts, each of its class (package errs).
var (
	// ErrNoUser: no such account (or team).
	ErrNoUser = errs.New(errs.ErrNotFound, "no such account")
	// ErrNameInUse: a user or team already has that name.
	ErrNameInUse = errs.New(errs.ErrConflict, "name in use")
	// ErrNoToken: no such token of this user.
	ErrNoToken = errs.New(errs.ErrNotFound, "no such token")
	// ErrInviteUsed: an invitation that is unknown, used or expired. Of
	// no class: what it means is the caller's to say (a sign-up refused,
	// an invitation no longer there to delete).
	ErrInviteUsed = errors.New("invitation not valid")
	// ErrTeamLimit: the user made as many teams as they may.
	ErrTeamLimit = errs.New(errs.ErrDenied, "too many teams made")
)

// User is an account.
type User struct {
	Name string
	// Password is the password's argon2id hash (PHC string).
	Password string
	Role     string
	// Epoch moves on at every password change; a session of an older
	// epoch is over.
	Epoch     int64
	Disabled  bool
	CreatedAt time.Time
	// Email is where the course writes to (optional).
	Email string
}

const userColumns = `name, password, role, epoch, disabled, created_at, email`

func scanUser(row interface{ Scan(...any) error }) (User, error) {
	var u User
	var created string
	if err := row.Scan(&u.Name, &u.Password, &u.Role, &u.Epoch, &u.Disabled, &created, &u.Email); err != nil {
		return User{}, err
	}
	u.CreatedAt = parseStamp(created)
	return u, nil
}

// claimName takes a name for a user or a team in the shared namespace.
func claimName(ctx context.Context, tx *sql.Tx, name, kind string) error {
	var taken string
	err := tx.QueryRowContext(ctx, `SELECT kind FROM names WHERE name = ?`, name).Scan(&taken)
	switch {
	case err == nil:
		return fmt.Errorf("%w: %s is taken by a %s", ErrNameInUse, name, taken)
	case !errors.Is(err, sql.ErrNoRows):
		return err
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO names (name, kind) VALUES (?, ?)`, name, kind)
	return err
}

// CreateUser records a new account; the name must be free among users
// and teams (ErrNameInUse). With an invite hash, the invitation is used
// up in the same transaction (ErrInviteUsed if it cannot be).
func (s *Store) CreateUser(ctx context.Context, u User, inviteHash string) error {
	err := s.tx(ctx, func(tx *sql.Tx) error {
		if inviteHash != "" {
			res, err := tx.ExecContext(ctx, `UPDATE invites SET used_by = ?, used_at = ? WHERE hash = ? AND used_by = '' AND expires_at > ?`,
				u.Name, stamp(u.CreatedAt), inviteHash, stamp(u.CreatedAt))
			if err != nil {
				return err
			}
			if n, _ := res.RowsAffected(); n == 0 {
				return ErrInviteUsed
			}
		}
		if err := claimName(ctx, tx, u.Name, "user"); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO users (name, password, role, epoch, disabled, created_at, email) VALUES (?, ?, ?, 1, ?, ?, ?)`,
			u.Name, u.Password, u.Role, u.Disabled, stamp(u.CreatedAt), u.Email)
		return err
	})
	if err != nil && !errors.Is(err, ErrNameInUse) && !errors.Is(err, ErrInviteUsed) {
		err = fmt.Errorf("record account %s: %w", u.Name, err)
	}
	return err
}

// User returns an account.
func (s *Store) User(ctx context.Context, name string) (User, error) {
	u, err := scanUser(s.db.QueryRowContext(ctx, `SELECT `+userColumns+` FROM users WHERE name = ?`, name))
	if errors.Is(err, sql.ErrNoRows) {
		return User{}, ErrNoUser
	}
	if err != nil {
		return User{}, fmt.Errorf("read account %s: %w", name, err)
	}
	return u, nil
}

// Users lists every account, by name.
func (s *Store) Users(ctx context.Context) ([]User, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+userColumns+` FROM users ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("list accounts: %w", err)
	}
	defer rows.Close()
	var out []User
	for rows.Next() {
		u, err := scanUser(rows)
		if err != nil {
			return nil, fmt.Errorf("list accounts: %w", err)
		}
		out = append(out, u)
	}
	return out, rows.Err()
}

// CountUsers counts the accounts.
func (s *Store) CountUsers(ctx context.Context) (int, error) {
	var n int
	err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM users`).Scan(&n)
	return n, err
}

// SetPassword replaces an account's password hash and moves its epoch
// on, which ends every session made before. It returns the new epoch.
func (s *Store) SetPassword(ctx context.Context, name, hash string) (int64, error) {
	var epoch int64
	err := s.db.QueryRowContext(ctx, `UPDATE users SET password = ?, epoch = epoch + 1 WHERE name = ? RETURNING epoch`, hash, name).Scan(&epoch)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, ErrNoUser
	}
	if err != nil {
		return 0, fmt.Errorf("change the password of %s: %w", name, err)
	}
	return epoch, nil
}

// UpdateUser sets an account's role and whether it is disabled; a
// disabled account's sessions and tokens stop working at once (they are
// checked against the account at every request).
func (s *Store) UpdateUser(ctx context.Context, name, role string, disabled bool) error {
	res, err := s.db.ExecContext(ctx, `UPDATE users SET role = ?, disabled = ? WHERE name = ?`, role, disabled, name)
	if err != nil {
		return fmt.Errorf("update account %s: %w", name, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrNoUser
	}
	return nil
}

// UpsertAdmin creates the account name with the admin role and this
// password hash, or gives an existing one both (and ends its sessions).
func (s *Store) UpsertAdmin(ctx context.Context, name, hash string, at time.Time) error {
	err := s.tx(ctx, func(tx *sql.Tx) error {
		var kind string
		err := tx.QueryRowContext(ctx, `SELECT kind FROM names WHERE name = ?`, name).Scan(&kind)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			if _, err := tx.ExecContext(ctx, `INSERT INTO names (name, kind) VALUES (?, 'user')`, name); err != nil {
				return err
			}
			_, err = tx.ExecContext(ctx, `INSERT INTO users (name, password, role, created_at) VALUES (?, ?, 'admin', ?)`, name, hash, stamp(at))
			return err
		case err != nil:
			return err
		case kind != "user":
			return fmt.Errorf("%w: %s is a team's name", ErrNameInUse, name)
		}
		_, err = tx.ExecContext(ctx, `UPDATE users SET password = ?, role = 'admin', disabled = 0, epoch = epoch + 1 WHERE name = ?`, hash, name)
		return err
	})
	if err != nil {
		return fmt.Errorf("set the %s account: %w", name, err)
	}
	return nil
}

// Token is an API token as the store keeps it: never the token itself.
type Token struct {
	ID         int64
	User, Name string
	CreatedAt  time.Time
	LastUsedAt time.Time
	RevokedAt  time.Time
}

const tokenColumns = `id, user, name, created_at, last_used_at, revoked_at`

func scanToken(row interface{ Scan(...any) error }) (Token, error) {
	var t Token
	var created, used, revoked string
	if err := row.Scan(&t.ID, &t.User, &t.Name, &created, &used, &revoked); err != nil {
		return Token{}, err
	}
	t.CreatedAt, t.LastUsedAt, t.RevokedAt = parseStamp(created), parseStamp(used), parseStamp(revoked)
	return t, nil
}

// CreateToken records a token of a user by its hash.
func (s *Store) CreateToken(ctx context.Context, user, name, hash string, at time.Time) (Token, error) {
	t, err := scanToken(s.db.QueryRowContext(ctx, `INSERT INTO api_tokens (user, name, hash, created_at) VALUES (?, ?, ?, ?) RETURNING `+tokenColumns,
		user, name, hash, stamp(at)))
	if err != nil {
		return Token{}, fmt.Errorf("record a token of %s: %w", user, err)
	}
	return t, nil
}

// TokenByHash finds a token that is not revoked by its hash, and notes
// its use (at most once a minute, to spare the database).
func (s *Store) TokenByHash(ctx context.Context, hash string, at time.Time) (Token, error) {
	t, err := scanToken(s.db.QueryRowContext(ctx, `SELECT `+tokenColumns+` FROM api_tokens WHERE hash = ? AND revoked_at = ''`, hash))
	if errors.Is(err, sql.ErrNoRows) {
		return Token{}, ErrNoToken
	}
	if err != nil {
		return Token{}, fmt.Errorf("find a token: %w", err)
	}
	if at.Sub(t.LastUsedAt) > time.Minute {
		s.db.ExecContext(ctx, `UPDATE api_tokens SET last_used_at = ? WHERE id = ?`, stamp(at), t.ID)
	}
	return t, nil
}

// Tokens lists a user's tokens, revoked ones included, newest first.
func (s *Store) Tokens(ctx context.Context, user string) ([]Token, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+tokenColumns+` FROM api_tokens WHERE user = ? ORDER BY id DESC`, user)
	if err != nil {
		return nil, fmt.Errorf("list the tokens of %s: %w", user, err)
	}
	defer rows.Close()
	out := []Token{}
	for rows.Next() {
		t, err := scanToken(rows)
		if err != nil {
			return nil, fmt.Errorf("list the tokens of %s: %w", user, err)
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// RevokeToken revokes a user's token (ErrNoToken: none of theirs by that
// id, or revoked already).
func (s *Store) RevokeToken(ctx context.Context, user string, id int64, at time.Time) error {
	res, err := s.db.ExecContext(ctx, `UPDATE api_tokens SET revoked_at = ? WHERE id = ? AND user = ? AND revoked_at = ''`, stamp(at), id, user)
	if err != nil {
		return fmt.Errorf("revoke token %d: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrNoToken
	}
	return nil
}

// Invite is a sign-up invitation, known by the hash of its code.
type Invite struct {
	ID        int64
	CreatedBy string
	CreatedAt time.Time
	ExpiresAt time.Time
	UsedBy    string
	UsedAt    time.Time
}

// CreateInvite records an invitation by its code's hash.
func (s *Store) CreateInvite(ctx context.Context, hash, by string, at, expires time.Time) (Invite, error) {
	res, err := s.db.ExecContext(ctx, `INSERT INTO invites (hash, created_by, created_at, expires_at) VALUES (?, ?, ?, ?)`, hash, by, stamp(at), stamp(expires))
	if err != nil {
		return Invite{}, fmt.Errorf("record an invitation: %w", err)
	}
	id, _ := res.LastInsertId()
	return Invite{ID: id, CreatedBy: by, CreatedAt: at, ExpiresAt: expires}, nil
}

// Invites lists the invitations, newest first.
func (s *Store) Invites(ctx context.Context) ([]Invite, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id, created_by, created_at, expires_at, used_by, used_at FROM invites ORDER BY id DESC`)
	if err != nil {
		return nil, fmt.Errorf("list invitations: %w", err)
	}
	defer rows.Close()
	out := []Invite{}
	for rows.Next() {
		var in Invite
		var created, expires, used string
		if err := rows.Scan(&in.ID, &in.CreatedBy, &created, &expires, &in.UsedBy, &used); err != nil {
			return nil, fmt.Errorf("list invitations: %w", err)
		}
		in.CreatedAt, in.ExpiresAt, in.UsedAt = parseStamp(created), parseStamp(expires), parseStamp(used)
		out = append(out, in)
	}
	return out, rows.Err()
}

// InviteUsable says whether the invitation of a code's hash is there,
// unused and not expired at now.
func (s *Store) InviteUsable(ctx context.Context, hash string, now time.Time) (bool, error) {
	var n int
	err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM invites WHERE hash = ? AND used_by = '' AND expires_at > ?`, hash, stamp(now)).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("read an invitation: %w", err)
	}
	return n > 0, nil
}

// DeleteInvite withdraws an invitation not yet used.
func (s *Store) DeleteInvite(ctx context.Context, id int64) error {
	res, err := s.db.ExecContext(ctx, `DELETE FROM invites WHERE id = ? AND used_by = ''`, id)
	if err != nil {
		return fmt.Errorf("withdraw invitation %d: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrInviteUsed
	}
	return nil
}

// Team is a team with its members (and those invited, not yet in).
type Team struct {
	Name      string
	CreatedBy string
	CreatedAt time.Time
	Members   []Member
}

// Member is a user's place in a team.
type Member struct {
	User string
	// State is MemberInvited until the user accepts, then MemberIn.
	State     string
	InvitedBy string
	CreatedAt time.Time
}

// The states of a team member.
const (
	MemberInvited = "invited"
	MemberIn      = "member"
)

// CreateTeam records a team with its creator as its first member; the
// name must be free among users and teams (ErrNameInUse), and the
// creator must have made fewer than maxMade teams (0: no bound), counted
// in the same transaction (ErrTeamLimit).
func (s *Store) CreateTeam(ctx context.Context, name, by string, at time.Time, maxMade int) error {
	err := s.tx(ctx, func(tx *sql.Tx) error {
		if maxMade > 0 {
			var made int
			if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM teams WHERE created_by = ?`, by).Scan(&made); err != nil {
				return err
			}
			if made >= maxMade {
				return fmt.Errorf("%w: %s made %d teams", ErrTeamLimit, by, made)
			}
		}
		if err := claimName(ctx, tx, name, "team"); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO teams (name, created_by, created_at) VALUES (?, ?, ?)`, name, by, stamp(at)); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO team_members (team, user, state, invited_by, created_at) VALUES (?, ?, ?, ?, ?)`, name, by, MemberIn, by, stamp(at))
		return err
	})
	if err != nil && !errors.Is(err, ErrNameInUse) && !errors.Is(err, ErrTeamLimit) {
		err = fmt.Errorf("record team %s: %w", name, err)
	}
	return err
}

// Team returns a team with its members.
func (s *Store) Team(ctx context.Context, name string) (Team, error) {
	var t Team
	var created string
	err := s.db.QueryRowContext(ctx, `SELECT name, created_by, created_at FROM teams WHERE name = ?`, name).Scan(&t.Name, &t.CreatedBy, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return Team{}, ErrNoUser
	}
	if err != nil {
		return Team{}, fmt.Errorf("read team %s: %w", name, err)
	}
	t.CreatedAt = parseStamp(created)
	rows, err := s.db.QueryContext(ctx, `SELECT user, state, invited_by, created_at FROM team_members WHERE team = ? ORDER BY created_at, user`, name)
	if err != nil {
		return Team{}, fmt.Errorf("read team %s: %w", name, err)
	}
	defer rows.Close()
	for rows.Next() {
		var m Member
		if err := rows.Scan(&m.User, &m.State, &m.InvitedBy, &created); err != nil {
			return Team{}, fmt.Errorf("read team %s: %w", name, err)
		}
		m.CreatedAt = parseStamp(created)
		t.Members = append(t.Members, m)
	}
	return t, rows.Err()
}

// Memberships are every team's members (who accepted), by team.
func (s *Store) Memberships(ctx context.Context) (map[string][]string, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT team, user FROM team_members WHERE state = ? ORDER BY team, user`, MemberIn)
	if err != nil {
		return nil, fmt.Errorf("list the teams' members: %w", err)
	}
	defer rows.Close()
	out := map[string][]string{}
	for rows.Next() {
		var team, user string
		if err := rows.Scan(&team, &user); err != nil {
			return nil, fmt.Errorf("list the teams' members: %w", err)
		}
		out[team] = append(out[team], user)
	}
	return out, rows.Err()
}

// TeamsOf lists the teams a user is in (state MemberIn) or invited to
// (MemberInvited), by name.
func (s *Store) TeamsOf(ctx context.Context, user, state string) ([]string, error) {
	return s.textColumn(ctx, "list the teams of "+user, `SELECT team FROM team_members WHERE user = ? AND state = ? ORDER BY team`, user, state)
}

// InviteMember invites a user into a team (nothing changes if they are
// in it or invited already).
func (s *Store) InviteMember(ctx context.Context, team, user, by string, at time.Time) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO team_members (team, user, state, invited_by, created_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
		team, user, MemberInvited, by, stamp(at))
	if err != nil {
		return fmt.Errorf("invite %s into team %s: %w", user, team, err)
	}
	return nil
}

// AcceptInvitation makes an invited user a member (ErrNoUser: not
// invited).
func (s *Store) AcceptInvitation(ctx context.Context, team, user string) error {
	res, err := s.db.ExecContext(ctx, `UPDATE team_members SET state = ? WHERE team = ? AND user = ? AND state = ?`, MemberIn, team, user, MemberInvited)
	if err != nil {
		return fmt.Errorf("join team %s: %w", team, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("%w: %s is not invited into team %s", ErrNoUser, user, team)
	}
	return nil
}

// RemoveMember takes a user out of a team (or withdraws their
// invitation). A team keeps at least one member.
func (s *Store) RemoveMember(ctx context.Context, team, user string) error {
	err := s.tx(ctx, func(tx *sql.Tx) error {
		var state string
		err := tx.QueryRowContext(ctx, `SELECT state FROM team_members WHERE team = ? AND user = ?`, team, user).Scan(&state)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("%w: %s is not in team %s", ErrNoUser, user, team)
		}
		if err != nil {
			return err
		}
		if state == MemberIn {
			var n int
			if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM team_members WHERE team = ? AND state = ?`, team, MemberIn).Scan(&n); err != nil {
				return err
			}
			if n <= 1 {
				return fmt.Errorf("%w: %s is the last member of team %s", ErrNameInUse, user, team)
			}
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM team_members WHERE team = ? AND user = ?`, team, user)
		return err
	})
	if err != nil && !errors.Is(err, ErrNoUser) && !errors.Is(err, ErrNameInUse) {
		err = fmt.Errorf("remove %s from team %s: %w", user, team, err)
	}
	return err
}

// NameKind says whether a name is a user's or a team's ("" when free).
func (s *Store) NameKind(ctx context.Context, name string) (string, error) {
	var kind string
	err := s.db.QueryRowContext(ctx, `SELECT kind FROM names WHERE name = ?`, name).Scan(&kind)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return kind, err
}

// Sessions is the session store for alexedwards/scs, in this database;
// its expired sessions are deleted every few minutes until Close.
func (s *Store) Sessions() *sqlite3store.SQLite3Store {
	s.sessionsOnce.Do(func() {
		s.sessions = sqlite3store.NewWithCleanupInterval(s.db, 5*time.Minute)
	})
	return s.sessions
}
