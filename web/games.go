package web

import (
	"net/http"
	"net/url"

	"github.com/labstack/echo/v4"

	"arena/platform"
)

// The games: those on offer as GET /api/games lists them, and the logic
// games admins register (POST /api/games), kept in the store and offered
// beside the built-in games and the operator's (ARENA_GAMES), which the
// API never removes (platform.Games).

// registerGame is POST /api/games (admin): a logic game offered from now
// on, under a name of its own.
func (s *Server) registerGame(c echo.Context) error {
	var req platform.GameRequest
	if err := decodeBody(c, &req, `a JSON game {"name","image","limits"}`); err != nil {
		return err
	}
	g, err := s.svc.Games.Register(c.Request().Context(), who(c), req)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, gameView(g))
}

// removeGame is DELETE /api/games/:name (admin): a registered logic game
// is no longer offered. Its matches and replays stay; its ladder board is
// kept in the store, hidden until a game of its name is registered again
// (which continues it); a contest of it that is not over keeps it.
func (s *Server) removeGame(c echo.Context) error {
	if err := s.svc.Games.Remove(c.Request().Context(), who(c), c.Param("name")); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// listRegisteredGames is GET /api/games/registered (admin): the logic
// games registered through the API, on offer or not.
func (s *Server) listRegisteredGames(c echo.Context) error {
	games, err := s.svc.Games.Registered(c.Request().Context(), who(c))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, games)
}

// gameInfo is a game as /api/games describes it: with the address of its
// own viewer page, when its logic ships one.
type gameInfo struct {
	platform.GameInfo
	Player string `json:"player,omitempty"`
}

func gameView(g platform.GameInfo) gameInfo {
	v := gameInfo{GameInfo: g}
	if g.HasPlayer {
		v.Player = "/games/" + url.PathEscape(g.Name) + "/player/" + platform.PlayerIndex
	}
	return v
}

func (s *Server) listGames(c echo.Context) error {
	out := []gameInfo{}
	for _, g := range s.svc.Games.List(c.Request().Context()) {
		out = append(out, gameView(g))
	}
	return c.JSON(http.StatusOK, out)
}
