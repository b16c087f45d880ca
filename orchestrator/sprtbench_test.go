package orchestrator_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"arena/engine"
	"arena/engine/pacman"
	"arena/engine/tanks"
	"arena/internal/errs"
	"arena/orchestrator"
	"arena/orchestrator/fake"
	"arena/sprt"
)

// roleBot plays Pac-Man in whichever seat it gets: it learns its role
// from its first input and stays put. (One match at a time: the role is
// kept in the script.)
func roleBot() fake.Script {
	role := 0
	return fake.Script{Answer: func(n int, input [][]byte) []byte {
		if n == 1 && len(input) > 0 && strings.TrimSpace(string(input[0])) == "1" {
			role = 1
		} else if n == 1 {
			role = 0
		}
		action := map[int]string{0: "0", 1: "0 0 0"}[role]
		return []byte(fmt.Sprintf(`{"role":%d,"action":%q}`, role, action))
	}}
}

// A candidate that always wins is accepted as stronger (H1), one that
// always loses is not (H0), each after a handful of pairs whose two
// matches share a seed with the seats swapped; no bot is left running.
func TestRunSPRT(t *testing.T) {
	l := fake.NewLauncher(map[string]fake.Script{
		"bots/good":  roleBot(),
		"bots/crash": {Faults: map[int]fake.Fault{1: fake.Crash}},
	})
	pm, err := pacman.New().Map("saiblo")
	if err != nil {
		t.Fatal(err)
	}
	o := orchestrator.New(l)
	test := sprt.Test{Elo0: 0, Elo1: 20, Alpha: 0.05, Beta: 0.05}
	for _, tt := range []struct {
		candidate, base string
		want            sprt.Decision
	}{
		{"bots/good", "bots/crash", sprt.AcceptH1},
		{"bots/crash", "bots/good", sprt.AcceptH0},
	} {
		plan := orchestrator.SPRTPlan{Game: pacman.New(), Maps: []engine.Map{pm},
			Candidate: tt.candidate, Base: tt.base, Test: test, MaxPairs: 100, Seed: 3}
		reports := 0
		seeds := map[int]uint64{}
		st, err := o.RunSPRT(t.Context(), plan, 1, func(out orchestrator.BenchOutcome, st orchestrator.SPRTState) {
			reports++
			if out.Err != nil {
				t.Errorf("match %d: %v", out.Match.Index, out.Err)
			}
			if s, ok := seeds[out.Match.Index/2]; ok && s != out.Match.Seed {
				t.Errorf("pair %d plays seeds %d and %d", out.Match.Index/2, s, out.Match.Seed)
			}
			seeds[out.Match.Index/2] = out.Match.Seed
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s vs %s: %v after %d pairs, LLR %.2f", tt.candidate, tt.base, st.Decision, st.Pairs.Pairs(), st.LLR)
		if st.Decision != tt.want || st.Pairs.Pairs() < 3 || st.Pairs.Pairs() > 20 || st.Failed != 0 {
			t.Errorf("%s vs %s: %v after %d pairs (%v), %d failed", tt.candidate, tt.base, st.Decision, st.Pairs.Pairs(), st.Pairs, st.Failed)
		}
		if reports != 2*st.Pairs.Pairs() {
			t.Errorf("%d reports for %d pairs", reports, st.Pairs.Pairs())
		}
	}
	if n := l.Running(); n != 0 {
		t.Errorf("%d bots left", n)
	}
}

// Bots of equal strength (Tanks matches they all share) accept H0, with
// matches played two at a time.
func TestRunSPRTEqual(t *testing.T) {
	l := fake.NewLauncher(map[string]fake.Script{"bots/a": hunter(), "bots/b": hunter()})
	plan := orchestrator.SPRTPlan{Game: tanks.New(), Maps: []engine.Map{tanksMap(t, "classic")},
		Candidate: "bots/a", Base: "bots/b", Test: sprt.Test{Elo0: 0, Elo1: 20, Alpha: 0.05, Beta: 0.05}, Seed: 1}
	var mu sync.Mutex
	st, err := orchestrator.New(l).RunSPRT(t.Context(), plan, 2, func(orchestrator.BenchOutcome, orchestrator.SPRTState) {
		mu.Lock()
		defer mu.Unlock()
	})
	if err != nil || st.Decision != sprt.AcceptH0 {
		t.Errorf("equal bots: %+v, %v", st, err)
	}
	if n := l.Running(); n != 0 {
		t.Errorf("%d bots left", n)
	}
}

// An undecided test stops at MaxPairs; bad plans are refused before any
// match.
func TestRunSPRTLimitsAndChecks(t *testing.T) {
	l := fake.NewLauncher(map[string]fake.Script{"bots/a": {}, "bots/b": {}})
	o := orchestrator.New(l)
	plan := orchestrator.SPRTPlan{Game: tanks.New(), Maps: []engine.Map{tanksMap(t, "classic")},
		Candidate: "bots/a", Base: "bots/b", Test: sprt.Test{Elo0: -400, Elo1: 400, Alpha: 0.05, Beta: 0.05}, MaxPairs: 2,
		Settings: []byte(`{"tank_health":1}`)}
	st, err := o.RunSPRT(t.Context(), plan, 1, func(orchestrator.BenchOutcome, orchestrator.SPRTState) {})
	if err != nil || st.Pairs.Pairs() != 2 || st.Decision != sprt.Continue {
		t.Errorf("capped: %+v, %v", st, err)
	}
	played := len(l.Bots())
	report := func(orchestrator.BenchOutcome, orchestrator.SPRTState) { t.Error("a match was played") }
	for name, p := range map[string]orchestrator.SPRTPlan{
		"same bot":    {Game: plan.Game, Maps: plan.Maps, Candidate: "bots/a", Base: "bots/a", Test: plan.Test},
		"bad test":    {Game: plan.Game, Maps: plan.Maps, Candidate: "bots/a", Base: "bots/b", Test: sprt.Test{Elo0: 5, Elo1: 0, Alpha: 0.05, Beta: 0.05}},
		"missing bot": {Game: plan.Game, Maps: plan.Maps, Candidate: "bots/a", Base: "bots/missing", Test: plan.Test},
	} {
		_, err := o.RunSPRT(t.Context(), p, 1, report)
		if !errs.IsInvalid(err) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if len(l.Bots()) != played {
		t.Errorf("bots started for refused plans")
	}
}
