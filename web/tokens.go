package web

import (
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"arena/store"
)

// API tokens: a signed-in user lists, makes and revokes their own
// (/api/tokens).

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
	list, err := s.svc.People.Tokens(c.Request().Context(), who(c))
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
	var body struct {
		Name string `json:"name"`
	}
	if err := decodeBody(c, &body, `a JSON token request {"name"}`); err != nil {
		return err
	}
	t, tok, err := s.svc.People.CreateToken(c.Request().Context(), who(c), body.Name)
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
	if err := s.svc.People.RevokeToken(c.Request().Context(), who(c), id); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}
