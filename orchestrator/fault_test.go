package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"arena/engine"
	"arena/matches"
	"arena/sandbox"
)

func TestJudge(t *testing.T) {
	crashed := &sandbox.Exit{Code: 3}
	oom := &sandbox.Exit{Code: 137, OOMKilled: true}
	limit := fmt.Errorf("%w: a line longer than 16 bytes", sandbox.ErrOutputLimit)
	tests := []struct {
		name   string
		give   failure
		grace  time.Duration
		status engine.Status
		detail string
	}{
		{"timeout", failure{err: sandbox.ErrTimeout, limit: 100 * time.Millisecond}, exitGrace, engine.StatusTimeout, "no answer within 100ms"},
		{"timeout, then seen exiting", failure{err: sandbox.ErrTimeout, exit: crashed}, exitGrace, engine.StatusCrashed, "exited with code 3"},
		{"timeout, then seen killed for memory", failure{err: sandbox.ErrTimeout, exit: oom}, exitGrace, engine.StatusOOM, "killed for exceeding its memory limit"},
		{"timeout of a cancelled match", failure{err: sandbox.ErrTimeout, cancelled: true, limit: time.Second}, exitGrace, engine.StatusTimeout, "no answer within 1s"},
		{"over its CPU time", failure{err: &overCPU{used: 120 * time.Millisecond, limit: 100 * time.Millisecond}}, exitGrace, engine.StatusTimeout, "no answer within 100ms of CPU time"},
		{"answered over its CPU time", failure{err: &overCPU{used: 153400 * time.Microsecond, limit: 100 * time.Millisecond, answered: true}}, exitGrace, engine.StatusTimeout, "answered after 153ms of CPU time, over the 100ms limit"},
		{"over its CPU time, then seen exiting", failure{err: &overCPU{limit: time.Second}, exit: crashed}, exitGrace, engine.StatusCrashed, "exited with code 3"},
		{"output limit", failure{err: limit}, 0, engine.StatusOutputLimit, limit.Error()},
		{"cancelled", failure{err: context.Canceled, cancelled: true}, 0, engine.StatusCrashed, "match cancelled"},
		{"output closed, exited", failure{err: sandbox.ErrClosed, exit: crashed}, closeGrace, engine.StatusCrashed, "exited with code 3"},
		{"output closed, killed for memory", failure{err: sandbox.ErrClosed, exit: oom}, closeGrace, engine.StatusOOM, "killed for exceeding its memory limit"},
		{"output closed, still running", failure{err: sandbox.ErrClosed, doing: "reading its answer"}, closeGrace, engine.StatusCrashed, "closed its output while reading its answer and kept running"},
		{"stdin broken", failure{err: fmt.Errorf("%w: stdin: broken pipe", sandbox.ErrClosed), doing: "writing its input", exit: crashed}, closeGrace, engine.StatusCrashed, "exited with code 3"},
		{"unknown error", failure{err: errors.New("strange"), doing: "writing its input"}, closeGrace, engine.StatusCrashed, "closed its output while writing its input and kept running"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if g := tt.give.grace(); g != tt.grace {
				t.Errorf("grace %v, want %v", g, tt.grace)
			}
			if st, detail := tt.give.judge(); st != tt.status || detail != tt.detail {
				t.Errorf("judge = %s %q, want %s %q", st, detail, tt.status, tt.detail)
			}
		})
	}
}

func TestResolveLimits(t *testing.T) {
	p := engine.Protocol{AnswerTimeout: time.Second, WarmUp: 20 * time.Second, MaxMessageBytes: 1024}
	tests := []struct {
		give, want matches.Limits
	}{
		{matches.Limits{}, matches.Limits{AnswerTimeout: time.Second, WarmUp: 20 * time.Second, MaxMessageBytes: 1024}},
		{matches.Limits{AnswerTimeout: 50 * time.Millisecond, WarmUp: time.Second, MaxMessageBytes: 100}, matches.Limits{AnswerTimeout: 50 * time.Millisecond, WarmUp: time.Second, MaxMessageBytes: 100}},
		// The message limit only lowers the game's.
		{matches.Limits{MaxMessageBytes: 1 << 20}, matches.Limits{AnswerTimeout: time.Second, WarmUp: 20 * time.Second, MaxMessageBytes: 1024}},
		{matches.Limits{AnswerTimeout: -1}, matches.Limits{AnswerTimeout: time.Second, WarmUp: 20 * time.Second, MaxMessageBytes: 1024}},
		// The memory limit is the sandbox's to apply: 0 stays 0 (the
		// policy's), a match's own is kept as it is.
		{matches.Limits{MemoryBytes: 64 << 20}, matches.Limits{AnswerTimeout: time.Second, WarmUp: 20 * time.Second, MaxMessageBytes: 1024, MemoryBytes: 64 << 20}},
	}
	for _, tt := range tests {
		if got := tt.give.Resolve(p); got != tt.want {
			t.Errorf("%+v: %+v, want %+v", tt.give, got, tt.want)
		}
	}
}

func TestLastLine(t *testing.T) {
	tests := []struct{ give, want string }{
		{"", ""},
		{"one\ntwo\n\n", "two"},
		{"panic: x\r\n", "panic: x"},
		{string(make([]byte, 300)), string(make([]byte, 200))},
	}
	for _, tt := range tests {
		if got := lastLine(tt.give); got != tt.want {
			t.Errorf("lastLine(%q) = %q, want %q", tt.give, got, tt.want)
		}
	}
}

func TestBudget(t *testing.T) {
	l := matches.Limits{AnswerTimeout: 100 * time.Millisecond, WarmUp: 20 * time.Second}
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	started := t0.Add(-time.Second)
	tests := []struct {
		name     string
		warmUp   bool
		cpuKnown bool
		want     budget
	}{
		{"the first answer: the warm-up, wall clock", true, true,
			budget{start: t0, deadline: started.Add(20 * time.Second), hard: started.Add(20 * time.Second), wall: 20 * time.Second}},
		{"CPU time counted, a wall-clock cap of 1 s, a hard cap of 3 s, with the CPU charged", false, true,
			budget{start: t0, deadline: t0.Add(time.Second), hard: t0.Add(3 * time.Second), wall: time.Second, cpu: 100 * time.Millisecond, charged: 7 * time.Millisecond}},
		{"no accounting: wall clock", false, false,
			budget{start: t0, deadline: t0.Add(100 * time.Millisecond), hard: t0.Add(100 * time.Millisecond), wall: 100 * time.Millisecond}},
	}
	for _, tt := range tests {
		if got := budgetFor(l, tt.warmUp, t0, started, tt.cpuKnown, 7*time.Millisecond); got != tt.want {
			t.Errorf("%s: %+v, want %+v", tt.name, got, tt.want)
		}
	}
	if got := WallCap(matches.Limits{AnswerTimeout: time.Second}); got != 10*time.Second {
		t.Errorf("Pac-Man's wall-clock cap: %v", got)
	}
	for give, want := range map[time.Duration]time.Duration{time.Millisecond: time.Millisecond, 40 * time.Millisecond: 5 * time.Millisecond, time.Second: 10 * time.Millisecond} {
		if got := cpuPoll(give); got != want {
			t.Errorf("cpuPoll(%v) = %v, want %v", give, got, want)
		}
	}
}
