package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"arena/internal/testsupport/dockertest"
	"arena/internal/testsupport/poll"
	"arena/matches"
)

// When the FIFO path cannot be used, every command says so on stderr, and
// the result and the replay say how the bots' stdio travelled.
func TestAttachStreamIsReported(t *testing.T) {
	cli := dockertest.Client(t)
	bots := dockertest.ExampleBots(t, cli)
	// arena built as plain go build builds it, with cgo: not static, so it
	// cannot be the bots' launcher.
	bin := filepath.Join(t.TempDir(), "arena-dynamic")
	build := exec.Command("go", "build", "-o", bin, "./cmd/arena")
	build.Dir = dockertest.Root()
	build.Env = append(os.Environ(), "CGO_ENABLED=1")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	replay := filepath.Join(t.TempDir(), "m.json")
	cmd := exec.Command(bin, "run", "--json", "--replay", replay, "--settings", `{"zone_radius":3}`, bots[0], bots[1])
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("arena run: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "arena: warning: bots' stdio uses the engine's attach stream, which is slower: the launcher ") {
		t.Errorf("no warning on stderr: %q", stderr.String())
	}
	var res matches.Result
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(res.StdioPath, "attach (the launcher ") || res.Bots[0].Status != "ok" {
		t.Errorf("result stdio_path %q", res.StdioPath)
	}
	rep, err := matches.ReadReplay(replay)
	if err != nil {
		t.Fatal(err)
	}
	if rep.StdioPath != res.StdioPath {
		t.Errorf("replay stdio_path %q, result %q", rep.StdioPath, res.StdioPath)
	}
}

// A launcher copy is never removed while a live process uses it, even by
// the clean-up of another build; once nobody does, clean-up removes it.
func TestLauncherCopyOfALiveServerIsKept(t *testing.T) {
	cli := dockertest.Client(t)
	bots := dockertest.ExampleBots(t, cli)
	serverBin := arenaBinary(t)
	// Another build of arena: same source, other link flags.
	otherBin := filepath.Join(t.TempDir(), "arena-other")
	build := exec.Command("go", "build", "-trimpath", "-ldflags=-X main.buildNote=other", "-o", otherBin, "./cmd/arena")
	build.Dir = dockertest.Root()
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	stdio := t.TempDir()
	port := freePort(t)
	srvCmd := exec.Command(serverBin, "serve", "--port", strconv.Itoa(port), "--data", t.TempDir())
	srvCmd.Env = append(os.Environ(), "ARENA_STDIO_DIR="+stdio)
	var serverLog bytes.Buffer
	srvCmd.Stderr = &serverLog
	if err := srvCmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srvCmd.Process.Kill(); srvCmd.Wait() })
	url := fmt.Sprintf("http://127.0.0.1:%d", port)
	poll.Until(t, 20*time.Second, func() error {
		res, err := http.Get(url + "/healthz")
		if err != nil {
			return fmt.Errorf("the server did not come up: %v\n%s", err, serverLog.String())
		}
		res.Body.Close()
		return nil
	})
	copies, _ := filepath.Glob(filepath.Join(stdio, "launch-*"))
	if len(copies) != 1 {
		t.Fatalf("launcher copies %v, want the server's one", copies)
	}
	cleanup := func() string {
		c := exec.Command(otherBin, "cleanup")
		c.Env = append(os.Environ(), "ARENA_STDIO_DIR="+stdio)
		out, err := c.CombinedOutput()
		if err != nil {
			t.Fatalf("arena cleanup: %v\n%s", err, out)
		}
		return string(out)
	}
	cleanup()
	if _, err := os.Stat(copies[0]); err != nil {
		t.Fatalf("the live server's launcher copy was removed: %v", err)
	}
	// The server still plays over FIFOs.
	s := &server{url: url, stderr: &serverLog}
	id := s.post(t, fmt.Sprintf(`{"game":"tanks","bots":[%q,%q],"settings":{"zone_radius":3}}`, bots[0], bots[1]))
	m := s.waitStatus(t, id, "finished")
	if p := m["result"].(map[string]any)["stdio_path"]; p != "fifo" {
		t.Errorf("the server's match went over %v", p)
	}
	srvCmd.Process.Signal(os.Interrupt)
	srvCmd.Wait()
	if out := cleanup(); !strings.Contains(out, copies[0]) {
		t.Errorf("the copy nobody uses was not removed: %s", out)
	}
	if left, _ := filepath.Glob(filepath.Join(stdio, "launch-*")); len(left) != 0 {
		t.Errorf("left: %v", left)
	}
}
