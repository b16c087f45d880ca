package dispatch

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The rule: one slot more when every slot played most of the window and
// the CPUs idled; one fewer, down to the base, when they were busy.
func TestTheSlotsRule(t *testing.T) {
	for _, c := range []struct {
		slots, full int
		idle        float64
		want        int
	}{
		{1, 5, 0.9, 2},  // full and idle: grow
		{1, 4, 0.40, 2}, // four looks of five full is full
		{1, 3, 0.9, 1},  // a slot was free: no need
		{4, 5, 0.9, 4},  // at the bound
		{3, 5, 0.3, 3},  // busy enough: stay
		{3, 5, 0.1, 2},  // too busy: shrink
		{1, 5, 0.0, 1},  // never below the base
		{2, 0, 0.19, 1}, // shrink when busy, even with slots free
	} {
		if got := nextSlots(c.slots, 1, 4, c.full, c.idle); got != c.want {
			t.Errorf("nextSlots(%d slots, %d full looks, %.2f idle) = %d, want %d", c.slots, c.full, c.idle, got, c.want)
		}
	}
	busy, total, err := parseCPULine("cpu  100 5 50 800 40 3 2 0 0 0\n")
	if err != nil || busy != 200 || total != 1000 {
		t.Errorf("parseCPULine: busy %d of %d, %v; want 200 of 1000 (I/O wait is busy)", busy, total, err)
	}
	if _, _, err := parseCPULine("intr 1 2 3"); err == nil {
		t.Error("a line that is not the CPUs' was read")
	}
	if _, _, err := ProcStat(); err != nil {
		t.Errorf("this host's /proc/stat: %v", err)
	}
}

// A worker of 1 to 3 slots whose matches wait on the host while its
// CPUs idle takes a second and a third match at once, says so to the
// server, and goes back to one slot when the CPUs are busy.
func TestAWorkersSlotsFollowTheHost(t *testing.T) {
	every := autoEvery
	autoEvery = 10 * time.Millisecond
	t.Cleanup(func() { autoEvery = every })
	r := newRig(t, Config{})
	var idle atomic.Bool
	idle.Store(true)
	var busy, total uint64
	cpu := func() (uint64, uint64, error) {
		total += 100
		if !idle.Load() {
			busy += 95
		} else {
			busy += 10
		}
		return busy, total, nil
	}
	hold := make(chan struct{})
	w := r.worker("w1", bots(hold), WorkerConfig{Concurrency: 1, MaxConcurrency: 3, CPU: cpu})
	waitFor(t, "the worker's one slot", func() bool { return r.d.Slots() == 1 })
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() {
			if _, err := r.d.Play(t.Context(), request(t, fmt.Sprintf("aaaaaaaaaaa%d", i), nil)); err != nil {
				t.Error(err)
			}
		})
	}
	waitFor(t, "three matches at once", func() bool { return w.busy() == 3 && r.d.Slots() == 3 })
	// Sleeps on purpose: proves no fourth match is taken meanwhile, over
	// four windows of the slots' decisions.
	time.Sleep(20 * autoEvery * autoWindow / 5)
	if n := w.busy(); n != 3 {
		t.Errorf("%d matches at once, past the bound of 3", n)
	}
	idle.Store(false)
	waitFor(t, "back to one slot", func() bool { return r.d.Slots() == 1 && w.slots.get() == 1 })
	close(hold)
	wg.Wait()
}
