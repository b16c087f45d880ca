package orchestrator_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"arena/engine/tanks"
	"arena/matches"
	"arena/orchestrator/fake"
)

// checked plays a match and returns its replay, encoded, and the
// request a server would check it against.
func checked(t *testing.T) (*matches.Replay, []byte, matches.Request) {
	t.Helper()
	rep, _ := playFake(t, hunter(), fake.Script{})
	data, err := matches.EncodeReplay(rep)
	if err != nil {
		t.Fatal(err)
	}
	req := matches.Request{Game: tanks.New(), Map: tanksMap(t, "classic"), Seed: 3, Images: []string{"bots/a", "bots/b"},
		Settings: json.RawMessage(`{"zone_radius":20}`), MatchID: rep.MatchID, ImageIDs: []string{rep.Bots[0].ImageID, rep.Bots[1].ImageID}}
	return rep, data, req
}

// A replay streamed through the check comes out byte for byte, and the
// check returns it without its frames.
func TestCheckReplayStream(t *testing.T) {
	rep, data, req := checked(t)
	if err := matches.CheckReplay(req, rep); err != nil {
		t.Fatalf("the replay fails CheckReplay: %v", err)
	}
	var out bytes.Buffer
	got, err := matches.CheckReplayStream(req, bytes.NewReader(data), &out, nil)
	if err != nil {
		t.Fatalf("the replay fails the stream's check: %v", err)
	}
	if !bytes.Equal(out.Bytes(), data) {
		t.Error("what the check wrote is not the replay it read")
	}
	if got.Frames != nil || got.MatchID != rep.MatchID || got.Result.Turns != rep.Result.Turns || len(got.Bots) != 2 {
		t.Errorf("the replay returned: %+v", got)
	}
}

// Whatever either check refuses, the other does: the forgeries of a
// worker with a real replay in hand, and replays not as this package
// writes them.
func TestCheckReplayStreamRefusesWhatCheckReplayRefuses(t *testing.T) {
	_, data, req := checked(t)
	forged := map[string]func(r *matches.Replay){
		"swapped seats": func(r *matches.Replay) {
			r.Bots[0].Image, r.Bots[1].Image = r.Bots[1].Image, r.Bots[0].Image
			r.Result.Bots[0].Image, r.Result.Bots[1].Image = r.Result.Bots[1].Image, r.Result.Bots[0].Image
		},
		"wrong seed":                  func(r *matches.Replay) { r.Seed++; r.Result.Seed++ },
		"another match":               func(r *matches.Replay) { r.MatchID, r.Result.MatchID = "ccccccccccc1", "ccccccccccc1" },
		"another image":               func(r *matches.Replay) { r.Bots[1].ImageID, r.Result.Bots[1].ImageID = "sha256:0", "sha256:0" },
		"other limits":                func(r *matches.Replay) { r.Limits.AnswerTimeoutMS = 3000 },
		"another memory limit":        func(r *matches.Replay) { r.Limits.MemoryBytes = 64 << 20 },
		"another map, same name":      func(r *matches.Replay) { r.MapData += "\n" },
		"other winners":               func(r *matches.Replay) { r.Result.Winners = []string{"bots/b"} },
		"an answer changed":           func(r *matches.Replay) { r.Frames[4].Bots[0].Answer = `[{"Type":0,"Direction":0}]` },
		"a frame left out":            func(r *matches.Replay) { r.Frames = append(r.Frames[:3:3], r.Frames[4:]...) },
		"the last frame left out":     func(r *matches.Replay) { r.Frames = r.Frames[:len(r.Frames)-1] },
		"no frames":                   func(r *matches.Replay) { r.Frames = nil },
		"a result of another seat":    func(r *matches.Replay) { r.Result.Bots[0].ID = "bots/x" },
		"a bot fewer in the result":   func(r *matches.Replay) { r.Result.Bots = r.Result.Bots[:1] },
		"another format":              func(r *matches.Replay) { r.Format = "arena-replay/0" },
		"a score changed":             func(r *matches.Replay) { r.Result.Bots[0].Score += 7 },
		"the match id of the result":  func(r *matches.Replay) { r.Result.MatchID = "ccccccccccc1" },
		"a bot more than the request": func(r *matches.Replay) { r.Bots = append(r.Bots, r.Bots[1]) },
	}
	for name, forge := range forged {
		t.Run(name, func(t *testing.T) {
			var r matches.Replay
			if err := json.Unmarshal(data, &r); err != nil {
				t.Fatal(err)
			}
			forge(&r)
			b, err := matches.EncodeReplay(&r)
			if err != nil {
				t.Fatal(err)
			}
			if name != "another format" { // ReadReplay's concern, not CheckReplay's
				if err := matches.CheckReplay(req, &r); !errors.Is(err, matches.ErrForeignReplay) {
					t.Errorf("CheckReplay: %v", err)
				}
			}
			if _, err := matches.CheckReplayStream(req, bytes.NewReader(b), new(bytes.Buffer), nil); !errors.Is(err, matches.ErrForeignReplay) {
				t.Errorf("CheckReplayStream: %v", err)
			}
		})
	}
	text := string(data)
	malformed := map[string]string{
		"truncated":              text[:len(text)/2],
		"not JSON":               "hello",
		"an array":               "[" + text + "]",
		"something after it":     text + `{"more":1}`,
		"an unknown field":       strings.Replace(text, `"format":`, `"owner":"me","format":`, 1),
		"the result first":       resultFirst(t, data),
		"a field twice":          strings.Replace(text, `"format":`, `"seed":1,"format":`, 1),
		"a header field at last": text[:len(text)-2] + `,"stdio_path":"x"}`,
	}
	for name, bad := range malformed {
		t.Run(name, func(t *testing.T) {
			if _, err := matches.CheckReplayStream(req, strings.NewReader(bad), new(bytes.Buffer), nil); !errors.Is(err, matches.ErrForeignReplay) {
				t.Errorf("CheckReplayStream: %v", err)
			}
		})
	}
}

// resultFirst is the replay with its result moved before its frames.
func resultFirst(t *testing.T, data []byte) string {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString("{")
	for i, k := range []string{"format", "match_id", "game", "map", "map_data", "seed", "settings", "limits", "bots", "result", "frames"} {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`"` + k + `":` + string(m[k]))
	}
	b.WriteString("}")
	return b.String()
}

// A read cut short, or a copy that cannot be written, is an error of
// its own, not a forged replay.
func TestCheckReplayStreamCutShort(t *testing.T) {
	_, data, req := checked(t)
	cut := io.MultiReader(bytes.NewReader(data[:len(data)/2]), iotest.ErrReader(errors.New("connection reset")))
	if _, err := matches.CheckReplayStream(req, cut, new(bytes.Buffer), nil); err == nil || errors.Is(err, matches.ErrForeignReplay) || !strings.Contains(err.Error(), "connection reset") {
		t.Errorf("a cut read: %v", err)
	}
	full := &limitedWriter{room: len(data) / 3}
	if _, err := matches.CheckReplayStream(req, bytes.NewReader(data), full, nil); err == nil || errors.Is(err, matches.ErrForeignReplay) || !strings.Contains(err.Error(), "no space") {
		t.Errorf("a full disk: %v", err)
	}
}

type limitedWriter struct{ room int }

func (w *limitedWriter) Write(p []byte) (int, error) {
	if len(p) > w.room {
		return 0, errors.New("no space left on device")
	}
	w.room -= len(p)
	return len(p), nil
}
