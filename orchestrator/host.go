package orchestrator

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"go.uber.org/zap"

	"arena/engine"
	"arena/framing"
	"arena/internal/errs"
	"arena/matches"
	"arena/sandbox"
)

// startHost starts the program of a hosted game (a logic image) in the
// sandbox, as a bot is started, under the game's limits for it, and
// attaches the match to it. The host returned, when not nil, must be
// closed (closeHost) whatever the error; with it, the image it runs.
// Every error is of kind matches.ErrGameHost (or
// matches.ErrImageNotFound, errs.ErrInvalid for an image whose labels
// do not fit the match, or ctx's).
func (o *Orchestrator) startHost(ctx context.Context, req matches.Request, matchID string, m engine.HostedMatch) (Bot, *matches.LogicRecord, error) {
	g, ok := req.Game.(engine.Hosted)
	if !ok {
		return nil, nil, errs.Mark(matches.ErrGameHost, fmt.Errorf("game %s has hosted matches but no host", req.Game.Name()))
	}
	ref, id := g.HostImage()
	name := ref
	if id != "" {
		name = fmt.Sprintf("%s (%s)", ref, id)
	}
	img, err := o.launcher.Image(ctx, cmp.Or(id, ref))
	if err != nil {
		if errors.Is(err, matches.ErrImageNotFound) {
			return nil, nil, fmt.Errorf("the game's logic %s: %w", name, err)
		}
		return nil, nil, errs.Mark(matches.ErrGameHost, fmt.Errorf("the game's logic %s: %w", name, err))
	}
	img.Ref = ref // for names and messages; the container runs img.ID
	rec := &matches.LogicRecord{Image: ref, ImageID: img.ID}
	if err := g.CheckHost(img.Labels); err != nil {
		return nil, rec, errs.Mark(errs.ErrInvalid, err)
	}
	container := fmt.Sprintf("arena-%s-logic", matchID)
	if req.Attempt > 1 {
		container = fmt.Sprintf("arena-%s-%d-logic", matchID, req.Attempt)
	}
	// The logic is not a contestant: it runs under the game's limits for
	// it, whatever limits the match sets its bots.
	lim := g.HostLimits()
	host, err := o.launcher.Launch(ctx, sandbox.Spec{
		Image: img, Name: container, MatchID: matchID, BotID: "logic",
		Framing: framing.Targeted, MaxMessageBytes: lim.MaxMessageBytes,
		MemoryBytes: lim.MemoryBytes, NanoCPUs: lim.NanoCPUs,
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil, rec, ctx.Err()
		}
		return nil, rec, errs.Mark(matches.ErrGameHost, fmt.Errorf("the game's logic %s did not start: %w", name, err))
	}
	// The logic runs when it will: it is not a contestant, its time is
	// bounded per round (its limits' round_ms), not counted.
	if f, ok := host.(freezeSwitch); ok {
		f.FreezeAtAnswers(false)
	}
	_ = host.Thaw()
	if err := m.Attach(hostConn{ctx: ctx, bot: host}); err != nil {
		if ctx.Err() != nil {
			return host, rec, ctx.Err()
		}
		return host, rec, errs.Mark(matches.ErrGameHost, errs.Mark(matches.ErrLogicFailed, fmt.Errorf("the game's logic failed: %w", hostError(host, err))))
	}
	return host, rec, nil
}

// hostExitWait is how long a failed host is given to be seen exiting.
const hostExitWait = time.Second

// hostError adds to a host's failure how it ended, when it did (killed
// for exceeding its memory limit, or its exit code), and its last words
// on stderr.
func hostError(host Bot, err error) error {
	ctx, cancel := context.WithTimeout(context.Background(), hostExitWait)
	exit := host.Exit(ctx)
	cancel()
	switch {
	case exit.Err != nil:
	case exit.OOMKilled:
		err = fmt.Errorf("%w; it was killed for exceeding its memory limit", err)
	case exit.Code != 0:
		err = fmt.Errorf("%w; it exited with code %d", err, exit.Code)
	}
	tail := host.TakeStderr().Text
	if len(tail) > 400 {
		tail = tail[len(tail)-400:]
	}
	if t := bytes.TrimSpace(tail); len(t) > 0 {
		return fmt.Errorf("%w; its last words on stderr: %q", err, t)
	}
	return err
}

// closeHost stops and removes a hosted game's program.
func (o *Orchestrator) closeHost(ctx context.Context, host Bot) {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	host.Stop(cctx)
	if err := host.Close(cctx); err != nil {
		o.log.Error("the game's logic not removed", zap.Error(err))
	}
}

// hostConn is a running host as the match sees it.
type hostConn struct {
	ctx context.Context
	bot Bot
}

func (h hostConn) Send(p []byte, deadline time.Time) error { return h.bot.Send(p, deadline) }
func (h hostConn) Receive(deadline time.Time) ([]byte, error) {
	return h.bot.Receive(h.ctx, deadline)
}

// VerifyHosted verifies the replay of a hosted game by playing it again:
// its program (a logic) is started anew in the sandbox and given the
// recorded answers; every frame and the result must come out the same.
// A logic that is not deterministic given its seed fails it at the first
// round that differs, and one that fails on the way (it did not in the
// match) at the round it fails (a *matches.Mismatch either way); a logic
// that cannot be started, with matches.ErrGameHost.
func (o *Orchestrator) VerifyHosted(ctx context.Context, game engine.Hosted, r *matches.Replay) error {
	v, err := matches.NewVerifier(game, r)
	if err != nil {
		return err
	}
	hm, ok := v.Match().(engine.HostedMatch)
	if !ok {
		return fmt.Errorf("game %s: its matches have no host", game.Name())
	}
	host, _, err := o.startHost(ctx, matches.Request{Game: game}, matches.NewMatchID(), hm)
	if host != nil {
		defer o.closeHost(ctx, host)
	}
	if err != nil {
		return err
	}
	for _, fr := range r.Frames {
		err := v.Frame(fr)
		if herr := hm.Err(); herr != nil { // why it went otherwise, if so
			return &matches.Mismatch{Turn: fr.Turn, Reason: "the game's logic failed, played again: " + hostError(host, herr).Error()}
		}
		if err != nil {
			return err
		}
	}
	return v.Finish(r.Result)
}
