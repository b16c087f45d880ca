package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"arena/internal/testsupport/dockertest"
	"arena/matches"
	"arena/orchestrator"
)

// boundedTurns is how long the bounded-output matches last: a zone of
// radius 1,010 shrinks for about 1,000 turns around two idle tanks.
const boundedZone = 1010

// peakRSS runs arena and returns its peak resident memory and output. The
// peak is the process's own high-water mark (VmHWM), read every few
// milliseconds while it runs, the last reading kept: the rusage a wait
// returns is no use here, since a child started by fork and exec counts
// the forking test process's resident memory as its own.
func peakRSS(t *testing.T, bin string, args ...string) (int64, []byte) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var peak atomic.Int64
	stop := make(chan struct{})
	polled := make(chan struct{})
	go func() {
		defer close(polled)
		for {
			if v, ok := readHWM(cmd.Process.Pid); ok && v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-stop:
				return
			case <-time.After(2 * time.Millisecond):
			}
		}
	}()
	err := cmd.Wait()
	close(stop)
	<-polled
	if err != nil {
		t.Fatalf("arena %v: %v\n%s", args, err, out.Bytes())
	}
	return peak.Load(), out.Bytes()
}

// readHWM is a live process's peak resident memory (VmHWM).
func readHWM(pid int) (int64, bool) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10, err == nil
		}
	}
	return 0, false
}

// A bot that answers the largest answer Tanks takes every turn, against
// one that floods stderr (1 MiB a turn), for 1,000 turns: the replay stays
// within the replay budget (plus the game's own states), and Arena's peak
// memory within 64 MiB of a short match's between quiet bots.
func TestOutputIsBoundedOnRun(t *testing.T) {
	cli := dockertest.Client(t)
	bin := arenaBinary(t)
	big := dockertest.TestBot(t, cli, "max-answer=4096")
	flood := dockertest.TestBot(t, cli, "stderr-flood")
	quiet := dockertest.TestBot(t, cli, "delay=0s")
	dir := t.TempDir()

	base, _ := peakRSS(t, bin, "run", "--json", "--settings", `{"zone_radius":20}`, quiet, quiet)
	replay := filepath.Join(dir, "bounded.json")
	peak, out := peakRSS(t, bin, "run", "--json", "--replay", replay, "--settings", fmt.Sprintf(`{"zone_radius":%d}`, boundedZone), big, flood)
	var res matches.Result
	if err := json.Unmarshal(out[bytesIndex(out, '{'):], &res); err != nil {
		t.Fatalf("the result: %v\n%s", err, out)
	}
	st, err := os.Stat(replay)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d turns: replay %.1f MiB; peak RSS %.1f MiB (a short quiet match: %.1f MiB); %s %s, %s %s (%d stderr bytes dropped)",
		res.Turns, mib(st.Size()), mib(peak), mib(base), res.Bots[0].Status, res.Bots[0].FaultDetail, res.Bots[1].Status, res.Bots[1].FaultDetail, res.Bots[1].StderrDropped)
	if res.Turns < 1000 {
		t.Errorf("only %d turns", res.Turns)
	}
	for _, b := range res.Bots {
		if b.Status != "ok" {
			t.Errorf("%s is %s (%s)", b.ID, b.Status, b.FaultDetail)
		}
	}
	// The answers are within the budget; the rest is the game's states
	// (~3 KiB a turn) and the capped stderr (256 KiB a bot).
	if st.Size() > orchestrator.DefaultReplayBudget {
		t.Errorf("the replay is %.1f MiB, over the %d MiB budget", mib(st.Size()), orchestrator.DefaultReplayBudget>>20)
	}
	if peak-base > 64<<20 {
		t.Errorf("Arena's peak memory grew by %.1f MiB over a quiet match's", mib(peak-base))
	}
}

func mib(n int64) float64 { return float64(n) / (1 << 20) }

func bytesIndex(b []byte, c byte) int {
	for i, x := range b {
		if x == c {
			return i
		}
	}
	return 0
}

// vmHWM is a running process's peak resident memory (/proc/PID/status).
func vmHWM(t *testing.T, pid int) int64 {
	t.Helper()
	v, ok := readHWM(pid)
	if !ok {
		t.Fatalf("no VmHWM for %d", pid)
	}
	return v
}

// The same match through arena serve and a worker joined over NATS: the
// server's and the worker's peak memory stay within the target, 64 MiB
// over what they had after a short quiet match. The worker spools the
// replay it records to a file, a frame at a time, and uploads it from
// there; live frames travel as plain NATS messages, never stored; the
// server keeps a playing match's frames in a file and checks the
// worker's replay into a file as it streams in; both collect garbage at
// GOGC=50. Measured here: server +44 to +50 MiB, worker +22 to +25 (it
// was +78 to +94 and +65 to +73 before the spool, the plain frames and
// the collector's target).
func TestOutputIsBoundedThroughServeAndAWorker(t *testing.T) {
	cli := dockertest.Client(t)
	bin := arenaBinary(t)
	big := ownTag(t, cli, dockertest.TestBot(t, cli, "max-answer=4096"))
	flood := ownTag(t, cli, dockertest.TestBot(t, cli, "stderr-flood"))
	quiet := ownTag(t, cli, dockertest.TestBot(t, cli, "delay=0s"))
	data := t.TempDir()
	natsAddr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	s := startServer(t, bin, data, freePort(t), "--concurrency", "0", "--nats-listen", natsAddr)
	tok, err := exec.Command(bin, "join-token", "--data", data).Output()
	if err != nil {
		t.Fatalf("arena join-token: %v", err)
	}
	w := startProc(t, "w1", bin, "worker", "--nats", "nats://"+natsAddr, "--join", strings.TrimSpace(string(tok)), "--data", t.TempDir(), "--name", "w1", "--concurrency", "1")
	play := func(settings string, bots ...string) map[string]any {
		t.Helper()
		id := s.post(t, fmt.Sprintf(`{"game":"tanks","bots":[%q,%q],"settings":%s}`, bots[0], bots[1], settings))
		m := s.waitStatus(t, id, "finished", "failed")
		if m["status"] != "finished" {
			t.Fatalf("match %s: %v", id, m)
		}
		return m
	}
	play(`{"zone_radius":20}`, quiet, quiet)
	baseServer, baseWorker := vmHWM(t, s.cmd.Process.Pid), vmHWM(t, w.cmd.Process.Pid)
	m := play(fmt.Sprintf(`{"zone_radius":%d}`, boundedZone), big, flood)
	peakServer, peakWorker := vmHWM(t, s.cmd.Process.Pid), vmHWM(t, w.cmd.Process.Pid)
	res := m["result"].(map[string]any)
	t.Logf("%v turns; peak RSS: server %.1f MiB (after a quiet match %.1f), worker %.1f MiB (%.1f)",
		res["turns"], mib(peakServer), mib(baseServer), mib(peakWorker), mib(baseWorker))
	if turns, _ := res["turns"].(float64); turns < 1000 {
		t.Errorf("only %v turns", res["turns"])
	}
	for _, b := range res["bots"].([]any) {
		if b := b.(map[string]any); b["status"] != "ok" {
			t.Errorf("%s is %s (%s)", b["id"], b["status"], b["fault_detail"])
		}
	}
	if peakServer-baseServer > 64<<20 {
		t.Errorf("the server's peak memory grew by %.1f MiB", mib(peakServer-baseServer))
	}
	if peakWorker-baseWorker > 64<<20 {
		t.Errorf("the worker's peak memory grew by %.1f MiB", mib(peakWorker-baseWorker))
	}
}
