package web

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"arena/internal/errs"
)

// The registry's side of the server (registry/ is the registry itself):
//
//	/v2/…                                  the OCI registry (docker login, push, pull)
//	GET    /api/registry                   the visitor's images, usage, quotas and the docker commands
//	DELETE /api/registry/repositories/NAME a repository (its owner, or an admin)
//	POST   /api/registry/gc                a garbage collection now (admins)
//
// A pushed image is a bot: a match or a ladder entry names it as
// NAME/bot:tag (the platform's registry.go, checks.go and pulled.go say
// how it is checked and held on the engine).

// serveRegistry answers /v2/ itself, before the page's middleware (a
// push is not JSON, nor a page of this origin), with the host allow-list
// and a deadline of its own.
func (s *Server) serveRegistry(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		p := c.Request().URL.Path
		if s.deps.Registry == nil || (p != "/v2" && !strings.HasPrefix(p, "/v2/")) {
			return next(c)
		}
		if !s.svc.Site.ServesHost(c.Request().Host) {
			return errs.Errorf(errs.ErrDenied, "host %q is not one this server answers to (ARENA_HOSTS)", c.Request().Host)
		}
		if p == "/v2" {
			c.Request().URL.Path = "/v2/"
		}
		rc := http.NewResponseController(c.Response())
		rc.SetReadDeadline(time.Now().Add(s.deps.RegistryDeadline))
		rc.SetWriteDeadline(time.Now().Add(s.deps.RegistryDeadline))
		s.deps.Registry.ServeHTTP(c.Response(), c.Request())
		return nil
	}
}

// registryView is GET /api/registry.
type registryView struct {
	// Host is the registry's address as the visitor reaches it.
	Host   string          `json:"host"`
	Images []registryImage `json:"images"`
	Usage  map[string]any  `json:"usage"`
	// Commands are the lines a user types to push a bot.
	Commands []string `json:"commands"`
}

type registryImage struct {
	Reference  string    `json:"reference"`
	Repository string    `json:"repository"`
	Tag        string    `json:"tag"`
	Owner      string    `json:"owner"`
	Digest     string    `json:"digest"`
	ImageID    string    `json:"image_id"`
	Size       int64     `json:"size"`
	Game       string    `json:"game,omitempty"`
	Authors    string    `json:"authors,omitempty"`
	PushedBy   string    `json:"pushed_by"`
	PushedAt   time.Time `json:"pushed_at"`
	// The version's check before it plays: pending, ready or rejected;
	// its match, and why it was rejected (or is still pending), with what
	// the bot wrote to stderr.
	State      string     `json:"state"`
	CheckMatch string     `json:"check_match,omitempty"`
	Reason     string     `json:"reason,omitempty"`
	Stderr     string     `json:"stderr,omitempty"`
	CheckedAt  *time.Time `json:"checked_at,omitempty"`
}

func (s *Server) getRegistry(c echo.Context) error {
	p := who(c)
	r, err := s.svc.Registry.View(c.Request().Context(), p, c.QueryParam("all") == "1")
	if err != nil {
		return err
	}
	// The commands name the registry as the visitor reaches the page.
	v := registryView{Host: c.Request().Host, Images: []registryImage{}, Usage: map[string]any{}}
	for _, t := range r.Images {
		v.Images = append(v.Images, registryImage{Reference: t.Repository + ":" + t.Tag, Repository: t.Repository, Tag: t.Tag, Owner: t.Owner,
			Digest: t.Digest, ImageID: t.ImageID, Size: t.Size, Game: t.Game, Authors: t.Authors, PushedBy: t.PushedBy, PushedAt: t.PushedAt,
			State: t.State, CheckMatch: t.CheckMatch, Reason: t.Reason, Stderr: t.Stderr})
		if !t.CheckedAt.IsZero() {
			v.Images[len(v.Images)-1].CheckedAt = &t.CheckedAt
		}
	}
	for o, u := range r.Usage {
		v.Usage[o] = u
	}
	host, name := v.Host, p.Name
	v.Commands = []string{
		fmt.Sprintf("docker login %s -u %s    # the password: %s", host, name, r.Password),
		fmt.Sprintf("docker tag my-bot %s/%s/my-bot:v1", host, name),
		fmt.Sprintf("docker push %s/%s/my-bot:v1", host, name),
		fmt.Sprintf("# then play it as %s/my-bot:v1", name),
	}
	return c.JSON(http.StatusOK, v)
}

// deleteRepository is DELETE /api/registry/repositories/NAME: every tag
// of it goes (its blobs at the next collection); its owner, a member of
// its team, or an admin.
func (s *Server) deleteRepository(c echo.Context) error {
	if err := s.svc.Registry.DeleteRepository(c.Request().Context(), who(c), strings.Trim(c.Param("*"), "/")); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// collect is POST /api/registry/gc (admins).
func (s *Server) collect(c echo.Context) error {
	took, err := s.svc.Registry.Collect(c.Request().Context(), who(c))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"took_ms": took.Milliseconds()})
}
