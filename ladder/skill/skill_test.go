package skill

import (
	"errors"
	"fmt"
	"math"
	"testing"
)

// The worked examples are the published fixtures of the reference
// implementations (openskill.js src/models/__tests__/plackett-luce.test.ts
// and src/__tests__/rate.test.ts; openskill.py tests/test_rate.py holds
// the same numbers): Plackett–Luce, default constants.
func TestRateMatchesTheReferenceFixtures(t *testing.T) {
	d := Default()
	noTau := d
	noTau.Tau = 0
	r := func(mu, sigma float64) Rating { return Rating{mu, sigma} }
	n := d.New()
	tests := []struct {
		name   string
		model  Model
		give   []Rating
		places []int
		want   []Rating
	}{
		{"2 players, no dynamics", noTau, []Rating{n, n}, []int{1, 2}, []Rating{
			r(27.63523138347365, 8.065506316323548), r(22.36476861652635, 8.065506316323548)}},
		{"3 players, no dynamics", noTau, []Rating{n, n, n}, []int{1, 2, 3}, []Rating{
			r(27.868876552746237, 8.204837030780652), r(25.717219138186557, 8.057829747583874), r(21.413904309067206, 8.057829747583874)}},
		{"4 players, no dynamics", noTau, []Rating{n, n, n, n}, []int{1, 2, 3, 4}, []Rating{
			r(27.795084971874736, 8.263160757613477), r(26.552824984374855, 8.179213704945203),
			r(24.68943500312503, 8.083731307186588), r(20.96265504062538, 8.083731307186588)}},
		{"5 players, no dynamics", noTau, []Rating{n, n, n, n, n}, []int{1, 2, 3, 4, 5}, []Rating{
			r(27.666666666666668, 8.290556877154474), r(26.833333333333332, 8.240145629781066), r(25.72222222222222, 8.179996679645559),
			r(24.055555555555557, 8.111796013701358), r(20.72222222222222, 8.111796013701358)}},
		{"4 rated players", d, []Rating{r(29.182, 4.782), r(27.174, 4.922), r(16.672, 6.217), n}, []int{1, 2, 3, 4}, []Rating{
			r(30.210227447000438, 4.765617924939384), r(27.644725221915632, 4.883479590134575),
			r(17.4036218889969, 6.101259408259549), r(19.21460876538932, 7.854669920480409)}},
		{"places in reverse", d, []Rating{n, n}, []int{2, 1}, []Rating{
			r(22.364610506859503, 8.06590141354368), r(27.635389493140497, 8.06590141354368)}},
		{"places out of order", d, []Rating{n, n, n, n}, []int{2, 1, 4, 3}, []Rating{
			r(26.55291815138952, 8.17961798837266), r(27.795252672501135, 8.263571791259416),
			r(20.962412806387245, 8.084127880168786), r(24.689416369722096, 8.084127880168786)}},
		{"an upset", d, []Rating{r(15, 25.0/3), r(20, 25.0/3), r(25, 25.0/3), r(30, 25.0/3)}, []int{1, 3, 4, 2}, []Rating{
			r(18.131120980297805, 8.283536573151807), r(20.405169039419135, 8.107860440531121),
			r(20.65583040714804, 8.082574596348321), r(30.80787957313502, 8.155100416275928)}},
		{"a tie for second", d, []Rating{r(10, 8), r(5, 10), r(0, 12)}, []int{1, 2, 2}, []Rating{
			r(11.942996666741225, 7.926888197620324), r(2.9381178546315034, 9.653804487570165), r(-1.4024317012198733, 11.323641575516767)}},
		{"a four-way tie of newcomers", d, []Rating{n, n, n, n}, []int{1, 1, 1, 1}, []Rating{
			r(25, 8.263571791259416), r(25, 8.263571791259416), r(25, 8.263571791259416), r(25, 8.263571791259416)}},
		{"ties out of order", d, []Rating{r(15, 25.0/3), r(20, 25.0/3), r(25, 25.0/3), r(30, 25.0/3)}, []int{2, 4, 2, 1}, []Rating{
			r(15.340043358359136, 8.213141619804967), r(18.007678675484204, 8.189033933813437),
			r(24.25801928251219, 8.166918055585525), r(32.39425868364447, 8.247687230833794)}},
		{"a larger tau", Model{Mu: 25, Sigma: 25.0 / 3, Beta: 25.0 / 6, Tau: 0.3, Kappa: 0.0001}, []Rating{r(25, 3), r(25, 3)}, []int{1, 2}, []Rating{
			r(25.624880438870754, 2.9879993738476953), r(24.375119561129246, 2.9879993738476953)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.model.Rate(tt.give, tt.places)
			if err != nil {
				t.Fatal(err)
			}
			for i := range tt.want {
				if !close(got[i].Mu, tt.want[i].Mu) || !close(got[i].Sigma, tt.want[i].Sigma) {
					t.Errorf("player %d: got μ %.15g σ %.15g, want μ %.15g σ %.15g", i, got[i].Mu, got[i].Sigma, tt.want[i].Mu, tt.want[i].Sigma)
				}
			}
		})
	}
}

func close(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func TestRateKeepsItsInputAndChecksIt(t *testing.T) {
	d := Default()
	in := []Rating{d.New(), d.New()}
	if _, err := d.Rate(in, []int{1, 2}); err != nil {
		t.Fatal(err)
	}
	if in[0] != d.New() || in[1] != d.New() {
		t.Errorf("Rate changed its input: %v", in)
	}
	if out, err := d.Rate([]Rating{d.New()}, []int{1}); err != nil || out[0] != d.New() {
		t.Errorf("a match of one: %v, %v", out, err)
	}
	for _, give := range [][]Rating{{{25, 0}, {25, 1}}, {{math.NaN(), 1}, {25, 1}}} {
		if _, err := d.Rate(give, []int{1, 2}); !errors.Is(err, ErrInput) {
			t.Errorf("%v: %v", give, err)
		}
	}
	if _, err := d.Rate(in, []int{1}); !errors.Is(err, ErrInput) {
		t.Errorf("places of the wrong length: %v", err)
	}
}

func TestWinProbabilityAndQuality(t *testing.T) {
	d := Default()
	even, strong := d.New(), Rating{Mu: 35, Sigma: 2}
	if p := d.WinProbability(even, even); !close(p, 0.5) {
		t.Errorf("even match: %v", p)
	}
	if p := d.WinProbability(strong, even); p < 0.8 {
		t.Errorf("the stronger wins with %v", p)
	}
	if p, q := d.WinProbability(strong, even), d.WinProbability(even, strong); !close(p+q, 1) {
		t.Errorf("P(a>b) + P(b>a) = %v", p+q)
	}
	if q1, q2 := d.Quality(even, even), d.Quality(strong, even); q1 <= q2 {
		t.Errorf("quality of an even match %v ≤ an uneven one's %v", q1, q2)
	}
}

func ExampleModel_Rate() {
	m := Default()
	winner, loser := m.New(), m.New()
	after, _ := m.Rate([]Rating{winner, loser}, []int{1, 2})
	for _, r := range after {
		fmt.Printf("μ %.2f σ %.2f ordinal %.2f\n", r.Mu, r.Sigma, r.Ordinal())
	}
	// Output:
	// μ 27.64 σ 8.07 ordinal 3.44
	// μ 22.36 σ 8.07 ordinal -1.83
}
