package platform

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"arena/engine"
	"arena/internal/errs"
	"arena/judger"
	"arena/ladder"
	"arena/matches"
	"arena/store"
)

// The check before a pushed bot plays (its activation): each version
// pushed to the registry first plays one match against the game's
// example bot (itself when the server has none), in the sandbox, as any
// match. It is ready once it answered validly through its warm-up and
// its first CheckTurns turns; a bot that faults before is rejected, with
// the reason, the turn and its stderr kept for My bots. Only ready
// versions enter a ladder; a rejected one plays no match at all. A
// ladder entry registered by a tag follows it: each version of the tag
// found ready becomes the entry's next version.

// CheckTurns is how many turns a pushed bot must answer validly in its
// check match.
const CheckTurns = 5

// checkStderrMax is how much of a rejected bot's stderr is kept (its
// last bytes).
const checkStderrMax = 4 << 10

// tagCheck is a check match in flight: the version it checks, and the
// example bots left to play it against should this pairing fail as a
// pairing (both seats faulting alike: two Pac-Man bots claiming one
// role).
type tagCheck struct {
	repo, tag, digest, game, by string
	others                      []string
}

func (c tagCheck) key() string { return c.repo + ":" + c.tag + "@" + c.digest }

// checks are the checks' state: the matches in flight (by match id),
// the work started for them (a check being queued, an entry following its
// tag), and under mu the versions being checked and whether the server
// is shutting down.
type checks struct {
	inFlight sync.Map // match id → tagCheck
	work     sync.WaitGroup
	ctx      context.Context
	stop     context.CancelFunc

	mu      sync.Mutex
	claimed map[string]bool
	shut    bool
}

func (k *checks) init() {
	k.claimed = map[string]bool{}
	k.ctx, k.stop = context.WithCancel(context.Background())
}

// goCheck runs f for the checks (in the background, with a context
// Shutdown cancels), unless the server is shutting down.
func (s *Platform) goCheck(f func(ctx context.Context)) bool {
	s.checks.mu.Lock()
	defer s.checks.mu.Unlock()
	if s.checks.shut {
		return false
	}
	s.checks.work.Go(func() { f(s.checks.ctx) })
	return true
}

// shutChecks starts no more check work, cancels what runs (a version
// whose check is cut stays pending, and is checked at the next start),
// and waits for it, or for ctx.
func (s *Platform) shutChecks(ctx context.Context) {
	s.checks.mu.Lock()
	s.checks.shut = true
	s.checks.mu.Unlock()
	s.checks.stop()
	done := make(chan struct{})
	go func() {
		s.checks.work.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
	}
}

// startCheck checks a pushed version in the background, unless it is
// being checked already (pushed twice at once, or its check in flight).
func (s *Platform) startCheck(t store.Tag) {
	c := tagCheck{repo: t.Repository, tag: t.Tag, digest: t.Digest}
	s.checks.mu.Lock()
	if s.checks.claimed[c.key()] || s.checks.shut {
		s.checks.mu.Unlock()
		return
	}
	s.checks.claimed[c.key()] = true
	s.checks.mu.Unlock()
	if !s.goCheck(func(ctx context.Context) { s.checkTag(ctx, t) }) {
		s.release(c)
	}
}

// release ends a version's claim: it may be checked again.
func (s *Platform) release(c tagCheck) {
	s.checks.mu.Lock()
	delete(s.checks.claimed, c.key())
	s.checks.mu.Unlock()
}

// checkTag starts the check of a pushed version: its match is queued
// (owned by whoever pushed it) and recorded on the tag. A version that
// cannot be checked stays pending, with the reason.
func (s *Platform) checkTag(ctx context.Context, t store.Tag) {
	log := s.log.With(zap.String("repository", t.Repository), zap.String("tag", t.Tag), zap.String("digest", t.Digest))
	c := tagCheck{repo: t.Repository, tag: t.Tag, digest: t.Digest, by: t.PushedBy}
	queued := false
	defer func() {
		if !queued {
			s.release(c)
		}
	}()
	// What is recorded is recorded even as the server stops.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	verdict := func(state, reason string) {
		if _, err := s.deps.Store.CheckTag(rctx, t.Repository, t.Tag, t.Digest, store.Tag{State: state, Reason: reason, CheckedAt: s.now()}); err != nil {
			log.Error("record a check", zap.Error(err))
		}
		log.Info("pushed bot checked", zap.String("state", state), zap.String("reason", reason))
	}
	if t.ImageID == "" {
		verdict(store.TagRejected, "not an image (an index or an artifact): it cannot play; push one image (docker push of a single platform's image)")
		return
	}
	if t.Game == "" && s.pushedLogic(ctx, t) {
		// A game's logic, not a bot: it plays as the game logic:IMAGE
		// (checked then, as any logic is, before its match starts).
		verdict(store.TagReady, fmt.Sprintf("a game's logic (label %s=saiblo), not a bot: play it as the game logic:%s:%s", judger.LogicLabel, t.Repository, t.Tag))
		return
	}
	if t.Game == "" {
		verdict(store.TagRejected, fmt.Sprintf("the image says no game: label it with the game it plays (LABEL io.arena.game=%s; the kits' Dockerfiles take --build-arg GAME=…) and push it again", s.gamesOnOffer()))
		return
	}
	game, err := s.deps.Games.Find(t.Game)
	if err != nil {
		verdict(store.TagRejected, fmt.Sprintf("label io.arena.game=%q: this server offers no such game; it offers %s", t.Game, s.gamesOnOffer()))
		return
	}
	c.game = game.Name()
	opponents := s.checkOpponents(ctx, game.Name(), t.Repository+":"+t.Tag)
	c.others = opponents[1:]
	if err := s.queueCheck(ctx, t, c, game, opponents[0], verdict); err != nil {
		return
	}
	queued = true
}

// checkOpponents are the example bots a version of game is checked
// against, in turn, those on the engine; itself when there is none.
func (s *Platform) checkOpponents(ctx context.Context, game, ref string) []string {
	var out []string
	for _, b := range s.cfg.DefaultBots[game] {
		if s.deps.HasImage == nil || s.deps.HasImage(ctx, b) {
			out = append(out, b)
		}
	}
	if len(out) == 0 {
		out = []string{ref}
	}
	return out
}

// queueCheck queues a version's check match against opponent, and
// records it on the tag; a match that cannot be made leaves the version
// pending, saying why (verdict), and is an error.
func (s *Platform) queueCheck(ctx context.Context, t store.Tag, c tagCheck, game engine.Game, opponent string, verdict func(state, reason string)) error {
	log := s.log.With(zap.String("repository", t.Repository), zap.String("tag", t.Tag), zap.String("digest", t.Digest))
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	ref := t.Repository + ":" + t.Tag
	info := game.Maps()[0]
	m, err := game.Map(info.Name)
	if err != nil {
		verdict(store.TagPending, "its check match: "+err.Error())
		return err
	}
	id := matches.NewMatchID()
	// The pushed bot in seat 0, the example bot in the others the
	// game's default map needs.
	images := []string{ref}
	for len(images) < max(2, min(info.MinPlayers, info.MaxPlayers)) {
		images = append(images, opponent)
	}
	// The version checked is this one, whatever the tag names by now.
	_, imageID, err := s.pullVersion(ctx, t.Repository, t.Digest)
	if err != nil {
		verdict(store.TagPending, "its check match: "+err.Error())
		return err
	}
	ids := make([]string, len(images))
	for i, img := range images {
		if img == ref {
			ids[i] = imageID
		}
	}
	req := matches.Request{Game: game, Map: m, Seed: matches.RandomSeed(), Images: images, ImageIDs: ids,
		Limits: s.cfg.Limits, MatchID: id, Owner: t.PushedBy, Kind: matches.KindCheck}
	s.checks.inFlight.Store(id, c)
	if _, err := s.deps.Store.CheckTag(rctx, t.Repository, t.Tag, t.Digest, store.Tag{State: store.TagPending, CheckMatch: id}); err != nil {
		log.Error("record a check", zap.Error(err))
	}
	if _, err := s.submit(ctx, req, s.deps.Store.Insert); err != nil {
		s.checks.inFlight.Delete(id)
		verdict(store.TagPending, "its check match could not start: "+err.Error()+" (it is checked again when the server starts, or push it again)")
		return err
	}
	log.Info("pushed bot's check queued", zap.String("match", id), zap.String("opponent", opponent))
	return nil
}

// checkAgain checks a version against the next of its example bots, its
// last check match's pairing having been at fault; a version its tag no
// longer names is left to its own check.
func (s *Platform) checkAgain(ctx context.Context, c tagCheck) {
	queued := false
	defer func() {
		if !queued {
			s.release(c)
		}
	}()
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	t, ok, err := s.deps.Store.TagOf(rctx, c.repo, c.tag)
	if err != nil || !ok || t.Digest != c.digest {
		return
	}
	verdict := func(state, reason string) {
		if _, err := s.deps.Store.CheckTag(rctx, t.Repository, t.Tag, t.Digest, store.Tag{State: state, Reason: reason, CheckedAt: s.now()}); err != nil {
			s.log.Error("record a check", zap.Error(err))
		}
	}
	game, err := s.deps.Games.Find(c.game)
	if err != nil {
		verdict(store.TagPending, "its check match: "+err.Error())
		return
	}
	next := c.others[0]
	c.others = c.others[1:]
	queued = s.queueCheck(ctx, t, c, game, next, verdict) == nil
}

// aPairingFault says whether a check match ended by every seat faulting
// alike at one turn (two Pac-Man bots claiming one role): the pairing's
// fault, not the version's.
func aPairingFault(r matches.Result) bool {
	if len(r.Bots) < 2 {
		return false
	}
	first := r.Bots[0]
	for _, b := range r.Bots {
		if b.Status == engine.StatusOK || b.Status == "" || b.Status != first.Status || b.FaultTurn != first.FaultTurn || b.FaultDetail != first.FaultDetail {
			return false
		}
	}
	return true
}

// observeCheck decides a check once its match is over.
func (s *Platform) observeCheck(u matches.Update) {
	if !u.State.Final() {
		return
	}
	v, ok := s.checks.inFlight.LoadAndDelete(u.ID)
	if !ok {
		return
	}
	c := v.(tagCheck)
	if u.State == matches.StateFinished && u.Replay != nil && len(c.others) > 0 && aPairingFault(u.Replay.Result) {
		// Against the next example bot (two Pac-Man bots of one role),
		// the version's claim kept.
		if s.goCheck(func(ctx context.Context) { s.checkAgain(ctx, c) }) {
			return
		}
	}
	defer s.release(c)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out := store.Tag{CheckMatch: u.ID, CheckedAt: s.now()}
	switch {
	case u.State == matches.StateFinished && u.Replay != nil:
		out.State, out.Reason = checkVerdict(u.Replay.Result, 0)
		if out.State == store.TagRejected {
			out.Stderr = s.checkStderr(u.ID, 0)
		}
	default:
		// Not the bot's doing: the match was cancelled or failed.
		out.State = store.TagPending
		out.Reason = fmt.Sprintf("its check match %s: %v (it is checked again when the server starts, or push it again)", u.State, u.Err)
	}
	current, err := s.deps.Store.CheckTag(ctx, c.repo, c.tag, c.digest, out)
	if err != nil {
		s.log.Error("record a check", zap.String("match", u.ID), zap.Error(err))
		return
	}
	s.log.Info("pushed bot checked", zap.String("repository", c.repo), zap.String("tag", c.tag), zap.String("match", u.ID),
		zap.String("state", out.State), zap.String("reason", out.Reason))
	s.notifyCheck(ctx, c, out)
	if current && out.State == store.TagReady {
		// Not on the queue's path: following may pull the image.
		s.goCheck(func(ctx context.Context) { s.followTag(ctx, c) })
	}
}

// followTag moves the ladder entries registered by a tag to its version
// now ready: each gets a new version of its name, pinned to the new
// image, and the old one is retired with its history. (An entry that
// must keep a version names a tag that is never pushed again, as v3; a
// paused entry stays on its version.)
func (s *Platform) followTag(ctx context.Context, c tagCheck) {
	entries, err := s.deps.Store.Entries(ctx, c.game, store.EntryActive)
	if err != nil {
		s.log.Error("ladder entries following a tag", zap.Error(err))
		return
	}
	for _, e := range entries {
		t, ok, err := s.pushedTag(ctx, e.Image)
		if err != nil || !ok || t.Repository != c.repo || t.Tag != c.tag {
			continue
		}
		ne, created, err := s.ladder.Register(ctx, ladder.Registration{Game: e.Game, Name: e.Name, Image: e.Image, Owner: e.Owner, By: e.CreatedBy})
		if err != nil {
			s.log.Warn("a ladder entry could not follow its tag", zap.Int64("entry", e.ID), zap.String("image", e.Image), zap.Error(err))
			continue
		}
		if created {
			s.log.Info("ladder entry follows its tag", zap.String("game", e.Game), zap.String("name", e.Name), zap.Int64("from", e.ID), zap.Int64("to", ne.ID), zap.Int("version", ne.Version))
		}
	}
}

// notifyCheck tells whoever pushed a version its check's verdict.
func (s *Platform) notifyCheck(ctx context.Context, c tagCheck, out store.Tag) {
	ref := c.repo + ":" + c.tag
	var text string
	switch out.State {
	case store.TagReady:
		text = ref + " is ready: it passed its check match."
		if out.Reason != "" {
			text = ref + " is ready, though " + out.Reason + "."
		}
	case store.TagRejected:
		text = ref + " was rejected by its check match: " + out.Reason + ". Push a fixed version."
	default:
		return
	}
	s.Notify(ctx, c.by, NotifyCheck, text, "#/mybots", map[string]any{"repository": c.repo, "tag": c.tag, "digest": c.digest,
		"state": out.State, "reason": out.Reason, "match": out.CheckMatch})
}

// checkVerdict judges the bot of a seat by its check match: rejected
// when it faulted (did not start, crashed, answered late or wrongly, ran
// out of memory or wrote too much) before answering CheckTurns turns.
func checkVerdict(r matches.Result, seat int) (state, reason string) {
	if seat >= len(r.Bots) {
		return store.TagPending, "its check match has no result for it"
	}
	b := r.Bots[seat]
	if b.Status == engine.StatusOK || b.Status == "" {
		return store.TagReady, ""
	}
	what := strings.ReplaceAll(string(b.Status), "_", " ")
	detail := ""
	if b.FaultDetail != "" {
		detail = ": " + b.FaultDetail
	}
	if b.FaultTurn > CheckTurns {
		// A weak bot, not a broken one: it plays.
		return store.TagReady, fmt.Sprintf("%s at turn %d of its check match%s (after the %d turns a bot must answer)", what, b.FaultTurn, detail, CheckTurns)
	}
	if b.Status == engine.StatusStartFailed {
		return store.TagRejected, "it did not start" + detail
	}
	return store.TagRejected, fmt.Sprintf("%s at turn %d%s", what, b.FaultTurn, detail)
}

// checkStderr is the last of what a seat's bot wrote to stderr in a
// finished match (its last checkStderrMax bytes), read from its replay.
func (s *Platform) checkStderr(id string, seat int) string {
	f, err := s.deps.Store.OpenReplay(id)
	if err != nil {
		return ""
	}
	defer f.Close()
	var tail []byte
	cut := false
	matches.ReplayFrames(f, 0, func(_ int, raw json.RawMessage) error {
		var fr struct {
			Bots []matches.FrameBot `json:"bots"`
		}
		if json.Unmarshal(raw, &fr) != nil {
			return errors.New("not a frame")
		}
		for _, fb := range fr.Bots {
			if fb.Seat == seat && fb.Stderr != "" {
				tail = append(tail, fb.Stderr...)
				if !strings.HasSuffix(fb.Stderr, "\n") {
					tail = append(tail, '\n')
				}
				if len(tail) > 2*checkStderrMax {
					tail, cut = append([]byte(nil), tail[len(tail)-checkStderrMax:]...), true
				}
			}
		}
		return nil
	})
	if len(tail) > checkStderrMax {
		tail, cut = tail[len(tail)-checkStderrMax:], true
	}
	out := strings.ToValidUTF8(string(tail), "")
	if cut {
		out = "…" + out
	}
	return out
}

// checkPending starts the checks that have not ended: versions pushed
// while a check could not run, or whose check the last stop cut.
func (s *Platform) checkPending(ctx context.Context) error {
	tags, err := s.deps.Store.PendingTags(ctx)
	if err != nil {
		return err
	}
	for _, t := range tags {
		if ctx.Err() != nil {
			return nil
		}
		s.startCheck(t)
	}
	return nil
}

// pushedState says whether a pushed version may play: a match refuses a
// rejected one; a ladder, and a match whose game it is (logic:IMAGE),
// take only a ready one (ready: "register it", "play it"; "": any but a
// rejected one). A reference that names no pushed tag is none of the
// registry's business.
func (s *Platform) pushedState(ctx context.Context, ref string, ready string) error {
	t, ok, err := s.pushedTag(ctx, ref)
	if err != nil || !ok {
		return err
	}
	switch {
	case t.State == store.TagRun:
		return errs.Errorf(errs.ErrInvalid, "%s is a draft's Run image, which only its Run plays: submit the draft to make a version", ref)
	case t.State == store.TagRejected:
		by := "its check"
		if t.CheckMatch != "" {
			by += " (match " + t.CheckMatch + ")"
		}
		return errs.Errorf(errs.ErrInvalid, "%s was rejected by %s: %s; push a fixed version", ref, by, t.Reason)
	case ready != "" && t.State == store.TagPending && t.Reason != "":
		return errs.Errorf(errs.ErrConflict, "%s is not checked yet: %s; %s once My bots says ready", ref, t.Reason, ready)
	case ready != "" && t.State == store.TagPending:
		return errs.Errorf(errs.ErrConflict, "%s is still being checked; %s once My bots says ready", ref, ready)
	}
	return nil
}

// gamesOnOffer names every game the server offers now, built in and
// registered: "tanks, snake, pacman or ttt".
func (s *Platform) gamesOnOffer() string {
	var names []string
	for _, g := range s.deps.Games.List() {
		names = append(names, g.Name())
	}
	switch len(names) {
	case 0:
		return "none"
	case 1:
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// pushedLogic says whether a pushed version is a game's logic: its image,
// pulled onto the engine, labelled as one (judger.CheckLabelled).
func (s *Platform) pushedLogic(ctx context.Context, t store.Tag) bool {
	if s.deps.Orchestrator == nil {
		return false
	}
	_, id, err := s.pullVersion(ctx, t.Repository, t.Digest)
	if err != nil {
		return false
	}
	img, err := s.deps.Orchestrator.Image(ctx, id)
	if err != nil {
		return false
	}
	_, err = judger.CheckLabelled(img.Labels)
	return err == nil
}
