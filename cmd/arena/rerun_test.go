package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"arena/internal/testsupport/dockertest"
	"arena/matches"
)

// A match of the example bots, rerun: the hunter (deterministic) gives
// the same answers, shown side by side, up to the turn asked for; an
// image no longer present is named, with exit 1; bad usage is exit 2.
func TestReplayRerun(t *testing.T) {
	cli := dockertest.Client(t)
	bots := dockertest.ExampleBots(t, cli) // random, hunter
	dir := t.TempDir()
	file := filepath.Join(dir, "m.json")
	if code, _, stderr := arena(t, "run", "--game", "tanks", "--seed", "4", "--replay", file, bots[1], bots[0]); code != exitOK {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
	code, stdout, stderr := arena(t, "replay", "rerun", file, "--seat", "0", "--turn", "6")
	if code != exitOK {
		t.Fatalf("rerun: exit %d: %s\n%s", code, stderr, stdout)
	}
	for _, want := range []string{"Rerunning seat 0, " + bots[1], "TURN  THEN", "same", "Turn 6 (the last replayed):", "  input:", "seat 0 gave the same 6 answer(s), up to turn 6"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}

	rep, err := matches.ReadReplay(file)
	if err != nil {
		t.Fatal(err)
	}
	rep.Bots[0].ImageID = "sha256:" + strings.Repeat("0", 64)
	gone := filepath.Join(dir, "gone.json")
	if err := matches.WriteReplay(gone, rep); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = arena(t, "replay", "rerun", gone, "--seat", "0")
	if code != exitPlatform || !strings.Contains(stderr, "the recorded image is no longer present: sha256:000") || !strings.Contains(stderr, "was "+bots[1]) {
		t.Errorf("image gone: exit %d: %s", code, stderr)
	}

	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{file}, "--seat: which bot to rerun?"},
		{[]string{file, "--seat", "7"}, "--seat 7: the match in " + file + " has seats 0 to 1"},
		{[]string{file, "--seat", "0", "--turn", "100000"}, "--turn 100000: seat 0 answered in turns 1 to"},
		{[]string{filepath.Join(dir, "none.json"), "--seat", "0"}, "no such file"},
	} {
		code, _, stderr := arena(t, append([]string{"replay", "rerun"}, tt.args...)...)
		if code != exitUsage || !strings.Contains(stderr, tt.want) {
			t.Errorf("%v: exit %d, %q; want 2 with %q", tt.args, code, stderr, tt.want)
		}
	}
	_ = os.Remove(gone)
}
