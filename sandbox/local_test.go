package sandbox_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"arena/internal/testsupport/dockertest"
	"arena/internal/testsupport/poll"
	"arena/sandbox"
)

func TestSplitCommand(t *testing.T) {
	tests := []struct {
		give    string
		want    []string
		wantErr bool
	}{
		{give: "./mybot", want: []string{"./mybot"}},
		{give: "python3 bot.py", want: []string{"python3", "bot.py"}},
		{give: "  python3   bot.py  ", want: []string{"python3", "bot.py"}},
		{give: `'python3 bot.py'`, want: []string{"python3 bot.py"}},
		{give: `node "my bot.js" --fast`, want: []string{"node", "my bot.js", "--fast"}},
		{give: `a\ b "x\"y" 'it''s'`, want: []string{"a b", `x"y`, "its"}},
		{give: "", want: nil},
		{give: `'open`, wantErr: true},
		{give: `"open`, wantErr: true},
	}
	for _, tt := range tests {
		got, err := sandbox.SplitCommand(tt.give)
		if (err != nil) != tt.wantErr || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("SplitCommand(%q) = %q, %v; want %q (error %v)", tt.give, got, err, tt.want, tt.wantErr)
		}
	}
}

func newLocal(t *testing.T) *sandbox.Local {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs bot processes (skipped with -short)")
	}
	l, err := sandbox.NewLocal(sandbox.DefaultPolicy(), zaptest.NewLogger(t), dockertest.GoBinary(t, dockertest.Root(), "./cmd/arena"))
	if err != nil {
		t.Fatal(err)
	}
	isolated, why := l.Isolated()
	if os.Geteuid() == 0 && !isolated {
		t.Fatalf("running as root but local bots are not isolated: %s", why)
	}
	return l
}

func startLocal(t *testing.T, l *sandbox.Local, mode string) *sandbox.Process {
	t.Helper()
	return startLocalSpec(t, l, mode, sandbox.Spec{BotID: "local", MaxMessageBytes: 1 << 20})
}

// startLocalSpec starts the test bot in a mode under a spec (its image
// filled in).
func startLocalSpec(t *testing.T, l *sandbox.Local, mode string, spec sandbox.Spec) *sandbox.Process {
	t.Helper()
	bin := dockertest.GoBinary(t, dockertest.Root(), "./internal/testsupport/testbots/tankbot")
	img, err := l.Image("exec:" + bin + " " + mode)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(img.ID, "exec:sha256:") {
		t.Errorf("image id %q", img.ID)
	}
	spec.Image = img
	p, err := l.Start(t.Context(), spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close(context.Background()) })
	return p
}

func TestLocalBot(t *testing.T) {
	l := newLocal(t)
	p := startLocal(t, l, "probe")
	deadline := time.Now().Add(10 * time.Second)
	for turn := 0; turn < 3; turn++ {
		if err := p.Send([]byte(stateLine), deadline); err != nil {
			t.Fatal(err)
		}
		if got, err := p.Receive(t.Context(), deadline); err != nil || string(got) != "[]" {
			t.Fatalf("turn %d: %q, %v", turn, got, err)
		}
	}
	// Its stderr is read on its own, in no order with its answers.
	var stderr string
	poll.Until(t, 5*time.Second, func() error {
		if stderr += string(p.TakeStderr().Text); !strings.Contains(stderr, `"BotID":"local"`) {
			return fmt.Errorf("ARENA_BOT_ID not in the environment: %q", stderr)
		}
		return nil
	})
	if isolated, _ := l.Isolated(); isolated {
		if u := p.Usage(); u.Source == "" || u.CPU <= 0 {
			t.Errorf("usage of an isolated bot: %+v", u)
		}
	}
	if exit := p.Stop(t.Context()); exit.Code != 137 {
		t.Errorf("stopped: %+v, want killed", exit)
	}
}

func TestLocalBotMemoryLimit(t *testing.T) {
	l := newLocal(t)
	if isolated, why := l.Isolated(); !isolated {
		t.Skipf("local bots are not isolated here (%s): no limit to test", why)
	}
	p := startLocal(t, l, "oom-at=1")
	deadline := time.Now().Add(20 * time.Second)
	if err := p.Send([]byte(stateLine), deadline); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Receive(t.Context(), deadline); !errors.Is(err, sandbox.ErrClosed) {
		t.Fatalf("err = %v, want the output closed by the OOM kill", err)
	}
	if exit := p.Exit(t.Context()); !exit.OOMKilled {
		t.Errorf("exit = %+v, want OOM killed", exit)
	}
}

// A spec's own memory limit applies in place of the policy's: a bot
// holding 96 MiB answers under the policy's 256 MiB and is OOM killed
// under a spec's 48 MiB.
func TestLocalBotMemoryLimitOfItsSpec(t *testing.T) {
	l := newLocal(t)
	if isolated, why := l.Isolated(); !isolated {
		t.Skipf("local bots are not isolated here (%s): no limit to test", why)
	}
	for _, tc := range []struct {
		memory int64
		killed bool
	}{{0, false}, {48 << 20, true}} {
		p := startLocalSpec(t, l, "hold-mib=96", sandbox.Spec{BotID: "local", MaxMessageBytes: 1 << 20, MemoryBytes: tc.memory})
		deadline := time.Now().Add(20 * time.Second)
		if err := p.Send([]byte(stateLine), deadline); err != nil && !tc.killed {
			t.Fatal(err)
		}
		_, err := p.Receive(t.Context(), deadline)
		if tc.killed {
			if !errors.Is(err, sandbox.ErrClosed) {
				t.Errorf("memory %d: err = %v, want the output closed by the OOM kill", tc.memory, err)
			}
			if exit := p.Exit(t.Context()); !exit.OOMKilled {
				t.Errorf("memory %d: exit = %+v, want OOM killed", tc.memory, exit)
			}
		} else if err != nil {
			t.Errorf("under the policy's memory: %v", err)
		}
	}
	img, err := l.Image("exec:/bin/true")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Start(t.Context(), sandbox.Spec{Image: img, BotID: "tiny", MemoryBytes: 1 << 20}); !errors.Is(err, sandbox.ErrBadSpec) || !strings.Contains(err.Error(), "1048576") {
		t.Errorf("a 1 MiB limit: %v, want ErrBadSpec naming it", err)
	}
}

func TestLocalImageErrors(t *testing.T) {
	l := newLocal(t)
	for _, ref := range []string{"exec:", "exec:'unterminated", "exec:/no/such/program"} {
		if _, err := l.Image(ref); !errors.Is(err, sandbox.ErrBadReference) {
			t.Errorf("%q: %v, want ErrBadReference", ref, err)
		}
	}
}

// A bot stopped while it is thawed to answer — by no freeze of the
// runner's: a stray SIGSTOP — counts as kept from its work and is
// continued; a bot frozen at its answer stays frozen.
func TestLocalBotStoppedWhileAnsweringIsContinued(t *testing.T) {
	l := newLocal(t)
	if isolated, why := l.Isolated(); !isolated {
		t.Skipf("local bots are not isolated here (%s): nothing freezes them", why)
	}
	p := startLocal(t, l, "cpu=300ms")
	deadline := time.Now().Add(20 * time.Second)
	if err := p.Thaw(); err != nil {
		t.Fatalf("thaw: %v", err)
	}
	if err := p.Send([]byte(stateLine), deadline); err != nil {
		t.Fatal(err)
	}
	pid := pidOf(t, "cpu=300ms")
	syscall.Kill(pid, syscall.SIGSTOP)
	waitState(t, pid, 'T')
	if !p.Runnable() {
		t.Fatal("a bot stopped while it answers does not count as kept from its work")
	}
	if _, err := p.Receive(t.Context(), deadline); err != nil {
		t.Fatalf("the stopped bot was not continued: %v", err)
	}
	// Frozen: stopped by signals (T), or by the cgroup freezer, whose
	// frozen tasks the kernel shows in an uninterruptible wait (D).
	frozen := byte('T')
	if p.Freezing() == sandbox.CgroupFreezer {
		frozen = 'D'
	}
	waitState(t, pid, frozen)
	if p.Runnable() {
		t.Error("a bot frozen at its answer counts as kept from its work")
	}
	time.Sleep(50 * time.Millisecond) // Sleeps on purpose: proves it is not thawed meanwhile; a while later, still frozen.
	waitState(t, pid, frozen)
}

// pidOf finds the process whose command line holds arg.
func pidOf(t *testing.T, arg string) int {
	t.Helper()
	var found int
	poll.Until(t, 5*time.Second, func() error {
		dirs, _ := os.ReadDir("/proc")
		for _, d := range dirs {
			pid, err := strconv.Atoi(d.Name())
			if err != nil {
				continue
			}
			cmd, _ := os.ReadFile("/proc/" + d.Name() + "/cmdline")
			if strings.Contains(string(cmd), arg) && !strings.Contains(string(cmd), "__join") {
				found = pid
				return nil
			}
		}
		return fmt.Errorf("no process with %q in its command line", arg)
	})
	return found
}

// waitState waits until every thread of the process is in the state (a
// letter of /proc/PID/task/TID/stat), failing after a few seconds.
func waitState(t *testing.T, pid int, want byte) {
	t.Helper()
	poll.Until(t, 5*time.Second, func() error {
		tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
		if err != nil {
			t.Fatalf("process %d: %v", pid, err)
		}
		var got []string
		all := len(tasks) > 0
		for _, task := range tasks {
			stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/stat", pid, task.Name()))
			if err != nil {
				continue // the thread ended
			}
			line := string(stat)
			i := strings.LastIndexByte(line, ')')
			if i < 0 || i+2 >= len(line) {
				continue
			}
			got = append(got, task.Name()+":"+line[i+2:i+3])
			if line[i+2] != want {
				all = false
			}
		}
		if !all {
			return fmt.Errorf("the threads of process %d are not all in state %c: %v", pid, want, got)
		}
		return nil
	})
}
