package web

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"arena/ladder"
	"arena/matches"
	"arena/platform"
	"arena/store"
)

// The matches' API: POST /api/matches starts one (the platform's
// StartMatch), GET lists them and shows one, DELETE cancels it,
// .../replay serves its replay.

// createRequest is the body of POST /api/matches.
type createRequest struct {
	Game     string          `json:"game"`
	Map      string          `json:"map"`
	Seed     *seedValue      `json:"seed"`
	Bots     []botField      `json:"bots"`
	Settings json.RawMessage `json:"settings"`
}

// botField is a seat of a match request: a bot's image name, or
// {"human": true} for a seat the visitor plays.
type botField struct {
	ref   string
	human bool
}

func (b *botField) UnmarshalJSON(data []byte) error {
	if len(data) > 0 && data[0] == '{' {
		var seat struct {
			Human bool `json:"human"`
		}
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&seat); err != nil || !seat.Human {
			return &badBot{string(data)}
		}
		b.human = true
		return nil
	}
	if err := json.Unmarshal(data, &b.ref); err != nil {
		return &badBot{string(data)}
	}
	return nil
}

// badBot is a seat that is neither an image name nor a person's.
type badBot struct{ got string }

func (e *badBot) Error() string {
	return fmt.Sprintf(`bots: a seat is an image name ("NAME/bot:v1") or {"human": true} for a seat you play, not %s`, e.got)
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
	// ReplayExpired says its replay was removed after ARENA_KEEP_REPLAYS
	// (its result stays).
	ReplayExpired bool `json:"replay_expired,omitempty"`
	// Kind is what the match is for: hand, challenge, ladder, check,
	// practice, gate or contest.
	Kind string `json:"kind,omitempty"`
	// Owner is who started the match (none for a ladder's).
	Owner string `json:"owner,omitempty"`
	// Ladder names the ladder entries by seat, for a ladder's match.
	Ladder []ladder.Entrant `json:"ladder,omitempty"`
}

// view is a match as the API shows it.
func view(mi platform.MatchInfo) matchView {
	m := mi.Match
	v := matchView{ID: m.ID, Status: m.Status, Position: mi.Position, Game: m.Game, Map: m.Map, Seed: m.Seed, SeedText: strconv.FormatUint(m.Seed, 10), Bots: m.Bots,
		Settings: m.Settings, CreatedAt: m.CreatedAt, Error: m.Error, Result: m.Result, Owner: m.Owner,
		ReplayExpired: m.ReplayExpired, Kind: m.Kind, Ladder: mi.Ladder}
	if !m.StartedAt.IsZero() {
		v.StartedAt = &m.StartedAt
	}
	if !m.FinishedAt.IsZero() {
		v.FinishedAt = &m.FinishedAt
	}
	if m.HasReplay {
		v.Replay = "/api/matches/" + m.ID + "/replay"
	}
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
		var badSeat *badBot
		if errors.As(err, &badSeat) {
			return badRequest("%v", badSeat)
		}
		return badRequest("request body is not a JSON match request: %v", err)
	}
	if dec.More() {
		return badRequest("request body has content after the JSON object")
	}
	var seed *uint64
	if body.Seed != nil {
		v := uint64(*body.Seed)
		seed = &v
	}
	bots := make([]string, len(body.Bots))
	var people []int
	for i, b := range body.Bots {
		bots[i] = b.ref
		if b.human {
			people = append(people, i)
		}
	}
	ctx := c.Request().Context()
	rec, warnings, err := s.svc.Matches.Start(ctx, who(c), platform.MatchRequest{Game: body.Game, Map: body.Map, Seed: seed, Bots: bots, People: people, Settings: body.Settings})
	if err != nil {
		return err
	}
	m, err := s.svc.Matches.Get(ctx, rec.ID)
	if err != nil {
		return err
	}
	c.Response().Header().Set("Location", "/api/matches/"+rec.ID)
	return c.JSON(http.StatusCreated, struct {
		matchView
		Warnings []string `json:"warnings,omitempty"`
	}{view(m), warnings})
}

func (s *Server) getMatch(c echo.Context) error {
	m, err := s.svc.Matches.Get(c.Request().Context(), c.Param("id"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, view(m))
}

// listMatches is GET /api/matches: newest first, filtered by owner
// (owner=NAME, or mine=1 for the visitor's own and their teams'),
// ladder=0 (no ladder matches) and game=G.
func (s *Server) listMatches(c echo.Context) error {
	q := platform.ListQuery{Owner: c.QueryParam("owner"), Game: c.QueryParam("game")}
	if v := c.QueryParam("limit"); v != "" {
		if _, err := fmt.Sscan(v, &q.Limit); err != nil || q.Limit < 1 {
			return badRequest("limit must be a number from 1 to 100")
		}
	}
	if v := c.QueryParam("before"); v != "" {
		if _, err := fmt.Sscan(v, &q.Before); err != nil || q.Before < 1 {
			return badRequest("before must be a cursor from a previous page")
		}
	}
	switch v := c.QueryParam("mine"); v {
	case "", "0", "false":
	case "1", "true":
		q.Mine = true
	default:
		return badRequest("mine must be 1 or 0")
	}
	switch v := c.QueryParam("ladder"); v {
	case "", "1", "true":
	case "0", "false":
		q.NoLadder = true
	default:
		return badRequest("ladder must be 1 (ladder matches too) or 0 (none)")
	}
	list, next, err := s.svc.Matches.List(c.Request().Context(), who(c), q)
	if err != nil {
		return err
	}
	out := struct {
		Matches []matchView `json:"matches"`
		Next    *int64      `json:"next"`
	}{Matches: []matchView{}}
	for _, m := range list {
		out.Matches = append(out.Matches, view(m))
	}
	if next > 0 {
		out.Next = &next
	}
	return c.JSON(http.StatusOK, out)
}

func (s *Server) cancelMatch(c echo.Context) error {
	id := c.Param("id")
	if err := s.svc.Matches.Cancel(c.Request().Context(), who(c), id); err != nil {
		return err
	}
	return c.JSON(http.StatusAccepted, map[string]string{"id": id, "status": "cancelling"})
}

func (s *Server) getReplay(c echo.Context) error {
	m, f, err := s.svc.Matches.Replay(c.Request().Context(), c.Param("id"))
	if err != nil {
		return err
	}
	defer f.Close()
	h := c.Response().Header()
	h.Set("Content-Disposition", fmt.Sprintf(`attachment; filename="arena-%s-%s.json"`, m.Game, m.ID))
	h.Set(echo.HeaderContentType, echo.MIMEApplicationJSON)
	h.Add(echo.HeaderVary, echo.HeaderAcceptEncoding)
	// Kept compressed, sent as JSON: gzipped on the way where the client
	// takes it.
	if !acceptsGzip(c.Request().Header.Get(echo.HeaderAcceptEncoding)) {
		c.Response().WriteHeader(http.StatusOK)
		_, err = io.Copy(c.Response(), f)
		return err
	}
	h.Set(echo.HeaderContentEncoding, "gzip")
	c.Response().WriteHeader(http.StatusOK)
	gz, _ := gzip.NewWriterLevel(c.Response(), gzip.BestSpeed)
	if _, err := io.Copy(gz, f); err != nil {
		return err
	}
	return gz.Close()
}

// acceptsGzip reports whether an Accept-Encoding header takes gzip.
func acceptsGzip(accept string) bool {
	for _, part := range strings.Split(accept, ",") {
		name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if !strings.EqualFold(strings.TrimSpace(name), "gzip") {
			continue
		}
		q := strings.TrimSpace(params)
		return !(strings.HasPrefix(q, "q=0") && strings.Trim(strings.TrimPrefix(q, "q="), "0.") == "")
	}
	return false
}
