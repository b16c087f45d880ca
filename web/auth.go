package web

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/alexedwards/scs/v2"
	"github.com/distribution/reference"
	"github.com/labstack/echo/v4"
	"go.uber.org/zap"

	"arena/accounts"
	"arena/engine"
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

// who is the principal a request acts for (set by identify).
func who(c echo.Context) accounts.Principal {
	p, _ := c.Get(principalKey).(accounts.Principal)
	return p
}

func (s *Server) accountsMode() bool { return s.cfg.Auth == AuthAccounts }

func newSessions(st *store.Store, lifetime time.Duration) *scs.SessionManager {
	sm := scs.New()
	sm.Store = st.Sessions()
	sm.Lifetime = lifetime
	sm.HashTokenInStore = true
	sm.Cookie.Name = sessionCookie
	return sm
}

// identify finds who the request acts for. Credentials that are sent
// but not good (a wrong or revoked token) are refused, never taken for
// an anonymous visit; a session cookie that is no longer good (expired,
// ended by a password change, of a disabled account) is dropped and the
// visit is anonymous.
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
		return accounts.Principal{Name: accounts.AdminName, Role: accounts.RoleAdmin, Via: accounts.ViaLocal}, nil
	}
	if h := r.Header.Get("Authorization"); h != "" {
		tok, ok := strings.CutPrefix(h, "Bearer ")
		if !ok || tok == "" {
			return accounts.Anonymous, errs.Errorf(errs.ErrUnauthenticated, "send a token as Authorization: Bearer TOKEN")
		}
		if s.cfg.Token != "" && subtle.ConstantTimeCompare([]byte(tok), []byte(s.cfg.Token)) == 1 {
			return accounts.Principal{Name: accounts.AdminName, Role: accounts.RoleAdmin, Via: accounts.ViaAdminToken}, nil
		}
		return s.deps.Accounts.ByToken(r.Context(), tok)
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
		s.dropSession(c)
		return accounts.Anonymous, nil
	}
	if at := time.Unix(0, s.sessions.GetInt64(ctx, sessionAt)); s.now().Sub(at) > s.cfg.SessionLifetime {
		s.dropSession(c)
		return accounts.Anonymous, nil
	}
	p, err := s.deps.Accounts.Principal(ctx, name, accounts.ViaSession, s.sessions.GetInt64(ctx, sessionEpoch))
	if errs.IsUnauthenticated(err) {
		s.dropSession(c)
		return accounts.Anonymous, nil
	}
	return p, err
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
// or at a proxy that says so).
func (s *Server) writeCookie(c echo.Context, token string, expiry time.Time) {
	r := c.Request()
	ck := &http.Cookie{Name: sessionCookie, Value: token, Path: "/", HttpOnly: true, SameSite: http.SameSiteLaxMode,
		Secure: r.TLS != nil || strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https")}
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
		if s.cfg.Public == PublicNone && !who(c).SignedIn() {
			return errs.Errorf(errs.ErrUnauthenticated, "sign in to see this server's matches and ladders")
		}
		return next(c)
	}
}

// signedIn refuses anonymous visitors.
func (s *Server) signedIn(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if !who(c).SignedIn() {
			return errs.Errorf(errs.ErrUnauthenticated, "sign in first (or send Authorization: Bearer TOKEN)")
		}
		return next(c)
	}
}

// adminOnly refuses everyone but admins.
func (s *Server) adminOnly(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		p := who(c)
		if !p.SignedIn() {
			return errs.Errorf(errs.ErrUnauthenticated, "sign in as an admin")
		}
		if !p.Admin() {
			return errs.Errorf(errs.ErrDenied, "only an admin may do this")
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

// client is whom the per-client limits count a request for (sign-ups,
// wrong passwords, anonymous reads, local mode's starts): its address's
// group (clientGroup).
func client(c echo.Context) string {
	host, _, err := net.SplitHostPort(c.Request().RemoteAddr)
	if err != nil {
		host = c.Request().RemoteAddr
	}
	return clientGroup(host)
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

// meView is GET /api/me: the server's mode and who the visitor is.
type meView struct {
	Mode string `json:"mode"`
	// Signup and Public are accounts mode's settings.
	Signup string `json:"signup,omitempty"`
	Public string `json:"public,omitempty"`
	// TokenRequired: local mode with ARENA_TOKEN set.
	TokenRequired bool    `json:"token_required,omitempty"`
	User          *meUser `json:"user"`
}

type meUser struct {
	Name  string   `json:"name"`
	Role  string   `json:"role"`
	Teams []string `json:"teams"`
	// Invitations are the teams the user is invited into.
	Invitations []string `json:"invitations"`
	Via         string   `json:"via"`
}

func (s *Server) me(c echo.Context) error {
	p := who(c)
	v := meView{Mode: AuthLocal, TokenRequired: !s.accountsMode() && s.cfg.Token != ""}
	if s.accountsMode() {
		v.Mode, v.Signup, v.Public = AuthAccounts, s.deps.Accounts.Signup(), s.cfg.Public
	}
	if p.SignedIn() {
		u := &meUser{Name: p.Name, Role: p.Role, Teams: append([]string{}, p.Teams...), Invitations: []string{}, Via: p.Via}
		if s.accountsMode() {
			inv, err := s.deps.Store.TeamsOf(c.Request().Context(), p.Name, store.MemberInvited)
			if err != nil {
				return err
			}
			u.Invitations = append(u.Invitations, inv...)
		}
		v.User = u
	}
	return c.JSON(http.StatusOK, v)
}

// credentials is the body of POST /api/users and POST /api/session.
type credentials struct {
	Name     string `json:"name"`
	Password string `json:"password"`
	Invite   string `json:"invite,omitempty"`
}

// userView is an account as the API shows it (never its password).
type userView struct {
	Name      string    `json:"name"`
	Role      string    `json:"role"`
	Disabled  bool      `json:"disabled,omitempty"`
	CreatedAt time.Time `json:"created_at"`
}

func viewUser(u store.User) userView {
	return userView{Name: u.Name, Role: u.Role, Disabled: u.Disabled, CreatedAt: u.CreatedAt}
}

// signUp is POST /api/users: an account, made by its future owner as
// the sign-up mode allows (the session starts at once), or by an admin.
func (s *Server) signUp(c echo.Context) error {
	var body credentials
	if err := decodeBody(c, &body, `a JSON account {"name","password"[,"invite"]}`); err != nil {
		return err
	}
	p := who(c)
	if err := s.operatorNamespace(c.Request().Context(), strings.TrimSpace(body.Name)); err != nil {
		return err
	}
	u, err := s.deps.Accounts.SignUp(c.Request().Context(), p, strings.TrimSpace(body.Name), body.Password, body.Invite)
	if err != nil {
		return err
	}
	if !p.SignedIn() {
		if err := s.startSession(c, u); err != nil {
			return err
		}
	}
	c.Response().Header().Set("Location", "/api/users/"+u.Name)
	return c.JSON(http.StatusCreated, viewUser(u))
}

// operatorNamespace refuses a user or team name that is the namespace of
// an image the server runs by name: ARENA_ALLOW's patterns, the example
// bots, the logic games (ARENA_GAMES and those admins registered). Its
// owner could push images of those names to the registry, which the
// server would then play in their place.
func (s *Server) operatorNamespace(ctx context.Context, name string) error {
	refs := append([]string{}, s.cfg.Allow...)
	for _, bots := range s.cfg.DefaultBots {
		refs = append(refs, bots...)
	}
	for _, g := range s.deps.Games.List() {
		if h, ok := g.(engine.Hosted); ok {
			refs = append(refs, h.HostImage())
		}
	}
	registered, err := s.deps.Store.LogicGames(ctx)
	if err != nil {
		return err
	}
	for _, g := range registered {
		refs = append(refs, g.Image)
	}
	for _, ref := range refs {
		if ns := s.namespaceOf(ref); ns == name {
			return errs.Errorf(errs.ErrInvalid, "name %q is reserved: this server's own images are %s/…", name, ns)
		}
	}
	return nil
}

// namespaceOf is the owner a name of an image (or an ARENA_ALLOW pattern)
// would have in this server's registry: its first path component, for a
// name of Docker Hub's (the default) or of this registry; "" for another
// registry's, or a name of one component.
func (s *Server) namespaceOf(ref string) string {
	if named, err := reference.ParseNormalizedNamed(ref); err == nil {
		if d := reference.Domain(named); d != "docker.io" && d != s.cfg.Registry.Host {
			return ""
		}
		ref = reference.Path(named)
	}
	ns, _, ok := strings.Cut(ref, "/")
	if !ok || ns == "library" {
		return ""
	}
	return ns
}

// signIn is POST /api/session.
func (s *Server) signIn(c echo.Context) error {
	var body credentials
	if err := decodeBody(c, &body, `a JSON sign-in {"name","password"}`); err != nil {
		return err
	}
	u, err := s.deps.Accounts.SignIn(c.Request().Context(), strings.TrimSpace(body.Name), body.Password, client(c))
	if err != nil {
		return err
	}
	if err := s.startSession(c, u); err != nil {
		return err
	}
	return c.JSON(http.StatusOK, viewUser(u))
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

// signOut is DELETE /api/session: the session ends in the store, so the
// cookie is worth nothing even if kept.
func (s *Server) signOut(c echo.Context) error {
	if hasSession(c) {
		s.dropSession(c)
	}
	return c.NoContent(http.StatusNoContent)
}

// passwordChange is the body of PUT /api/me/password.
type passwordChange struct {
	Old string `json:"old"`
	New string `json:"new"`
}

// changePassword is PUT /api/me/password: every other session of the
// account ends; this one goes on.
func (s *Server) changePassword(c echo.Context) error {
	p := who(c)
	if p.Via != accounts.ViaSession {
		return errs.Errorf(errs.ErrDenied, "a password is changed from a signed-in session, not with a token")
	}
	var body passwordChange
	if err := decodeBody(c, &body, `a JSON password change {"old","new"}`); err != nil {
		return err
	}
	epoch, err := s.deps.Accounts.ChangePassword(c.Request().Context(), p.Name, body.Old, body.New, client(c))
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	// A new session token too: a copy of the old cookie is worth nothing.
	if err := s.sessions.RenewToken(ctx); err != nil {
		return err
	}
	s.sessions.Put(ctx, sessionEpoch, epoch)
	token, expiry, err := s.sessions.Commit(ctx)
	if err != nil {
		return err
	}
	s.writeCookie(c, token, expiry)
	return c.NoContent(http.StatusNoContent)
}

// tokenView is an API token as the API shows it; Token only once, when
// it is made.
type tokenView struct {
	ID         int64      `json:"id"`
	Name       string     `json:"name"`
	Token      string     `json:"token,omitempty"`
	CreatedAt  time.Time  `json:"created_at"`
	LastUsedAt *time.Time `json:"last_used_at,omitempty"`
	RevokedAt  *time.Time `json:"revoked_at,omitempty"`
}

func viewToken(t store.Token) tokenView {
	v := tokenView{ID: t.ID, Name: t.Name, CreatedAt: t.CreatedAt}
	if !t.LastUsedAt.IsZero() {
		v.LastUsedAt = &t.LastUsedAt
	}
	if !t.RevokedAt.IsZero() {
		v.RevokedAt = &t.RevokedAt
	}
	return v
}

func (s *Server) listTokens(c echo.Context) error {
	list, err := s.deps.Store.Tokens(c.Request().Context(), who(c).Name)
	if err != nil {
		return err
	}
	out := []tokenView{}
	for _, t := range list {
		out = append(out, viewToken(t))
	}
	return c.JSON(http.StatusOK, map[string]any{"tokens": out})
}

// createToken is POST /api/tokens {name}: made from a signed-in session
// only, so a token that leaks cannot mint others.
func (s *Server) createToken(c echo.Context) error {
	p := who(c)
	if p.Via != accounts.ViaSession {
		return errs.Errorf(errs.ErrDenied, "tokens are made from a signed-in session, not with a token")
	}
	var body struct {
		Name string `json:"name"`
	}
	if err := decodeBody(c, &body, `a JSON token request {"name"}`); err != nil {
		return err
	}
	t, tok, err := s.deps.Accounts.CreateToken(c.Request().Context(), p, body.Name)
	if err != nil {
		return err
	}
	v := viewToken(t)
	v.Token = tok
	return c.JSON(http.StatusCreated, v)
}

func (s *Server) revokeToken(c echo.Context) error {
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil || id < 1 {
		return notFound("no token %q", c.Param("id"))
	}
	if err := s.deps.Accounts.RevokeToken(c.Request().Context(), who(c), id); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// teamView is a team as the API shows it.
type teamView struct {
	Name      string       `json:"name"`
	CreatedBy string       `json:"created_by"`
	CreatedAt time.Time    `json:"created_at"`
	Members   []memberView `json:"members"`
}

type memberView struct {
	User      string `json:"user"`
	State     string `json:"state"`
	InvitedBy string `json:"invited_by"`
}

func viewTeam(t store.Team) teamView {
	v := teamView{Name: t.Name, CreatedBy: t.CreatedBy, CreatedAt: t.CreatedAt, Members: []memberView{}}
	for _, m := range t.Members {
		v.Members = append(v.Members, memberView{User: m.User, State: m.State, InvitedBy: m.InvitedBy})
	}
	return v
}

// listTeams is GET /api/teams: the user's teams and the ones they are
// invited into.
func (s *Server) listTeams(c echo.Context) error {
	ctx := c.Request().Context()
	p := who(c)
	out := struct {
		Teams       []teamView `json:"teams"`
		Invitations []string   `json:"invitations"`
	}{Teams: []teamView{}, Invitations: []string{}}
	for _, name := range p.Teams {
		t, err := s.deps.Store.Team(ctx, name)
		if err != nil {
			return err
		}
		out.Teams = append(out.Teams, viewTeam(t))
	}
	inv, err := s.deps.Store.TeamsOf(ctx, p.Name, store.MemberInvited)
	if err != nil {
		return err
	}
	out.Invitations = append(out.Invitations, inv...)
	return c.JSON(http.StatusOK, out)
}

func (s *Server) createTeam(c echo.Context) error {
	var body struct {
		Name string `json:"name"`
	}
	if err := decodeBody(c, &body, `a JSON team {"name"}`); err != nil {
		return err
	}
	name := strings.TrimSpace(body.Name)
	if err := s.operatorNamespace(c.Request().Context(), name); err != nil {
		return err
	}
	if err := s.deps.Accounts.CreateTeam(c.Request().Context(), who(c), name); err != nil {
		return err
	}
	t, err := s.deps.Store.Team(c.Request().Context(), name)
	if err != nil {
		return err
	}
	c.Response().Header().Set("Location", "/api/teams/"+name)
	return c.JSON(http.StatusCreated, viewTeam(t))
}

func (s *Server) getTeam(c echo.Context) error {
	t, err := s.deps.Accounts.Team(c.Request().Context(), who(c), c.Param("name"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, viewTeam(t))
}

// inviteMember is POST /api/teams/{name}/members {user}.
func (s *Server) inviteMember(c echo.Context) error {
	var body struct {
		User string `json:"user"`
	}
	if err := decodeBody(c, &body, `a JSON invitation {"user"}`); err != nil {
		return err
	}
	ctx := c.Request().Context()
	if err := s.deps.Accounts.InviteMember(ctx, who(c), c.Param("name"), strings.TrimSpace(body.User)); err != nil {
		return err
	}
	t, err := s.deps.Store.Team(ctx, c.Param("name"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, viewTeam(t))
}

// joinTeam is POST /api/teams/{name}/join: the user accepts an
// invitation.
func (s *Server) joinTeam(c echo.Context) error {
	ctx := c.Request().Context()
	if err := s.deps.Accounts.Join(ctx, who(c), c.Param("name")); err != nil {
		return err
	}
	t, err := s.deps.Store.Team(ctx, c.Param("name"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, viewTeam(t))
}

// removeMember is DELETE /api/teams/{name}/members/{user}: leaving,
// declining, or a member taking another out.
func (s *Server) removeMember(c echo.Context) error {
	if err := s.deps.Accounts.RemoveMember(c.Request().Context(), who(c), c.Param("name"), c.Param("user")); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// listUsers is GET /api/users (admins).
func (s *Server) listUsers(c echo.Context) error {
	list, err := s.deps.Store.Users(c.Request().Context())
	if err != nil {
		return err
	}
	out := []userView{}
	for _, u := range list {
		out = append(out, viewUser(u))
	}
	return c.JSON(http.StatusOK, map[string]any{"users": out})
}

// patchUser is PATCH /api/users/{name} {role, disabled} (admins).
func (s *Server) patchUser(c echo.Context) error {
	var body struct {
		Role     *string `json:"role"`
		Disabled *bool   `json:"disabled"`
	}
	if err := decodeBody(c, &body, `a JSON change of an account {"role","disabled"}`); err != nil {
		return err
	}
	ctx := c.Request().Context()
	u, err := s.deps.Store.User(ctx, c.Param("name"))
	if errors.Is(err, store.ErrNoUser) {
		return errs.Errorf(errs.ErrNotFound, "no account %s", c.Param("name"))
	}
	if err != nil {
		return err
	}
	if body.Role != nil {
		u.Role = *body.Role
	}
	if body.Disabled != nil {
		u.Disabled = *body.Disabled
	}
	if err := s.deps.Accounts.SetUser(ctx, u.Name, u.Role, u.Disabled); err != nil {
		return err
	}
	return c.JSON(http.StatusOK, viewUser(u))
}

// inviteView is a sign-up invitation; Code and Link only once, when it
// is made.
type inviteView struct {
	ID        int64      `json:"id"`
	Code      string     `json:"code,omitempty"`
	Link      string     `json:"link,omitempty"`
	CreatedBy string     `json:"created_by"`
	CreatedAt time.Time  `json:"created_at"`
	ExpiresAt time.Time  `json:"expires_at"`
	UsedBy    string     `json:"used_by,omitempty"`
	UsedAt    *time.Time `json:"used_at,omitempty"`
}

func viewInvite(in store.Invite) inviteView {
	v := inviteView{ID: in.ID, CreatedBy: in.CreatedBy, CreatedAt: in.CreatedAt, ExpiresAt: in.ExpiresAt, UsedBy: in.UsedBy}
	if !in.UsedAt.IsZero() {
		v.UsedAt = &in.UsedAt
	}
	return v
}

// createInvite is POST /api/invites (admins): a single-use sign-up link.
func (s *Server) createInvite(c echo.Context) error {
	in, code, err := s.deps.Accounts.CreateInvite(c.Request().Context(), who(c))
	if err != nil {
		return err
	}
	v := viewInvite(in)
	v.Code = code
	scheme := "http"
	if c.Request().TLS != nil || strings.EqualFold(c.Request().Header.Get("X-Forwarded-Proto"), "https") {
		scheme = "https"
	}
	v.Link = fmt.Sprintf("%s://%s/#/signup/%s", scheme, c.Request().Host, code)
	return c.JSON(http.StatusCreated, v)
}

func (s *Server) listInvites(c echo.Context) error {
	list, err := s.deps.Store.Invites(c.Request().Context())
	if err != nil {
		return err
	}
	out := []inviteView{}
	for _, in := range list {
		out = append(out, viewInvite(in))
	}
	return c.JSON(http.StatusOK, map[string]any{"invites": out})
}

func (s *Server) deleteInvite(c echo.Context) error {
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil || id < 1 {
		return notFound("no invitation %q", c.Param("id"))
	}
	if err := s.deps.Store.DeleteInvite(c.Request().Context(), id); errors.Is(err, store.ErrInviteUsed) {
		return errs.Errorf(errs.ErrNotFound, "no invitation %d that is not used", id)
	} else if err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// mayPlayAll checks every bot image of a request against the
// principal's rights (and ARENA_ALLOW), naming the first it may not
// play by its place.
func (s *Server) mayPlayAll(p accounts.Principal, field string, refs ...string) error {
	for i, ref := range refs {
		if err := p.MayPlay(ref, s.images); err != nil {
			name := field
			if len(refs) > 1 {
				name = fmt.Sprintf("%s[%d]", field, i)
			}
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return nil
}

// examples are the example bots of every game.
func examples(defaults map[string][]string) []string {
	var out []string
	for _, refs := range defaults {
		out = append(out, refs...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}
