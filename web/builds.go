package web

import (
	"fmt"
	"io"
	"mime"
	"net/http"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"

	"arena/accounts"
	"arena/platform"
	"arena/sourcebuild"
)

// Bots built from source (sourcebuild/), for people without Docker:
//
//	POST /api/builds?repository=NAME/bot&tag=v1&game=tanks[&kit=python][&bot=bot.py][&authors=…]
//	     the body a .zip or .tar.gz of the bot's folder → 202 and the build
//	GET  /api/builds/ID   the build: its state (queued, building, pushed,
//	     failed), why it failed, its log so far, and the reference pushed
//
// A build's image is pushed to the registry as its owner would push it
// (their namespaces, their quotas), and is then checked as any push is;
// the owner is read afresh when the build starts and before it pushes
// (one who left the team, or whose account was disabled, pushes
// nothing). An upload is refused (one at a time, a full line) before its
// body is read.
// Builds run on the server's engine, one at a time, and are remembered
// in memory (the last 200): a restart forgets them, not what they pushed.

// buildUploadTypes are the Content-Types an upload may be sent with:
// none is one a form of another site can send without asking first.
var buildUploadTypes = []string{"application/zip", "application/gzip", "application/x-gzip", "application/octet-stream"}

func (s *Server) createBuild(c echo.Context) error {
	if !s.svc.Registry.Builds() {
		return notFound("this server builds no uploads (it needs its registry, ARENA_REGISTRY=on)")
	}
	p := who(c)
	q := c.QueryParams()
	req := platform.BuildRequest{Repository: strings.TrimSpace(q.Get("repository")), Tag: strings.TrimSpace(q.Get("tag")), Game: strings.TrimSpace(q.Get("game")),
		Kit: q.Get("kit"), Main: q.Get("bot"), Authors: q.Get("authors")}
	if err := s.svc.Registry.CheckBuild(p, &req); err != nil {
		return err
	}
	mt, _, _ := mime.ParseMediaType(c.Request().Header.Get("Content-Type"))
	if !slices.Contains(buildUploadTypes, mt) {
		return &apiError{http.StatusUnsupportedMediaType, "the body must be the bot's folder as a .zip or .tar.gz, sent with Content-Type: " + strings.Join(buildUploadTypes, ", ")}
	}
	// One at a time, and the line's room, before the body is read: a
	// place is held while it is.
	if err := s.svc.Registry.HoldBuildPlace(p.Name, req.Kit); err != nil {
		return err
	}
	queued := false
	defer func() {
		if !queued {
			s.svc.Registry.ReleaseBuildPlace(p.Name)
		}
	}()
	max := s.svc.Registry.MaxUpload()
	data, err := io.ReadAll(io.LimitReader(c.Request().Body, max+1))
	if err != nil {
		return badRequest("reading the upload: %v", err)
	}
	if int64(len(data)) > max {
		return &apiError{http.StatusRequestEntityTooLarge, fmt.Sprintf("the upload is larger than %d bytes", max)}
	}
	src, err := sourcebuild.Read(data, sourcebuild.DefaultLimits)
	if err != nil {
		return badRequest("%v", err)
	}
	var epoch int64
	if p.Via == accounts.ViaSession {
		epoch = s.sessions.GetInt64(c.Request().Context(), sessionEpoch)
	}
	queued = true
	b, err := s.svc.Registry.QueueBuild(p, epoch, req, src)
	if err != nil {
		return err
	}
	c.Response().Header().Set("Location", "/api/builds/"+b.ID)
	return c.JSON(http.StatusAccepted, b)
}

func (s *Server) getBuild(c echo.Context) error {
	b, err := s.svc.Registry.BuildOf(who(c), c.Param("id"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, b)
}
