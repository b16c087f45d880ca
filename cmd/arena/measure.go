package main

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"time"

	"arena/sandbox"
)

// What the doctor measures, and how: round trips of one JSON line through
// an echo bot on each path, in alternating batches (every path once per
// run, the order rotated from run to run, so that the machine's load
// falls on all of them alike), reported as the median over the runs of
// each batch's p50 and p99; and the time from the request to start two
// bots to the first state written to both, with warm containers (as the
// server and tournaments start bots) and without.

// echoPath is one way to a bot, measured.
type echoPath struct {
	name string
	bot  botConn
	// before and after, when set, run around each round trip what the
	// orchestrator does around each answer (see turnAccounting).
	before, after func() error
	// idle, when set, runs untimed between round trips.
	idle func()
}

// pathFigures are a path's round trips: the median over the runs.
type pathFigures struct {
	P50US float64 `json:"p50_us"`
	P99US float64 `json:"p99_us"`
}

// interleaved measures every path in runs batches of rounds round trips
// each, after a warm-up, and returns each path's figures.
func interleaved(ctx context.Context, paths []echoPath, line []byte, rounds, runs int) (map[string]pathFigures, error) {
	p50s := map[string][]time.Duration{}
	p99s := map[string][]time.Duration{}
	for _, p := range paths {
		if _, err := batch(ctx, p, line, 500); err != nil {
			return nil, fmt.Errorf("%s: %w", p.name, err)
		}
	}
	for run := 0; run < runs; run++ {
		for k := range paths {
			p := paths[(run+k)%len(paths)]
			ts, err := batch(ctx, p, line, rounds)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", p.name, err)
			}
			p50s[p.name] = append(p50s[p.name], pct(ts, 50))
			p99s[p.name] = append(p99s[p.name], pct(ts, 99))
		}
	}
	out := map[string]pathFigures{}
	for _, p := range paths {
		out[p.name] = pathFigures{P50US: micro(pct(p50s[p.name], 50)), P99US: micro(pct(p99s[p.name], 50))}
	}
	return out, nil
}

// batch times n round trips on a path.
func batch(ctx context.Context, p echoPath, line []byte, n int) ([]time.Duration, error) {
	out := make([]time.Duration, 0, n)
	for i := 0; i < n; i++ {
		t0 := time.Now()
		if p.before != nil {
			if err := p.before(); err != nil {
				return nil, err
			}
		}
		deadline := t0.Add(5 * time.Second)
		if err := p.bot.Send(line, deadline); err != nil {
			return nil, err
		}
		if _, err := p.bot.Receive(ctx, deadline); err != nil {
			return nil, err
		}
		if p.after != nil {
			if err := p.after(); err != nil {
				return nil, err
			}
		}
		out = append(out, time.Since(t0))
		if p.idle != nil {
			p.idle()
		}
	}
	return out, nil
}

// turnAccounting is what the orchestrator does around an answer
// (orchestrator's serve and settle): before it, read the bot's CPU time
// and thaw it (a thaw of a bot let run between answers writes nothing);
// after it, read its figures and its memory peak. A bot whose figures are
// read after its answers, off their path (frozen at its answers, or whose
// wait is read thread by thread: sandbox.Container.FiguresAfterAnswers),
// has only its CPU time read after its answer; a frozen bot's figures
// before its next answer are those its freeze read.
func turnAccounting(c *sandbox.Container) (before, after func() error) {
	errNoFigures := errors.New("the bot's figures cannot be read")
	before = func() error {
		if _, _, ok := c.AnswerFigures(); !ok || !c.Frozen() {
			if _, ok := c.CPUTime(); !ok {
				return errNoFigures
			}
		}
		c.Thaw() // without a freezer, nothing to do
		return nil
	}
	after = func() error {
		if c.FiguresAfterAnswers() {
			if _, ok := c.CPUTime(); !ok {
				return errNoFigures
			}
			return nil
		}
		if _, ok := c.Sample(); !ok {
			return errNoFigures
		}
		c.MemPeak()
		return nil
	}
	return before, after
}

// untilFigures waits, untimed, until the bot's figures are read after its
// answer (and it is frozen, if it is frozen at its answers), as in a match
// by the time the other bots have answered (at most 20 ms: then they are
// read here, as the orchestrator's settle reads them).
func untilFigures(c *sandbox.Container) func() {
	return func() {
		read := func() bool { _, _, ok := c.AnswerFigures(); return ok }
		for end := time.Now().Add(20 * time.Millisecond); !read() && time.Now().Before(end); {
			runtime.Gosched()
		}
		if !read() { // as the orchestrator's settle
			c.Sample()
			c.MemPeak()
		}
	}
}

// startTimes times, n times, from the request to start two bots at once
// to the first state written to both. With a pool, each start waits for
// the pool to be full again first, as between two matches.
func startTimes(ctx context.Context, d *sandbox.Docker, img sandbox.Image, line []byte, n int, ready func() bool) ([]time.Duration, error) {
	var out []time.Duration
	for i := 0; i < n; i++ {
		for wait := time.Now(); ready != nil && !ready() && time.Since(wait) < time.Minute; time.Sleep(20 * time.Millisecond) {
		}
		t0 := time.Now()
		var wg sync.WaitGroup
		bots := make([]*sandbox.Container, 2)
		errs := make([]error, 2)
		for k := range bots {
			wg.Go(func() {
				bots[k], errs[k] = d.Start(ctx, sandbox.Spec{Image: img, MatchID: "doctor", BotID: fmt.Sprint("start", k), MaxMessageBytes: 1 << 20})
				if errs[k] == nil {
					errs[k] = bots[k].Send(line, time.Now().Add(5*time.Second))
				}
			})
		}
		wg.Wait()
		took := time.Since(t0)
		for _, b := range bots {
			if b != nil {
				b.Close(context.WithoutCancel(ctx))
			}
		}
		if err := errors.Join(errs...); err != nil {
			return nil, err
		}
		out = append(out, took)
	}
	return out, nil
}

func pct(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := (len(s)*p + 99) / 100
	return s[max(0, min(len(s)-1, i-1))]
}
