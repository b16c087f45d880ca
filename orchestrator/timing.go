package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"time"

	"arena/sandbox"
)

// The timing rule, as a bot author reads it:
//
//   - An answer may use the game's answer time (Tanks and Snake 100 ms,
//     Pac-Man 1 s) of CPU time: the CPU its processes and threads use from
//     the moment its input is written until its answer arrives. Time spent
//     waiting for a CPU that other programs hold does not count.
//   - The answer must also arrive within a wall-clock cap, ten times the
//     answer time and at least a second, which only a bot that waits
//     (sleeps, blocks) rather than computes can reach: time the bot spent
//     runnable but waiting for a CPU, or throttled, does not count
//     against the cap either, and a bot still at work at the cap
//     (computing, or kept from a CPU) is given more, a tenth of the cap
//     at a time (up to a ceiling of twenty caps, so a match cannot hang
//     on a host that never gives the bot a CPU).
//   - Between its answer and its next input the bot is frozen: it does
//     not run on the other bots' time, and nothing it does then counts.
//   - The first answer has the warm-up window (20 s) from the bot's start,
//     in wall-clock time.
//   - Where a bot's CPU time cannot be read (no cgroup, a remote engine),
//     the answer time is wall-clock time, and the result says so.
//
// One place decides it: budget says what an answer may take, judged by
// await (the CPU watch) and by overCPU (the answer's own CPU).

// budget is what one answer may take.
type budget struct {
	// deadline is the wall-clock cap.
	deadline time.Time
	// cpu is the CPU time the answer may use; 0: not counted (the warm-up,
	// or no accounting), the deadline alone applies.
	cpu time.Duration
}

// WallCap is the wall-clock cap of an answer whose CPU time is counted,
// not counting the time it waited for a CPU.
func (l Limits) WallCap() time.Duration { return max(10*l.AnswerTimeout, time.Second) }

// wallCeiling is the cap with every wait counted: the longest an answer
// is waited for, however busy the host.
func (l Limits) wallCeiling() time.Duration { return 20 * l.WallCap() }

// budgetFor is an answer's budget: sent is when its input was written,
// started when the bot started, and cpuKnown whether its CPU time can be
// read.
func (l Limits) budgetFor(warmUp bool, sent, started time.Time, cpuKnown bool) budget {
	switch {
	case warmUp:
		return budget{deadline: started.Add(l.WarmUp)}
	case cpuKnown:
		return budget{deadline: sent.Add(l.WallCap()), cpu: l.AnswerTimeout}
	default:
		return budget{deadline: sent.Add(l.AnswerTimeout)}
	}
}

// cpuPoll is how often the CPU watch looks at a bot with a budget of cpu:
// an eighth of it, between 1 and 10 ms.
func cpuPoll(cpu time.Duration) time.Duration {
	return min(max(cpu/8, time.Millisecond), 10*time.Millisecond)
}

// overCPU is an answer over its CPU budget: still thinking when the watch
// saw it over, or answered after using more.
type overCPU struct {
	used, limit time.Duration
	answered    bool
}

func (e *overCPU) Error() string {
	if e.answered {
		return fmt.Sprintf("answered after %v of CPU time, over the %v limit", e.used.Round(time.Millisecond), e.limit)
	}
	return fmt.Sprintf("no answer within %v of CPU time", e.limit)
}

// errWatched is the cause of a wait the CPU watch cut short.
var errWatched = errors.New("over its CPU time")

// await reads the bot's answer within its budget: the wall-clock deadline
// (moved on by the time the bot waited for a CPU, up to the ceiling) and,
// when counted, its CPU time since before (read every cpuPoll).
func (r *run) await(ctx context.Context, s *seat, b budget, sent time.Time, before sandbox.Sample) ([]byte, error) {
	if b.cpu <= 0 {
		return s.bot.Receive(ctx, b.deadline)
	}
	wctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	watched := make(chan time.Duration, 1)
	go func() {
		t := time.NewTicker(cpuPoll(b.cpu))
		defer t.Stop()
		for {
			select {
			case <-wctx.Done():
				return
			case <-t.C:
				if now, ok := s.bot.CPUTime(); ok && now-before.CPU > b.cpu {
					watched <- now - before.CPU
					cancel(errWatched)
					return
				}
			}
		}
	}()
	ceiling := sent.Add(r.lim.wallCeiling())
	lastCPU := before.CPU
	for {
		data, err := s.bot.Receive(wctx, b.deadline)
		if err != nil && errors.Is(context.Cause(wctx), errWatched) && ctx.Err() == nil {
			return nil, &overCPU{used: <-watched, limit: b.cpu}
		}
		if !errors.Is(err, sandbox.ErrTimeout) || !b.deadline.Before(ceiling) {
			return data, err
		}
		// The cap is reached. Whatever of it the bot spent waiting for a
		// CPU is given back; beyond that, a bot still at work — its CPU
		// time grew since the last look, or it is runnable now (kept from
		// a CPU: a wait the kernel counts only once it gets one) — is
		// given another tenth of the cap. A bot that sleeps is not.
		now, ok := s.bot.Sample()
		if !ok {
			return data, err
		}
		next := b.deadline
		if now.WaitKnown && before.WaitKnown {
			next = sent.Add(r.lim.WallCap() + (now.Wait - before.Wait))
		}
		if !next.After(b.deadline) && (now.CPU > lastCPU || s.bot.Runnable()) {
			next = b.deadline.Add(r.lim.WallCap() / 10)
		}
		lastCPU = now.CPU
		if next.After(ceiling) {
			next = ceiling
		}
		if !next.After(b.deadline) {
			return data, err
		}
		b.deadline = next
	}
}
