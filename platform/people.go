package platform

import (
	"context"
	"crypto/subtle"
	"errors"
	"strings"
	"time"

	"arena/accounts"
	"arena/internal/errs"
	"arena/store"
)

// People: who a visitor is (a session's or a token's account, the
// admin's token, local mode's admin), signing up and in, passwords,
// tokens, teams, and the admins' lists of accounts and invitations.
// Package accounts keeps the accounts; this says who may do what, and
// reads the lists.

// SessionStore is where the front end's sessions are kept (the store's
// session table; alexedwards/scs's Store).
type SessionStore interface {
	Delete(token string) error
	Find(token string) ([]byte, bool, error)
	Commit(token string, b []byte, expiry time.Time) error
}

// Sessions are where sessions are kept.
func (pp *People) Sessions() SessionStore { return pp.p.deps.Store.Sessions() }

// accounts are the server's accounts, or why there are none.
func (pp *People) accounts() (*accounts.Service, error) {
	if pp.p.deps.Accounts == nil {
		return nil, errs.New(errs.ErrNotFound, "this server runs in local mode: it has no accounts (ARENA_AUTH=local)")
	}
	return pp.p.deps.Accounts, nil
}

// LocalAdmin is who every visitor is in local mode.
func (pp *People) LocalAdmin() accounts.Principal {
	return accounts.Principal{Name: accounts.AdminName, Role: accounts.RoleAdmin, Via: accounts.ViaLocal}
}

// adminToken says whether token is ARENA_TOKEN (none set: no token is).
func (s *Platform) adminToken(token string) bool {
	return s.cfg.Token != "" && subtle.ConstantTimeCompare([]byte(token), []byte(s.cfg.Token)) == 1
}

// Bearer is who a bearer token is: ARENA_TOKEN is the admin; else an
// account's API token.
func (pp *People) Bearer(ctx context.Context, token string) (accounts.Principal, error) {
	if pp.p.adminToken(token) {
		return accounts.Principal{Name: accounts.AdminName, Role: accounts.RoleAdmin, Via: accounts.ViaAdminToken}, nil
	}
	a, err := pp.accounts()
	if err != nil {
		return accounts.Anonymous, err
	}
	return a.ByToken(ctx, token)
}

// Session is who a session is: its account, as long as the session's
// epoch is the account's (no password change or disabling since).
func (pp *People) Session(ctx context.Context, name string, epoch int64) (accounts.Principal, error) {
	a, err := pp.accounts()
	if err != nil {
		return accounts.Anonymous, err
	}
	return a.Principal(ctx, name, accounts.ViaSession, epoch)
}

// LocalChange lets a change through in local mode: with ARENA_TOKEN set,
// only with it.
func (pp *People) LocalChange(token string) error {
	if pp.p.cfg.Token == "" || pp.p.adminToken(token) {
		return nil
	}
	return errs.New(errs.ErrUnauthenticated, "a valid token is needed to start or cancel matches or change a ladder (Authorization: Bearer TOKEN)")
}

// TokenRequired says whether local mode's changes need ARENA_TOKEN.
func (pp *People) TokenRequired() bool { return pp.p.cfg.Token != "" }

// Signup is the sign-up mode (accounts mode).
func (pp *People) Signup() string {
	if a, err := pp.accounts(); err == nil {
		return a.Signup()
	}
	return ""
}

// Invitations are the teams p is invited into.
func (pp *People) Invitations(ctx context.Context, p accounts.Principal) ([]string, error) {
	if _, err := pp.accounts(); err != nil || !p.SignedIn() {
		return []string{}, nil
	}
	inv, err := pp.p.deps.Store.TeamsOf(ctx, p.Name, store.MemberInvited)
	return append([]string{}, inv...), err
}

// SignUp makes an account, by its future owner as the sign-up mode
// allows (with an invitation's code, when it needs one), or by an admin.
// A name that is the namespace of the server's own images is refused.
func (pp *People) SignUp(ctx context.Context, by accounts.Principal, name, password, invite string) (store.User, error) {
	a, err := pp.accounts()
	if err != nil {
		return store.User{}, err
	}
	name = strings.TrimSpace(name)
	if err := pp.p.operatorNamespace(ctx, name); err != nil {
		return store.User{}, err
	}
	return a.SignUp(ctx, by, name, password, invite)
}

// InviteUsable says whether a sign-up invitation's code may be used now.
func (pp *People) InviteUsable(ctx context.Context, code string) (bool, error) {
	a, err := pp.accounts()
	if err != nil {
		return false, err
	}
	return a.InviteUsable(ctx, code)
}

// SignIn is an account whose password is right, within the sign-in
// limits of the account and of client.
func (pp *People) SignIn(ctx context.Context, name, password, client string) (store.User, error) {
	a, err := pp.accounts()
	if err != nil {
		return store.User{}, err
	}
	return a.SignIn(ctx, strings.TrimSpace(name), password, client)
}

// ChangePassword changes p's password, from a signed-in session only,
// and returns the account's new epoch (which ends its other sessions).
func (pp *People) ChangePassword(ctx context.Context, p accounts.Principal, old, new, client string) (int64, error) {
	a, err := pp.accounts()
	if err != nil {
		return 0, err
	}
	if p.Via != accounts.ViaSession {
		return 0, errs.New(errs.ErrDenied, "a password is changed from a signed-in session, not with a token")
	}
	return a.ChangePassword(ctx, p.Name, old, new, client)
}

// Users are every account (admins).
func (pp *People) Users(ctx context.Context, p accounts.Principal) ([]store.User, error) {
	if _, err := pp.accounts(); err != nil {
		return nil, err
	}
	if err := staff(p, "list the accounts"); err != nil {
		return nil, err
	}
	return pp.p.deps.Store.Users(ctx)
}

// UserChange is an admin's change of an account: its role, disabled.
type UserChange struct {
	Role     *string `json:"role"`
	Disabled *bool   `json:"disabled"`
}

// SetUser changes an account (admins), and returns it.
func (pp *People) SetUser(ctx context.Context, p accounts.Principal, name string, ch UserChange) (store.User, error) {
	a, err := pp.accounts()
	if err != nil {
		return store.User{}, err
	}
	if err := staff(p, "change an account"); err != nil {
		return store.User{}, err
	}
	u, err := pp.p.deps.Store.User(ctx, name)
	if errors.Is(err, store.ErrNoUser) {
		return store.User{}, errs.Errorf(errs.ErrNotFound, "no account %s", name)
	}
	if err != nil {
		return store.User{}, err
	}
	if ch.Role != nil {
		u.Role = *ch.Role
	}
	if ch.Disabled != nil {
		u.Disabled = *ch.Disabled
	}
	return u, a.SetUser(ctx, u.Name, u.Role, u.Disabled)
}

// CreatePasswordLink makes a one-time link's code that sets an account's
// password (admins).
func (pp *People) CreatePasswordLink(ctx context.Context, p accounts.Principal, name string) (string, error) {
	a, err := pp.accounts()
	if err != nil {
		return "", err
	}
	return a.CreatePasswordLink(ctx, p, name)
}

// PasswordLinkUsable says whether a password link's code may be used.
func (pp *People) PasswordLinkUsable(ctx context.Context, code string) (bool, error) {
	a, err := pp.accounts()
	if err != nil {
		return false, err
	}
	return a.PasswordLinkUsable(ctx, code)
}

// SetPasswordByLink sets the password of a link's account, and returns
// it.
func (pp *People) SetPasswordByLink(ctx context.Context, code, password string) (store.User, error) {
	a, err := pp.accounts()
	if err != nil {
		return store.User{}, err
	}
	return a.SetPasswordByLink(ctx, code, password)
}

// Invites are the sign-up invitations (admins).
func (pp *People) Invites(ctx context.Context, p accounts.Principal) ([]store.Invite, error) {
	if _, err := pp.accounts(); err != nil {
		return nil, err
	}
	if err := staff(p, "list the invitations"); err != nil {
		return nil, err
	}
	return pp.p.deps.Store.Invites(ctx)
}

// CreateInvite makes a single-use sign-up invitation (admins): its code
// is returned this once.
func (pp *People) CreateInvite(ctx context.Context, p accounts.Principal) (store.Invite, string, error) {
	a, err := pp.accounts()
	if err != nil {
		return store.Invite{}, "", err
	}
	if err := staff(p, "make an invitation"); err != nil {
		return store.Invite{}, "", err
	}
	return a.CreateInvite(ctx, p)
}

// DeleteInvite deletes an invitation not used yet (admins).
func (pp *People) DeleteInvite(ctx context.Context, p accounts.Principal, id int64) error {
	if _, err := pp.accounts(); err != nil {
		return err
	}
	if err := staff(p, "delete an invitation"); err != nil {
		return err
	}
	if err := pp.p.deps.Store.DeleteInvite(ctx, id); errors.Is(err, store.ErrInviteUsed) {
		return errs.Errorf(errs.ErrNotFound, "no invitation %d that is not used", id)
	} else if err != nil {
		return err
	}
	return nil
}

// Tokens are p's API tokens.
func (pp *People) Tokens(ctx context.Context, p accounts.Principal) ([]store.Token, error) {
	if _, err := pp.accounts(); err != nil {
		return nil, err
	}
	if err := signedIn(p, "list your tokens"); err != nil {
		return nil, err
	}
	return pp.p.deps.Store.Tokens(ctx, p.Name)
}

// CreateToken makes an API token of p's, from a signed-in session only
// (a token that leaks cannot mint others): the token is returned this
// once.
func (pp *People) CreateToken(ctx context.Context, p accounts.Principal, name string) (store.Token, string, error) {
	a, err := pp.accounts()
	if err != nil {
		return store.Token{}, "", err
	}
	if p.Via != accounts.ViaSession {
		return store.Token{}, "", errs.New(errs.ErrDenied, "tokens are made from a signed-in session, not with a token")
	}
	return a.CreateToken(ctx, p, name)
}

// RevokeToken revokes a token of p's.
func (pp *People) RevokeToken(ctx context.Context, p accounts.Principal, id int64) error {
	a, err := pp.accounts()
	if err != nil {
		return err
	}
	return a.RevokeToken(ctx, p, id)
}

// Staff refuses anyone but the staff (the admins), saying so: for a
// front end that refuses early, before it reads a request's body; each
// service checks again what it does.
func (pp *People) Staff(p accounts.Principal) error { return staff(p, "do this") }
