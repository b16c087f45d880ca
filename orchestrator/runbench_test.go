package orchestrator_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"arena/engine"
	"arena/engine/tanks"
	"arena/internal/errs"
	"arena/internal/testsupport/poll"
	"arena/matches"
	"arena/orchestrator"
	"arena/orchestrator/fake"
)

func TestRunBench(t *testing.T) {
	l := fake.NewLauncher(map[string]fake.Script{
		"bots/good":  hunter(),
		"bots/crash": {Faults: map[int]fake.Fault{2: fake.Crash}},
	})
	o := orchestrator.New(l)
	plan := orchestrator.BenchPlan{Game: tanks.New(), Maps: []engine.Map{tanksMap(t, "classic"), tanksMap(t, "triad")},
		Bots: []string{"bots/good", "bots/crash"}, Repeats: 2, Seed: 5, Limits: matches.Limits{AnswerTimeout: 50 * time.Millisecond}}
	var mu sync.Mutex
	var outs []orchestrator.BenchOutcome
	if err := o.RunBench(t.Context(), plan, 3, func(b orchestrator.BenchOutcome) {
		mu.Lock()
		defer mu.Unlock()
		outs = append(outs, b)
	}); err != nil {
		t.Fatal(err)
	}
	if len(outs) != 4 {
		t.Fatalf("%d outcomes, want 4", len(outs))
	}
	table := orchestrator.NewTable(plan.Bots...)
	for _, out := range outs {
		if out.Err != nil || out.Result == nil {
			t.Fatalf("match %d: %v", out.Match.Index, out.Err)
		}
		table.Add(out.Match, out.Result)
	}
	rank := table.Ranking()
	if rank[0].Bot != "bots/good" || rank[0].Played != 4 || rank[1].Reasons["crashed"] != 4 {
		t.Errorf("ranking %+v", rank)
	}
	if n := l.Running(); n != 0 {
		t.Errorf("%d bots left", n)
	}
}

func TestRunBenchChecksEverythingFirst(t *testing.T) {
	l := fake.NewLauncher(map[string]fake.Script{"bots/a": {}, "bots/b": {}})
	o := orchestrator.New(l)
	plan := orchestrator.BenchPlan{Game: tanks.New(), Maps: []engine.Map{tanksMap(t, "classic")}, Bots: []string{"bots/a", "bots/missing"}}
	report := func(orchestrator.BenchOutcome) { t.Error("a match was played") }
	if err := o.RunBench(t.Context(), plan, 1, report); !errors.Is(err, matches.ErrImageNotFound) {
		t.Errorf("missing image: %v", err)
	}
	plan.Bots = []string{"bots/a"}
	if err := o.RunBench(t.Context(), plan, 1, report); !errs.IsInvalid(err) {
		t.Errorf("one bot: %v", err)
	}
	plan.Bots, plan.Maps = []string{"bots/a", "bots/b"}, []engine.Map{tanksMap(t, "crossroads")}
	plan.Settings = []byte(`{"nope":1}`)
	if err := o.RunBench(t.Context(), plan, 1, report); !errs.IsInvalid(err) {
		t.Errorf("bad settings: %v", err)
	}
	if len(l.Bots()) != 0 {
		t.Errorf("%d bots started", len(l.Bots()))
	}
}

// Cancelling a tournament reports no interrupted match as a result.
func TestRunBenchCancel(t *testing.T) {
	hold := make(chan struct{})
	defer close(hold)
	l := fake.NewLauncher(map[string]fake.Script{"bots/a": {Hold: hold}, "bots/b": {}})
	o := orchestrator.New(l)
	plan := orchestrator.BenchPlan{Game: tanks.New(), Maps: []engine.Map{tanksMap(t, "classic")}, Bots: []string{"bots/a", "bots/b"}, Repeats: 6}
	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		defer cancel()
		if err := poll.Wait(20*time.Second, func() error {
			if n := len(l.Bots()); n < 2 {
				return fmt.Errorf("%d bots started, want the first match's 2", n)
			}
			return nil
		}); err != nil {
			t.Error(err)
		}
	}()
	err := o.RunBench(ctx, plan, 2, func(b orchestrator.BenchOutcome) { t.Errorf("reported %+v", b) })
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v", err)
	}
	if n := l.Running(); n != 0 {
		t.Errorf("%d bots left", n)
	}
}
