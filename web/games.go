package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"go.uber.org/zap"

	"arena/engine"
	"arena/imageref"
	"arena/judger"
	"arena/store"
)

// The games: those on offer as GET /api/games lists them (listGames, at
// the end), and the logic games admins register.
//
// Logic games an admin registers (POST /api/games) are kept in the store
// and offered beside the built-in games and the operator's (ARENA_GAMES),
// which the API never removes. A registered game is checked as the
// operator's are (deps.Logic): its image on the engine, labelled a
// Saiblo logic, its player read out of it.

// LogicChecker checks a logic image for a game registered as name: the
// game, and its player's files (nil: it ships none).
type LogicChecker func(ctx context.Context, name, image string) (engine.Game, map[string][]byte, error)

// registeredGame is a registered logic game as GET /api/games/registered
// shows it to admins: whether it is on offer, and why not.
type registeredGame struct {
	Name    string    `json:"name"`
	Image   string    `json:"image"`
	Title   string    `json:"title,omitempty"`
	Players int       `json:"players,omitempty"`
	AddedBy string    `json:"added_by"`
	AddedAt time.Time `json:"added_at"`
	Offered bool      `json:"offered"`
	Problem string    `json:"problem,omitempty"`
}

// loadGames offers the logic games registered in the store, each checked
// again: one that no longer passes (its image removed from the engine, its
// name taken by the operator since) is left out, with its problem shown
// to admins, until it is fixed and the server restarted, or it is
// removed.
func (s *Server) loadGames(ctx context.Context) error {
	s.gamesMu.Lock()
	defer s.gamesMu.Unlock()
	stored, err := s.deps.Store.LogicGames(ctx)
	if err != nil {
		return err
	}
	for _, rec := range stored {
		if _, err := s.deps.Games.Find(rec.Name); err == nil {
			s.unoffered[rec.Name] = "the name is taken by a game of the server's own (built in, or ARENA_GAMES)"
			continue
		}
		if s.deps.Logic == nil {
			s.unoffered[rec.Name] = "this server cannot check logic images"
			continue
		}
		g, files, err := s.deps.Logic(ctx, rec.Name, rec.Image)
		if err != nil {
			s.unoffered[rec.Name] = err.Error()
			s.log.Warn("a registered game is not offered", zap.String("game", rec.Name), zap.String("image", rec.Image), zap.Error(err))
			continue
		}
		s.offer(g, files)
	}
	return nil
}

// offer adds a checked game to the catalogue (gamesMu held).
func (s *Server) offer(g engine.Game, files map[string][]byte) {
	if err := s.deps.Games.Add(g); err != nil {
		s.unoffered[g.Name()] = err.Error()
		return
	}
	s.registered[g.Name()] = true
	delete(s.unoffered, g.Name())
	s.playersMu.Lock()
	if files != nil {
		s.players[g.Name()] = files
	}
	s.playersMu.Unlock()
}

// playerFiles are the files of a game's player (nil: none).
func (s *Server) playerFiles(game string) map[string][]byte {
	s.playersMu.RLock()
	defer s.playersMu.RUnlock()
	return s.players[game]
}

// gameRequest is the body of POST /api/games.
type gameRequest struct {
	Name  string `json:"name"`
	Image string `json:"image"`
}

// registerGame is POST /api/games (admin): a logic game offered from now
// on, under a name of its own.
func (s *Server) registerGame(c echo.Context) error {
	var req gameRequest
	if err := decodeBody(c, &req, `a JSON game {"name","image"}`); err != nil {
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
	if s.deps.Logic == nil {
		return &apiError{http.StatusNotImplemented, "this server cannot check logic images, so it registers no games"}
	}
	ctx := c.Request().Context()
	s.gamesMu.Lock()
	defer s.gamesMu.Unlock()
	if _, err := s.deps.Games.Find(req.Name); err == nil {
		return conflict("the name %s is taken by a game on offer: choose another", req.Name)
	}
	if _, ok := s.unoffered[req.Name]; ok {
		return conflict("a game %s is registered, and not on offer: remove it first (DELETE /api/games/%s)", req.Name, req.Name)
	}
	// An image of a user's or team's namespace would be theirs to replace
	// by a push.
	if ns := s.namespaceOf(req.Image); ns != "" {
		if kind, err := s.deps.Store.NameKind(ctx, ns); err != nil {
			return err
		} else if kind != "" {
			return conflict("the image %s is in the namespace of the %s %s, who could replace it by a push: name an image of a namespace no one owns", req.Image, kind, ns)
		}
	}
	g, files, err := s.deps.Logic(ctx, req.Name, req.Image)
	if err != nil {
		return badRequest("%v", err)
	}
	by := who(c).Name
	if err := s.deps.Store.AddLogicGame(ctx, store.LogicGame{Name: req.Name, Image: req.Image, AddedBy: by, AddedAt: s.now()}); err != nil {
		if errors.Is(err, store.ErrGameExists) {
			return conflict("a game %s is registered already", req.Name)
		}
		return err
	}
	s.offer(g, files)
	s.log.Info("game registered", zap.String("game", req.Name), zap.String("image", req.Image), zap.String("by", by))
	return c.JSON(http.StatusCreated, s.gameInfo(c, g))
}

// removeGame is DELETE /api/games/:name (admin): a registered logic game
// is no longer offered. Its matches and replays stay; its ladder board is
// kept in the store, hidden until a game of its name is registered again
// (which continues it); a contest of it that is not over keeps it.
func (s *Server) removeGame(c echo.Context) error {
	name := c.Param("name")
	ctx := c.Request().Context()
	s.gamesMu.Lock()
	defer s.gamesMu.Unlock()
	_, stale := s.unoffered[name]
	if !s.registered[name] && !stale {
		if _, err := s.deps.Games.Find(name); err == nil {
			return conflict("the game %s is the server's own (built in, or ARENA_GAMES): it is removed from the server's configuration, not here", name)
		}
		return notFound("no registered game %s", name)
	}
	if !stale {
		live, err := s.deps.Store.Contests(ctx, store.ContestOpen, store.ContestFinal)
		if err != nil {
			return err
		}
		var using []string
		for _, ct := range live {
			if ct.Game == name {
				using = append(using, fmt.Sprintf("%q (#%d)", ct.Name, ct.ID))
			}
		}
		if len(using) > 0 {
			return conflict("the game %s is played by contests not over: %s; remove it once they are done", name, strings.Join(using, ", "))
		}
	}
	if _, err := s.deps.Store.RemoveLogicGame(ctx, name); err != nil {
		return err
	}
	delete(s.unoffered, name)
	if s.registered[name] {
		// (A record not on offer may share its name with the server's own
		// game, which stays.)
		s.deps.Games.Remove(name)
		delete(s.registered, name)
		s.playersMu.Lock()
		delete(s.players, name)
		s.playersMu.Unlock()
	}
	s.log.Info("game removed", zap.String("game", name), zap.String("by", who(c).Name))
	return c.NoContent(http.StatusNoContent)
}

// listRegisteredGames is GET /api/games/registered (admin): the logic
// games registered through the API, on offer or not.
func (s *Server) listRegisteredGames(c echo.Context) error {
	stored, err := s.deps.Store.LogicGames(c.Request().Context())
	if err != nil {
		return err
	}
	s.gamesMu.Lock()
	defer s.gamesMu.Unlock()
	out := []registeredGame{}
	for _, rec := range stored {
		v := registeredGame{Name: rec.Name, Image: rec.Image, AddedBy: rec.AddedBy, AddedAt: rec.AddedAt, Problem: s.unoffered[rec.Name]}
		if g, err := s.deps.Games.Find(rec.Name); err == nil && s.registered[rec.Name] {
			v.Offered = true
			v.Title = titleOf(g)
			if maps := g.Maps(); len(maps) > 0 {
				v.Players = maps[0].MaxPlayers
			}
		}
		out = append(out, v)
	}
	return c.JSON(http.StatusOK, out)
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
	for _, g := range s.deps.Games.List() {
		out = append(out, s.gameInfo(c, g))
	}
	return c.JSON(http.StatusOK, out)
}

// titleOf is a game's name for people, when its logic's image gives one
// (label io.arena.title; "" for none).
func titleOf(g engine.Game) string {
	if t, ok := g.(interface{ Title() string }); ok {
		return t.Title()
	}
	return ""
}

// gameInfo is a game as GET /api/games shows it.
func (s *Server) gameInfo(c echo.Context, g engine.Game) gameInfo {
	eff := s.cfg.Limits.Resolve(g.Protocol())
	lim := limitsInfo{
		AnswerTimeoutMS: float64(eff.AnswerTimeout.Milliseconds()), WarmUpMS: float64(eff.WarmUp.Milliseconds()),
		MaxMessageBytes: eff.MaxMessageBytes, MemoryBytes: s.cfg.Resources.MemoryBytes,
		CPUs: s.cfg.Resources.CPUs, Pids: s.cfg.Resources.Pids,
	}
	bots := []botInfo{}
	for _, ref := range s.cfg.DefaultBots[g.Name()] {
		b := botInfo{Image: ref}
		if s.deps.HasImage != nil {
			present := s.deps.HasImage(c.Request().Context(), ref)
			b.Present = &present
		}
		bots = append(bots, b)
	}
	info := gameInfo{Name: g.Name(), Maps: g.Maps(), DefaultBots: bots, Limits: lim}
	info.Title = titleOf(g)
	if _, ok := s.playerFiles(g.Name())[playerIndex]; ok {
		info.Player = "/games/" + url.PathEscape(g.Name()) + "/player/" + playerIndex
	}
	return info
}
