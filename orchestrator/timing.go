package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"time"

	"arena/matches"
	"arena/sandbox"
)

// The timing rule, as a bot author reads it:
//
//   - An answer may use the game's answer time (Tanks and Snake 100 ms,
//     Pac-Man 1 s) of CPU time: the CPU its processes and threads use from
//     the moment it may run (it is thawed, then its input is written) until
//     its answer is read. Time spent waiting for a CPU that other programs
//     hold does not count.
//   - Between its answer and its next input the bot should be idle:
//     whatever CPU its cgroup uses then is charged to its next answer,
//     against that answer's limit; a bot whose CPU while it should be
//     stopped adds up, beyond a tolerance a turn, to more than one answer
//     time is faulted (timeout) for it. The tolerance is a millisecond
//     (what runs between its answer's arrival and its freeze, for a frozen
//     bot), a tenth of the answer time for a bot that cannot be frozen
//     (under gVisor, whose own work for the bot goes on between turns).
//   - A bot is let run between its answers until it uses more than the
//     tolerance there once; from then on it is frozen at each answer, the
//     whole cgroup at once where the kernel's freezer can be used (else by
//     signals), so it does not run on the other bots' time. A bot that
//     runs nothing there is not frozen: a freeze and a thaw wake each of
//     its threads twice a turn, for nothing (serve decides).
//   - The answer must also arrive within a wall-clock cap, ten times the
//     answer time and at least a second, which only a bot that waits
//     (sleeps, blocks) rather than computes can reach. Time the bot spent
//     runnable but waiting for a CPU, or throttled, is added to the cap,
//     and a bot the host is keeping from a CPU right at the cap is given
//     a tenth of the cap more; never beyond the hard cap, three caps, so
//     an answer is never waited for longer however the bot drips its
//     output and however busy the host.
//   - The first answer has the warm-up window (20 s) from the bot's start,
//     in wall-clock time.
//   - Where a bot's CPU time cannot be read (no cgroup, a remote engine),
//     the answer time is wall-clock time, and the result says so.
//
// One place decides it: budgetFor says what an answer may take; await
// holds the bot to it and the fault judge names the limits it carries.

// budget is what one answer may take, from its window's start.
type budget struct {
	// start is when the bot may run for this answer: the window of its
	// figures and of its caps.
	start time.Time
	// deadline is the wall-clock cap, wall the time it allows (the
	// fault's "no answer within"), hard the hard cap it never passes.
	deadline, hard time.Time
	wall           time.Duration
	// cpu is the CPU time the answer may use; 0: not counted (the warm-up,
	// or no accounting), the deadline alone applies. charged is what it is
	// charged before it starts: the CPU its cgroup used while it should
	// have been stopped.
	cpu, charged time.Duration
}

// WallCap is the wall-clock cap of an answer whose CPU time is counted,
// not counting the time it waited for a CPU.
func WallCap(l matches.Limits) time.Duration { return max(10*l.AnswerTimeout, time.Second) }

// HardCap is the longest an answer whose CPU time is counted is waited
// for, however busy the host: three wall-clock caps.
func HardCap(l matches.Limits) time.Duration { return 3 * WallCap(l) }

// stopTolerance is the CPU a bot may use between its answer and its
// next input, per turn, without it adding up to a fault: for a frozen bot
// what runs between its answer's arrival and its freeze; for one that is
// not frozen (gVisor) also the runtime's own work, measured here at up to
// 3.4 ms a turn beside a bot computing 60 ms an answer.
func stopTolerance(l matches.Limits, frozen bool) time.Duration {
	if frozen {
		return time.Millisecond
	}
	return max(time.Millisecond, l.AnswerTimeout/10)
}

// budgetFor is an answer's budget: start is when the bot may run,
// started when the bot started, cpuKnown whether its CPU time can be
// read, and charged the CPU it used while it should have been stopped.
func budgetFor(l matches.Limits, warmUp bool, start, started time.Time, cpuKnown bool, charged time.Duration) budget {
	switch {
	case warmUp:
		d := started.Add(l.WarmUp)
		return budget{start: start, deadline: d, hard: d, wall: l.WarmUp}
	case cpuKnown:
		return budget{start: start, deadline: start.Add(WallCap(l)), hard: start.Add(HardCap(l)),
			wall: WallCap(l), cpu: l.AnswerTimeout, charged: charged}
	default:
		d := start.Add(l.AnswerTimeout)
		return budget{start: start, deadline: d, hard: d, wall: l.AnswerTimeout}
	}
}

// cpuPoll is how often the CPU watch looks at a bot with a budget of cpu:
// an eighth of it, between 1 and 10 ms.
func cpuPoll(cpu time.Duration) time.Duration {
	return min(max(cpu/8, time.Millisecond), 10*time.Millisecond)
}

// overCPU is an answer over its CPU budget: still thinking when the watch
// saw it over, or answered after using more. stopped is the part of used
// the bot's cgroup spent while it should have been stopped.
type overCPU struct {
	used, stopped, limit time.Duration
	answered             bool
}

func (e *overCPU) Error() string {
	r := func(d time.Duration) time.Duration { return d.Round(time.Millisecond) }
	var msg string
	if e.answered {
		msg = fmt.Sprintf("answered after %v of CPU time, over the %v limit", r(e.used), e.limit)
	} else {
		msg = fmt.Sprintf("no answer within %v of CPU time", e.limit)
	}
	if r(e.stopped) > 0 {
		msg += fmt.Sprintf(" (%v of it charged for running while it should have been stopped)", r(e.stopped))
	}
	return msg
}

// ranWhileStopped is a bot whose CPU while it should have been stopped,
// beyond the tolerance a turn, added up to more than one answer time.
type ranWhileStopped struct{ used, tolerance, limit time.Duration }

func (e *ranWhileStopped) Error() string {
	return fmt.Sprintf("ran while it should have been stopped, between its answers: %v of CPU time beyond %v a turn, more than the %v of one answer",
		e.used.Round(10*time.Microsecond), e.tolerance, e.limit)
}

// errWatched is the cause of a wait the CPU watch cut short.
var errWatched = errors.New("over its CPU time")

// await reads the bot's answer within its budget: the wall-clock deadline
// (moved on by the time the bot waited for a CPU, up to the hard cap)
// and, when counted, its CPU time since before plus what it was charged
// (read every cpuPoll).
func (r *run) await(ctx context.Context, s *seat, b budget, before sandbox.Sample) ([]byte, error) {
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
				if now, ok := s.bot.CPUTime(); ok && now-before.CPU+b.charged > b.cpu {
					watched <- now - before.CPU + b.charged
					cancel(errWatched)
					return
				}
			}
		}
	}()
	for {
		data, err := s.bot.Receive(wctx, b.deadline)
		if err != nil && errors.Is(context.Cause(wctx), errWatched) && ctx.Err() == nil {
			return nil, &overCPU{used: <-watched, stopped: b.charged, limit: b.cpu}
		}
		if !errors.Is(err, sandbox.ErrTimeout) || !b.deadline.Before(b.hard) {
			return data, err
		}
		// The cap is reached. Whatever of it the bot spent waiting for a
		// CPU is given back; beyond that, a bot the host is keeping from a
		// CPU right now (a wait the kernel counts only once it gets one)
		// is given another tenth of the cap. A bot that sleeps, or drips
		// its output, is not.
		now, ok := s.bot.Sample()
		if !ok {
			return data, err
		}
		next := b.deadline
		if now.WaitKnown && before.WaitKnown {
			next = b.start.Add(b.wall + max(0, now.Wait-before.Wait))
		}
		if !next.After(b.deadline) && s.bot.Runnable() {
			next = b.deadline.Add(b.wall / 10)
		}
		if next.After(b.hard) {
			next = b.hard
		}
		if !next.After(b.deadline) {
			return data, err
		}
		b.deadline = next
	}
}
