package main

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"arena/internal/testsupport/dockertest"
	"arena/internal/testsupport/poll"
)

func readCSV(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

func TestBench(t *testing.T) {
	cli := dockertest.Client(t)
	dockertest.ExampleBots(t, cli)
	idle := dockertest.TestBot(t, cli, "ok")
	out := filepath.Join(t.TempDir(), "results.csv")
	// The pattern finds both example bots; the third is named.
	code, stdout, stderr := arena(t, "bench", "--game", "tanks", "--bots", "arena-test/tanks-*,"+idle, "--maps", "classic,triad", "--repeats", "2", "--jobs", "2", "--seed", "5", "--out", out)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	rows := readCSV(t, out)
	// 3 pairs × 2 maps × 2 repeats.
	if len(rows) != 13 || strings.Join(rows[0], ",") != strings.Join(benchColumns, ",") {
		t.Fatalf("%d rows, header %v", len(rows), rows[0])
	}
	col := map[string]int{}
	for i, c := range rows[0] {
		col[c] = i
	}
	for _, r := range rows[1:] {
		if r[col["error"]] != "" || r[col["winner"]] == "" || r[col["p0_status"]] != "ok" {
			t.Errorf("row %v", r)
		}
		if r[col["p0_death"]] != "" && r[col["p0_death_round"]] == "" {
			t.Errorf("a death without its round: %v", r)
		}
	}
	for _, want := range []string{"Final ranking (12 of 12 matches", "arena-test/tanks-hunter", "95% INTERVAL", "How each bot's matches ended", "[12/12]"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
	// The same tournament seed plays the same matches: with bots that
	// decide deterministically, the same CSV but for the timing columns.
	hunter := dockertest.ExampleBots(t, cli)[1]
	csvOf := func() [][]string {
		path := filepath.Join(t.TempDir(), "same.csv")
		if code, _, stderr := arena(t, "bench", "--game", "tanks", "--bots", hunter+","+idle, "--maps", "classic,triad", "--repeats", "2", "--jobs", "2", "--seed", "9", "--out", path); code != exitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		rows := readCSV(t, path)
		for _, r := range rows[1:] {
			r[col["match_id"]], r[col["duration_ms"]] = "", ""
		}
		slices.SortFunc(rows[1:], func(a, b []string) int { return strings.Compare(a[0], b[0]) })
		return rows
	}
	first, second := csvOf(), csvOf()
	if len(first) != 5 {
		t.Fatalf("%d rows, want a header and 4 matches", len(first))
	}
	for i := range first {
		if strings.Join(first[i], ",") != strings.Join(second[i], ",") {
			t.Errorf("row %d differs between two runs of the same seed:\n%v\n%v", i, first[i], second[i])
		}
	}

	code, _, stderr = arena(t, "bench", "--bots", "arena-test/nothing-*")
	if code != exitUsage || !strings.Contains(stderr, `no local image matches "arena-test/nothing-*"`) {
		t.Errorf("no match: %d %s", code, stderr)
	}
}

// Ctrl-C: the CSV keeps the finished matches and no container remains.
func TestBenchInterrupted(t *testing.T) {
	cli := dockertest.Client(t)
	slow := dockertest.TestBot(t, cli, "delay=20ms")
	hunter := dockertest.ExampleBots(t, cli)[1]
	bin := arenaBinary(t)
	out := filepath.Join(t.TempDir(), "results.csv")
	cmd := exec.Command(bin, "bench", "--bots", slow+","+hunter, "--repeats", "40", "--jobs", "2", "--out", out)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, time.Minute, func() error {
		if strings.Count(stdout.String(), "\n") < 4 {
			return fmt.Errorf("no progress: %s %s", stdout.String(), stderr.String())
		}
		return nil
	})
	cmd.Process.Signal(syscall.SIGINT)
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != exitPlatform || !strings.Contains(stderr.String(), "interrupted after") {
		t.Errorf("exit %v: %s", err, stderr.String())
	}
	rows := readCSV(t, out)
	if len(rows) < 3 || len(rows) > 40 {
		t.Errorf("%d rows kept", len(rows))
	}
	if left := containersOf(t, cli, cmd.Process.Pid); len(left) != 0 {
		t.Errorf("%d containers remain", len(left))
	}
}
