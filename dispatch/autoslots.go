package dispatch

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"
)

// Slots that follow the host. A worker whose MaxConcurrency is above its
// Concurrency takes one more match at a time while all its slots play
// and the host's CPUs stay idle (bots that wait more than they think),
// and one fewer, down to Concurrency, while the CPUs are busy. The
// server hands the work queue as many matches as the workers report.
// autoEvery is how often the worker looks (a variable for tests); it
// decides every autoWindow looks.
var autoEvery = time.Second

const (
	autoWindow = 5
	// autoGrowIdle: at least this share of the host's CPU time idle over
	// a window, every slot playing in most of it: one slot more.
	autoGrowIdle = 0.40
	// autoShrinkIdle: less idle than this: one slot fewer.
	autoShrinkIdle = 0.20
)

// CPUTimes reads the host's CPU time since boot, all CPUs: the time busy
// and the total.
type CPUTimes func() (busy, total uint64, err error)

// ProcStat reads the host's CPU time from /proc/stat (in clock ticks):
// all but idle is busy, I/O wait included (starting and removing
// containers waits on the disk: a host waiting so has no room for more).
func ProcStat() (busy, total uint64, err error) {
	f, err := os.Open("/proc/stat")
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	line, err := bufio.NewReader(f).ReadString('\n')
	if err != nil {
		return 0, 0, fmt.Errorf("/proc/stat: %w", err)
	}
	return parseCPULine(line)
}

// parseCPULine reads /proc/stat's "cpu  user nice system idle iowait irq
// softirq steal guest guest_nice" line. Guest time is in user time
// already.
func parseCPULine(line string) (busy, total uint64, err error) {
	fields := strings.Fields(line)
	if len(fields) < 5 || fields[0] != "cpu" {
		return 0, 0, fmt.Errorf("/proc/stat: not a cpu line: %q", line)
	}
	var idle uint64
	for i, f := range fields[1:min(len(fields), 9)] {
		v, err := strconv.ParseUint(f, 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("/proc/stat: %q: %w", line, err)
		}
		total += v
		if i == 3 { // idle
			idle = v
		}
	}
	return total - idle, total, nil
}

// nextSlots is the rule: slots now, the base and the bound, how many of
// the window's looks found every slot playing, and the share of CPU time
// idle over it.
func nextSlots(slots, base, most, fullLooks int, idle float64) int {
	switch {
	case fullLooks*5 >= autoWindow*4 && idle >= autoGrowIdle && slots < most:
		return slots + 1
	case idle < autoShrinkIdle && slots > base:
		return slots - 1
	}
	return slots
}

// slotGate is a worker's slots now: the takers numbered past it wait.
type slotGate struct {
	mu      sync.Mutex
	n       int
	changed chan struct{}
}

func newSlotGate(n int) *slotGate { return &slotGate{n: n, changed: make(chan struct{})} }

func (g *slotGate) get() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.n
}

// set changes the slots; false when they were n already.
func (g *slotGate) set(n int) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if n == g.n {
		return false
	}
	g.n = n
	close(g.changed)
	g.changed = make(chan struct{})
	return true
}

// wait waits until taker i (from 0) has a slot; false once ctx ends.
func (g *slotGate) wait(ctx context.Context, i int) bool {
	for {
		g.mu.Lock()
		n, changed := g.n, g.changed
		g.mu.Unlock()
		if i < n {
			return ctx.Err() == nil
		}
		select {
		case <-ctx.Done():
			return false
		case <-changed:
		}
	}
}

// adaptSlots follows the host until ctx ends (see above).
func (w *Worker) adaptSlots(ctx context.Context) {
	cpu := w.cfg.CPU
	if cpu == nil {
		cpu = ProcStat
	}
	busy0, total0, err := cpu()
	if err != nil {
		w.log.Warn("the host's CPU time does not read: the worker keeps its slots", zap.Int("slots", w.cfg.Concurrency), zap.Error(err))
		return
	}
	t := time.NewTicker(autoEvery)
	defer t.Stop()
	looks, full := 0, 0
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		slots := w.slots.get()
		w.mu.Lock()
		playing := len(w.running)
		w.mu.Unlock()
		if playing >= slots {
			full++
		}
		if looks++; looks < autoWindow {
			continue
		}
		busy, total, err := cpu()
		if err != nil || total <= total0 {
			if err == nil {
				err = errors.New("no CPU time passed")
			}
			w.log.Debug("the host's CPU time", zap.Error(err))
			looks, full = 0, 0
			continue
		}
		idle := 1 - float64(max(busy, busy0)-busy0)/float64(total-total0)
		busy0, total0 = busy, total
		if n := nextSlots(slots, w.cfg.Concurrency, w.cfg.MaxConcurrency, full, idle); w.slots.set(n) {
			w.log.Info("slots follow the host", zap.Int("slots", n), zap.Int("before", slots), zap.Float64("cpu_idle", idle))
			w.mu.Lock()
			w.playingChangedLocked()
			w.mu.Unlock()
		}
		looks, full = 0, 0
	}
}
