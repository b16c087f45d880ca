package orchestrator

import (
	"bytes"
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
// sandbox, as a bot is started, and attaches the match to it. The host
// returned, when not nil, must be closed (closeHost) whatever the error.
// Every error is of kind matches.ErrGameHost (or matches.ErrImageNotFound, matches.ErrInvalid for
// an image whose labels do not fit the match, or ctx's).
func (o *Orchestrator) startHost(ctx context.Context, req matches.Request, matchID string, m engine.HostedMatch) (Bot, error) {
	g, ok := req.Game.(engine.Hosted)
	if !ok {
		return nil, errs.Mark(matches.ErrGameHost, fmt.Errorf("game %s has hosted matches but no host", req.Game.Name()))
	}
	img, err := o.launcher.Image(ctx, g.HostImage())
	if err != nil {
		if errors.Is(err, matches.ErrImageNotFound) {
			return nil, fmt.Errorf("the game's logic: %w", err)
		}
		return nil, errs.Mark(matches.ErrGameHost, fmt.Errorf("the game's logic %s: %w", g.HostImage(), err))
	}
	if err := g.CheckHost(img.Labels); err != nil {
		return nil, matches.Invalid(err)
	}
	name := fmt.Sprintf("arena-%s-logic", matchID)
	if req.Attempt > 1 {
		name = fmt.Sprintf("arena-%s-%d-logic", matchID, req.Attempt)
	}
	// The logic is not a contestant: it runs under the sandbox policy's
	// memory, whatever limit the match sets its bots (no MemoryBytes).
	host, err := o.launcher.Launch(ctx, sandbox.Spec{
		Image: img, Name: name, MatchID: matchID, BotID: "logic",
		Framing: framing.Targeted, MaxMessageBytes: g.HostMaxMessageBytes(),
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, errs.Mark(matches.ErrGameHost, fmt.Errorf("the game's logic %s did not start: %w", g.HostImage(), err))
	}
	// The logic runs when it will: it is not a contestant, its time is
	// bounded per message (judger.LogicTime), not counted.
	if f, ok := host.(freezeSwitch); ok {
		f.FreezeAtAnswers(false)
	}
	_ = host.Thaw()
	if err := m.Attach(hostConn{ctx: ctx, bot: host}); err != nil {
		if ctx.Err() != nil {
			return host, ctx.Err()
		}
		return host, errs.Mark(matches.ErrGameHost, fmt.Errorf("the game's logic failed: %w", hostError(host, err)))
	}
	return host, nil
}

// hostError adds the last words of a host on stderr to its failure.
func hostError(host Bot, err error) error {
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
// round that differs (a *matches.Mismatch); one that fails on the way, with
// matches.ErrGameHost.
func (o *Orchestrator) VerifyHosted(ctx context.Context, game engine.Hosted, r *matches.Replay) error {
	v, err := matches.NewVerifier(game, r)
	if err != nil {
		return err
	}
	hm, ok := v.Match().(engine.HostedMatch)
	if !ok {
		return fmt.Errorf("game %s: its matches have no host", game.Name())
	}
	host, err := o.startHost(ctx, matches.Request{Game: game}, matches.NewMatchID(), hm)
	if host != nil {
		defer o.closeHost(ctx, host)
	}
	if err != nil {
		return err
	}
	for _, fr := range r.Frames {
		err := v.Frame(fr)
		if herr := hm.Err(); herr != nil { // why it went otherwise, if so
			return errs.Mark(matches.ErrGameHost, fmt.Errorf("the game's logic failed, played again: %w", hostError(host, herr)))
		}
		if err != nil {
			return err
		}
	}
	return v.Finish(r.Result)
}
