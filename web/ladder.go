package web

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"arena/internal/errs"
	"arena/ladder"
	"arena/store"
)

// The ladders' API:
//
//	GET    /api/ladders                          every game's ladder
//	GET    /api/ladders/{game}                   the leaderboard
//	GET    /api/ladders/{game}/stream            the leaderboard at every change (Server-Sent Events)
//	POST   /api/ladders/{game}/entries           {"name","image"[,"team"]} → 201 (200: already registered)
//	GET    /api/ladders/{game}/entries/{id}      an entry's page
//	PATCH  /api/ladders/{game}/entries/{id}      {"active": false} pauses it, true lets it play; {"name"} renames it
//	DELETE /api/ladders/{game}/entries/{id}      takes it off the ladder (its matches stay)
//
// Registering needs a signed-in user (accounts mode), and the entry is
// theirs or their team's; changing one needs its owner, a member of its
// team, or an admin.

func (s *Server) listLadders(c echo.Context) error {
	list, err := s.p.Ladder().Summaries(c.Request().Context())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, list)
}

// board is a game's leaderboard, with each waiting or playing match's
// place in the queue.
func (s *Server) board(c echo.Context) (ladder.Board, error) {
	b, err := s.p.Ladder().Leaderboard(c.Request().Context(), c.Param("game"))
	if err != nil {
		return ladder.Board{}, err
	}
	for i, p := range b.Upcoming {
		if st, pos, ok := s.p.Queue().Status(p.MatchID); ok {
			b.Upcoming[i].Status, b.Upcoming[i].Position = string(st), pos
		}
	}
	return b, nil
}

func (s *Server) getLadder(c echo.Context) error {
	b, err := s.board(c)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, b)
}

// streamLadder sends the leaderboard as Server-Sent Events: a "board"
// event at once and at every change (at most a few a second).
func (s *Server) streamLadder(c echo.Context) error {
	b, err := s.board(c)
	if err != nil {
		return err
	}
	w := c.Response()
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	out := &sse{w: w, rc: http.NewResponseController(w)}
	ctx := c.Request().Context()
	tick := time.NewTicker(heartbeat)
	defer tick.Stop()
	for {
		changed := s.p.Ladder().Changed()
		out.value("board", -1, b)
		if out.flush() != nil {
			return nil
		}
		select {
		case <-changed:
		case <-tick.C:
			out.buf.WriteString(": keep-alive\n\n")
			if out.flush() != nil {
				return nil
			}
			continue
		case <-ctx.Done():
			return nil
		case <-s.closing:
			return nil
		}
		// Let a burst of changes gather into one board.
		select {
		case <-time.After(250 * time.Millisecond):
		case <-ctx.Done():
			return nil
		case <-s.closing:
			return nil
		}
		if b, err = s.board(c); err != nil {
			return nil
		}
	}
}

// entryRequest is the body of POST /api/ladders/{game}/entries: Team,
// when set, makes the entry a team's (the user must be a member).
type entryRequest struct {
	Name  string `json:"name"`
	Image string `json:"image"`
	Team  string `json:"team,omitempty"`
}

func decodeBody(c echo.Context, dst any, what string) error {
	dec := json.NewDecoder(c.Request().Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		var he *echo.HTTPError
		if errors.As(err, &he) {
			return err // the body limit
		}
		return badRequest("request body is not %s: %v", what, err)
	}
	if dec.More() {
		return badRequest("request body has content after the JSON object")
	}
	return nil
}

func (s *Server) registerEntry(c echo.Context) error {
	var body entryRequest
	if err := decodeBody(c, &body, `a JSON ladder entry {"name","image"}`); err != nil {
		return err
	}
	img := strings.TrimSpace(body.Image)
	if img == "" {
		return badRequest("image: empty image name")
	}
	p := who(c)
	if err := s.p.MayPlayAll(p, "image", img); err != nil {
		return err
	}
	owner := p.Name
	if body.Team != "" {
		if !slices.Contains(p.Teams, body.Team) {
			return errs.Errorf(errs.ErrDenied, "team: you are not a member of team %s", body.Team)
		}
		owner = body.Team
	}
	e, created, err := s.p.Ladder().Register(c.Request().Context(), ladder.Registration{Game: c.Param("game"), Name: body.Name, Image: img, Owner: owner, By: p.Name, Unbounded: p.Admin()})
	if err != nil {
		return err
	}
	page, err := s.p.Ladder().EntryPage(c.Request().Context(), e.Game, e.ID, 20)
	if err != nil {
		return err
	}
	c.Response().Header().Set("Location", fmt.Sprintf("/api/ladders/%s/entries/%d", e.Game, e.ID))
	if !created {
		return c.JSON(http.StatusOK, page)
	}
	return c.JSON(http.StatusCreated, page)
}

func entryID(c echo.Context) (int64, error) {
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil || id < 1 {
		return 0, notFound("no ladder entry %q", c.Param("id"))
	}
	return id, nil
}

// entryErr names the entry an error is about.
func entryErr(c echo.Context, err error) error {
	if errors.Is(err, store.ErrNoEntry) {
		return notFound("no entry %s on the %s ladder", c.Param("id"), c.Param("game"))
	}
	return err
}

func (s *Server) getEntry(c echo.Context) error {
	id, err := entryID(c)
	if err != nil {
		return err
	}
	limit := 50
	if v := c.QueryParam("matches"); v != "" {
		if limit, err = strconv.Atoi(v); err != nil || limit < 1 || limit > 500 {
			return badRequest("matches must be a number from 1 to 500")
		}
	}
	page, err := s.p.Ladder().EntryPage(c.Request().Context(), c.Param("game"), id, limit)
	if err != nil {
		return entryErr(c, err)
	}
	return c.JSON(http.StatusOK, page)
}

// patchRequest is the body of PATCH /api/ladders/{game}/entries/{id}.
type patchRequest struct {
	Active *bool   `json:"active"`
	Name   *string `json:"name"`
}

// mayChangeEntry checks that the visitor may change an entry: its
// owner, a member of its team, or an admin.
func (s *Server) mayChangeEntry(c echo.Context, id int64) error {
	e, err := s.p.Ladder().Entry(c.Request().Context(), c.Param("game"), id)
	if err != nil {
		return entryErr(c, err)
	}
	return who(c).MayChange(fmt.Sprintf("entry %d (%s)", e.ID, e.Name), e.Owner)
}

func (s *Server) patchEntry(c echo.Context) error {
	id, err := entryID(c)
	if err != nil {
		return err
	}
	var body patchRequest
	if err := decodeBody(c, &body, `a JSON change of a ladder entry {"active": true or false} or {"name": "…"}`); err != nil {
		return err
	}
	if body.Active == nil && body.Name == nil {
		return badRequest(`send {"active": false} to pause the entry, true to let it play, or {"name": "…"} to rename it`)
	}
	if err := s.mayChangeEntry(c, id); err != nil {
		return err
	}
	if body.Name != nil {
		if _, err := s.p.Ladder().Rename(c.Request().Context(), c.Param("game"), id, *body.Name); err != nil {
			return entryErr(c, err)
		}
	}
	if body.Active != nil {
		if _, err := s.p.Ladder().SetActive(c.Request().Context(), c.Param("game"), id, *body.Active); err != nil {
			return entryErr(c, err)
		}
	}
	page, err := s.p.Ladder().EntryPage(c.Request().Context(), c.Param("game"), id, 20)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, page)
}

func (s *Server) deleteEntry(c echo.Context) error {
	id, err := entryID(c)
	if err != nil {
		return err
	}
	if err := s.mayChangeEntry(c, id); err != nil {
		return err
	}
	e, err := s.p.Ladder().Remove(c.Request().Context(), c.Param("game"), id)
	if err != nil {
		return entryErr(c, err)
	}
	return c.JSON(http.StatusOK, map[string]any{"id": e.ID, "name": e.Name, "state": e.State})
}
