package web

import (
	"net/http"
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
	v, err := s.svc.People.Teams(c.Request().Context(), who(c))
	if err != nil {
		return err
	}
	out := struct {
		Teams       []teamView `json:"teams"`
		Invitations []string   `json:"invitations"`
	}{Teams: []teamView{}, Invitations: v.Invitations}
	for _, t := range v.Teams {
		out.Teams = append(out.Teams, viewTeam(t))
	}
	return c.JSON(http.StatusOK, out)
}

func (s *Server) createTeam(c echo.Context) error {
	var body struct {
		Name string `json:"name"`
	}
	if err := decodeBody(c, &body, `a JSON team {"name"}`); err != nil {
		return err
	}
	t, err := s.svc.People.CreateTeam(c.Request().Context(), who(c), body.Name)
	if err != nil {
		return err
	}
	c.Response().Header().Set("Location", "/api/teams/"+t.Name)
	return c.JSON(http.StatusCreated, viewTeam(t))
}

func (s *Server) getTeam(c echo.Context) error {
	t, err := s.svc.People.Team(c.Request().Context(), who(c), c.Param("name"))
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
	t, err := s.svc.People.InviteMember(c.Request().Context(), who(c), c.Param("name"), body.User)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, viewTeam(t))
}

// joinTeam is POST /api/teams/{name}/join: the user accepts an
// invitation.
func (s *Server) joinTeam(c echo.Context) error {
	t, err := s.svc.People.JoinTeam(c.Request().Context(), who(c), c.Param("name"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, viewTeam(t))
}

// removeMember is DELETE /api/teams/{name}/members/{user}: leaving,
// declining, or a member taking another out.
func (s *Server) removeMember(c echo.Context) error {
	if err := s.svc.People.RemoveMember(c.Request().Context(), who(c), c.Param("name"), c.Param("user")); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}
