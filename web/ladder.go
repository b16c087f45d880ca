package web

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"arena/platform"

	"github.com/labstack/echo/v4"
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
	list, err := s.svc.Ladders.Summaries(c.Request().Context())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, list)
}

func (s *Server) getLadder(c echo.Context) error {
	b, err := s.svc.Ladders.Board(c.Request().Context(), c.Param("game"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, b)
}

// streamLadder sends the leaderboard as Server-Sent Events: a "board"
// event at once and at every change (at most a few a second).
func (s *Server) streamLadder(c echo.Context) error {
	ctx := c.Request().Context()
	b, err := s.svc.Ladders.Board(ctx, c.Param("game"))
	if err != nil {
		return err
	}
	out := startSSE(c)
	tick := time.NewTicker(heartbeat)
	defer tick.Stop()
	for {
		changed := s.svc.Ladders.Changed()
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
		if b, err = s.svc.Ladders.Board(ctx, c.Param("game")); err != nil {
			return nil
		}
	}
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
	var body platform.EntryRequest
	if err := decodeBody(c, &body, `a JSON ladder entry {"name","image"}`); err != nil {
		return err
	}
	page, created, err := s.svc.Ladders.Register(c.Request().Context(), who(c), c.Param("game"), body)
	if err != nil {
		return err
	}
	c.Response().Header().Set("Location", fmt.Sprintf("/api/ladders/%s/entries/%d", page.Game, page.ID))
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

func (s *Server) getEntry(c echo.Context) error {
	id, err := entryID(c)
	if err != nil {
		return err
	}
	limit := 50
	if v := c.QueryParam("matches"); v != "" {
		if limit, err = strconv.Atoi(v); err != nil {
			return badRequest("matches must be a number from 1 to 500")
		}
	}
	page, err := s.svc.Ladders.Entry(c.Request().Context(), c.Param("game"), id, limit)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, page)
}

func (s *Server) patchEntry(c echo.Context) error {
	id, err := entryID(c)
	if err != nil {
		return err
	}
	var body platform.EntryChange
	if err := decodeBody(c, &body, `a JSON change of a ladder entry {"active": true or false} or {"name": "…"}`); err != nil {
		return err
	}
	page, err := s.svc.Ladders.Change(c.Request().Context(), who(c), c.Param("game"), id, body)
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
	e, err := s.svc.Ladders.Remove(c.Request().Context(), who(c), c.Param("game"), id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"id": e.ID, "name": e.Name, "state": e.State})
}
