package orchestrator_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"arena/engine"
	"arena/engine/tanks"
	"arena/matches"
	"arena/orchestrator"
	"arena/orchestrator/fake"
)

// scripted is a person who answers from a script: answer n (from 1)
// returns answers[n-1], or waits out the turn past the script.
type scripted struct {
	turn    time.Duration
	answers []string
	mu      sync.Mutex
	asked   []matches.Question
}

func (p *scripted) Turn() time.Duration { return p.turn }

func (p *scripted) Ask(ctx context.Context, q matches.Question) ([]byte, error) {
	p.mu.Lock()
	p.asked = append(p.asked, q)
	n := len(p.asked)
	p.mu.Unlock()
	if n <= len(p.answers) {
		return []byte(p.answers[n-1]), nil
	}
	<-ctx.Done()
	return nil, ctx.Err()
}

// A person's seat is asked every turn with the seat's input, judged as a
// bot's answer (a bad one is bad_output), given the person's turn (not
// the bots' answer time), named human:NAME, and the replay verifies.
func TestAPersonsSeat(t *testing.T) {
	play := func(t *testing.T, p *scripted) *matches.Replay {
		l := fake.NewLauncher(map[string]fake.Script{"bots/b": {}})
		rep, err := orchestrator.New(l).Play(t.Context(), matches.Request{
			Game: tanks.New(), Map: tanksMap(t, "classic"), Seed: 3, Images: []string{matches.HumanRef("bob"), "bots/b"},
			People: map[int]matches.Person{0: p}, Settings: json.RawMessage(`{"zone_radius":20}`),
			Limits: matches.Limits{AnswerTimeout: 50 * time.Millisecond},
		})
		if err != nil {
			t.Fatal(err)
		}
		checkPlayed(t, rep, l)
		return rep
	}
	t.Run("answers", func(t *testing.T) {
		p := &scripted{turn: time.Minute}
		for range 400 {
			p.answers = append(p.answers, `[{"Type":0,"Direction":0}]`)
		}
		rep := play(t, p)
		if rep.Result.Bots[0].Status != engine.StatusOK || rep.Bots[0].ID != "human:bob" {
			t.Errorf("the person's seat: %+v, named %s", rep.Result.Bots[0], rep.Bots[0].ID)
		}
		if fb := record(t, rep, 1, 0); !fb.Asked || fb.Answer != `[{"Type":0,"Direction":0}]` {
			t.Errorf("turn 1: %+v", fb)
		}
		if len(p.asked) < 2 || !strings.Contains(string(p.asked[0].Input), `"ContentsInfo"`) || p.asked[0].Turn != 1 || p.asked[1].Turn != 2 {
			t.Errorf("asked %d times; first %+v", len(p.asked), p.asked[0])
		}
	})
	t.Run("a bad answer", func(t *testing.T) {
		rep := play(t, &scripted{turn: time.Minute, answers: []string{`[{"Type":0,"Direction":0}]`, "jump"}})
		if b := rep.Result.Bots[0]; b.Status != engine.StatusBadOutput || b.FaultTurn != 2 {
			t.Errorf("the person's seat: %+v", b)
		}
	})
	t.Run("idle", func(t *testing.T) {
		start := time.Now()
		rep := play(t, &scripted{turn: 300 * time.Millisecond, answers: []string{`[]`}})
		b := rep.Result.Bots[0]
		if b.Status != engine.StatusTimeout || b.FaultTurn != 2 || !strings.Contains(b.FaultDetail, "300ms") {
			t.Errorf("the idle person's seat: %+v", b)
		}
		if took := time.Since(start); took < 300*time.Millisecond {
			t.Errorf("faulted after %v, before the person's turn", took)
		}
	})
	t.Run("a seat named human: with no person", func(t *testing.T) {
		l := fake.NewLauncher(map[string]fake.Script{"bots/b": {}})
		_, err := orchestrator.New(l).Play(t.Context(), matches.Request{
			Game: tanks.New(), Map: tanksMap(t, "classic"), Seed: 3, Images: []string{matches.HumanRef("bob"), "bots/b"},
		})
		if err == nil || !strings.Contains(err.Error(), "names a person's seat") {
			t.Errorf("played: %v", err)
		}
	})
}
