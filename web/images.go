package web

import (
	"errors"
	"net/http"
	"slices"
	"time"

	"github.com/labstack/echo/v4"

	"arena/imageref"
	"arena/internal/errs"
	"arena/store"
)

// imageInfo is a local image as GET /api/images suggests it for a bot
// field.
type imageInfo struct {
	Image     string    `json:"image"`
	ID        string    `json:"id"`
	CreatedAt time.Time `json:"created_at"`
	// Game is the image's io.arena.game label; empty for an unlabelled
	// image (offered after the game's own).
	Game string `json:"game,omitempty"`
}

// listImages serves GET /api/images?game=G: the local images that fit the
// game, its own (labelled) first, then the unlabelled, each newest first;
// only those the visitor may play (accounts.Principal.MayPlay: a
// player's own and their teams', the example bots, what ARENA_ALLOW
// admits), never every image on the engine.
func (s *Server) listImages(c echo.Context) error {
	name := c.QueryParam("game")
	if name == "" {
		return badRequest("game: missing (e.g. /api/images?game=tanks)")
	}
	if _, err := s.p.Games().Find(name); err != nil {
		return badRequest("game: %v", err)
	}
	imgs, err := s.p.Orchestrator().Images(c.Request().Context(), name)
	if errors.Is(err, imageref.ErrNoList) {
		imgs = nil
	} else if err != nil {
		return errs.Errorf(errs.ErrUnavailable, "cannot list the local images: %v", err)
	}
	out := []imageInfo{}
	p := who(c)
	// The visitor's pushed tags: those their check rejected play nothing,
	// even where a copy of them is on the engine.
	var tags []store.Tag
	if s.p.Registry() != nil && p.SignedIn() {
		if tags, err = s.deps.Store.Tags(c.Request().Context(), p.Owners()...); err != nil {
			return err
		}
	}
	rejected := map[string]bool{}
	for _, t := range tags {
		if t.State == store.TagRejected {
			rejected[t.Repository+":"+t.Tag] = true
		}
	}
	seen := map[string]bool{}
	for _, img := range imgs {
		// A copy named with this server's address (tagged to be pushed
		// here) is the version pushed.
		if repo, tag, ok := s.p.PushedName(img.Ref); ok && rejected[repo+":"+tag] {
			continue
		}
		if p.MayPlay(img.Ref, s.p.Images()) == nil {
			out = append(out, imageInfo{Image: img.Ref, ID: img.ID, CreatedAt: img.Created, Game: img.Game})
			seen[img.Ref] = true
		}
	}
	// The visitor's images pushed to the registry (not on the engine yet:
	// a match pulls them), the game's own and the unlabelled, but those
	// their check rejected (they play nothing).
	if len(tags) > 0 {
		for _, t := range tags {
			ref := t.Repository + ":" + t.Tag
			if !seen[ref] && (t.Game == "" || t.Game == name) && t.State != store.TagRejected {
				out = append(out, imageInfo{Image: ref, ID: t.ImageID, CreatedAt: t.PushedAt, Game: t.Game})
				seen[ref] = true
			}
		}
		slices.SortStableFunc(out, func(a, b imageInfo) int {
			if (a.Game == name) != (b.Game == name) {
				if a.Game == name {
					return -1
				}
				return 1
			}
			return b.CreatedAt.Compare(a.CreatedAt)
		})
	}
	return c.JSON(http.StatusOK, map[string]any{"images": out})
}
