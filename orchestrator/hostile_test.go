package orchestrator_test

import (
	"encoding/json"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docker/docker/client"

	"arena/engine"
	"arena/engine/tanks"
	"arena/internal/testsupport/dockertest"
	"arena/matches"
	"arena/orchestrator"
	"arena/sandbox"
)

// stderrOf joins what a seat wrote to stderr over the whole match.
func stderrOf(rep *matches.Replay, seat int) string {
	var b strings.Builder
	for _, f := range rep.Frames {
		for _, fb := range f.Bots {
			if fb.Seat == seat {
				b.WriteString(fb.Stderr)
			}
		}
	}
	return b.String()
}

// Each hostile bot plays a normal bot (the hunter), over both stdio paths.
// It must end with the expected status at the expected turn, the normal
// bot must stay ok, the match must finish and verify, and no container may
// remain.
func TestHostileBots(t *testing.T) {
	for _, path := range []string{"attach", "fifo", "runsc"} {
		t.Run(path, func(t *testing.T) { testHostileBots(t, path) })
	}
}

func testHostileBots(t *testing.T, stdio string) {
	cli := dockertest.Client(t)
	hunter := dockertest.ExampleBots(t, cli)[1]
	policy := sandbox.DefaultPolicy()
	// Under gVisor, forks are refused inside the sandbox (not counted by
	// its cgroup) and a write to the read-only root is refused as a
	// permission.
	gvisor := stdio == "runsc"
	// The CPU-bound bots compute for a time by their own CPU clock. Under
	// gVisor that clock is gVisor's estimate, which runs on while the host
	// keeps the bot from a CPU, and an answer's CPU time includes gVisor's
	// work for the bot (SECURITY.md): here a bot that computed 60 ms by
	// its clock was charged up to 89 ms, and one that computed 150 ms less
	// than 100 ms. The margins are wider there.
	okCPU, slowCPU := "cpu=60ms", "cpu=150ms"
	if gvisor {
		okCPU, slowCPU = "cpu=30ms", "cpu=400ms"
	}
	tests := []struct {
		mode    string
		timeout time.Duration // 0: the game's 100 ms
		status  engine.Status
		turn    int
		detail  string
		check   func(t *testing.T, rep *matches.Replay, bot matches.BotResult)
	}{
		// The timing rule counts CPU time: a bot that computes too long is
		// timed out, one that sleeps as long is not, up to the wall-clock
		// cap (1 s here).
		{mode: okCPU, status: engine.StatusOK},
		{mode: slowCPU, status: engine.StatusTimeout, turn: 2, detail: "of CPU time"},
		{mode: "delay=150ms", status: engine.StatusOK},
		{mode: "delay=1500ms", status: engine.StatusTimeout, turn: 2, detail: "no answer within 1s"},
		{mode: "first-delay=1500ms", status: engine.StatusOK},
		{mode: "no-read", status: engine.StatusTimeout, turn: 1, detail: "no answer within 3s"},
		{mode: "hang-at=3", status: engine.StatusTimeout, turn: 3},
		{mode: "garbage-at=3", status: engine.StatusBadOutput, turn: 3, detail: "not a JSON array"},
		{mode: "invalid-utf8-at=2", status: engine.StatusBadOutput, turn: 2, detail: "not valid UTF-8"},
		{mode: "exit-at=4", status: engine.StatusCrashed, turn: 4, detail: "exited with code 3"},
		// Through the engine's attach stream a closed stdout looks like
		// silence: the bot times out. A FIFO shows the end of its output.
		{mode: "close-stdout-at=2", status: map[string]engine.Status{"attach": engine.StatusTimeout, "fifo": engine.StatusCrashed, "runsc": engine.StatusCrashed}[stdio], turn: 2},
		// Time enough to write the line: under gVisor, with the other
		// bots busy, its first MiB could cost more than 100 ms of CPU.
		{mode: "huge-line-at=2", timeout: 3 * time.Second, status: engine.StatusOutputLimit, turn: 2, detail: "longer than 4096 bytes"},
		{
			mode: "oom-at=2", timeout: 3 * time.Second, status: engine.StatusOOM, turn: 2,
			check: func(t *testing.T, _ *matches.Replay, b matches.BotResult) {
				if b.OOMKills < 1 || b.MemPeakBytes == nil || *b.MemPeakBytes < policy.MemoryBytes {
					t.Errorf("oom kills %d, peak %v: want the cgroup's counter and the limit reached", b.OOMKills, b.MemPeakBytes)
				}
			},
		},
		{
			// Time enough to write it: under gVisor, with the other bots
			// busy, a MiB of stderr could cost more than 100 ms of CPU.
			mode: "stderr-flood", timeout: 3 * time.Second, status: engine.StatusOK,
			check: func(t *testing.T, rep *matches.Replay, b matches.BotResult) {
				kept := 0
				for _, f := range rep.Frames {
					for _, fb := range f.Bots {
						if fb.Seat == 0 {
							if len(fb.Stderr) > sandbox.DefaultStderrCaps.PerTake {
								t.Fatalf("turn %d kept %d bytes of stderr", f.Turn, len(fb.Stderr))
							}
							kept += len(fb.Stderr)
						}
					}
				}
				if int64(kept) > sandbox.DefaultStderrCaps.Total || b.StderrDropped < 1<<20 {
					t.Errorf("kept %d bytes, dropped %d", kept, b.StderrDropped)
				}
			},
		},
		{
			// Starting processes takes a while (much longer under gVisor).
			mode: "fork-bomb-at=2", timeout: 5 * time.Second, status: engine.StatusOK,
			check: func(t *testing.T, rep *matches.Replay, b matches.BotResult) {
				if (b.PidsLimitHits < 1 && !gvisor) || !strings.Contains(stderrOf(rep, 0), "FORK refused") {
					t.Errorf("the pids limit was not hit: %d hits, stderr %q", b.PidsLimitHits, stderrOf(rep, 0))
				}
			},
		},
		{
			mode: "fill-tmp-at=1", status: engine.StatusOK,
			check: func(t *testing.T, rep *matches.Replay, _ matches.BotResult) {
				m := regexp.MustCompile(`TMP wrote (\d+) bytes: (.*)`).FindStringSubmatch(stderrOf(rep, 0))
				if m == nil {
					t.Fatalf("no report: %q", stderrOf(rep, 0))
				}
				if n, _ := strconv.ParseInt(m[1], 10, 64); n > policy.TmpfsBytes || m[2] == "<nil>" {
					t.Errorf("wrote %s bytes to /tmp (%s), limit %d", m[1], m[2], policy.TmpfsBytes)
				}
			},
		},
		{
			mode: "write-root-at=1", status: engine.StatusOK,
			check: func(t *testing.T, rep *matches.Replay, _ matches.BotResult) {
				refused := "ROOT write: open /evil: read-only file system"
				if gvisor {
					refused = "ROOT write: open /evil: permission denied"
				}
				if !strings.Contains(stderrOf(rep, 0), refused) {
					t.Errorf("writing to / was not refused: %q", stderrOf(rep, 0))
				}
			},
		},
		{
			mode: "probe", status: engine.StatusOK,
			check: func(t *testing.T, rep *matches.Replay, _ matches.BotResult) {
				_, report, ok := strings.Cut(stderrOf(rep, 0), "PROBE ")
				if !ok {
					t.Fatal("no probe report")
				}
				var p struct {
					UID, GID        int
					CapEff          string
					NoNewPrivs      string
					Interfaces      []string
					RootWriteErr    string
					TmpWriteErr     string
					DockerSockFound []string
					DialErr         string
					PID             int
				}
				if err := json.Unmarshal([]byte(strings.TrimSpace(report)), &p); err != nil {
					t.Fatal(err)
				}
				checks := []struct {
					what string
					ok   bool
				}{
					{"not root", p.UID != 0 && p.GID != 0},
					{"no capabilities", p.CapEff == "0000000000000000"},
					{"no new privileges", p.NoNewPrivs == "1"},
					{"only loopback", slices.Equal(p.Interfaces, []string{"lo"})},
					{"read-only root", strings.Contains(p.RootWriteErr, "read-only") || gvisor && strings.Contains(p.RootWriteErr, "permission denied")},
					{"writable /tmp", p.TmpWriteErr == ""},
					{"no Docker socket", len(p.DockerSockFound) == 0},
					{"nothing listening", p.DialErr != ""},
					{"its own pid namespace, under an init", p.PID > 1 && p.PID < 100},
				}
				for _, c := range checks {
					if !c.ok {
						t.Errorf("%s: probe says %+v", c.what, p)
					}
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			t.Parallel()
			bot := dockertest.TestBot(t, cli, tt.mode)
			rep := play(t, cli, matches.Request{
				Seed: 3, Images: []string{bot, hunter}, Settings: json.RawMessage(`{"zone_radius":14}`),
				Limits: matches.Limits{WarmUp: 3 * time.Second, AnswerTimeout: tt.timeout},
			}, stdio)
			got, normal := rep.Result.Bots[0], rep.Result.Bots[1]
			if got.Status != tt.status || got.FaultTurn != tt.turn || !strings.Contains(got.FaultDetail, tt.detail) {
				t.Errorf("status %s at turn %d (%q), want %s at turn %d (%q)", got.Status, got.FaultTurn, got.FaultDetail, tt.status, tt.turn, tt.detail)
			}
			if normal.Status != engine.StatusOK {
				t.Errorf("the normal bot is %s: %s", normal.Status, normal.FaultDetail)
			}
			if rep.Result.Turns == 0 || len(rep.Result.Winners) == 0 {
				t.Errorf("the match did not finish: %+v", rep.Result)
			}
			// After its fault the bot is never asked again; the engine is
			// told its status instead.
			for _, f := range rep.Frames[1:] {
				for _, b := range f.Bots {
					if tt.turn > 0 && b.Seat == 0 && f.Turn > tt.turn && (b.Asked || b.Fault != tt.status || b.Answer != "") {
						t.Fatalf("turn %d: after its fault the bot is recorded as %+v", f.Turn, b)
					}
				}
			}
			figuresAddUp(t, rep, false)
			if err := matches.Verify([]engine.Game{tanks.New()}, rep); err != nil {
				t.Errorf("the replay does not verify: %v", err)
			}
			if tt.check != nil {
				tt.check(t, rep, got)
			}
		})
	}
}

// playAtOnce plays Tanks matches on the classic map at the same time and
// checks that each left no container behind.
func playAtOnce(t testing.TB, cli *client.Client, o *orchestrator.Orchestrator, reqs []matches.Request) []*matches.Replay {
	t.Helper()
	var wg sync.WaitGroup
	reps := make([]*matches.Replay, len(reqs))
	errs := make([]error, len(reqs))
	for i, req := range reqs {
		req.Game, req.Map, req.MatchID = tanks.New(), classic(t), matches.NewMatchID()
		t.Cleanup(func() { dockertest.NoContainersLeft(t, cli, req.MatchID) })
		wg.Add(1)
		go func() {
			defer wg.Done()
			reps[i], errs[i] = o.Play(t.Context(), req)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("match %d: %v", i, err)
		}
	}
	return reps
}

// A match's own memory limit (a contest's) applies to each of its bots in
// place of the policy's, and its replay records it: a bot holding 96 MiB
// is OOM killed under 48 MiB, and the replay verifies.
func TestAMatchsMemoryLimit(t *testing.T) {
	cli := dockertest.Client(t)
	hunter := dockertest.ExampleBots(t, cli)[1]
	bot := dockertest.TestBot(t, cli, "hold-mib=96")
	rep := play(t, cli, matches.Request{
		Seed: 3, Images: []string{bot, hunter}, Settings: json.RawMessage(`{"zone_radius":14}`),
		Limits: matches.Limits{WarmUp: 3 * time.Second, MemoryBytes: 48 << 20},
	}, "fifo")
	if got := rep.Result.Bots[0]; got.Status != engine.StatusOOM || got.FaultTurn != 1 {
		t.Errorf("the bot holding 96 MiB under 48: %s at turn %d (%s)", got.Status, got.FaultTurn, got.FaultDetail)
	}
	if normal := rep.Result.Bots[1]; normal.Status != engine.StatusOK {
		t.Errorf("the hunter (also under 48 MiB) is %s: %s", normal.Status, normal.FaultDetail)
	}
	if rep.Limits.MemoryBytes != 48<<20 {
		t.Errorf("the replay's limits %+v, want memory_bytes %d", rep.Limits, 48<<20)
	}
	if err := matches.Verify([]engine.Game{tanks.New()}, rep); err != nil {
		t.Errorf("the replay does not verify: %v", err)
	}

	// A rerun applies the recorded limit: the bot is killed again at its
	// first answer (a fault then, none now); with the record taken out it
	// runs under the policy's 256 MiB and answers.
	o := newOrchestrator(t, cli, "fifo")
	res, err := o.Rerun(t.Context(), []engine.Game{tanks.New()}, orchestrator.RerunRequest{Replay: rep, Seat: 0}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Differs || len(res.Steps) != 1 || res.Steps[0].Now != nil {
		t.Errorf("rerun under the recorded 48 MiB: differs %v, steps %+v", res.Differs, res.Steps)
	}
	free := *rep
	free.Limits.MemoryBytes = 0
	res, err = o.Rerun(t.Context(), []engine.Game{tanks.New()}, orchestrator.RerunRequest{Replay: &free, Seat: 0}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Differs || len(res.Steps) != 1 || res.Steps[0].Now == nil {
		t.Errorf("rerun under the policy's memory: differs %v, steps %+v", res.Differs, res.Steps)
	}
}
