package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"time"

	"arena/engine"
	"arena/internal/bytesize"
	"arena/sandbox"
)

// failure is everything known about a failed Send or Receive: the
// error (the sandbox's, or the timing rule's overCPU or ranWhileStopped),
// whether the match was cancelled, what the bot was doing, the
// wall-clock limit of the answer's budget, and how the bot ended if it
// was seen ending.
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
	var stopped *ranWhileStopped
	switch {
	case errors.Is(f.err, sandbox.ErrTimeout), errors.As(f.err, &cpu), errors.As(f.err, &stopped):
		return exitGrace
	case errors.Is(f.err, sandbox.ErrOutputLimit), errors.As(f.err, new(*overBudget)), f.cancelled:
		return 0
	}
	return closeGrace
}

// judge is the one decision of what a failure means for the bot: its
// status and the detail the replay and the result show.
func (f failure) judge() (engine.Status, string) {
	var cpu *overCPU
	var stopped *ranWhileStopped
	switch {
	case errors.As(f.err, &cpu), errors.As(f.err, &stopped):
		if f.exit != nil {
			return exitStatus(*f.exit)
		}
		return engine.StatusTimeout, f.err.Error()
	case errors.Is(f.err, sandbox.ErrTimeout):
		if f.exit != nil {
			return exitStatus(*f.exit)
		}
		return engine.StatusTimeout, fmt.Sprintf("no answer within %v", f.limit)
	case errors.Is(f.err, sandbox.ErrOutputLimit), errors.As(f.err, new(*overBudget)):
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

// classify gathers what judge needs, the answer's budget b among it: it
// waits, for the grace the failure calls for, to see the bot exit.
func (r *run) classify(ctx context.Context, s *seat, b budget, err error, doing string) (engine.Status, string) {
	f := failure{err: err, cancelled: ctx.Err() != nil, doing: doing, limit: b.wall}
	if grace := f.grace(); grace > 0 {
		wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), grace)
		exit := s.bot.Exit(wctx)
		cancel()
		if exit.Err == nil {
			f.exit = &exit
		}
	}
	if why, ok := launchFailed(s, f.exit, r.rec.stderrSoFar(s.n)); ok {
		return engine.StatusStartFailed, "its command could not be started: " + why
	}
	return f.judge()
}

// overBudget is a bot whose answers passed its share of the match's
// replay budget (WithReplayBudget).
type overBudget struct{ share, budget int64 }

func (e *overBudget) Error() string {
	return fmt.Sprintf("its answers passed its share of the match's replay budget: %s of %s", bytesize.String(e.share), bytesize.String(e.budget))
}

// stderrPeeker is a bot whose stderr can be read without taking it
// (sandbox.Container, sandbox.Process).
type stderrPeeker interface{ PeekStderr() []byte }

// launchFailed tells a bot whose command could not be started (its
// launcher said why, sandbox.LaunchFailure) before its first answer,
// having read none of its input: it never ran, and is start_failed. Its
// words may be on stderr still, or already filed with the first frame
// (filed: the end of what was, sometimes the first piece of the line).
func launchFailed(s *seat, exit *sandbox.Exit, filed string) (string, bool) {
	if exit == nil || s.asked {
		return "", false
	}
	p, ok := s.bot.(stderrPeeker)
	if !ok {
		return "", false
	}
	if u, ok := s.bot.(unreader); ok {
		if n, known := u.Unread(); known && n == 0 {
			return "", false // it read its input: it ran
		}
	}
	if exit.Code != sandbox.LaunchExitCode {
		return "", false
	}
	// The launcher's last words may still be on their way (the engine's
	// attach stream delivers them after the exit).
	for end := time.Now().Add(launchWordsWait); ; time.Sleep(5 * time.Millisecond) {
		said := append([]byte(filed), p.PeekStderr()...)
		if why, ok := sandbox.LaunchFailure(*exit, said); ok || !time.Now().Before(end) {
			return why, ok
		}
	}
}

// launchWordsWait is how long a launcher's reason is waited for.
const launchWordsWait = 500 * time.Millisecond
