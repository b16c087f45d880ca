package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"time"

	"arena/engine"
	"arena/sandbox"
)

// failure is everything known about a failed Send or Receive: the
// error (the sandbox's, or the timing rule's overCPU), whether the match
// was cancelled, what the bot was doing, the wall-clock limit that
// applied, and how the bot ended if it was seen ending.
type failure struct {
	err       error
	cancelled bool
	doing     string
	limit     time.Duration
	exit      *sandbox.Exit
}

// closeGrace is how long a bot whose output ended is given to be seen
// exiting.
const closeGrace = time.Second

// exitGrace is how long a timed-out bot is given to be seen exiting, so
// a crash is not reported as a timeout.
const exitGrace = 250 * time.Millisecond

// grace is how long to wait for the bot's exit before judging: a bot that
// timed out may have died just before its deadline, and a closed output
// usually means an exit on its way.
func (f failure) grace() time.Duration {
	var cpu *overCPU
	switch {
	case errors.Is(f.err, sandbox.ErrTimeout), errors.As(f.err, &cpu):
		return exitGrace
	case errors.Is(f.err, sandbox.ErrOutputLimit), f.cancelled:
		return 0
	}
	return closeGrace
}

// judge is the one decision of what a failure means for the bot: its
// status and the detail the replay and the result show.
func (f failure) judge() (engine.Status, string) {
	var cpu *overCPU
	switch {
	case errors.As(f.err, &cpu):
		if f.exit != nil {
			return exitStatus(*f.exit)
		}
		return engine.StatusTimeout, cpu.Error()
	case errors.Is(f.err, sandbox.ErrTimeout):
		if f.exit != nil {
			return exitStatus(*f.exit)
		}
		return engine.StatusTimeout, fmt.Sprintf("no answer within %v", f.limit)
	case errors.Is(f.err, sandbox.ErrOutputLimit):
		return engine.StatusOutputLimit, f.err.Error()
	case f.cancelled:
		return engine.StatusCrashed, "match cancelled"
	case f.exit == nil:
		// The output ended but the bot lives on: a crash of the protocol.
		return engine.StatusCrashed, fmt.Sprintf("closed its output while %s and kept running", f.doing)
	}
	return exitStatus(*f.exit)
}

func exitStatus(exit sandbox.Exit) (engine.Status, string) {
	if exit.OOMKilled {
		return engine.StatusOOM, "killed for exceeding its memory limit"
	}
	return engine.StatusCrashed, fmt.Sprintf("exited with code %d", exit.Code)
}

// classify gathers what judge needs: it waits, for the grace the failure
// calls for, to see the bot exit.
func (r *run) classify(ctx context.Context, s *seat, err error, doing string) (engine.Status, string) {
	f := failure{err: err, cancelled: ctx.Err() != nil, doing: doing, limit: r.lim.AnswerTimeout}
	switch {
	case !s.asked:
		f.limit = r.lim.WarmUp
	case s.timing == "cpu":
		f.limit = r.lim.WallCap()
	}
	if grace := f.grace(); grace > 0 {
		wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), grace)
		exit := s.bot.Exit(wctx)
		cancel()
		if exit.Err == nil {
			f.exit = &exit
		}
	}
	return f.judge()
}
