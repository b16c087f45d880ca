package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"arena/internal/testsupport/dockertest"
	"arena/internal/testsupport/poll"
	"arena/matches"
)

// Two `arena run`s at once: every bot has a uid of its own, whatever its
// image says (the test bots' images all say 65534), so a bot that holds
// every inotify instance its user may have does not make a bot of the
// other match fail to get one.
func TestBotsDoNotShareUsers(t *testing.T) {
	cli := dockertest.Client(t)
	bin := arenaBinary(t)
	hog := dockertest.TestBot(t, cli, "inotify-hog,probe,delay=200ms")
	check := dockertest.TestBot(t, cli, "inotify-check,probe,delay=20ms")
	dir := t.TempDir()
	run := func(name, zone string, bots ...string) (*exec.Cmd, *bytes.Buffer, string) {
		replay := filepath.Join(dir, name+".json")
		cmd := exec.Command(bin, append([]string{"run", "--timeout", "2s", "--settings", `{"zone_radius":` + zone + `}`, "--replay", replay}, bots...)...)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill() })
		return cmd, &out, replay
	}
	hogRun, hogOut, hogReplay := run("hog", "40", hog, hog)
	hogDone := make(chan error, 1)
	// The hogs hold their instances from their first turn on.
	poll.Until(t, 30*time.Second, func() error {
		if n := len(containersOf(t, cli, hogRun.Process.Pid)); n < 2 {
			return fmt.Errorf("the hogs did not start (%d containers): %s", n, hogOut)
		}
		return nil
	})
	// Sleeps on purpose: a second into the hogging match, then the
	// checking one beside it.
	time.Sleep(time.Second)
	go func() { hogDone <- hogRun.Wait() }()
	checkRun, checkOut, checkReplay := run("check", "12", check, check)
	if err := checkRun.Wait(); err != nil {
		t.Fatalf("the checking match: %v\n%s", err, checkOut)
	}
	select {
	case <-hogDone:
		t.Fatal("the hogging match ended before the checking one: they did not overlap")
	default:
	}
	if err := <-hogDone; err != nil {
		t.Fatalf("the hogging match: %v\n%s", err, hogOut)
	}
	uids := map[int]string{}
	for _, path := range []string{hogReplay, checkReplay} {
		rep, err := matches.ReadReplay(path)
		if err != nil {
			t.Fatal(err)
		}
		for seat := range rep.Bots {
			stderr := ""
			for _, f := range rep.Frames {
				for _, b := range f.Bots {
					if b.Seat == seat {
						stderr += b.Stderr
					}
				}
			}
			if strings.Contains(stderr, "INOTIFY failed") {
				t.Errorf("%s seat %d could not get an inotify instance: %s", filepath.Base(path), seat, stderr)
			}
			if path == hogReplay && !strings.Contains(stderr, "INOTIFY held 128") {
				t.Errorf("the hog of seat %d did not hold its user's 128 instances: %q", seat, stderr)
			}
			_, report, ok := strings.Cut(stderr, "PROBE ")
			if !ok {
				t.Fatalf("%s seat %d: no probe report", filepath.Base(path), seat)
			}
			var p struct{ UID int }
			json.NewDecoder(strings.NewReader(report)).Decode(&p)
			who := filepath.Base(path) + " seat " + string(rune('0'+seat))
			if other, taken := uids[p.UID]; taken || p.UID < 20000 {
				t.Errorf("%s runs as uid %d (also %s)", who, p.UID, other)
			}
			uids[p.UID] = who
		}
	}
}
