package orchestrator_test

import (
	"errors"
	"strings"
	"testing"

	"arena/engine"
	"arena/engine/pacman"
	"arena/matches"
	"arena/orchestrator"
	"arena/orchestrator/fake"
)

// A bot that answers as it did gives the same answers turn after turn,
// up to the last or the turn asked for; its inputs are those of the
// match (a Tanks bot gets one state per turn).
func TestRerunSame(t *testing.T) {
	rep, l := playFake(t, hunter(), fake.Script{})
	o := orchestrator.New(l)
	res, err := o.Rerun(t.Context(), games, orchestrator.RerunRequest{Replay: rep, Seat: 0}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Differs || len(res.Steps) != rep.Result.Turns || res.ImageID != fake.ImageID("bots/a") {
		t.Errorf("rerun: differs %v, %d steps for %d turns, image %s", res.Differs, len(res.Steps), rep.Result.Turns, res.ImageID)
	}
	for _, s := range res.Steps {
		if !s.Same || len(s.Input) != 1 || string(s.Now) != string(s.Then) {
			t.Fatalf("turn %d: %+v", s.Turn, s)
		}
	}
	res, err = o.Rerun(t.Context(), games, orchestrator.RerunRequest{Replay: rep, Seat: 1, Turn: 4}, nil)
	if err != nil || res.LastTurn != 4 || len(res.Steps) != 4 {
		t.Errorf("--turn 4: %+v, %v", res, err)
	}
	if n := l.Running(); n != 0 {
		t.Errorf("%d bots left", n)
	}
}

// A bot that now answers otherwise is caught at that turn, with both
// answers and its stderr; a fault then and an answer now differ too.
func TestRerunDiffers(t *testing.T) {
	rep, _ := playFake(t, hunter(), fake.Script{Faults: map[int]fake.Fault{6: fake.Crash}})
	changed := hunter()
	answer := changed.Answer
	changed.Answer = func(n int, in [][]byte) []byte {
		if n == 3 {
			return []byte(`[]`)
		}
		return answer(n, in)
	}
	changed.Stderr = func(n int) string { return "thinking\n" }
	l := fake.NewLauncher(map[string]fake.Script{"bots/a": changed, "bots/b": {}})
	o := orchestrator.New(l)
	res, err := o.Rerun(t.Context(), games, orchestrator.RerunRequest{Replay: rep, Seat: 0}, nil)
	if err != nil {
		t.Fatal(err)
	}
	last := res.Steps[len(res.Steps)-1]
	if !res.Differs || last.Turn != 3 || string(last.Now) != "[]" || string(last.Then) == "[]" || !strings.Contains(last.NowStderr, "thinking") {
		t.Errorf("differs %v at %+v", res.Differs, last)
	}
	// Seat 1 crashed at its sixth answer; now it answers.
	res, err = o.Rerun(t.Context(), games, orchestrator.RerunRequest{Replay: rep, Seat: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	last = res.Steps[len(res.Steps)-1]
	if !res.Differs || last.Turn != 6 || last.ThenFault != engine.StatusCrashed || last.NowErr != "" {
		t.Errorf("the crash: differs %v at %+v", res.Differs, last)
	}
	if n := l.Running(); n != 0 {
		t.Errorf("%d bots left", n)
	}
}

// Pac-Man's sequential protocol: the ghosts (seat 1) are fed the
// Pac-Man's move before they answer, as in the match.
func TestRerunPacman(t *testing.T) {
	pm, err := pacman.New().Map("saiblo")
	if err != nil {
		t.Fatal(err)
	}
	l := fake.NewLauncher(map[string]fake.Script{"bots/pacman": pacmanBot(0), "bots/ghosts": pacmanBot(1)})
	o := orchestrator.New(l)
	rep, err := o.Play(t.Context(), matches.Request{Game: pacman.New(), Map: pm, Seed: 2, Images: []string{"bots/pacman", "bots/ghosts"}})
	if err != nil {
		t.Fatal(err)
	}
	for seat := range 2 {
		res, err := o.Rerun(t.Context(), games, orchestrator.RerunRequest{Replay: rep, Seat: seat, Turn: 30}, nil)
		if err != nil || res.Differs || len(res.Steps) != 30 {
			t.Fatalf("seat %d: %+v, %v", seat, res, err)
		}
		if seat == 1 && len(res.Steps[1].Input) < 2 {
			t.Errorf("the ghosts' second input: %q", res.Steps[1].Input)
		}
	}
}

// Bad requests name what is wrong; an image no longer present says so.
func TestRerunErrors(t *testing.T) {
	rep, _ := playFake(t, hunter(), fake.Script{})
	o := orchestrator.New(fake.NewLauncher(map[string]fake.Script{"bots/b": {}}))
	for _, tt := range []struct {
		give orchestrator.RerunRequest
		want string
	}{
		{orchestrator.RerunRequest{Replay: rep, Seat: 2}, "--seat 2: the match has seats 0 to 1"},
		{orchestrator.RerunRequest{Replay: rep, Seat: 0, Turn: 100000}, "--turn 100000: seat 0 answered in turns 1 to"},
		{orchestrator.RerunRequest{Replay: rep, Seat: 0}, "the recorded image is no longer present: " + fake.ImageID("bots/a") + " was bots/a"},
	} {
		_, err := o.Rerun(t.Context(), games, tt.give, nil)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: %v, want %q", tt.give.Seat, err, tt.want)
		}
	}
	_, err := o.Rerun(t.Context(), games, orchestrator.RerunRequest{Replay: rep, Seat: 0}, nil)
	if !errors.Is(err, orchestrator.ErrRerunImageGone) {
		t.Errorf("image gone: %v", err)
	}
}
