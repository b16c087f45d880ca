package orchestrator

import (
	"fmt"
	"math"
	"testing"

	"arena/engine"
	"arena/engine/tanks"
	"arena/matches"
)

func benchMaps(t *testing.T, names ...string) []engine.Map {
	t.Helper()
	var out []engine.Map
	for _, n := range names {
		m, err := tanks.New().Map(n)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	return out
}

func TestBenchPlanRoundRobin(t *testing.T) {
	p := BenchPlan{Game: tanks.New(), Maps: benchMaps(t, "classic", "triad"), Bots: []string{"a", "b", "c"}, Repeats: 2, Seed: 9}
	ms := p.Matches()
	// 3 pairs × 2 maps × 2 repeats.
	if len(ms) != 12 {
		t.Fatalf("%d matches, want 12", len(ms))
	}
	seeds := map[uint64]bool{}
	for i, m := range ms {
		if m.Index != i || m.Images[0] == m.Images[1] {
			t.Errorf("match %d: %+v", i, m)
		}
		seeds[m.Seed] = true
	}
	if len(seeds) != 12 {
		t.Errorf("seeds repeat: %d distinct", len(seeds))
	}
	// Seats swap on every other repeat.
	if ms[0].Images[0] != "a" || ms[1].Images[0] != "b" || ms[0].Map.Info().Name != "classic" || ms[2].Map.Info().Name != "triad" {
		t.Errorf("order: %v %v %v", ms[0], ms[1], ms[2])
	}
	// The same plan plays the same matches; another seed other ones.
	again := p.Matches()
	p.Seed = 10
	other := p.Matches()
	for i := range ms {
		if again[i].Seed != ms[i].Seed || fmt.Sprint(again[i].Images) != fmt.Sprint(ms[i].Images) {
			t.Fatalf("match %d differs between two runs of the same plan", i)
		}
		if other[i].Seed == ms[i].Seed {
			t.Errorf("match %d has the same seed under another tournament seed", i)
		}
		if ms[i].Seed >= 1<<53 {
			t.Errorf("seed %d has more than 53 bits", ms[i].Seed)
		}
	}
}

func TestBenchPlanOpponents(t *testing.T) {
	p := BenchPlan{Game: tanks.New(), Maps: benchMaps(t, "classic"), Bots: []string{"a", "b"}, Opponents: []string{"x", "b"}, Repeats: 1}
	got := []string{}
	for _, m := range p.Matches() {
		got = append(got, m.Images[0]+"-"+m.Images[1])
	}
	// A bot never plays itself.
	if fmt.Sprint(got) != "[a-x a-b b-x]" {
		t.Errorf("pairings %v", got)
	}
}

func TestTable(t *testing.T) {
	tab := NewTable("a", "b", "idle")
	m := BenchMatch{Images: []string{"a", "b"}}
	result := func(winners []string, deathB string, statusB engine.Status) *matches.Result {
		return &matches.Result{Winners: winners, Bots: []matches.BotResult{
			{ID: "a", Status: engine.StatusOK},
			{ID: "b", Status: statusB, DeathReason: deathB},
		}}
	}
	tab.Add(m, result([]string{"a"}, "wall", engine.StatusOK))
	tab.Add(m, result([]string{"a"}, "timeout", engine.StatusTimeout))
	tab.Add(m, result(nil, "", engine.StatusOK))
	tab.Add(m, result([]string{"a", "b"}, "", engine.StatusOK))
	rank := tab.Ranking()
	if rank[0].Bot != "a" || rank[0].Won != 2 || rank[0].Drew != 2 || rank[0].Lost != 0 {
		t.Errorf("a: %+v", rank[0])
	}
	if rank[1].Bot != "b" || rank[1].Lost != 2 || rank[1].Drew != 2 || math.Abs(rank[1].Rate()-0.25) > 1e-9 {
		t.Errorf("b: %+v rate %v", rank[1], rank[1].Rate())
	}
	if got := rank[1].ReasonSummary(); got != "alive 2, timeout 1, wall 1" {
		t.Errorf("b's reasons: %q", got)
	}
	if rank[2].Bot != "idle" || rank[2].Played != 0 {
		t.Errorf("idle: %+v", rank[2])
	}
	// Wilson interval: 0/10 → [0, 0.278]; 10/10 → [0.722, 1].
	lo, hi := Standing{Played: 10}.Interval()
	if lo != 0 || math.Abs(hi-0.2775) > 0.001 {
		t.Errorf("0/10: [%v, %v]", lo, hi)
	}
	lo, hi = Standing{Played: 10, Won: 10}.Interval()
	if math.Abs(lo-0.7225) > 0.001 || math.Abs(hi-1) > 1e-9 {
		t.Errorf("10/10: [%v, %v]", lo, hi)
	}
}
