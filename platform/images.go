package platform

import (
	"context"
	"errors"
	"slices"
	"time"

	"arena/accounts"
	"arena/imageref"
	"arena/internal/errs"
	"arena/store"
)

// The images one may play, as a bot field suggests them.

// ImageInfo is an image one may play: on the engine, or pushed here.
type ImageInfo struct {
	Image     string    `json:"image"`
	ID        string    `json:"id"`
	CreatedAt time.Time `json:"created_at"`
	// Game is the image's io.arena.game label; empty for an unlabelled
	// image (offered after the game's own).
	Game string `json:"game,omitempty"`
}

// Images are the images that fit a game and that p may play
// (accounts.Principal.MayPlay: a player's own and their teams', the
// example bots, what ARENA_ALLOW admits), never every image on the
// engine: the game's own (labelled) first, then the unlabelled, each
// newest first; p's pushed versions too (not on the engine yet: a match
// pulls them), but those their check rejected.
func (ms *Matches) Images(ctx context.Context, p accounts.Principal, game string) ([]ImageInfo, error) {
	s := ms.p
	if game == "" {
		return nil, errs.New(errs.ErrInvalid, "game: missing (e.g. /api/images?game=tanks)")
	}
	if _, err := s.deps.Games.Find(game); err != nil {
		return nil, errs.Errorf(errs.ErrInvalid, "game: %v", err)
	}
	imgs, err := s.deps.Orchestrator.Images(ctx, game)
	if errors.Is(err, imageref.ErrNoList) {
		imgs = nil
	} else if err != nil {
		return nil, errs.Errorf(errs.ErrUnavailable, "cannot list the local images: %v", err)
	}
	out := []ImageInfo{}
	var tags []store.Tag
	if s.registry != nil && p.SignedIn() {
		if tags, err = s.deps.Store.Tags(ctx, p.Owners()...); err != nil {
			return nil, err
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
		if repo, tag, ok := s.pushedName(img.Ref); ok && (rejected[repo+":"+tag] || isRunRepo(repo)) {
			continue
		}
		if p.MayPlay(img.Ref, s.images) == nil {
			out = append(out, ImageInfo{Image: img.Ref, ID: img.ID, CreatedAt: img.Created, Game: img.Game})
			seen[img.Ref] = true
		}
	}
	if len(tags) == 0 {
		return out, nil
	}
	for _, t := range tags {
		ref := t.Repository + ":" + t.Tag
		if !seen[ref] && (t.Game == "" || t.Game == game) && t.State != store.TagRejected && t.State != store.TagRun {
			out = append(out, ImageInfo{Image: ref, ID: t.ImageID, CreatedAt: t.PushedAt, Game: t.Game})
			seen[ref] = true
		}
	}
	slices.SortStableFunc(out, func(a, b ImageInfo) int {
		if (a.Game == game) != (b.Game == game) {
			if a.Game == game {
				return -1
			}
			return 1
		}
		return b.CreatedAt.Compare(a.CreatedAt)
	})
	return out, nil
}
