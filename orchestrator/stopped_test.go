package orchestrator_test

import (
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"arena/engine"
	"arena/engine/tanks"
	"arena/internal/testsupport/dockertest"
	"arena/matches"
	"arena/orchestrator"
)

// A bot whose helper never stays at one pid (it computes ~0.2 ms, starts
// its successor and exits, forever) against one that needs 60 ms an
// answer (30 ms under gVisor): whatever its cgroup uses is charged to its answers (at least
// 95% of it), or it is faulted for running while stopped; its opponent is
// unharmed; and every figure of every answer adds up.
func TestAPidHoppingBotIsCharged(t *testing.T) {
	cli := dockertest.Client(t)
	for _, stdio := range []string{"fifo", "runsc"} {
		t.Run(stdio, func(t *testing.T) {
			hop := dockertest.TestBot(t, cli, "hop")
			// Under gVisor an answer's CPU includes gVisor's own work, up to
			// half again of the bot's (hostile_test.go): its opponent
			// computes less there.
			need := "cpu=60ms"
			if stdio == "runsc" {
				need = "cpu=30ms"
			}
			slow := dockertest.TestBot(t, cli, need)
			rep := play(t, cli, matches.Request{Images: []string{hop, slow}}, stdio)
			h, o := rep.Result.Bots[0], rep.Result.Bots[1]
			if o.Status != engine.StatusOK {
				t.Errorf("the opponent is %s (%s)", o.Status, o.FaultDetail)
			}
			t.Logf("hopper: %s %s, %d answers, timing %q, cpu %v ms, stopped %v ms", h.Status, h.FaultDetail, h.Answers, h.Timing, *h.CPUMS, h.StoppedCPUMS)
			if stdio == "fifo" && !strings.Contains(h.Timing, "the cgroup freezer") {
				t.Errorf("timing %q: not frozen by the cgroup freezer", h.Timing)
			}
			var charged time.Duration
			for _, f := range rep.Frames {
				for _, fb := range f.Bots {
					if fb.Seat == 0 && fb.CPUUS != nil {
						charged += time.Duration(*fb.CPUUS+fb.StoppedCPUUS) * time.Microsecond
					}
				}
			}
			// Its cgroup's CPU, but for what it used starting (before its
			// first input, in no answer).
			total := time.Duration(*h.CPUMS * float64(time.Millisecond))
			if h.StartCPUMS != nil {
				total -= time.Duration(*h.StartCPUMS * float64(time.Millisecond))
			}
			switch {
			case h.Status == engine.StatusTimeout && strings.Contains(h.FaultDetail, "while it should have been stopped"):
			case h.Status != engine.StatusOK:
				t.Errorf("the hopper is %s (%s)", h.Status, h.FaultDetail)
			case stdio == "runsc":
				// gVisor's own work after the last answer is in the
				// cgroup's total and in no answer.
				if charged < total*90/100 {
					t.Errorf("charged %v of its cgroup's %v", charged, total)
				}
			case charged < total*95/100:
				t.Errorf("charged %v of its cgroup's %v", charged, total)
			}
			figuresAddUp(t, rep, false) // the hopper is many processes
			// Every answer of the opponent has its wait and memory peak:
			// under gVisor read just after the answer, off its path.
			for _, f := range rep.Frames {
				for _, fb := range f.Bots {
					if fb.Seat == 1 && fb.Asked && fb.Status == engine.StatusOK && (fb.WaitUS == nil || fb.MemPeakBytes <= 0) {
						t.Errorf("turn %d: the opponent's answer has wait %v and memory peak %d", f.Turn, ptr(fb.WaitUS), fb.MemPeakBytes)
					}
				}
			}
		})
	}
}

// figuresAddUp checks every answer's figures: none negative, the waiting
// within the answer's window, and, with checkCPU (one process on runc),
// so the CPU, but for a small excess, up to 0.8% of a 60 ms answer here
// (the kernel's clock for CPU time against Go's for wall time, or a Go
// bot's runtime threads): at most 2% and 200 µs. (Under gVisor an
// answer's CPU includes gVisor's own, on threads of its own; a bot of
// several processes may run them at once.)
func figuresAddUp(t testing.TB, rep *matches.Replay, checkCPU bool) {
	t.Helper()
	for _, f := range rep.Frames {
		for _, fb := range f.Bots {
			bad := fb.TimeUS < 0 || fb.StoppedCPUUS < 0
			if fb.CPUUS != nil && (*fb.CPUUS < 0 || checkCPU && *fb.CPUUS > fb.TimeUS+fb.TimeUS/50+200) {
				bad = true
			}
			if fb.WaitUS != nil && (*fb.WaitUS < 0 || *fb.WaitUS > fb.TimeUS) {
				bad = true
			}
			if bad {
				t.Errorf("turn %d seat %d: time %d µs, cpu %v, stopped %d, wait %v", f.Turn, fb.Seat, fb.TimeUS, ptr(fb.CPUUS), fb.StoppedCPUUS, ptr(fb.WaitUS))
			}
		}
	}
}

func ptr(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}

// An image whose command does not exist never ran: start_failed with the
// engine's reason, at turn 0, on both stdio paths.
func TestAMissingEntrypointIsStartFailed(t *testing.T) {
	cli := dockertest.Client(t)
	bad := dockertest.Build(t, cli, "arena-test/missing-entrypoint", `FROM scratch
COPY f /f
ENTRYPOINT ["/no/such/bot"]
`, map[string]string{"f": "x"})
	good := dockertest.ExampleBots(t, cli)[0]
	for _, stdio := range []string{"attach", "fifo"} {
		t.Run(stdio, func(t *testing.T) {
			rep := play(t, cli, matches.Request{Images: []string{bad, good}}, stdio)
			b := rep.Result.Bots[0]
			if b.Status != engine.StatusStartFailed || b.FaultTurn != 0 || !strings.Contains(b.FaultDetail, "/no/such/bot") {
				t.Errorf("the bot is %s at turn %d (%s), want start_failed at turn 0 naming /no/such/bot", b.Status, b.FaultTurn, b.FaultDetail)
			}
		})
	}
}

// A bot that drips its answer, a byte a millisecond and never a newline,
// on a host kept busy by spinning containers: it is timed out (by the
// wall-clock cap, or by the CPU its dripping costs), within the hard cap
// however long the load keeps it. The host may keep Arena itself from a
// CPU too: how late this process's own timers fire is measured and
// allowed for, as it is no wait of Arena's choosing.
func TestADrippingBotEndsWithinTheHardCap(t *testing.T) {
	cli := dockertest.Client(t)
	spinLoad(t, cli, 2*runtime.NumCPU())
	drip := dockertest.TestBot(t, cli, "drip-at=3")
	hunter := dockertest.ExampleBots(t, cli)[1]
	late := lateness(t)
	rep := play(t, cli, matches.Request{Images: []string{drip, hunter}}, "fifo")
	lag := late()
	d := rep.Result.Bots[0]
	if d.Status != engine.StatusTimeout || d.FaultTurn != 3 {
		t.Fatalf("the dripping bot is %s at turn %d (%s), want timeout at turn 3", d.Status, d.FaultTurn, d.FaultDetail)
	}
	lim := matches.Limits{}.Resolve(tanks.New().Protocol())
	fb := rep.Frames[3].Bots[0]
	took := time.Duration(fb.TimeUS) * time.Microsecond
	t.Logf("turn 3 took %v (cap %v, hard cap %v; this process's timers up to %v late): %s",
		took, orchestrator.WallCap(lim), orchestrator.HardCap(lim), lag, d.FaultDetail)
	if took > orchestrator.HardCap(lim)+250*time.Millisecond+lag {
		t.Errorf("the dripping bot's turn took %v, past the hard cap %v (timers up to %v late)", took, orchestrator.HardCap(lim), lag)
	}
}

// lateness measures, until the returned function is called, how late
// this process's timers fire: the most a 5 ms sleep overran.
func lateness(t testing.TB) func() time.Duration {
	done := make(chan struct{})
	worst := make(chan time.Duration, 1)
	go func() {
		var m time.Duration
		for {
			t0 := time.Now()
			select {
			case <-done:
				worst <- m
				return
			case <-time.After(5 * time.Millisecond):
			}
			m = max(m, time.Since(t0)-5*time.Millisecond)
		}
	}()
	var once sync.Once
	var got time.Duration
	stop := func() time.Duration {
		once.Do(func() { close(done); got = <-worst })
		return got
	}
	t.Cleanup(func() { stop() })
	return stop
}
