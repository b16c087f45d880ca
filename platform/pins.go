package platform

import (
	"context"

	"arena/internal/errs"
	"arena/judger"
	"arena/matches"
)

// Pins: a match is pinned to the images it plays, by id, once, when the
// server makes it (submit): on this host or a worker's, and after a
// replayed delivery, it plays the images as they were then. A pushed
// bot's version is pulled from the registry by its digest first; the
// orchestrator then pins each bot's reference to its id on this engine
// (orchestrator.Pin); a logic named as the game (logic:IMAGE) is pinned
// here with its labels checked. The dispatcher takes only pinned
// matches. (A registered game's logic is pinned when it is offered, as
// part of the game: games.go.) Ladder and contest entries are pinned to
// their versions by imageID.

// pin pins a match's bots and its logic.
func (s *Platform) pin(ctx context.Context, req matches.Request) (matches.Request, error) {
	ids := make([]string, len(req.Images))
	if len(req.ImageIDs) == len(req.Images) {
		copy(ids, req.ImageIDs)
	}
	pushed := false
	for i, ref := range req.Images {
		if ids[i] != "" || req.People[i] != nil {
			continue
		}
		_, id, ok, err := s.pushedVersion(ctx, ref)
		if err != nil {
			return req, err
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
		return req, err
	}
	if lg, ok := req.Game.(*judger.Game); ok {
		if req.Game, err = s.pinLogic(ctx, lg); err != nil {
			return req, err
		}
	}
	return req, nil
}

// pinLogic pins a logic game's logic to its image on the engine (never
// pulled for a match), its labels checked before anything starts.
func (s *Platform) pinLogic(ctx context.Context, g *judger.Game) (*judger.Game, error) {
	ref, id := g.HostImage()
	if id != "" {
		return g, nil
	}
	img, err := s.deps.Orchestrator.Image(ctx, ref)
	if err != nil {
		return nil, errs.Errorf(errs.ErrInvalid, "game %s: %v", g.Name(), err)
	}
	if _, err := judger.CheckLabelled(img.Labels); err != nil {
		return nil, errs.Errorf(errs.ErrInvalid, "game %s: %v", g.Name(), err)
	}
	if err := g.CheckHost(img.Labels); err != nil {
		return nil, errs.Errorf(errs.ErrInvalid, "game %s: %v", g.Name(), err)
	}
	return g.Pinned(img.ID), nil
}

// pushedVersion is the version of the pushed tag a bot's reference names
// (ok false when it names none), pulled onto the engine: its reference
// there and its id.
func (s *Platform) pushedVersion(ctx context.Context, ref string) (pulled, id string, ok bool, err error) {
	t, ok, err := s.pushedTag(ctx, ref)
	if err != nil || !ok {
		return "", "", false, err
	}
	pulled, id, err = s.pullVersion(ctx, t.Repository, t.Digest)
	return pulled, id, err == nil, err
}

// imageID is the id of the image a bot's reference names: the version of
// its pushed tag (pulled), or the engine's image of that name.
func (s *Platform) imageID(ctx context.Context, ref string) (string, error) {
	if _, id, ok, err := s.pushedVersion(ctx, ref); err != nil || ok {
		return id, err
	}
	img, err := s.deps.Orchestrator.Image(ctx, ref)
	return img.ID, err
}
