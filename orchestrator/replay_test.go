package orchestrator_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"arena/engine"
	"arena/engine/tanks"
	"arena/matches"
	"arena/orchestrator"
	"arena/orchestrator/fake"
)

// hunter answers a move or a shot, so the replay has answers that matter.
func hunter() fake.Script {
	return fake.Script{Answer: func(n int, _ [][]byte) []byte {
		if n%2 == 0 {
			return []byte(`[{"Type":1,"Direction":3}]`)
		}
		return []byte(`[{"Type":0,"Direction":1}]`)
	}}
}

// A replay survives the file, and tampering with it is caught at the
// turn tampered with.
func TestReplayFileAndVerify(t *testing.T) {
	rep, _ := playFake(t, hunter(), fake.Script{Answer: func(int, [][]byte) []byte { return []byte("[\xff]") }})
	path := filepath.Join(t.TempDir(), "m.json")
	if err := matches.WriteReplay(path, rep); err != nil {
		t.Fatal(err)
	}
	back, err := matches.ReadReplay(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := matches.Verify(games, back); err != nil {
		t.Fatalf("the replay read back does not verify: %v", err)
	}
	if fb := back.Frames[1].Bots[1]; fb.AnswerB64 == "" || fb.Answer != "" {
		t.Errorf("a non-UTF-8 answer is kept as base64: %+v", fb)
	}
	tamper := []struct {
		name   string
		change func(r *matches.Replay)
		turn   int
		reason string
	}{
		{"an answer", func(r *matches.Replay) { r.Frames[4].Bots[0].Answer = `[{"Type":0,"Direction":0}]` }, 4, "the state differs"},
		{"a state", func(r *matches.Replay) { r.Frames[2].State = json.RawMessage(`{"x":1}`) }, 2, "the state differs"},
		{"a missing answer", func(r *matches.Replay) { r.Frames[3].Bots = r.Frames[3].Bots[1:] }, 3, "has no answer from it"},
		{"the end", func(r *matches.Replay) { r.Frames = r.Frames[:len(r.Frames)-1] }, len(rep.Frames) - 2, "goes on after the replay's last frame"},
		{"the winners", func(r *matches.Replay) { r.Result.Winners = []string{"nobody"} }, rep.Result.Turns, "different winners"},
		{"a score", func(r *matches.Replay) { r.Result.Bots[0].Score += 7 }, rep.Result.Turns, "different result for bots/a"},
	}
	for _, tt := range tamper {
		t.Run(tt.name, func(t *testing.T) {
			r, err := matches.ReadReplay(path)
			if err != nil {
				t.Fatal(err)
			}
			tt.change(r)
			var mm *matches.Mismatch
			if err := matches.Verify(games, r); !errors.As(err, &mm) || mm.Turn != tt.turn || !strings.Contains(err.Error(), tt.reason) {
				t.Errorf("verify says %v, want a mismatch at turn %d: %s", err, tt.turn, tt.reason)
			}
		})
	}
}

func TestReadReplayRefusesOtherFiles(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{
		"not-json.json": "hello",
		"other.json":    `{"format":"something/9"}`,
	} {
		path := filepath.Join(dir, name)
		os.WriteFile(path, []byte(content), 0o644)
		if _, err := matches.ReadReplay(path); err == nil || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := matches.ReadReplay(filepath.Join(dir, "none.json")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing file: %v", err)
	}
	if err := matches.Verify(games, &matches.Replay{Game: "chess"}); err == nil || !strings.Contains(err.Error(), "unknown game") {
		t.Errorf("verify of an unknown game: %v", err)
	}
	if err := matches.Verify([]engine.Game{}, &matches.Replay{Game: "tanks"}); err == nil {
		t.Error("verify without games succeeded")
	}
}

// A failed write leaves no file behind and names the problem.
func TestWriteReplayFailure(t *testing.T) {
	rep, _ := playFake(t, fake.Script{}, fake.Script{})
	dir := t.TempDir()
	if err := matches.WriteReplay(filepath.Join(dir, "missing", "m.json"), rep); err == nil {
		t.Error("writing into a missing folder succeeded")
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("left behind: %v", left)
	}
}

// A version 1 replay reads; a Pac-Man one is not verified, with a reason.
func TestReplayFormatV1(t *testing.T) {
	path := filepath.Join(t.TempDir(), "v1.json")
	os.WriteFile(path, []byte(`{"format":"arena-replay/1","game":"pacman"}`), 0o644)
	r, err := matches.ReadReplay(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := matches.Verify(games, r); err == nil || !strings.Contains(err.Error(), "can be watched but not verified") {
		t.Errorf("verify: %v", err)
	}
}

// ReplayFrames gives a replay's frames from an index on, as its file
// holds them, one at a time.
func TestReplayFrames(t *testing.T) {
	rep, _ := playFake(t, hunter(), fake.Script{})
	data, err := matches.EncodeReplay(rep)
	if err != nil {
		t.Fatal(err)
	}
	var got []int
	err = matches.ReplayFrames(bytes.NewReader(data), 3, func(i int, frame json.RawMessage) error {
		var f matches.Frame
		if err := json.Unmarshal(frame, &f); err != nil || f.Turn != rep.Frames[i].Turn || string(f.State) != string(rep.Frames[i].State) {
			t.Errorf("frame %d: %v", i, err)
		}
		got = append(got, i)
		return nil
	})
	if err != nil || len(got) != len(rep.Frames)-3 || got[0] != 3 {
		t.Errorf("frames %v of %d, %v", got, len(rep.Frames), err)
	}
	stop := errors.New("stop")
	if err := matches.ReplayFrames(bytes.NewReader(data), 0, func(int, json.RawMessage) error { return stop }); err != stop {
		t.Errorf("f's error: %v", err)
	}
	for _, bad := range []string{"", "[]", `{"format":"x"}`, `{"frames":{}}`} {
		if err := matches.ReplayFrames(strings.NewReader(bad), 0, func(int, json.RawMessage) error { return nil }); err == nil {
			t.Errorf("%q read as a replay", bad)
		}
	}
}

// A replay is encoded a frame at a time, to the very bytes encoding/json
// gives the whole (HTML unescaped): with frames and a full result, with
// no frames, and with an empty list of them.
func TestEncodeReplayStreamsEncodingJSON(t *testing.T) {
	played, _ := playFake(t, hunter(), fake.Script{})
	played.Frames[0].State = json.RawMessage(`{"note":"<a&b>"}`)
	played.StdioPath = "fifo"
	none, empty := *played, *played
	none.Frames, empty.Frames = nil, []matches.Frame{}
	for name, rep := range map[string]*matches.Replay{"played": played, "no frames": &none, "empty frames": &empty} {
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(rep); err != nil {
			t.Fatal(err)
		}
		got, err := matches.EncodeReplay(rep)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !bytes.Equal(got, want.Bytes()) {
			t.Errorf("%s: streamed\n%.300s\nencoding/json\n%.300s", name, got, want.Bytes())
		}
	}
	if len(played.Frames) < 2 || len(played.Result.Bots) == 0 {
		t.Fatalf("the played replay is too small to tell: %d frames", len(played.Frames))
	}
}

// A match's own memory limit reaches each bot's spec, is recorded in the
// replay (and only then: a match without one writes its limits as before),
// is part of what a replay is checked against, and is applied again when a
// seat is rerun.
func TestAMatchsMemoryLimitIsRecordedAndRerun(t *testing.T) {
	for _, memory := range []int64{0, 64 << 20} {
		l := fake.NewLauncher(map[string]fake.Script{"bots/a": hunter(), "bots/b": {}})
		o := orchestrator.New(l)
		req := matches.Request{
			Game: tanks.New(), Map: tanksMap(t, "classic"), Seed: 3, Images: []string{"bots/a", "bots/b"},
			Settings: json.RawMessage(`{"zone_radius":20}`), Limits: matches.Limits{MemoryBytes: memory},
		}
		rep, err := o.Play(t.Context(), req)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range l.Bots() {
			if b.Spec().MemoryBytes != memory {
				t.Errorf("memory %d: %s started with memory %d", memory, b.Spec().BotID, b.Spec().MemoryBytes)
			}
		}
		if rep.Limits.MemoryBytes != memory {
			t.Errorf("memory %d: the replay records %+v", memory, rep.Limits)
		}
		data, err := matches.EncodeReplay(rep)
		if err != nil {
			t.Fatal(err)
		}
		if recorded := bytes.Contains(data, []byte(`"memory_bytes":`)); recorded != (memory != 0) {
			t.Errorf("memory %d: memory_bytes in the replay's JSON: %v", memory, recorded)
		}

		req.MatchID, req.ImageIDs = rep.MatchID, []string{rep.Bots[0].ImageID, rep.Bots[1].ImageID}
		if _, err := matches.CheckReplayStream(req, bytes.NewReader(data), new(bytes.Buffer), nil); err != nil {
			t.Errorf("memory %d: the replay fails its own request's check: %v", memory, err)
		}
		other := req
		other.Limits.MemoryBytes = 128 << 20
		if err := matches.CheckReplay(other, rep); !errors.Is(err, matches.ErrForeignReplay) {
			t.Errorf("memory %d: checked against a request of 128 MiB: %v, want ErrForeignReplay", memory, err)
		}

		before := len(l.Bots())
		if _, err := o.Rerun(t.Context(), games, orchestrator.RerunRequest{Replay: rep, Seat: 0, Turn: 2}, nil); err != nil {
			t.Fatal(err)
		}
		if bots := l.Bots(); len(bots) != before+1 || bots[before].Spec().MemoryBytes != memory {
			t.Errorf("memory %d: the rerun's bot did not start with the recorded memory", memory)
		}
	}
}
