package main

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/tracing"
	"github.com/chromedp/chromedp"
)

// taskTrace records the page's main-thread tasks in a DevTools trace of
// one category, "toplevel": each task with its wall time and its thread
// (CPU) time. A task longer by the clock than by the CPU waited for a
// core: on this machine the browser shares two cores with the match it
// shows.
type taskTrace struct {
	ctx    context.Context
	mu     sync.Mutex
	events []traceEvent
	done   chan bool // at each trace's end: whether events were lost
}

// traceEvent is what taskTrace reads of a trace event.
type traceEvent struct {
	Name string  `json:"name"`
	Ph   string  `json:"ph"`
	Ts   float64 `json:"ts"`   // µs
	Dur  float64 `json:"dur"`  // µs, wall
	Tdur float64 `json:"tdur"` // µs, the thread's CPU
	Pid  int     `json:"pid"`
	Tid  int     `json:"tid"`
	Args struct {
		Name string `json:"name"`
	} `json:"args"`
}

// tracedTask is a task of the page's main thread, in ms.
type tracedTask struct{ Ms, CPU float64 }

// tracedTasks are the tasks a trace found.
type tracedTasks []tracedTask

// newTaskTrace listens for the traces of the browser ctx drives.
func newTaskTrace(t testing.TB, ctx context.Context) *taskTrace {
	t.Helper()
	tt := &taskTrace{ctx: ctx, done: make(chan bool, 1)}
	err := chromedp.Listen(ctx, func(ev any) {
		switch e := ev.(type) {
		case *tracing.EventDataCollected:
			tt.mu.Lock()
			defer tt.mu.Unlock()
			for _, v := range e.Value {
				var te traceEvent
				if json.Unmarshal([]byte(v), &te) == nil && (te.Ph == "X" || te.Ph == "M") {
					tt.events = append(tt.events, te)
				}
			}
		case *tracing.EventTracingComplete:
			tt.done <- e.DataLossOccurred
		}
	})
	if err != nil {
		t.Fatalf("listen for traces: %v", err)
	}
	return tt
}

// start starts a trace.
func (tt *taskTrace) start(t testing.TB) {
	t.Helper()
	tt.mu.Lock()
	tt.events = nil
	tt.mu.Unlock()
	config := &tracing.TraceConfig{IncludedCategories: []string{"toplevel"}}
	if _, err := chromedp.Call(tt.ctx, tracing.Start, tracing.StartParams{TraceConfig: config}); err != nil {
		t.Fatalf("start a trace: %v", err)
	}
}

// stop ends the trace and gives the tasks of the page's main thread:
// the renderer's main thread (CrRendererMain) that worked the longest.
func (tt *taskTrace) stop(t testing.TB) tracedTasks {
	t.Helper()
	if _, err := chromedp.Call(tt.ctx, tracing.End, struct{}{}); err != nil {
		t.Fatalf("end the trace: %v", err)
	}
	select {
	case lost := <-tt.done:
		if lost {
			t.Fatal("the trace lost events (its buffer filled)")
		}
	case <-time.After(time.Minute):
		t.Fatal("the trace did not end within a minute")
	}
	tt.mu.Lock()
	defer tt.mu.Unlock()
	type thread struct{ pid, tid int }
	mains := map[thread]bool{}
	for _, e := range tt.events {
		if e.Ph == "M" && e.Name == "thread_name" && e.Args.Name == "CrRendererMain" {
			mains[thread{e.Pid, e.Tid}] = true
		}
	}
	tasks := map[thread][]traceEvent{}
	for _, e := range tt.events {
		if th := (thread{e.Pid, e.Tid}); e.Ph == "X" && mains[th] && strings.HasSuffix(e.Name, "RunTask") {
			tasks[th] = append(tasks[th], e)
		}
	}
	var busiest []traceEvent
	most := -1.0
	for _, ts := range tasks {
		sum := 0.0
		for _, e := range ts {
			sum += e.Dur
		}
		if sum > most {
			busiest, most = ts, sum
		}
	}
	// A task within a task (RunTask within ThreadControllerImpl::RunTask)
	// is part of it.
	slices.SortFunc(busiest, func(a, b traceEvent) int {
		return cmp.Or(cmp.Compare(a.Ts, b.Ts), cmp.Compare(b.Dur, a.Dur))
	})
	var out tracedTasks
	end := -1.0
	for _, e := range busiest {
		if e.Ts < end {
			continue
		}
		end = e.Ts + e.Dur
		out = append(out, tracedTask{e.Dur / 1000, e.Tdur / 1000})
	}
	return out
}

// longestCPU is the longest task by the CPU, in ms.
func (ts tracedTasks) longestCPU() float64 {
	m := 0.0
	for _, t := range ts {
		m = max(m, t.CPU)
	}
	return m
}

// String lists the tasks over 50 ms by the wall clock, each with its
// CPU time, for the log.
func (ts tracedTasks) String() string {
	var b strings.Builder
	for _, t := range ts {
		if t.Ms > 50 {
			fmt.Fprintf(&b, " %.0f ms (CPU %.0f)", t.Ms, t.CPU)
		}
	}
	if b.Len() == 0 {
		return " none"
	}
	return b.String()
}
