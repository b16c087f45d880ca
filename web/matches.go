package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"go.uber.org/zap"

	"arena/accounts"
	"arena/engine"
	"arena/imageref"
	"arena/internal/errs"
	"arena/judger"
	"arena/ladder"
	"arena/matches"
	"arena/store"
)

// The matches' API: POST /api/matches starts one (createMatch; submit is
// the one way in, for the ladders' and contests' matches too), GET lists
// them and shows one, DELETE cancels it, .../replay serves its replay;
// record keeps the store in step with the queue.

// createRequest is the body of POST /api/matches.
type createRequest struct {
	Game     string          `json:"game"`
	Map      string          `json:"map"`
	Seed     *seedValue      `json:"seed"`
	Bots     []string        `json:"bots"`
	Settings json.RawMessage `json:"settings"`
}

// seedValue is a match's seed as a request gives it: a JSON number, or
// a string of its digits (JavaScript's numbers are exact only up to 2^53,
// seeds go up to 2^64−1).
type seedValue uint64

func (v *seedValue) UnmarshalJSON(b []byte) error {
	digits := strings.TrimSuffix(strings.TrimPrefix(string(b), `"`), `"`)
	n, err := strconv.ParseUint(digits, 10, 64)
	if err != nil {
		return &badSeed{string(b)}
	}
	*v = seedValue(n)
	return nil
}

// badSeed is a seed that is not a whole number from 0 to 2^64−1.
type badSeed struct{ got string }

func (e *badSeed) Error() string {
	return fmt.Sprintf("seed must be a whole number from 0 to %d (as a string above 2^53, which JSON numbers lose in JavaScript), not %s", uint64(math.MaxUint64), e.got)
}

// matchView is a match as the API shows it.
type matchView struct {
	ID       string `json:"id"`
	Status   string `json:"status"`
	Position int    `json:"position,omitempty"`
	Game     string `json:"game"`
	Map      string `json:"map"`
	Seed     uint64 `json:"seed"`
	// SeedText is the seed in digits: exact in JavaScript too.
	SeedText   string          `json:"seed_text"`
	Bots       []string        `json:"bots"`
	Settings   json.RawMessage `json:"settings,omitempty"`
	CreatedAt  time.Time       `json:"created_at"`
	StartedAt  *time.Time      `json:"started_at,omitempty"`
	FinishedAt *time.Time      `json:"finished_at,omitempty"`
	Error      string          `json:"error,omitempty"`
	Result     json.RawMessage `json:"result,omitempty"`
	Replay     string          `json:"replay,omitempty"`
	// Owner is who started the match (none for a ladder's).
	Owner string `json:"owner,omitempty"`
	// Ladder names the ladder entries by seat, for a ladder's match.
	Ladder []ladder.Entrant `json:"ladder,omitempty"`
}

func (s *Server) view(m store.Match) matchView {
	v := matchView{ID: m.ID, Status: m.Status, Game: m.Game, Map: m.Map, Seed: m.Seed, SeedText: strconv.FormatUint(m.Seed, 10), Bots: m.Bots,
		Settings: m.Settings, CreatedAt: m.CreatedAt, Error: m.Error, Result: m.Result, Owner: m.Owner}
	if !m.StartedAt.IsZero() {
		v.StartedAt = &m.StartedAt
	}
	if !m.FinishedAt.IsZero() {
		v.FinishedAt = &m.FinishedAt
	}
	if m.HasReplay {
		v.Replay = "/api/matches/" + m.ID + "/replay"
	}
	if st, pos, ok := s.queue.Status(m.ID); ok {
		v.Status, v.Position = string(st), pos
	}
	v.Ladder, _ = s.ladder.Entrants(context.Background(), m.ID)
	return v
}

// liveView is a match as the API shows it, its state from the queue's
// live view rather than the store.
func liveView(m store.Match, l matches.Live) matchView {
	m.Status = string(l.State)
	if m.StartedAt.IsZero() {
		m.StartedAt = l.Started
	}
	v := matchView{ID: m.ID, Status: m.Status, Position: l.Position, Game: m.Game, Map: m.Map, Seed: m.Seed, SeedText: strconv.FormatUint(m.Seed, 10), Bots: m.Bots,
		Settings: m.Settings, CreatedAt: m.CreatedAt, Owner: m.Owner}
	if !m.StartedAt.IsZero() {
		v.StartedAt = &m.StartedAt
	}
	return v
}

var matchIDPattern = regexp.MustCompile(`^[0-9a-f]{12}$`)

func (s *Server) match(c echo.Context) (store.Match, error) {
	id := c.Param("id")
	if !matchIDPattern.MatchString(id) {
		return store.Match{}, notFound("no match %q", id)
	}
	m, err := s.deps.Store.Get(c.Request().Context(), id)
	if errors.Is(err, store.ErrNotFound) {
		return store.Match{}, notFound("no match %q", id)
	}
	return m, err
}

func (s *Server) createMatch(c echo.Context) error {
	var body createRequest
	dec := json.NewDecoder(c.Request().Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&body); err != nil {
		var he *echo.HTTPError
		if errors.As(err, &he) {
			return err // the body limit
		}
		var bad *badSeed
		if errors.As(err, &bad) {
			return badRequest("%v", bad)
		}
		return badRequest("request body is not a JSON match request: %v", err)
	}
	if dec.More() {
		return badRequest("request body has content after the JSON object")
	}
	p := who(c)
	game, err := s.gameOf(c.Request().Context(), p, body.Game, len(body.Bots))
	if err != nil {
		return err
	}
	mapName := body.Map
	if mapName == "" {
		mapName = game.Maps()[0].Name
	}
	m, err := game.Map(mapName)
	if err != nil {
		return badRequest("map: %v", err)
	}
	for i, ref := range body.Bots {
		if strings.TrimSpace(ref) == "" {
			return badRequest("bots[%d]: empty image name", i)
		}
	}
	if err := s.mayPlayAll(p, "bots", body.Bots...); err != nil {
		return err
	}
	for _, ref := range body.Bots {
		if err := s.pushedState(c.Request().Context(), ref, false); err != nil {
			return err
		}
	}
	var seed uint64
	if body.Seed != nil {
		seed = uint64(*body.Seed)
	} else {
		seed = matches.RandomSeed()
	}
	settings := body.Settings
	if string(settings) == "null" {
		settings = nil
	}
	id := matches.NewMatchID()
	req := matches.Request{Game: game, Map: m, Seed: seed, Images: body.Bots, Settings: settings, Limits: s.cfg.Limits, MatchID: id, Owner: p.Name}
	rec, err := s.submit(c.Request().Context(), req, s.deps.Store.Insert)
	if err != nil {
		return err
	}
	v := s.view(rec)
	// A bot labelled for another game plays, but will likely fault: say so.
	var warnings []string
	for i, ref := range body.Bots {
		if labelled := s.gameLabel(c.Request().Context(), ref); labelled != "" && labelled != game.Name() {
			warnings = append(warnings, fmt.Sprintf("bots[%d]: image %s is labelled for %s (io.arena.game), not %s: it will likely fault", i, ref, labelled, game.Name()))
		}
	}
	c.Response().Header().Set("Location", "/api/matches/"+id)
	return c.JSON(http.StatusCreated, struct {
		matchView
		Warnings []string `json:"warnings,omitempty"`
	}{v, warnings})
}

// gameOf is the game a match request names: one on offer, or
// "logic:IMAGE", the game of a logic image for a match of players bots
// (see package judger), which the visitor may play as they may a bot
// (the image runs in the bots' sandbox; its labels are checked when the
// match starts).
func (s *Server) gameOf(ctx context.Context, p accounts.Principal, name string, players int) (engine.Game, error) {
	ref, ok := strings.CutPrefix(name, judger.Prefix)
	if !ok {
		g, err := s.deps.Games.Find(name)
		if err != nil {
			return nil, badRequest("game: %v (or logic:IMAGE, a logic image)", err)
		}
		return g, nil
	}
	if err := imageref.Check(ref); err != nil {
		return nil, badRequest("game %s: %v", name, err)
	}
	if err := s.mayPlayAll(p, "game", ref); err != nil {
		return nil, err
	}
	if err := s.pushedState(ctx, ref, false); err != nil {
		return nil, err
	}
	// A pushed logic plays the version its tag names now, by digest.
	if pulled, _, ok, err := s.pushedVersion(ctx, ref); err != nil {
		return nil, err
	} else if ok {
		ref = pulled
	}
	// The logic must be on the engine already (never pulled for a
	// match: its labels are checked now, before anything starts).
	g := judger.New(ref, max(1, players))
	img, err := s.deps.Orchestrator.Image(ctx, ref)
	if err != nil {
		return nil, badRequest("game %s: %v", name, err)
	}
	if _, err := judger.CheckLabelled(img.Labels); err != nil {
		return nil, badRequest("game %s: %v", name, err)
	}
	if err := g.CheckHost(img.Labels); err != nil {
		return nil, badRequest("game %s: %v", name, err)
	}
	return g, nil
}

// submit checks a match request, records it with insert and queues it:
// the one way in for matches started by hand and the ladders' alike. A
// match the queue refuses is recorded as failed.
func (s *Server) submit(ctx context.Context, req matches.Request, insert func(context.Context, store.Match) error) (store.Match, error) {
	// Pinned now: the match plays the images as they are when it is
	// created, on this host or a worker's (a pushed one pulled first, by
	// its digest).
	ids := make([]string, len(req.Images))
	if len(req.ImageIDs) == len(req.Images) {
		copy(ids, req.ImageIDs)
	}
	pushed := false
	for i, ref := range req.Images {
		if ids[i] != "" {
			continue
		}
		_, id, ok, err := s.pushedVersion(ctx, ref)
		if err != nil {
			return store.Match{}, err
		}
		if ok {
			ids[i], pushed = id, true
		}
	}
	if pushed {
		req.ImageIDs = ids
	}
	req, err := s.deps.Orchestrator.Pin(ctx, req, !s.cfg.PullMissing)
	if err != nil {
		return store.Match{}, err
	}
	s.holdImages(req.MatchID, req.ImageIDs)
	rec := store.Match{ID: req.MatchID, Status: string(matches.StateQueued), Game: req.Game.Name(), Map: req.Map.Info().Name, Seed: req.Seed, Bots: req.Images, Settings: req.Settings, CreatedAt: s.now(), Owner: req.Owner}
	if err := insert(ctx, rec); err != nil {
		s.releaseImages(rec.ID)
		return store.Match{}, err
	}
	s.live.Store(rec.ID, rec)
	pos, err := s.queue.Enqueue(req)
	if err != nil {
		s.live.Delete(rec.ID)
		s.releaseImages(rec.ID)
		if ferr := s.deps.Store.Finish(context.WithoutCancel(ctx), rec.ID, store.Outcome{Status: string(matches.StateFailed), Error: err.Error()}, s.now()); ferr != nil {
			s.log.Error("record a match the queue refused", zap.String("match", rec.ID), zap.Error(ferr))
		}
		return store.Match{}, err
	}
	s.log.Info("match queued", zap.String("match", rec.ID), zap.String("owner", req.Owner), zap.Strings("bots", req.Images), zap.Int("position", pos), zap.Bool("background", req.Background))
	return rec, nil
}

// ladderQueue is the server's queue as the ladders see it.
type ladderQueue struct{ s *Server }

func (q ladderQueue) Submit(ctx context.Context, req matches.Request, insert func(context.Context, store.Match) error) error {
	_, err := q.s.submit(ctx, req, insert)
	return err
}

func (s *Server) getMatch(c echo.Context) error {
	m, err := s.match(c)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, s.view(m))
}

// listMatches is GET /api/matches: newest first, filtered by owner
// (owner=NAME, or mine=1 for the visitor's own and their teams'),
// ladder=0 (no ladder matches) and game=G.
func (s *Server) listMatches(c echo.Context) error {
	limit, before := 20, int64(0)
	if v := c.QueryParam("limit"); v != "" {
		if _, err := fmt.Sscan(v, &limit); err != nil || limit < 1 || limit > 100 {
			return badRequest("limit must be a number from 1 to 100")
		}
	}
	if v := c.QueryParam("before"); v != "" {
		if _, err := fmt.Sscan(v, &before); err != nil || before < 1 {
			return badRequest("before must be a cursor from a previous page")
		}
	}
	var f store.Filter
	switch v := c.QueryParam("mine"); v {
	case "", "0", "false":
	case "1", "true":
		p := who(c)
		if !p.SignedIn() {
			return errs.Errorf(errs.ErrUnauthenticated, "sign in to see your matches")
		}
		f.Owners = p.Owners()
	default:
		return badRequest("mine must be 1 or 0")
	}
	if v := c.QueryParam("owner"); v != "" {
		f.Owners = []string{v}
	}
	switch v := c.QueryParam("ladder"); v {
	case "", "1", "true":
	case "0", "false":
		f.NoLadder = true
	default:
		return badRequest("ladder must be 1 (ladder matches too) or 0 (none)")
	}
	if v := c.QueryParam("game"); v != "" {
		if _, err := s.deps.Games.Find(v); err != nil {
			return badRequest("game: %v", err)
		}
		f.Game = v
	}
	list, next, err := s.deps.Store.List(c.Request().Context(), f, before, limit)
	if err != nil {
		return err
	}
	out := struct {
		Matches []matchView `json:"matches"`
		Next    *int64      `json:"next"`
	}{Matches: []matchView{}}
	for _, m := range list {
		out.Matches = append(out.Matches, s.view(m))
	}
	if next > 0 {
		out.Next = &next
	}
	return c.JSON(http.StatusOK, out)
}

func (s *Server) cancelMatch(c echo.Context) error {
	m, err := s.match(c)
	if err != nil {
		return err
	}
	if err := who(c).MayChange("match "+m.ID, m.Owner); err != nil {
		return err
	}
	if !s.queue.Cancel(m.ID) {
		return conflict("match %s is already %s", m.ID, m.Status)
	}
	return c.JSON(http.StatusAccepted, map[string]string{"id": m.ID, "status": "cancelling"})
}

func (s *Server) getReplay(c echo.Context) error {
	m, err := s.match(c)
	if err != nil {
		return err
	}
	if !m.HasReplay {
		return notFound("match %s has no replay (it is %s)", m.ID, s.view(m).Status)
	}
	c.Response().Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="arena-%s-%s.json"`, m.Game, m.ID))
	return c.File(s.deps.Store.ReplayPath(m.ID))
}

// record keeps the history in step with the queue: each state change,
// and the end with its result and replay.
func (s *Server) record(u matches.Update) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	log := s.log.With(zap.String("match", u.ID))
	var err error
	switch {
	case !u.State.Final():
		err = s.deps.Store.SetStatus(ctx, u.ID, string(u.State), u.At)
	case u.State == matches.StateFinished:
		out := store.Outcome{Status: string(u.State)}
		out.Result, err = json.Marshal(u.Replay.Result)
		out.WriteReplay = func(path string) error { return matches.MoveReplay(path, u.Replay) }
		err = errors.Join(err, s.deps.Store.Finish(ctx, u.ID, out, u.At))
		log.Info("match finished", zap.Strings("winners", u.Replay.Result.Winners))
	default:
		out := store.Outcome{Status: string(u.State)}
		if u.Err != nil {
			out.Error = u.Err.Error()
		}
		err = s.deps.Store.Finish(ctx, u.ID, out, u.At)
		log.Info("match ended", zap.String("status", out.Status), zap.String("error", out.Error))
	}
	if err != nil {
		log.Error("record the match", zap.String("status", string(u.State)), zap.Error(err))
	}
	if u.State.Final() {
		s.live.Delete(u.ID)
		s.releaseImages(u.ID)
	}
	// The ladders rate their matches from what was just recorded; a
	// pushed version's check is decided.
	s.ladder.Observe(u)
	s.contests.Observe(u)
	s.observeCheck(u)
}
