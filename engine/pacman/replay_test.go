package pacman

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"arena/engine"
)

// record plays g to its end with the answers and returns every frame.
func record(t *testing.T, g *match, before func(), answer func(seat, turn int) engine.Reply) []json.RawMessage {
	t.Helper()
	frames := []json.RawMessage{g.Frame()}
	for range 10000 {
		if before != nil {
			before()
		}
		st := g.Step()
		if st.Done {
			return frames
		}
		turn := g.Turn()
		r := answer(st.Await[0], turn+1)
		r.Seat = st.Await[0]
		g.Submit([]engine.Reply{r})
		if g.Turn() > turn {
			frames = append(frames, g.Frame())
		}
	}
	t.Fatal("the match did not end")
	return nil
}

func TestSaibloReplay(t *testing.T) {
	g := newMatch(9)
	pac := []int{right, right, up, up, left}
	ghosts := [][3]int{{1, 2, 3}, {4, 4, 4}}
	frames := record(t, g, shortLevels(g, 2), scripted(0, pac, ghosts))
	if len(frames) != 7 {
		t.Fatalf("%d frames, want 7 (turn 0 and two rounds per level)", len(frames))
	}
	out, err := SaibloReplay(frames)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	kinds := make([]string, len(lines))
	for i, l := range lines {
		var v map[string]any
		if err := json.Unmarshal([]byte(l), &v); err != nil {
			t.Fatalf("line %d is not JSON: %v", i+1, err)
		}
		switch {
		case v["board"] != nil:
			kinds[i] = "init"
		case v["StopReason"] != nil:
			kinds[i] = "end"
		default:
			kinds[i] = "round"
		}
	}
	want := "init round round init round round init round round end"
	if got := strings.Join(kinds, " "); got != want {
		t.Fatalf("lines: %s, want %s", got, want)
	}
	// The init lines are the ones the bots received.
	first := decodeFrame(t, frames[0])
	if lines[0]+"\n" != string(initLine(first.Init)) {
		t.Error("the first line is not the level's init line")
	}
	// A round line is the frame's round object, as the original wrote it.
	f1 := decodeFrame(t, frames[1])
	if lines[1]+"\n" != string(roundLine(&f1.roundInfo)) {
		t.Errorf("round line %s", lines[1])
	}
	if !strings.HasPrefix(lines[1], `{"round": 1, "level": 1, "pacman_step_block": [[`) || !strings.HasSuffix(lines[1], `"StopReason": null}`) {
		t.Errorf("round line %s", lines[1])
	}
	// The last line repeats the last round with its stop reason.
	last := decodeFrame(t, frames[len(frames)-1])
	if lines[len(lines)-1]+"\n" != string(roundLine(&last.roundInfo)) || !strings.HasSuffix(lines[len(lines)-1], `"StopReason": "time is up"}`) {
		t.Errorf("last line %s", lines[len(lines)-1])
	}
	if lines[len(lines)-2] != strings.Replace(lines[len(lines)-1], `"StopReason": "time is up"}`, `"StopReason": null}`, 1) {
		t.Error("the last round and the final line differ beyond the stop reason")
	}
}

func TestSaibloReplayOfAFault(t *testing.T) {
	g := newMatch(9)
	answer := func(seat, turn int) engine.Reply {
		if seat == 1 && turn == 3 {
			return engine.Reply{Fault: engine.StatusTimeout}
		}
		return scripted(0, nil, nil)(seat, turn)
	}
	out, err := SaibloReplay(record(t, g, nil, answer))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != 4 {
		t.Fatalf("%d lines, want init, 2 rounds and the end", len(lines))
	}
	want := `"events": [], "portal_available": false, "StopReason": "Unexpected behavior of player 1, judger returned error type TLE."}`
	if !strings.HasPrefix(lines[3], `{"round": 2, "level": 1, "pacman_step_block": [[`) || !strings.HasSuffix(lines[3], want) {
		t.Errorf("last line %s", lines[3])
	}
	// The original's final line keeps what its last round left: that
	// round's step blocks and skills.
	var played, end map[string]any
	if err := json.Unmarshal([]byte(lines[2]), &played); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(lines[3]), &end); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"pacman_step_block", "ghosts_step_block", "pacman_skills", "pacman_coord", "ghosts_coord", "score"} {
		a, _ := json.Marshal(played[k])
		b, _ := json.Marshal(end[k])
		if !bytes.Equal(a, b) {
			t.Errorf("%s: the last round has %s, the final line %s", k, a, b)
		}
	}
}

func TestSaibloReplayRejects(t *testing.T) {
	g := newMatch(1)
	f0 := g.Frame()
	drive(t, g, 2, nil, scripted(0, nil, nil))
	f1 := g.Frame()
	stopped := bytes.Replace(f1, []byte(`"StopReason":null`), []byte(`"StopReason":"x"`), 1)
	for _, tt := range []struct {
		name   string
		frames []json.RawMessage
		want   string
	}{
		{"no frames", nil, "no frames"},
		{"not the first frame", []json.RawMessage{f1}, "frame 0 has no init object"},
		{"garbage", []json.RawMessage{f0, json.RawMessage(`{"turn":`)}, "frame 1:"},
		{"unknown field", []json.RawMessage{f0, json.RawMessage(`{"turn":1,"bots":[]}`)}, `frame 1: json: unknown field "bots"`},
		{"frames after the end", []json.RawMessage{f0, stopped, f1}, "frame 1 ends the match but 1 frames follow"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := SaibloReplay(tt.frames)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want it to mention %q", err, tt.want)
			}
		})
	}
}
