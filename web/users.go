package web

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"arena/platform"
	"arena/store"
)

// The accounts' API: who one is (GET /api/me), signing up, in and out,
// changing one's password, and the admins' list and changes of accounts;
// the names a user or team may not take (operatorNamespace).

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
	v := meView{Mode: AuthLocal, TokenRequired: !s.accountsMode() && s.svc.People.TokenRequired()}
	if s.accountsMode() {
		v.Mode, v.Signup, v.Public = AuthAccounts, s.svc.People.Signup(), s.cfg.Public
	}
	if p.Name != "" {
		inv, err := s.svc.People.Invitations(c.Request().Context(), p)
		if err != nil {
			return err
		}
		v.User = &meUser{Name: p.Name, Role: p.Role, Teams: append([]string{}, p.Teams...), Invitations: inv, Via: p.Via}
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
	Email     string    `json:"email,omitempty"`
	Role      string    `json:"role"`
	Disabled  bool      `json:"disabled,omitempty"`
	CreatedAt time.Time `json:"created_at"`
}

func viewUser(u store.User) userView {
	return userView{Name: u.Name, Email: u.Email, Role: u.Role, Disabled: u.Disabled, CreatedAt: u.CreatedAt}
}

// signUp is POST /api/users: an account, made by its future owner as
// the sign-up mode allows (the session starts at once), or by an admin.
func (s *Server) signUp(c echo.Context) error {
	var body credentials
	if err := decodeBody(c, &body, `a JSON account {"name","password"[,"invite"]}`); err != nil {
		return err
	}
	if err := s.admitSignUp(c, body.Invite); err != nil {
		return err
	}
	p := who(c)
	u, err := s.svc.People.SignUp(c.Request().Context(), p, body.Name, body.Password, body.Invite)
	if err != nil {
		return err
	}
	if p.Name == "" {
		if err := s.startSession(c, u); err != nil {
			return err
		}
	}
	c.Response().Header().Set("Location", "/api/users/"+u.Name)
	return c.JSON(http.StatusCreated, viewUser(u))
}

// signIn is POST /api/session.
func (s *Server) signIn(c echo.Context) error {
	var body credentials
	if err := decodeBody(c, &body, `a JSON sign-in {"name","password"}`); err != nil {
		return err
	}
	u, err := s.svc.People.SignIn(c.Request().Context(), body.Name, body.Password, s.client(c))
	if err != nil {
		return err
	}
	if err := s.startSession(c, u); err != nil {
		return err
	}
	return c.JSON(http.StatusOK, viewUser(u))
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
	var body passwordChange
	if err := decodeBody(c, &body, `a JSON password change {"old","new"}`); err != nil {
		return err
	}
	epoch, err := s.svc.People.ChangePassword(c.Request().Context(), who(c), body.Old, body.New, s.client(c))
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

// listUsers is GET /api/users (admins).
func (s *Server) listUsers(c echo.Context) error {
	list, err := s.svc.People.Users(c.Request().Context(), who(c))
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
	var body platform.UserChange
	if err := decodeBody(c, &body, `a JSON change of an account {"role","disabled"}`); err != nil {
		return err
	}
	u, err := s.svc.People.SetUser(c.Request().Context(), who(c), c.Param("name"), body)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, viewUser(u))
}

// getDisk is GET /api/disk (admins): the bytes the replays, the database
// and the registry hold, and how long replays are kept.
func (s *Server) getDisk(c echo.Context) error {
	u, err := s.svc.Site.Disk(c.Request().Context(), who(c))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, u)
}
