package orchestrator_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"arena/engine"
	"arena/engine/pacman"
	"arena/internal/testsupport/dockertest"
	"arena/matches"
)

func pacmanMap(t *testing.T) engine.Map {
	t.Helper()
	m, err := pacman.New().Map("saiblo")
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// A whole three-level match through real containers, on the sequential
// protocol with length-prefixed answers, and its replay.
func TestPacmanMatch(t *testing.T) {
	cli := dockertest.Client(t)
	runner, ghosts := dockertest.PacBot(t, cli, "log-actions-from=1200"), dockertest.PacBot(t, cli, "role=1,log-actions-from=1200")
	rep := play(t, cli, matches.Request{Game: pacman.New(), Map: pacmanMap(t), Seed: 4, Images: []string{runner, ghosts}}, "fifo")
	for _, b := range rep.Result.Bots {
		if b.Status != engine.StatusOK {
			t.Errorf("%s: %s at %d: %s", b.ID, b.Status, b.FaultTurn, b.FaultDetail)
		}
	}
	levels := 0
	for _, f := range rep.Frames {
		var fr struct {
			Init *struct{ Level int } `json:"init"`
		}
		json.Unmarshal(f.State, &fr)
		if fr.Init != nil {
			levels++
		}
	}
	if levels != 3 || rep.Result.Turns < 300 {
		t.Errorf("%d levels started, %d turns", levels, rep.Result.Turns)
	}
	if err := matches.Verify([]engine.Game{pacman.New()}, rep); err != nil {
		t.Errorf("the replay does not verify: %v", err)
	}
	// The last round's actions line reached both seats before they were
	// stopped: what they wrote on reading it is in the last frame. (Both
	// bots stay put: every level runs to its round limit, 1200 rounds.)
	last := rep.Frames[len(rep.Frames)-1]
	for seat := range 2 {
		want := fmt.Sprintf("actions %d\n", rep.Result.Turns)
		i := slices.IndexFunc(last.Bots, func(b matches.FrameBot) bool { return b.Seat == seat })
		if i < 0 || !strings.HasSuffix(last.Bots[i].Stderr, want) {
			t.Errorf("seat %d did not read the final actions line: the last frame has %+v", seat, last.Bots)
		}
	}
	frames := make([]json.RawMessage, len(rep.Frames))
	for i, f := range rep.Frames {
		frames[i] = f.State
	}
	saiblo, err := pacman.SaibloReplay(frames)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(saiblo)), "\n")
	if len(lines) < rep.Result.Turns || !strings.Contains(lines[len(lines)-1], "StopReason") {
		t.Errorf("saiblo replay: %d lines for %d turns; last %.200s", len(lines), rep.Result.Turns, lines[len(lines)-1])
	}
}

// Faults end a Pac-Man game at once: the faulty seat −1000, the other
// +1000 and the win.
func TestPacmanFaults(t *testing.T) {
	cli := dockertest.Client(t)
	tests := []struct {
		mode   string
		status engine.Status
		code   string
	}{
		{"oversized-at=3", engine.StatusOutputLimit, "OLE"},
		{"wrong-role-at=3", engine.StatusBadOutput, "IA"},
		{"bad-action-at=3", engine.StatusBadOutput, "IA"},
		{"silent-at=3", engine.StatusTimeout, "TLE"},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			t.Parallel()
			faulty, normal := dockertest.PacBot(t, cli, tt.mode+",role=1"), dockertest.PacBot(t, cli, "ok")
			rep := play(t, cli, matches.Request{Game: pacman.New(), Map: pacmanMap(t), Seed: 2, Images: []string{normal, faulty}}, "fifo")
			f, n := rep.Result.Bots[1], rep.Result.Bots[0]
			if f.Status != tt.status || n.Status != engine.StatusOK {
				t.Errorf("statuses %s / %s, want %s / ok (%s)", f.Status, n.Status, tt.status, f.FaultDetail)
			}
			if len(rep.Result.Winners) != 1 || rep.Result.Winners[0] != n.ID {
				t.Errorf("winners %v, want the normal bot", rep.Result.Winners)
			}
			if f.Score > -900 || n.Score < 900 {
				t.Errorf("scores %d / %d, want the ±1000 ending", f.Score, n.Score)
			}
			if f.DeathReason != tt.code {
				t.Errorf("the faulty seat's reason is %q, want %s", f.DeathReason, tt.code)
			}
			if rep.Result.Turns > 5 {
				t.Errorf("the game went on for %d turns after the fault", rep.Result.Turns)
			}
		})
	}
}
