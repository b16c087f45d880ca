package web

import (
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"arena/store"
)

// Sign-up invitations: admins make, list and delete single-use sign-up
// links (/api/invites).

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
	in, code, err := s.svc.People.CreateInvite(c.Request().Context(), who(c))
	if err != nil {
		return err
	}
	v := viewInvite(in)
	v.Code = code
	v.Link = fmt.Sprintf("%s://%s/#/signup/%s", s.scheme(c.Request()), c.Request().Host, code)
	return c.JSON(http.StatusCreated, v)
}

func (s *Server) listInvites(c echo.Context) error {
	list, err := s.svc.People.Invites(c.Request().Context(), who(c))
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
	if err := s.svc.People.DeleteInvite(c.Request().Context(), who(c), id); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}
