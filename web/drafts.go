package web

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"arena/platform"
)

// Drafts, the bots people write in the page (platform/drafts.go):
//
//	GET    /api/kits                   the kits' starters, by game
//	GET    /api/drafts                 the visitor's drafts and their teams'
//	POST   /api/drafts {"name","game","kit"[,"team"]}  → 201, the kit's starter
//	GET    /api/drafts/ID              its files and the saves kept
//	PUT    /api/drafts/ID {"base","files"[,"main"]}    → the next version;
//	       409 {"error","version"} when base is not the newest
//	GET    /api/drafts/ID/saves/V      a save's files, to restore
//	PATCH  /api/drafts/ID {"name"}     rename
//	DELETE /api/drafts/ID              → 204, its saves with it
//
// A save's body is the whole project, bounded by the draft limits' bytes
// (twice, for JSON's escapes) rather than the API's own bound on bodies.

// isDraftSave says whether a request is a draft's save (PUT
// /api/drafts/ID), whose body is bounded by the drafts' own limit.
func isDraftSave(c echo.Context) bool {
	r := c.Request()
	return r.Method == http.MethodPut && strings.HasPrefix(r.URL.Path, "/api/drafts/")
}

// draftID is the route's draft id; a malformed one names no draft.
func draftID(c echo.Context) (int64, error) {
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil {
		return 0, notFound("no draft %q", c.Param("id"))
	}
	return id, nil
}

func (s *Server) listKits(c echo.Context) error {
	return c.JSON(http.StatusOK, s.svc.Drafts.Kits())
}

func (s *Server) listDrafts(c echo.Context) error {
	drafts, err := s.svc.Drafts.List(c.Request().Context(), who(c))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"drafts": drafts})
}

func (s *Server) createDraft(c echo.Context) error {
	var body platform.DraftRequest
	if err := decodeBody(c, &body, `a JSON draft {"name","game","kit"[,"team"]}`); err != nil {
		return err
	}
	d, err := s.svc.Drafts.Create(c.Request().Context(), who(c), body)
	if err != nil {
		return err
	}
	c.Response().Header().Set("Location", fmt.Sprintf("/api/drafts/%d", d.ID))
	return c.JSON(http.StatusCreated, d)
}

func (s *Server) getDraft(c echo.Context) error {
	id, err := draftID(c)
	if err != nil {
		return err
	}
	d, err := s.svc.Drafts.Draft(c.Request().Context(), who(c), id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, d)
}

// saveDraft is PUT /api/drafts/ID: a save refused as changed elsewhere
// answers 409 with the newest version, for the page to offer to reload
// it or to keep its own (a save on that version).
func (s *Server) saveDraft(c echo.Context) error {
	id, err := draftID(c)
	if err != nil {
		return err
	}
	limit := 2*s.svc.Drafts.FileLimits().Bytes + 1<<20
	// The saves read at once hold at most twice the largest save between
	// them (Server.saving): a flood of large saves waits, it does not take
	// the server's memory.
	weight := limit
	if n := c.Request().ContentLength; n >= 0 && n < limit {
		weight = n + 1
	}
	if err := s.saving.Acquire(c.Request().Context(), weight); err != nil {
		return err
	}
	defer s.saving.Release(weight)
	data, err := io.ReadAll(io.LimitReader(c.Request().Body, limit+1))
	if err != nil {
		return badRequest("reading the save: %v", err)
	}
	if int64(len(data)) > limit {
		return &apiError{http.StatusRequestEntityTooLarge, fmt.Sprintf("the save is larger than %d bytes", limit)}
	}
	// JSON's decoder would take bytes that are not UTF-8 for U+FFFD.
	if !utf8.Valid(data) {
		return badRequest("the save is not UTF-8: a draft's files are text (send a binary file with arena submit)")
	}
	c.Request().Body = io.NopCloser(bytes.NewReader(data))
	var body platform.DraftSaveRequest
	if err := decodeBody(c, &body, `a JSON save {"base","files"[,"main"]}`); err != nil {
		return err
	}
	d, err := s.svc.Drafts.Save(c.Request().Context(), who(c), id, body)
	if ce := new(platform.ChangedElsewhere); errors.As(err, &ce) {
		return c.JSON(http.StatusConflict, map[string]any{"error": ce.Error(), "version": ce.Version})
	}
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, d)
}

func (s *Server) getDraftSave(c echo.Context) error {
	id, err := draftID(c)
	if err != nil {
		return err
	}
	version, err := strconv.ParseInt(c.Param("version"), 10, 64)
	if err != nil {
		return notFound("draft %d has no version %q", id, c.Param("version"))
	}
	v, err := s.svc.Drafts.Version(c.Request().Context(), who(c), id, version)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, v)
}

func (s *Server) renameDraft(c echo.Context) error {
	id, err := draftID(c)
	if err != nil {
		return err
	}
	var body struct {
		Name string `json:"name"`
	}
	if err := decodeBody(c, &body, `a JSON rename {"name"}`); err != nil {
		return err
	}
	d, err := s.svc.Drafts.Rename(c.Request().Context(), who(c), id, body.Name)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, d)
}

func (s *Server) deleteDraft(c echo.Context) error {
	id, err := draftID(c)
	if err != nil {
		return err
	}
	if err := s.svc.Drafts.Delete(c.Request().Context(), who(c), id); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}
