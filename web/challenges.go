package web

import (
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"arena/platform"
)

// The challenges' API: POST /api/challenges makes one (the platform's
// Challenge), GET /api/challenges/{id} shows one to its parties, GET
// /api/challenges?mine=1 lists the visitor's.

// challengeRequest is the body of POST /api/challenges.
type challengeRequest struct {
	Bot      string             `json:"bot"`
	Opponent *platform.Opponent `json:"opponent"`
	Map      string             `json:"map"`
	Games    *int               `json:"games"`
	Ranked   bool               `json:"ranked"`
}

func (s *Server) createChallenge(c echo.Context) error {
	var body challengeRequest
	if err := decodeBody(c, &body, `a JSON challenge {"bot", "opponent": {"ladder", "entry"} | {"contest", "entry"} | {"bot"}, "map", "games"}`); err != nil {
		return err
	}
	if body.Opponent == nil {
		return badRequest(`opponent: name one: {"ladder": GAME, "entry": ID}, {"contest": ID, "entry": ID} or {"bot": "NAME/bot"}`)
	}
	games := 2
	if body.Games != nil {
		games = *body.Games
	}
	v, err := s.svc.Challenges.Create(c.Request().Context(), who(c), platform.ChallengeRequest{Bot: body.Bot, Opponent: *body.Opponent, Map: body.Map, Games: games, Ranked: body.Ranked})
	if err != nil {
		return err
	}
	c.Response().Header().Set("Location", "/api/challenges/"+strconv.FormatInt(v.ID, 10))
	return c.JSON(http.StatusCreated, v)
}

func (s *Server) getChallenge(c echo.Context) error {
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil || id < 1 {
		return notFound("no challenge %q", c.Param("id"))
	}
	v, err := s.svc.Challenges.Get(c.Request().Context(), who(c), id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, v)
}

// listChallenges is GET /api/challenges?mine=1: the visitor's challenges
// and those against their bots, newest first (limit=N, at most 100).
func (s *Server) listChallenges(c echo.Context) error {
	if v := c.QueryParam("mine"); v != "1" && v != "true" {
		return badRequest("mine=1: the challenges list only the visitor's own")
	}
	limit := 20
	if v := c.QueryParam("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 100 {
			return badRequest("limit must be a number from 1 to 100")
		}
		limit = n
	}
	list, err := s.svc.Challenges.List(c.Request().Context(), who(c), limit)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"challenges": list})
}
