package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"arena/internal/testsupport/dockertest"
	"arena/matches"
)

// arena runs the command in-process and returns its exit code and output.
// The test binary is not static, so it cannot be the bots' launcher on
// the FIFO path: commands run in-process take the attach stream, as they
// are told (which also keeps the warning about it out of their output).
func arena(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	t.Setenv("ARENA_STDIO", "attach")
	var out, errOut bytes.Buffer
	code = runMain(t.Context(), args, &out, &errOut)
	return code, out.String(), errOut.String()
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// Bad input is found before any container exists, with exit code 2 and a
// one-line reason naming the problem.
func TestRunRejectsBadInput(t *testing.T) {
	badMap := writeFile(t, "bad.json", `{"Width":4,"Height":4,"MapObjects":[{"Coordinates":{"X":9,"Y":1},"CellContentType":"Water"}]}`)
	notJSON := writeFile(t, "broken.json", `{"Width":`)
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"unknown game", []string{"run", "--game", "chess", "a", "b"}, `unknown game "chess"`},
		{"unknown map", []string{"run", "--map", "atlantis", "a", "b"}, `unknown map "atlantis"`},
		{"malformed map file", []string{"run", "--map", badMap, "a", "b"}, "MapObjects[0] at (9,1): outside the 4x4 map"},
		{"map file not JSON", []string{"run", "--map", notJSON, "a", "b"}, "not a map file"},
		{"map file missing", []string{"run", "--map", "./nope.json", "a", "b"}, "map file: open ./nope.json"},
		{"one bot for two seats", []string{"run", "arena/tanks-random"}, "map classic takes 2 bots, got 1"},
		{"too many bots for the spawns", []string{"run", "--map", "triad", "a", "b", "c", "d"}, "map triad takes 2 to 3 bots, got 4"},
		{"no bots", []string{"run", "--game", "tanks"}, "no bot images given"},
		{"bad seed", []string{"run", "--seed", "-1", "a", "b"}, "--seed"},
		{"bad flag", []string{"run", "--colour", "a", "b"}, "flag provided but not defined: -colour"},
		{"bad setting", []string{"run", "--memory", "lots", "a", "b"}, "--memory / ARENA_MEMORY"},
		{"bad settings JSON", []string{"run", "--settings", "{", "a", "b"}, "--settings is not a JSON object"},
		{"unknown command", []string{"fight"}, `unknown command "fight"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := arena(t, tt.args...)
			if code != exitUsage {
				t.Errorf("exit code %d, want %d", code, exitUsage)
			}
			lines := strings.Split(strings.TrimSpace(stderr), "\n")
			last := lines[len(lines)-1]
			if !strings.HasPrefix(last, "arena: ") || !strings.Contains(last, tt.want) {
				t.Errorf("stderr %q, want a line 'arena: …%s…'", stderr, tt.want)
			}
		})
	}
}

func TestRunSettingsRejectedByTheGame(t *testing.T) {
	cli := dockertest.Client(t)
	bots := dockertest.ExampleBots(t, cli)
	code, _, stderr := arena(t, "run", "--settings", `{"lasers":true}`, bots[0], bots[1])
	if code != exitUsage || !strings.Contains(stderr, `unknown field "lasers"`) {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}

func TestRunUnknownRuntime(t *testing.T) {
	cli := dockertest.Client(t)
	bots := dockertest.ExampleBots(t, cli)
	code, _, stderr := arena(t, "run", "--runtime", "warp-drive", bots[0], bots[1])
	if code != exitUsage || !strings.Contains(stderr, `the engine has no runtime "warp-drive" (it has: `) {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}

func TestRunMissingImage(t *testing.T) {
	cli := dockertest.Client(t)
	bots := dockertest.ExampleBots(t, cli)
	code, _, stderr := arena(t, "run", bots[0], "arena-test/not-built-anywhere")
	if code != exitPlatform {
		t.Errorf("exit code %d, want %d", code, exitPlatform)
	}
	if want := "image arena-test/not-built-anywhere not found locally"; !strings.Contains(stderr, want) || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
		t.Errorf("stderr %q, want one line with %q", stderr, want)
	}
	if left := containersOf(t, cli, os.Getpid()); len(left) > 0 {
		t.Errorf("%d containers created for a match that could not start", len(left))
	}
}

func TestRunLocalBot(t *testing.T) {
	cli := dockertest.Client(t)
	hunter := dockertest.ExampleBots(t, cli)[1]
	bin := dockertest.GoBinary(t, dockertest.Root(), "./internal/testsupport/testbots/tankbot")
	local := "exec:" + bin + " delay=1ms"
	code, stdout, stderr := arena(t, "run", "--json", local, hunter)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var res matches.Result
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatal(err)
	}
	if b := res.Bots[0]; b.ID != local || b.Status != "ok" || !strings.HasPrefix(b.ImageID, "exec:sha256:") {
		t.Errorf("local bot: %+v", b)
	}
	code, _, stderr = arena(t, "run", "exec:/no/such/bot", hunter)
	if code != exitUsage || !strings.Contains(stderr, "/no/such/bot") {
		t.Errorf("missing local command: exit %d, %s", code, stderr)
	}
}

func TestRunJSONReplayAndVerify(t *testing.T) {
	cli := dockertest.Client(t)
	bots := dockertest.ExampleBots(t, cli)
	replay := filepath.Join(t.TempDir(), "m.json")
	// Flags may follow the images.
	code, stdout, stderr := arena(t, "run", "--game", "tanks", bots[0], bots[1], "--json", "--replay", replay, "--seed", "11")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var res matches.Result
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatalf("stdout is not one JSON object: %v\n%s", err, stdout)
	}
	if res.Game != "tanks" || res.Map != "classic" || res.Seed != 11 || res.Turns == 0 || len(res.Winners) == 0 || res.Replay != replay {
		t.Errorf("result = %+v", res)
	}
	var raw map[string]any
	json.Unmarshal([]byte(stdout), &raw)
	bot := raw["bots"].([]any)[0].(map[string]any)
	for _, key := range []string{"id", "image", "image_id", "status", "fault_turn", "score", "death_reason", "death_turn", "answer_ms_p50", "answer_ms_max", "cpu_ms", "mem_peak_bytes"} {
		if _, ok := bot[key]; !ok {
			t.Errorf("bot result has no %q", key)
		}
	}
	for _, b := range res.Bots {
		if b.Status != "ok" {
			t.Errorf("%s: %s", b.ID, b.Status)
		}
	}
	code, stdout, stderr = arena(t, "replay", "verify", replay)
	if code != exitOK || !strings.Contains(stdout, "ok") {
		t.Errorf("verify: exit %d, %s%s", code, stdout, stderr)
	}
	// A corrupted replay fails verification with exit 1 and names the turn.
	data, _ := os.ReadFile(replay)
	var r matches.Replay
	json.Unmarshal(data, &r)
	r.Frames[len(r.Frames)-1].State = json.RawMessage(`{"Turn":0}`)
	bad := filepath.Join(t.TempDir(), "bad.json")
	matches.WriteReplay(bad, &r)
	code, _, stderr = arena(t, "replay", "verify", bad)
	if code != exitPlatform || !strings.Contains(stderr, "does not verify") || !strings.Contains(stderr, "the state differs") {
		t.Errorf("corrupted replay: exit %d, %s", code, stderr)
	}
	dockertest.NoContainersLeft(t, cli, res.MatchID)
}

func TestHumanSummary(t *testing.T) {
	cli := dockertest.Client(t)
	bots := dockertest.ExampleBots(t, cli)
	code, stdout, stderr := arena(t, "run", "--seed", "7", bots[0], bots[0])
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"tanks on classic, seed 7", "SEAT", bots[0] + "#2", "ok"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("summary lacks %q:\n%s", want, stdout)
		}
	}
	if !regexp.MustCompile(`turns in [0-9.]+s; (winner \S+|draw|shared win: .+)\n`).MatchString(stdout) {
		t.Errorf("summary lacks the outcome:\n%s", stdout)
	}
}

func TestHelp(t *testing.T) {
	code, stdout, _ := arena(t, "help")
	if code != exitOK || !strings.Contains(stdout, "arena run [flags] IMAGE IMAGE...") {
		t.Errorf("help: %d %s", code, stdout)
	}
	code, _, stderr := arena(t, "run", "-h")
	if code != exitOK {
		t.Errorf("run -h: exit %d", code)
	}
	for _, want := range []string{"Exit status", "classic", "crossroads", "-seed", "ARENA_MEMORY", "-timeout"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("run -h lacks %q", want)
		}
	}
	code, stdout, _ = arena(t, "help", "run")
	if code != exitOK || !strings.Contains(stdout, "ARENA_TURN_TIMEOUT") {
		t.Errorf("help run: %d", code)
	}
	if code, _, _ := arena(t); code != exitUsage {
		t.Errorf("no command: exit %d", code)
	}
}

func TestParseInterspersed(t *testing.T) {
	fs, o, _ := runFlags(new(bytes.Buffer))
	pos, err := parseInterspersed(fs, []string{"a", "--json", "b", "--game", "tanks", "--", "--c"})
	if err != nil || strings.Join(pos, " ") != "a b --c" || !o.json || o.game != "tanks" {
		t.Errorf("pos %q, json %v, game %q, err %v", pos, o.json, o.game, err)
	}
}
