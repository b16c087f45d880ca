package sprt

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		give    string
		want    Test
		wantErr string
	}{
		{give: "0,20", want: Test{Elo0: 0, Elo1: 20, Alpha: 0.05, Beta: 0.05}},
		{give: "-5, 5", want: Test{Elo0: -5, Elo1: 5, Alpha: 0.05, Beta: 0.05}},
		{give: "20", wantErr: `"20": want ELO0,ELO1 (e.g. 0,20)`},
		{give: "a,b", wantErr: `"a,b": want two numbers ELO0,ELO1 (e.g. 0,20)`},
		{give: "20,0", wantErr: "ELO0 (20) must be less than ELO1 (0)"},
		{give: "0,5000", wantErr: "the Elo bounds must be numbers between -2000 and 2000"},
	}
	for _, tt := range tests {
		got, err := Parse(tt.give)
		if tt.wantErr != "" {
			if err == nil || err.Error() != tt.wantErr {
				t.Errorf("Parse(%q) error = %v, want %q", tt.give, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("Parse(%q) = %+v, %v; want %+v", tt.give, got, err, tt.want)
		}
	}
}

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

func TestBoundsAndElo(t *testing.T) {
	lo, hi := Test{Alpha: 0.05, Beta: 0.05}.Bounds()
	if !near(lo, -2.944, 0.001) || !near(hi, 2.944, 0.001) {
		t.Errorf("bounds = %.4f, %.4f; want ∓2.944", lo, hi)
	}
	for _, tt := range []struct{ give, want float64 }{
		{0, 0.5}, {400, 10.0 / 11}, {-400, 1.0 / 11}, {20, 0.528751},
	} {
		if got := Score(tt.give); !near(got, tt.want, 1e-6) {
			t.Errorf("Score(%g) = %g, want %g", tt.give, got, tt.want)
		}
		if got := Elo(Score(tt.give)); !near(got, tt.give, 1e-9) {
			t.Errorf("Elo(Score(%g)) = %g", tt.give, got)
		}
	}
	if !math.IsInf(Elo(1), 1) || !math.IsInf(Elo(-0.1), -1) {
		t.Errorf("Elo(1) = %g, Elo(-0.1) = %g; want ±Inf", Elo(1), Elo(-0.1))
	}
	if got := zQuantile(0.95); !near(got, 1.644854, 1e-5) {
		t.Errorf("zQuantile(0.95) = %g", got)
	}
}

func TestPentanomial(t *testing.T) {
	var p Pentanomial
	p.Add(1, 1)     // won both
	p.Add(1, 0)     // split
	p.Add(0.5, 0.5) // two draws
	p.Add(0, 0.5)   // a loss and a draw
	p.Add(1, 0.5)   // a win and a draw
	if p != (Pentanomial{0, 1, 2, 1, 1}) {
		t.Errorf("pentanomial = %v", p)
	}
	if w, d, l := p.Games(); w != 5 || d != 2 || l != 3 {
		t.Errorf("games = %d/%d/%d, want 5/2/3", w, d, l)
	}
}

// The LLR: zero with no pairs, positive when the candidate scores above
// the midpoint of the hypotheses, negative below; a streak of won pairs
// accepts H1, but only after a few pairs (the prior), not after one.
func TestLLR(t *testing.T) {
	tt := Test{Elo0: 0, Elo1: 20, Alpha: 0.05, Beta: 0.05}
	if got := tt.LLR(Pentanomial{}); got != 0 {
		t.Errorf("LLR(no pairs) = %g", got)
	}
	if got := tt.LLR(Pentanomial{100, 200, 400, 250, 120}); got <= 0 {
		t.Errorf("LLR(stronger) = %g, want > 0", got)
	}
	if got := tt.LLR(Pentanomial{120, 250, 400, 200, 100}); got >= 0 {
		t.Errorf("LLR(weaker) = %g, want < 0", got)
	}
	// The formula by hand: N·(s1−s0)·(2μ−s0−s1)/(2σ²), prior included.
	p := Pentanomial{10, 20, 40, 30, 20}
	n, mu, v := p.moments()
	want := n * (Score(20) - 0.5) * (2*mu - 0.5 - Score(20)) / (2 * v)
	if got := tt.LLR(p); !near(got, want, 1e-12) || !near(n, 121, 1e-12) {
		t.Errorf("LLR = %g, want %g (n %g)", got, want, n)
	}
	var streak Pentanomial
	pairs := 0
	for tt.Decide(streak) == Continue {
		streak.Add(1, 1)
		pairs++
	}
	t.Logf("a streak of won pairs accepts H1 after %d pairs", pairs)
	if tt.Decide(streak) != AcceptH1 || pairs < 3 || pairs > 30 {
		t.Errorf("a streak of won pairs: %v after %d pairs", tt.Decide(streak), pairs)
	}
	elo, lo, hi := Estimate(streak)
	if !(lo < elo && elo < hi) || lo <= 0 || math.IsInf(elo, 0) {
		t.Errorf("estimate after a streak = %.0f [%.0f, %.0f]", elo, lo, hi)
	}
}

// simulate plays pairs of games between bots whose true difference is elo
// (with draws at rate draw) until the test decides, and returns the
// decision and the pairs it took.
func simulate(rng *rand.Rand, tt Test, elo, draw float64) (Decision, int) {
	var p Pentanomial
	for {
		g := pair(rng, elo, draw)
		p.Add(g[0], g[1])
		if d := tt.Decide(p); d != Continue {
			return d, p.Pairs()
		}
	}
}

// With a known strength difference the test accepts the right
// hypothesis at the promised error rates, and needs fewer pairs on
// average than a fixed-length test of the same confidence.
func TestSimulation(t *testing.T) {
	tt := Test{Elo0: 0, Elo1: 20, Alpha: 0.05, Beta: 0.05}
	rng := rand.New(rand.NewPCG(1, 2))
	const runs = 400
	for _, c := range []struct {
		name      string
		elo       float64
		want      Decision
		maxErrors float64 // share of wrong verdicts allowed
	}{
		{"at H0 (equal)", 0, AcceptH0, 0.08},
		{"at H1 (+20)", 20, AcceptH1, 0.08},
		{"far below H0 (-30)", -30, AcceptH0, 0.01},
		{"far above H1 (+60)", 60, AcceptH1, 0.01},
	} {
		wrong, total := 0, 0
		for range runs {
			d, n := simulate(rng, tt, c.elo, 0.3)
			if d != c.want {
				wrong++
			}
			total += n
		}
		mean := float64(total) / runs
		// The fixed-length test at the variance of many such pairs.
		var ref Pentanomial
		for range 20000 {
			g := pair(rng, c.elo, 0.3)
			ref.Add(g[0], g[1])
		}
		fixed := tt.FixedPairs(ref)
		t.Logf("%s: wrong %d/%d, %.0f pairs on average; a fixed test of the same confidence needs %d pairs", c.name, wrong, runs, mean, fixed)
		if float64(wrong) > c.maxErrors*runs {
			t.Errorf("%s: %d of %d runs accepted the wrong hypothesis", c.name, wrong, runs)
		}
		if mean >= float64(fixed) {
			t.Errorf("%s: the SPRT took %.0f pairs on average, the fixed test %d", c.name, mean, fixed)
		}
	}
}

// pair plays two independent games of a bot elo stronger, with draws
// at rate draw: its two scores.
func pair(rng *rand.Rand, elo, draw float64) [2]float64 {
	win := Score(elo) - draw/2 // win + draw/2 is the expected score
	var out [2]float64
	for i := range out {
		switch r := rng.Float64(); {
		case r < win:
			out[i] = 1
		case r < win+draw:
			out[i] = 0.5
		}
	}
	return out
}
