package web

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/labstack/echo/v4"

	"arena/engine"
	"arena/imageref"
	"arena/judger"
	"arena/platform"
)

// The games: those on offer as GET /api/games lists them (listGames, at
// the end), and the logic games admins register.
//
// Logic games an admin registers (POST /api/games) are kept in the store
// and offered beside the built-in games and the operator's (ARENA_GAMES),
// which the API never removes. A registered game is checked as the
// operator's are (deps.Logic): its image on the engine, labelled a
// Saiblo logic, its player read out of it.

// gameRequest is the body of POST /api/games.
type gameRequest struct {
	Name  string `json:"name"`
	Image string `json:"image"`
	// Limits are the logic's own (zero fields: the server's).
	Limits judger.Limits `json:"limits"`
}

// registerGame is POST /api/games (admin): a logic game offered from now
// on, under a name of its own.
func (s *Server) registerGame(c echo.Context) error {
	var req gameRequest
	if err := decodeBody(c, &req, `a JSON game {"name","image","limits"}`); err != nil {
		return err
	}
	req.Name, req.Image = strings.TrimSpace(req.Name), strings.TrimSpace(req.Image)
	if err := judger.CheckName(req.Name); err != nil {
		return badRequest("%v", err)
	}
	if req.Image == "" {
		return badRequest("the game's logic image is missing: give \"image\", e.g. my/ttt-logic")
	}
	if err := imageref.Check(req.Image); err != nil {
		return badRequest("the game's logic image: %v", err)
	}
	if err := req.Limits.Check(); err != nil {
		return badRequest("the logic's limits: %v", err)
	}
	if !s.p.ChecksLogic() {
		return &apiError{http.StatusNotImplemented, "this server cannot check logic images, so it registers no games"}
	}
	g, err := s.p.RegisterGame(c.Request().Context(), who(c).Name, req.Name, req.Image, req.Limits)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, s.gameInfo(c, g))
}

// removeGame is DELETE /api/games/:name (admin): a registered logic game
// is no longer offered. Its matches and replays stay; its ladder board is
// kept in the store, hidden until a game of its name is registered again
// (which continues it); a contest of it that is not over keeps it.
func (s *Server) removeGame(c echo.Context) error {
	if err := s.p.RemoveGame(c.Request().Context(), who(c).Name, c.Param("name")); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// listRegisteredGames is GET /api/games/registered (admin): the logic
// games registered through the API, on offer or not.
func (s *Server) listRegisteredGames(c echo.Context) error {
	games, err := s.p.RegisteredGames(c.Request().Context())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, games)
}

// gameInfo is a game as /api/games describes it.
type gameInfo struct {
	Name        string           `json:"name"`
	Maps        []engine.MapInfo `json:"maps"`
	DefaultBots []botInfo        `json:"default_bots"`
	Limits      limitsInfo       `json:"limits"`
	// Player is the game's own viewer page, when its logic ships one.
	Player string `json:"player,omitempty"`
	// Title is the game's name for people, when its logic's image gives
	// one (label io.arena.title).
	Title string `json:"title,omitempty"`
	// Logic is a logic game's logic: its image, the id it plays, and its
	// limits.
	Logic *logicInfo `json:"logic,omitempty"`
}

// logicInfo is a logic game's logic as /api/games describes it.
type logicInfo struct {
	Image   string        `json:"image"`
	ImageID string        `json:"image_id,omitempty"`
	Limits  judger.Limits `json:"limits"`
}

// botInfo is a suggested bot image and whether it is present.
type botInfo struct {
	Image   string `json:"image"`
	Present *bool  `json:"present,omitempty"`
}

type limitsInfo struct {
	AnswerTimeoutMS float64 `json:"answer_timeout_ms"`
	WarmUpMS        float64 `json:"warm_up_ms"`
	MaxMessageBytes int     `json:"max_message_bytes"`
	MemoryBytes     int64   `json:"memory_bytes"`
	CPUs            float64 `json:"cpus"`
	Pids            int64   `json:"pids"`
}

func (s *Server) listGames(c echo.Context) error {
	out := []gameInfo{}
	for _, g := range s.p.Games().List() {
		out = append(out, s.gameInfo(c, g))
	}
	return c.JSON(http.StatusOK, out)
}

// gameInfo is a game as GET /api/games shows it.
func (s *Server) gameInfo(c echo.Context, g engine.Game) gameInfo {
	eff := s.p.Config().Limits.Resolve(g.Protocol())
	lim := limitsInfo{
		AnswerTimeoutMS: float64(eff.AnswerTimeout.Milliseconds()), WarmUpMS: float64(eff.WarmUp.Milliseconds()),
		MaxMessageBytes: eff.MaxMessageBytes, MemoryBytes: s.cfg.Resources.MemoryBytes,
		CPUs: s.cfg.Resources.CPUs, Pids: s.cfg.Resources.Pids,
	}
	bots := []botInfo{}
	for _, ref := range s.p.Config().DefaultBots[g.Name()] {
		b := botInfo{Image: ref}
		if s.deps.HasImage != nil {
			present := s.deps.HasImage(c.Request().Context(), ref)
			b.Present = &present
		}
		bots = append(bots, b)
	}
	info := gameInfo{Name: g.Name(), Maps: g.Maps(), DefaultBots: bots, Limits: lim}
	info.Title = platform.TitleOf(g)
	if lg, ok := g.(*judger.Game); ok {
		ref, id := lg.HostImage()
		info.Logic = &logicInfo{Image: ref, ImageID: id, Limits: lg.Limits()}
	}
	if _, ok := s.p.PlayerFiles(g.Name())[playerIndex]; ok {
		info.Player = "/games/" + url.PathEscape(g.Name()) + "/player/" + playerIndex
	}
	return info
}
