package web

import (
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"arena/store"
)

// Teams: making one, its page, inviting members, joining and leaving
// (/api/teams).

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
	if err := s.p.OperatorNamespace(c.Request().Context(), name); err != nil {
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
	user, team := strings.TrimSpace(body.User), c.Param("name")
	if err := s.p.InviteMember(ctx, who(c), team, user); err != nil {
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
	if err := s.p.JoinTeam(ctx, who(c), c.Param("name")); err != nil {
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
