package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/docker/docker/client"

	"arena/internal/dockertest"
	"arena/sandbox"
)

// arenaBinary builds the arena command as make build does: static, so
// bots' stdio takes the FIFO path.
func arenaBinary(t testing.TB) string {
	t.Helper()
	return dockertest.GoBinary(t, dockertest.Root(), "./cmd/arena")
}

// containersOf lists the Arena containers started by process pid.
func containersOf(t *testing.T, cli *client.Client, pid int) []string {
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
	for start := time.Now(); len(containersOf(t, cli, cmd.Process.Pid)) < 2; time.Sleep(50 * time.Millisecond) {
		if time.Since(start) > 30*time.Second {
			t.Fatalf("the match's containers did not appear; stderr: %s", stderr.String())
		}
	}
	time.Sleep(300 * time.Millisecond) // a few turns into the match
	return cmd, &stderr
}

// kill -9 of a running match leaves its containers; the next arena
// command, whatever it is, removes them.
func TestKilledRunIsCleanedUpByTheNextCommand(t *testing.T) {
	cli := dockertest.Client(t)
	bin := arenaBinary(t)
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
	out, err := exec.Command(bin, "help").CombinedOutput()
	if err != nil {
		t.Fatalf("arena help: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "removed 2 container(s) left by an Arena run that died") {
		t.Errorf("arena help did not report the clean-up:\n%s", out)
	}
	if left := containersOf(t, cli, pid); len(left) != 0 {
		t.Errorf("%d containers remain after the next command", len(left))
	}
	for _, dir := range stdioDirs {
		if _, err := os.Stat(dir); err == nil {
			t.Errorf("the FIFO folder %s remains", dir)
		}
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
