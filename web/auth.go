package web

import (
	"context"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"github.com/alexedwards/scs/v2"
	"github.com/labstack/echo/v4"
	"go.uber.org/zap"

	"arena/accounts"
	"arena/internal/errs"
	"arena/store"
)

// Who a request acts for, and what it may do (see SECURITY.md):
//
//   - local mode (ARENA_AUTH=local, the default of docker compose and of
//     a server on a loopback address): no accounts; every visitor acts as
//     the admin, and ARENA_TOKEN, when set, guards every change.
//   - accounts mode: a session cookie (alexedwards/scs, its sessions in
//     the store; HttpOnly, SameSite=Lax, Secure over TLS, ended by
//     signing out, by a password change and at its lifetime), or
//     Authorization: Bearer with an API token or ARENA_TOKEN (the admin's
//     token). Anonymous visitors read (ARENA_PUBLIC=read) or see nothing
//     but the page and the way in (none).
//
// identify puts the principal on every request; the route guards
// (readable, signedIn, adminOnly) and the handlers' ownership checks
// (accounts.Principal.MayChange, MayPlay) decide on it.

// The authentication modes (Config.Auth).
const (
	AuthLocal    = "local"
	AuthAccounts = "accounts"
)

// What anonymous visitors may do in accounts mode (Config.Public).
const (
	PublicRead = "read"
	PublicNone = "none"
)

// sessionCookie names the session's cookie.
const sessionCookie = "arena_session"

// DefaultSessionLifetime is how long a session lasts from sign-in.
const DefaultSessionLifetime = 14 * 24 * time.Hour

// The session's values.
const (
	sessionUser  = "user"
	sessionEpoch = "epoch"
	sessionAt    = "signed_in_at" // Unix nanoseconds
)

const (
	principalKey = "arena.principal"
	// sessionKey is set on a request whose session cookie was loaded.
	sessionKey = "arena.session"
)

// hasSession reports whether the request came with a session cookie
// that was loaded (identify): only then may the session be used.
func hasSession(c echo.Context) bool { return c.Get(sessionKey) != nil }

// signedIn says whether someone is signed in for the request.
func signedIn(c echo.Context) bool { return who(c).Name != "" }

// who is the principal a request acts for (set by identify).
func who(c echo.Context) accounts.Principal {
	p, _ := c.Get(principalKey).(accounts.Principal)
	return p
}

func (s *Server) accountsMode() bool { return s.cfg.Auth == AuthAccounts }

func newSessions(st scs.Store, lifetime time.Duration) *scs.SessionManager {
	sm := scs.New()
	sm.Store = st
	sm.Lifetime = lifetime
	sm.HashTokenInStore = true
	sm.Cookie.Name = sessionCookie
	return sm
}

// identify finds who the request acts for. Credentials that are sent
// but not good (a wrong or revoked token) are refused, never taken for
// an anonymous visit; a session cookie that is no longer good (expired,
// ended by a password change, of a disabled account) is dropped and the
// visit is anonymous; one of a session that has ended is left alone.
func (s *Server) identify(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		p, err := s.principal(c)
		if err != nil {
			return err
		}
		c.Set(principalKey, p)
		return next(c)
	}
}

func (s *Server) principal(c echo.Context) (accounts.Principal, error) {
	r := c.Request()
	if !s.accountsMode() {
		return s.svc.People.LocalAdmin(), nil
	}
	if h := r.Header.Get("Authorization"); h != "" {
		tok, ok := strings.CutPrefix(h, "Bearer ")
		if !ok || tok == "" {
			return accounts.Anonymous, errs.Errorf(errs.ErrUnauthenticated, "send a token as Authorization: Bearer TOKEN")
		}
		return s.svc.People.Bearer(r.Context(), tok)
	}
	cookie, err := r.Cookie(sessionCookie)
	if err != nil || cookie.Value == "" {
		return accounts.Anonymous, nil
	}
	ctx, err := s.sessions.Load(r.Context(), cookie.Value)
	if err != nil {
		return accounts.Anonymous, err
	}
	c.SetRequest(r.WithContext(ctx))
	c.Set(sessionKey, true)
	name := s.sessions.GetString(ctx, sessionUser)
	if name == "" {
		// No such session (ended): the visit is anonymous, and the cookie
		// is left alone. Its request may have left before a sign-out's
		// answer and be answered after the next sign-in: clearing the
		// cookie then would end the new session in the browser.
		return accounts.Anonymous, nil
	}
	if at := time.Unix(0, s.sessions.GetInt64(ctx, sessionAt)); s.now().Sub(at) > s.cfg.SessionLifetime {
		s.dropSession(c)
		return accounts.Anonymous, nil
	}
	p, err := s.svc.People.Session(ctx, name, s.sessions.GetInt64(ctx, sessionEpoch))
	if errs.IsUnauthenticated(err) {
		s.dropSession(c)
		return accounts.Anonymous, nil
	}
	return p, err
}

// startSession starts a fresh session for u (a new token: whatever
// session the browser had before is ended, so none can be planted).
func (s *Server) startSession(c echo.Context, u store.User) error {
	ctx := c.Request().Context()
	if hasSession(c) {
		s.sessions.Destroy(ctx)
	}
	// A context of its own: the one the old session was loaded into
	// holds it.
	ctx, err := s.sessions.Load(context.WithoutCancel(context.Background()), "")
	if err != nil {
		return err
	}
	s.sessions.Put(ctx, sessionUser, u.Name)
	s.sessions.Put(ctx, sessionEpoch, u.Epoch)
	s.sessions.Put(ctx, sessionAt, s.now().UnixNano())
	token, expiry, err := s.sessions.Commit(ctx)
	if err != nil {
		return err
	}
	s.writeCookie(c, token, expiry)
	return nil
}

// dropSession ends the request's session in the store and in the
// browser.
func (s *Server) dropSession(c echo.Context) {
	ctx := c.Request().Context()
	if err := s.sessions.Destroy(ctx); err != nil {
		s.log.Warn("end a session", zap.Error(err))
	}
	s.writeCookie(c, "", time.Time{})
}

// writeCookie sets (or, with no token, clears) the session cookie:
// HttpOnly, SameSite=Lax, and Secure when the page came over TLS (here,
// or at a trusted proxy that says so).
func (s *Server) writeCookie(c echo.Context, token string, expiry time.Time) {
	r := c.Request()
	ck := &http.Cookie{Name: sessionCookie, Value: token, Path: "/", HttpOnly: true, SameSite: http.SameSiteLaxMode,
		Secure: s.overTLS(r)}
	if token == "" {
		ck.MaxAge = -1
		ck.Expires = time.Unix(1, 0)
	} else {
		ck.Expires = expiry
	}
	c.Response().Header().Add("Set-Cookie", ck.String())
	c.Response().Header().Set("Cache-Control", `no-cache="Set-Cookie"`)
}

// readable lets anonymous visitors read only when ARENA_PUBLIC=read.
func (s *Server) readable(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if s.cfg.Public == PublicNone && !signedIn(c) {
			return errs.Errorf(errs.ErrUnauthenticated, "sign in to see this server's matches and ladders")
		}
		return next(c)
	}
}

// signedIn refuses anonymous visitors.
func (s *Server) signedIn(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if !signedIn(c) {
			return errs.Errorf(errs.ErrUnauthenticated, "sign in first (or send Authorization: Bearer TOKEN)")
		}
		return next(c)
	}
}

// adminOnly refuses everyone but admins before the request is read; the
// service checks again what it does.
func (s *Server) adminOnly(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if err := s.svc.People.Staff(who(c)); err != nil {
			return err
		}
		return next(c)
	}
}

// accountsOnly answers 404 in local mode, which has no accounts.
func (s *Server) accountsOnly(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if !s.accountsMode() {
			return notFound("this server runs in local mode: it has no accounts (ARENA_AUTH=local)")
		}
		return next(c)
	}
}

// guardChanges is local mode's one guard on changes: ARENA_TOKEN, when
// set, with Authorization: Bearer. (In accounts mode a change needs a
// signed-in user, whose rights the handler checks.)
func (s *Server) guardChanges(next echo.HandlerFunc) echo.HandlerFunc {
	if s.accountsMode() {
		return s.signedIn(next)
	}
	return s.requireToken(next)
}

func (s *Server) requireToken(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		got, bearer := strings.CutPrefix(c.Request().Header.Get("Authorization"), "Bearer ")
		if !bearer {
			got = ""
		}
		if err := s.svc.People.LocalChange(got); err != nil {
			return err
		}
		return next(c)
	}
}

// clientGroup is the group of addresses one client may hold: an IPv4
// address alone, every loopback address together (127.0.0.0/8 and ::1),
// an IPv6 /64 (what one host is given; it picks any address in it).
func clientGroup(host string) string {
	addr, err := netip.ParseAddr(host)
	if err != nil {
		return host
	}
	addr = addr.Unmap().WithZone("")
	switch {
	case addr.IsLoopback():
		return "loopback"
	case addr.Is4():
		return addr.String()
	}
	p, _ := addr.Prefix(64)
	return p.String()
}
