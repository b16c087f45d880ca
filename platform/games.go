package platform

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.uber.org/zap"

	"arena/accounts"
	"arena/engine"
	"arena/imageref"
	"arena/internal/errs"
	"arena/judger"
	"arena/store"
)

// loadGames offers the logic games registered in the store, each checked
// again: one that no longer passes (its image removed from the engine, its
// name taken by the operator since) is left out, with its problem shown
// to admins, until it is fixed and the server restarted, or it is
// removed.
func (s *Platform) loadGames(ctx context.Context) error {
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
		var lim judger.Limits
		if rec.Limits != "" {
			if err := json.Unmarshal([]byte(rec.Limits), &lim); err != nil {
				s.unoffered[rec.Name] = "its limits in the store: " + err.Error()
				continue
			}
		}
		g, files, err := s.deps.Logic(ctx, LogicSpec{Name: rec.Name, Image: rec.Image, ImageID: rec.ImageID, Limits: lim})
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
func (s *Platform) offer(g engine.Game, files map[string][]byte) {
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

// PlayerIndex is the page a logic's player folder must hold.
const PlayerIndex = "index.html"

// PlayerFile is a file of a game's player (a path inside its folder), as
// read out of its image when the game was offered, never from the disk.
func (g *Games) PlayerFile(game, name string) ([]byte, error) {
	s := g.p
	s.playersMu.RLock()
	defer s.playersMu.RUnlock()
	data, ok := s.players[game][name]
	if !ok {
		return nil, errs.New(errs.ErrNotFound, "no such file in this game's player")
	}
	return data, nil
}

// hasPlayer says whether a game ships a player page.
func (s *Platform) hasPlayer(game string) bool {
	s.playersMu.RLock()
	defer s.playersMu.RUnlock()
	_, ok := s.players[game][PlayerIndex]
	return ok
}

// LogicSpec is a logic game as registered: its name, its logic's image
// (pinned to ImageID when set) and its limits (zero fields: the
// server's, ARENA_LOGIC_*).
type LogicSpec struct {
	Name, Image, ImageID string
	Limits               judger.Limits
}

// LogicChecker checks a logic game's image: the game (its logic pinned
// to the image's id, under its limits), and its player's files (nil: it
// ships none).
type LogicChecker func(ctx context.Context, spec LogicSpec) (engine.Game, map[string][]byte, error)

// RegisteredGame is a registered logic game as GET /api/games/registered
// shows it to admins: whether it is on offer, and why not.
type RegisteredGame struct {
	Name    string `json:"name"`
	Image   string `json:"image"`
	Title   string `json:"title,omitempty"`
	Players int    `json:"players,omitempty"`
	// ImageID is the image it plays (pinned when it was registered).
	ImageID string `json:"image_id,omitempty"`
	// Limits are the logic's limits as the admin gave them (zero: the
	// server's); Effective as they apply, once offered; Proposed as its
	// image's labels propose them (io.arena.logic.*), for the admin to
	// decide.
	Limits    judger.Limits  `json:"limits"`
	Effective *judger.Limits `json:"effective_limits,omitempty"`
	Proposed  *judger.Limits `json:"proposed_limits,omitempty"`
	AddedBy   string         `json:"added_by"`
	AddedAt   time.Time      `json:"added_at"`
	Offered   bool           `json:"offered"`
	Problem   string         `json:"problem,omitempty"`
}

// RegisterGame offers a logic game from now on, under a name of its own
// (by an admin, by): its logic pinned to the image its name has now, by
// id, under the limits given (zero fields: the server's).
func (gs *Games) register(ctx context.Context, by, name, image string, lim judger.Limits) (engine.Game, error) {
	s := gs.p
	if err := lim.Check(); err != nil {
		return nil, errs.Errorf(errs.ErrInvalid, "the logic's limits: %v", err)
	}
	if s.deps.Logic == nil {
		return nil, errs.New(errs.ErrUnavailable, "this server cannot check logic images, so it registers no games")
	}
	s.gamesMu.Lock()
	defer s.gamesMu.Unlock()
	if _, err := s.deps.Games.Find(name); err == nil {
		return nil, errs.Errorf(errs.ErrConflict, "the name %s is taken by a game on offer: choose another", name)
	}
	if _, ok := s.unoffered[name]; ok {
		return nil, errs.Errorf(errs.ErrConflict, "a game %s is registered, and not on offer: remove it first (DELETE /api/games/%s)", name, name)
	}
	// An image of a user's or team's namespace would be theirs to replace
	// by a push.
	if ns := s.namespaceOf(image); ns != "" {
		if kind, err := s.deps.Store.NameKind(ctx, ns); err != nil {
			return nil, err
		} else if kind != "" {
			return nil, errs.Errorf(errs.ErrConflict, "the image %s is in the namespace of the %s %s, who could replace it by a push: name an image of a namespace no one owns", image, kind, ns)
		}
	}
	g, files, err := s.deps.Logic(ctx, LogicSpec{Name: name, Image: image, Limits: lim})
	if err != nil {
		return nil, errs.Errorf(errs.ErrInvalid, "%v", err)
	}
	rec := store.LogicGame{Name: name, Image: image, AddedBy: by, AddedAt: s.now()}
	if lg, ok := g.(*judger.Game); ok {
		_, rec.ImageID = lg.HostImage()
	}
	if lim != (judger.Limits{}) {
		b, _ := json.Marshal(lim)
		rec.Limits = string(b)
	}
	if err := s.deps.Store.AddLogicGame(ctx, rec); err != nil {
		if errors.Is(err, store.ErrGameExists) {
			return nil, errs.Errorf(errs.ErrConflict, "a game %s is registered already", name)
		}
		return nil, err
	}
	s.offer(g, files)
	s.log.Info("game registered", zap.String("game", name), zap.String("image", image), zap.String("image_id", rec.ImageID), zap.String("by", by))
	return g, nil
}

// RemoveGame stops offering a registered logic game (by an admin, by).
// Its matches and replays stay; its ladder board is kept in the store,
// hidden until a game of its name is registered again (which continues
// it); a contest of it that is not over keeps it.
func (g *Games) Remove(ctx context.Context, p accounts.Principal, name string) error {
	if err := staff(p, "remove a game"); err != nil {
		return err
	}
	s, by := g.p, p.Name
	s.gamesMu.Lock()
	defer s.gamesMu.Unlock()
	_, stale := s.unoffered[name]
	if !s.registered[name] && !stale {
		if _, err := s.deps.Games.Find(name); err == nil {
			return errs.Errorf(errs.ErrConflict, "the game %s is the server's own (built in, or ARENA_GAMES): it is removed from the server's configuration, not here", name)
		}
		return errs.Errorf(errs.ErrNotFound, "no registered game %s", name)
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
			return errs.Errorf(errs.ErrConflict, "the game %s is played by contests not over: %s; remove it once they are done", name, strings.Join(using, ", "))
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
	s.log.Info("game removed", zap.String("game", name), zap.String("by", by))
	return nil
}

// RegisteredGames are the logic games registered through the API, on
// offer or not (and why not).
func (g *Games) Registered(ctx context.Context, p accounts.Principal) ([]RegisteredGame, error) {
	if err := staff(p, "list the registered games"); err != nil {
		return nil, err
	}
	s := g.p
	stored, err := s.deps.Store.LogicGames(ctx)
	if err != nil {
		return nil, err
	}
	s.gamesMu.Lock()
	defer s.gamesMu.Unlock()
	out := []RegisteredGame{}
	for _, rec := range stored {
		v := RegisteredGame{Name: rec.Name, Image: rec.Image, ImageID: rec.ImageID, AddedBy: rec.AddedBy, AddedAt: rec.AddedAt, Problem: s.unoffered[rec.Name]}
		if rec.Limits != "" {
			_ = json.Unmarshal([]byte(rec.Limits), &v.Limits)
		}
		if g, err := s.deps.Games.Find(rec.Name); err == nil && s.registered[rec.Name] {
			v.Offered = true
			v.Title = TitleOf(g)
			if maps := g.Maps(); len(maps) > 0 {
				v.Players = maps[0].MaxPlayers
			}
			if lg, ok := g.(*judger.Game); ok {
				eff, prop := lg.Limits(), lg.Proposed()
				v.Effective = &eff
				_, v.ImageID = lg.HostImage()
				if prop != (judger.Limits{}) {
					v.Proposed = &prop
				}
			}
		}
		out = append(out, v)
	}
	return out, nil
}

// TitleOf is a game's name for people, when its logic's image gives one
// (label io.arena.title; "" for none).
func TitleOf(g engine.Game) string {
	if t, ok := g.(interface{ Title() string }); ok {
		return t.Title()
	}
	return ""
}

// Resources are what each bot's container may use, as the games' list
// shows them (the sandbox enforces them).
type Resources struct {
	MemoryBytes int64
	CPUs        float64
	Pids        int64
}

// GameInfo is a game as the games' list shows it.
type GameInfo struct {
	Name        string           `json:"name"`
	Maps        []engine.MapInfo `json:"maps"`
	DefaultBots []BotInfo        `json:"default_bots"`
	Limits      LimitsInfo       `json:"limits"`
	// HasPlayer: the game's logic ships a viewer page of its own
	// (PlayerIndex of its player, served by PlayerFile).
	HasPlayer bool `json:"-"`
	// Title is the game's name for people, when its logic's image gives
	// one (label io.arena.title).
	Title string `json:"title,omitempty"`
	// Logic is a logic game's logic: its image, the id it plays, and its
	// limits.
	Logic *LogicInfo `json:"logic,omitempty"`
}

// LogicInfo is a logic game's logic as the games' list shows it.
type LogicInfo struct {
	Image   string        `json:"image"`
	ImageID string        `json:"image_id,omitempty"`
	Limits  judger.Limits `json:"limits"`
}

// BotInfo is a suggested bot image and whether it is on the engine (nil:
// not known).
type BotInfo struct {
	Image   string `json:"image"`
	Present *bool  `json:"present,omitempty"`
}

// LimitsInfo are a game's matches' limits as the games' list shows them.
type LimitsInfo struct {
	AnswerTimeoutMS float64 `json:"answer_timeout_ms"`
	WarmUpMS        float64 `json:"warm_up_ms"`
	MaxMessageBytes int     `json:"max_message_bytes"`
	MemoryBytes     int64   `json:"memory_bytes"`
	CPUs            float64 `json:"cpus"`
	Pids            int64   `json:"pids"`
}

// List are the games on offer.
func (g *Games) List(ctx context.Context) []GameInfo {
	out := []GameInfo{}
	for _, game := range g.p.deps.Games.List() {
		out = append(out, g.p.gameInfo(ctx, game))
	}
	return out
}

// gameInfo is a game as the games' list shows it.
func (s *Platform) gameInfo(ctx context.Context, g engine.Game) GameInfo {
	eff := s.cfg.Limits.Resolve(g.Protocol())
	r := s.cfg.Resources
	lim := LimitsInfo{
		AnswerTimeoutMS: float64(eff.AnswerTimeout.Milliseconds()), WarmUpMS: float64(eff.WarmUp.Milliseconds()),
		MaxMessageBytes: eff.MaxMessageBytes, MemoryBytes: r.MemoryBytes, CPUs: r.CPUs, Pids: r.Pids,
	}
	bots := []BotInfo{}
	for _, ref := range s.cfg.DefaultBots[g.Name()] {
		b := BotInfo{Image: ref}
		if s.deps.HasImage != nil {
			present := s.deps.HasImage(ctx, ref)
			b.Present = &present
		}
		bots = append(bots, b)
	}
	info := GameInfo{Name: g.Name(), Maps: g.Maps(), DefaultBots: bots, Limits: lim, Title: TitleOf(g), HasPlayer: s.hasPlayer(g.Name())}
	if lg, ok := g.(*judger.Game); ok {
		ref, id := lg.HostImage()
		info.Logic = &LogicInfo{Image: ref, ImageID: id, Limits: lg.Limits()}
	}
	return info
}

// GameRequest is a logic game an admin registers: its name, its logic's
// image, and the logic's own limits (zero fields: the server's).
type GameRequest struct {
	Name   string        `json:"name"`
	Image  string        `json:"image"`
	Limits judger.Limits `json:"limits"`
}

// Register offers a logic game from now on, under a name of its own (an
// admin's): its logic pinned to the image its name has now, by id.
func (g *Games) Register(ctx context.Context, p accounts.Principal, req GameRequest) (GameInfo, error) {
	if err := staff(p, "register a game"); err != nil {
		return GameInfo{}, err
	}
	req.Name, req.Image = strings.TrimSpace(req.Name), strings.TrimSpace(req.Image)
	if err := judger.CheckName(req.Name); err != nil {
		return GameInfo{}, errs.Mark(errs.ErrInvalid, err)
	}
	if req.Image == "" {
		return GameInfo{}, errs.New(errs.ErrInvalid, "the game's logic image is missing: give \"image\", e.g. my/ttt-logic")
	}
	if err := imageref.Check(req.Image); err != nil {
		return GameInfo{}, errs.Errorf(errs.ErrInvalid, "the game's logic image: %v", err)
	}
	game, err := g.register(ctx, p.Name, req.Name, req.Image, req.Limits)
	if err != nil {
		return GameInfo{}, err
	}
	return g.p.gameInfo(ctx, game), nil
}

// Find is a game on offer.
func (g *Games) Find(name string) (engine.Game, error) { return g.p.deps.Games.Find(name) }
