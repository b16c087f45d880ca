package platform

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"go.uber.org/zap"

	"arena/accounts"
	"arena/engine"
	"arena/imageref"
	"arena/internal/errs"
	"arena/judger"
	"arena/matches"
	"arena/store"
)

// Matches: Start is a match someone starts, submit the one way into
// the queue (for the ladders', the contests' and the checks' matches
// too), record keeps the store in step with the queue and tells the
// ladders, the contests and the checks what ended.

// gameOf is the game a match request names: one on offer, or
// "logic:IMAGE", the game of a logic image for a match of players bots
// (see package judger), which the visitor may play as they may a bot
// (the image runs in the bots' sandbox; its labels are checked when the
// match starts).
func (s *Platform) gameOf(ctx context.Context, p accounts.Principal, name string, players int) (engine.Game, error) {
	ref, ok := strings.CutPrefix(name, judger.Prefix)
	if !ok {
		g, err := s.deps.Games.Find(name)
		if err != nil {
			return nil, errs.Errorf(errs.ErrInvalid, "game: %v (or logic:IMAGE, a logic image)", err)
		}
		return g, nil
	}
	if err := imageref.Check(ref); err != nil {
		return nil, errs.Errorf(errs.ErrInvalid, "game %s: %v", name, err)
	}
	if err := s.mayPlayAll(p, "game", ref); err != nil {
		return nil, err
	}
	if err := s.pushedState(ctx, ref, "play it as a game"); err != nil {
		return nil, err
	}
	// A pushed logic plays the version its tag names now, by digest.
	if pulled, _, ok, err := s.pushedVersion(ctx, ref); err != nil {
		return nil, err
	} else if ok {
		ref = pulled
	}
	// Pinned, and its labels checked, with the bots (pin).
	return judger.Named(name, ref, max(1, players), "").WithLimits(s.cfg.LogicLimits), nil
}

// submit checks a match request, records it with insert and queues it:
// the one way in for matches started by hand and the ladders' alike. A
// match the queue refuses is recorded as failed.
func (s *Platform) submit(ctx context.Context, req matches.Request, insert func(context.Context, store.Match) error) (store.Match, error) {
	req, err := s.pin(ctx, req)
	if err != nil {
		return store.Match{}, err
	}
	if err := s.holdPeople(req); err != nil {
		return store.Match{}, err
	}
	s.holdImages(req.MatchID, req.ImageIDs)
	rec := store.Match{ID: req.MatchID, Status: string(matches.StateQueued), Game: req.Game.Name(), Map: req.Map.Info().Name, Seed: req.Seed, Bots: req.Images, Settings: req.Settings, CreatedAt: s.now(), Owner: req.Owner, Kind: string(req.Kind.OrHand())}
	if err := insert(ctx, rec); err != nil {
		s.endPeople(rec.ID)
		s.releaseImages(rec.ID)
		return store.Match{}, err
	}
	s.live.Store(rec.ID, rec)
	pos, err := s.queue.Enqueue(req)
	if err != nil {
		s.live.Delete(rec.ID)
		s.endPeople(rec.ID)
		s.releaseImages(rec.ID)
		if ferr := s.deps.Store.Finish(context.WithoutCancel(ctx), rec.ID, store.Outcome{Status: string(matches.StateFailed), Error: err.Error()}, s.now()); ferr != nil {
			s.log.Error("record a match the queue refused", zap.String("match", rec.ID), zap.Error(ferr))
		}
		return store.Match{}, err
	}
	s.log.Info("match queued", zap.String("match", rec.ID), zap.String("owner", req.Owner), zap.Strings("bots", req.Images), zap.Int("position", pos), zap.Int("priority", int(req.Priority)))
	return rec, nil
}

// ladderQueue is the server's queue as the ladders see it.
type ladderQueue struct{ s *Platform }

func (q ladderQueue) Submit(ctx context.Context, req matches.Request, insert func(context.Context, store.Match) error) error {
	_, err := q.s.submit(ctx, req, insert)
	return err
}

// record keeps the history in step with the queue: each state change,
// and the end with its result and replay.
func (s *Platform) record(u matches.Update) {
	s.observeUpdate(u)
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
		s.endPeople(u.ID)
		s.releaseImages(u.ID)
		s.notifyChallenge(ctx, u.ID)
	}
	// The ladders rate their matches from what was just recorded; a
	// pushed version's check is decided.
	s.ladder.Observe(u)
	s.contests.Observe(u)
	s.observeCheck(u)
	s.observeRun(u)
}

// MatchRequest is a match someone starts: a game on offer (or
// logic:IMAGE), a map (none: the game's first), a seed (none: a random
// one), the bots' images by seat and the game's settings. People are the
// seats the requester plays themselves (their Bots are ignored; one at
// most).
type MatchRequest struct {
	Game     string
	Map      string
	Seed     *uint64
	Bots     []string
	People   []int
	Settings json.RawMessage
}

// Start queues a match p starts: the game and map it names, bots p
// may play. Warnings say what will likely go wrong (a bot labelled for
// another game).
func (ms *Matches) Start(ctx context.Context, p accounts.Principal, r MatchRequest) (rec store.Match, warnings []string, err error) {
	s := ms.p
	game, err := s.gameOf(ctx, p, r.Game, len(r.Bots))
	if err != nil {
		return store.Match{}, nil, err
	}
	mapName := r.Map
	if mapName == "" {
		mapName = game.Maps()[0].Name
	}
	m, err := game.Map(mapName)
	if err != nil {
		return store.Match{}, nil, errs.Errorf(errs.ErrInvalid, "map: %v", err)
	}
	r.Bots = slices.Clone(r.Bots)
	for _, i := range r.People {
		if i < 0 || i >= len(r.Bots) {
			return store.Match{}, nil, errs.Errorf(errs.ErrInvalid, "bots: no seat %d", i)
		}
	}
	var bots []string // the images, people's seats aside
	for i, ref := range r.Bots {
		if slices.Contains(r.People, i) {
			continue
		}
		if strings.TrimSpace(ref) == "" {
			return store.Match{}, nil, errs.Errorf(errs.ErrInvalid, "bots[%d]: empty image name", i)
		}
		if matches.IsHumanRef(ref) {
			return store.Match{}, nil, errs.Errorf(errs.ErrInvalid, `bots[%d]: %s names a person's seat: play a seat yourself with {"human": true}`, i, ref)
		}
		if err := s.mayPlayAll(p, fmt.Sprintf("bots[%d]", i), ref); err != nil {
			return store.Match{}, nil, err
		}
		bots = append(bots, ref)
	}
	for _, ref := range bots {
		if err := s.pushedState(ctx, ref, ""); err != nil {
			return store.Match{}, nil, err
		}
	}
	seed := matches.RandomSeed()
	if r.Seed != nil {
		seed = *r.Seed
	}
	settings := r.Settings
	if string(settings) == "null" {
		settings = nil
	}
	req := matches.Request{Game: game, Map: m, Seed: seed, Images: r.Bots, Settings: settings, Limits: s.cfg.Limits, MatchID: matches.NewMatchID(), Owner: p.Name, Kind: matches.KindHand}
	if err := s.seatPeople(p, &req, r.People); err != nil {
		return store.Match{}, nil, err
	}
	rec, err = s.submit(ctx, req, s.deps.Store.Insert)
	if err != nil {
		return store.Match{}, nil, err
	}
	// A bot labelled for another game plays, but will likely fault: say so.
	for i, ref := range r.Bots {
		if slices.Contains(r.People, i) {
			continue
		}
		if labelled := s.gameLabel(ctx, ref); labelled != "" && labelled != game.Name() {
			warnings = append(warnings, fmt.Sprintf("bots[%d]: image %s is labelled for %s (io.arena.game), not %s: it will likely fault", i, ref, labelled, game.Name()))
		}
	}
	return rec, warnings, nil
}

// Cancel cancels a match that is not over, for its owner (or an
// admin).
func (ms *Matches) Cancel(ctx context.Context, p accounts.Principal, id string) error {
	s := ms.p
	m, err := s.matchRecord(ctx, id)
	if err != nil {
		return err
	}
	if err := p.MayChange("match "+m.ID, m.Owner); err != nil {
		return err
	}
	if !s.queue.Cancel(m.ID) {
		return errs.Errorf(errs.ErrConflict, "match %s is already %s", m.ID, m.Status)
	}
	return nil
}
