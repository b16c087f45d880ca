package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/docker/docker/client"

	"arena/internal/testsupport/dockertest"
	"arena/internal/testsupport/poll"
	"arena/sandbox"
)

// arenaBinary builds the arena command as make build does: static, so
// bots' stdio takes the FIFO path.
func arenaBinary(t testing.TB) string {
	t.Helper()
	return dockertest.GoBinary(t, dockertest.Root(), "./cmd/arena")
}

// containersOf lists the Arena containers started by process pid.
func containersOf(t testing.TB, cli *client.Client, pid int) []string {
	var ids []string
	for _, c := range dockertest.ArenaContainers(t, cli, "") {
		if o, err := sandbox.ParseOwner(c.Labels[sandbox.LabelOwner]); err == nil && o.PID == pid {
			ids = append(ids, c.ID)
		}
	}
	return ids
}

// startLongMatch starts `arena run` with two slow bots and waits until
// both containers run.
func startLongMatch(t *testing.T, cli *client.Client, bin string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	slow := dockertest.TestBot(t, cli, "delay=50ms")
	cmd := exec.Command(bin, "run", slow, slow)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	poll.Until(t, 30*time.Second, func() error {
		if n := len(containersOf(t, cli, cmd.Process.Pid)); n < 2 {
			return fmt.Errorf("the match's containers did not appear (%d of 2); stderr: %s", n, stderr.String())
		}
		return nil
	})
	time.Sleep(300 * time.Millisecond) // Sleeps on purpose: a few turns into the match.
	return cmd, &stderr
}

// kill -9 of a running match leaves its containers and their FIFO
// folders. Commands that play no match leave them alone; arena cleanup
// (like the next run, serve or bench) removes them.
func TestKilledRunIsLeftToTheCleaningCommands(t *testing.T) {
	cli := dockertest.Client(t)
	bin := arenaBinary(t)
	tankbot := dockertest.GoBinary(t, dockertest.Root(), "./internal/testsupport/testbots/tankbot")
	replay := filepath.Join(t.TempDir(), "m.json")
	local := "exec:" + tankbot
	if out, err := exec.Command(bin, "run", "--settings", `{"zone_radius":2}`, "--replay", replay, local, local).CombinedOutput(); err != nil {
		t.Fatalf("arena run: %v\n%s", err, out)
	}
	cmd, _ := startLongMatch(t, cli, bin)
	pid := cmd.Process.Pid
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	orphans := containersOf(t, cli, pid)
	if len(orphans) != 2 {
		t.Fatalf("after kill -9: %d containers, want the 2 orphans", len(orphans))
	}
	var stdioDirs []string
	for _, id := range orphans {
		info, err := cli.ContainerInspect(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(defaultStdioDir, strings.TrimPrefix(info.Name, "/"))
		if _, err := os.Stat(dir); err != nil {
			t.Fatalf("the orphan's FIFO folder %s: %v", dir, err)
		}
		stdioDirs = append(stdioDirs, dir)
	}
	for _, args := range [][]string{{"help"}, {"replay", "verify", replay}, {"fight"}, {"doctor", "--rounds", "100"}} {
		out, _ := exec.Command(bin, args...).CombinedOutput()
		if left := containersOf(t, cli, pid); len(left) != 2 {
			t.Fatalf("arena %s removed the orphans (%d left):\n%s", strings.Join(args, " "), len(left), out)
		}
		for _, dir := range stdioDirs {
			if _, err := os.Stat(dir); err != nil {
				t.Fatalf("arena %s removed the FIFO folder %s", strings.Join(args, " "), dir)
			}
		}
	}
	out, err := exec.Command(bin, "cleanup").CombinedOutput()
	if err != nil {
		t.Fatalf("arena cleanup: %v\n%s", err, out)
	}
	for _, dir := range stdioDirs {
		if !strings.Contains(string(out), "removed "+filepath.Base(dir)+"\n") || !strings.Contains(string(out), "removed "+dir+"\n") {
			t.Errorf("arena cleanup does not report the container and the FIFO folder of %s:\n%s", filepath.Base(dir), out)
		}
		if _, err := os.Stat(dir); err == nil {
			t.Errorf("the FIFO folder %s remains", dir)
		}
	}
	if left := containersOf(t, cli, pid); len(left) != 0 {
		t.Errorf("%d containers remain after arena cleanup", len(left))
	}
}

func TestInterruptedRunRemovesItsContainers(t *testing.T) {
	cli := dockertest.Client(t)
	bin := arenaBinary(t)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			cmd, stderr := startLongMatch(t, cli, bin)
			pid := cmd.Process.Pid
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			err := cmd.Wait()
			if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != exitPlatform {
				t.Errorf("exit: %v, want code %d", err, exitPlatform)
			}
			if !strings.Contains(stderr.String(), "interrupted; the match's containers were removed") {
				t.Errorf("stderr: %s", stderr.String())
			}
			if left := containersOf(t, cli, pid); len(left) != 0 {
				t.Errorf("%d containers remain after %v", len(left), sig)
			}
		})
	}
}

// killRunWithAChild starts arena run with two local bots, the first of
// which starts a child, kills Arena with kill -9 and reports the bots'
// cgroups and whether the child outlived Arena.
func killRunWithAChild(t *testing.T, bin, bot string) ([]string, bool) {
	t.Helper()
	cmd := exec.Command(bin, "run", "--timeout", "2s", "--settings", `{"zone_radius":40}`,
		"exec:"+bot+" spawn,delay=100ms", "exec:"+bot+" delay=100ms")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		for _, pid := range processesOf(bot) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	poll.Until(t, 20*time.Second, func() error {
		if ps := processesOf(bot); len(ps) < 3 {
			return fmt.Errorf("the bots and the child did not start: %v\n%s", ps, out.String())
		}
		return nil
	})
	cgroups, _ := filepath.Glob(fmt.Sprintf("/sys/fs/cgroup/*/arena-local/%d-*", cmd.Process.Pid))
	if len(cgroups) == 0 {
		cgroups, _ = filepath.Glob(fmt.Sprintf("/sys/fs/cgroup/arena-local/%d-*", cmd.Process.Pid))
	}
	if len(cgroups) == 0 {
		t.Fatal("the local bots have no cgroups")
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	time.Sleep(200 * time.Millisecond) // Sleeps on purpose: whether the child outlives Arena: give it the time not to.
	return cgroups, len(processesOf(bot)) > 0
}

// arenaProcesses lists the other processes whose command line names
// arena.
func arenaProcesses() []string {
	var out []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		if pid, err := strconv.Atoi(e.Name()); err != nil || pid == os.Getpid() {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && bytes.Contains(cmdline, []byte("arena")) {
			out = append(out, e.Name()+": "+strings.Join(strings.Fields(string(bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '}))), " "))
		}
	}
	return out
}

// processesOf lists the processes running the executable at path.
func processesOf(path string) []int {
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if exe, err := os.Readlink(filepath.Join("/proc", e.Name(), "exe")); err == nil && exe == path {
			pids = append(pids, pid)
		}
	}
	return pids
}

// A local bot is in its cgroup before its first instruction, so a child it
// starts at once is in there too: after kill -9 of Arena, the next
// cleaning command leaves no bot process and no Arena cgroup behind.
func TestKilledRunLeavesNoLocalBot(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("local bots get cgroups only as root")
	}
	dockertest.Client(t) // arena cleanup reaches the engine too
	bin := arenaBinary(t)
	// A copy of the test bot of its own, to find its processes by.
	src := dockertest.GoBinary(t, dockertest.Root(), "./internal/testsupport/testbots/tankbot")
	bot := filepath.Join(t.TempDir(), "spawner")
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bot, data, 0o755); err != nil {
		t.Fatal(err)
	}
	// Another Arena process that starts meanwhile sweeps what the killed
	// run left, the child too, as it should; then there is nothing left to
	// prove, and the run is tried again.
	var cgroups []string
	for attempt := 1; ; attempt++ {
		var outlived bool
		cgroups, outlived = killRunWithAChild(t, bin, bot)
		if outlived {
			break
		}
		if attempt == 3 {
			t.Fatal("the child did not outlive Arena in 3 runs: nothing to prove")
		}
		t.Logf("run %d: the child did not outlive Arena (Arena processes meanwhile: %v); again", attempt, arenaProcesses())
	}
	if b, err := exec.Command(bin, "cleanup").CombinedOutput(); err != nil {
		t.Fatalf("arena cleanup: %v\n%s", err, b)
	}
	poll.Until(t, 5*time.Second, func() error {
		if ps := processesOf(bot); len(ps) > 0 {
			return fmt.Errorf("processes of the bots left: %v", ps)
		}
		return nil
	})
	for _, cg := range cgroups {
		if _, err := os.Stat(cg); err == nil {
			t.Errorf("cgroup %s left", cg)
		}
	}
}

// A server whose stderr's reader is gone (the test or shell that started
// it died) still stops on SIGTERM as it should: it removes its warm
// bots' containers rather than dying of SIGPIPE at its next log line.
func TestAServerWithAClosedStderrStopsCleanly(t *testing.T) {
	cli := dockertest.Client(t)
	bots := dockertest.ExampleBots(t, cli)
	bin := arenaBinary(t)
	port := freePort(t)
	cmd := exec.Command(bin, "serve", "--port", strconv.Itoa(port), "--data", t.TempDir(), "--log-level", "info", "--ladder", "off")
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = w
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	s := &server{cmd: cmd, url: fmt.Sprintf("http://127.0.0.1:%d", port), stderr: new(bytes.Buffer)}
	go io.Copy(s.stderr, r)
	s.waitHealthy(t)
	id := s.post(t, fmt.Sprintf(`{"game":"tanks","bots":[%q,%q]}`, bots[0], bots[1]))
	s.waitStatus(t, id, "finished")
	// The match's bots stay warm for the next: the server's to remove.
	poll.Until(t, 20*time.Second, func() error {
		if n := len(containersOf(t, cli, cmd.Process.Pid)); n == 0 {
			return fmt.Errorf("no warm container of the server's")
		}
		return nil
	})
	r.Close() // the reader is gone
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		t.Errorf("the server died of %v, not stopping as asked", ws.Signal())
	} else if err != nil {
		t.Errorf("the server stopped with %v", err)
	}
	if left := containersOf(t, cli, cmd.Process.Pid); len(left) != 0 {
		t.Errorf("%d containers of the server remain", len(left))
	}
}
