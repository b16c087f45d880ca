// Package sprt decides whether one bot is stronger than another with a
// sequential probability ratio test on game pairs, as chess engine
// testing frameworks (fishtest, cutechess-cli, OpenBench) do: matches are
// played in pairs (one seed, the seats swapped), each pair scores 0, ½, 1,
// 1½ or 2 for the candidate (the pentanomial model, which takes the
// correlation within a pair into account), and the test stops as soon as
// the log-likelihood ratio of H1 (the candidate is Elo1 stronger) against
// H0 (it is Elo0 stronger) leaves the bounds set by α and β.
//
// Elo differences are logistic: a bot Elo stronger scores
// 1/(1+10^(-Elo/400)) per game. The log-likelihood ratio is the
// generalized SPRT's normal approximation (Michel Van den Bergh,
// "A practical SPRT", used by fishtest):
//
//	LLR = N·(s1−s0)·(2·μ − s0 − s1) / (2·σ²)
//
// with N the pairs played, μ and σ² the mean and variance of a pair's
// score (per game, in [0, 1]) and s0, s1 the scores the hypotheses
// predict. The package is pure: no I/O, no clock, no randomness.
package sprt

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Test is an SPRT's hypotheses and error rates.
type Test struct {
	// Elo0 and Elo1 are the Elo differences of H0 and H1 (Elo0 < Elo1).
	Elo0, Elo1 float64
	// Alpha is the chance of accepting H1 when H0 holds, Beta of accepting
	// H0 when H1 holds.
	Alpha, Beta float64
}

// Parse reads "ELO0,ELO1" (e.g. "0,20") into a test at α = β = 0.05.
func Parse(s string) (Test, error) {
	a, b, ok := strings.Cut(s, ",")
	if !ok {
		return Test{}, fmt.Errorf("%q: want ELO0,ELO1 (e.g. 0,20)", s)
	}
	e0, err0 := strconv.ParseFloat(strings.TrimSpace(a), 64)
	e1, err1 := strconv.ParseFloat(strings.TrimSpace(b), 64)
	if err0 != nil || err1 != nil {
		return Test{}, fmt.Errorf("%q: want two numbers ELO0,ELO1 (e.g. 0,20)", s)
	}
	t := Test{Elo0: e0, Elo1: e1, Alpha: 0.05, Beta: 0.05}
	return t, t.Validate()
}

// Validate checks the hypotheses and error rates.
func (t Test) Validate() error {
	switch {
	case math.IsNaN(t.Elo0) || math.IsNaN(t.Elo1) || math.Abs(t.Elo0) >= 2000 || math.Abs(t.Elo1) >= 2000:
		return errors.New("the Elo bounds must be numbers between -2000 and 2000")
	case t.Elo0 >= t.Elo1:
		return fmt.Errorf("ELO0 (%g) must be less than ELO1 (%g)", t.Elo0, t.Elo1)
	case !(t.Alpha > 0 && t.Alpha < 0.5) || !(t.Beta > 0 && t.Beta < 0.5):
		return errors.New("alpha and beta must be between 0 and 0.5")
	}
	return nil
}

// Bounds are the log-likelihood ratios at which the test accepts H0
// (lower) or H1 (upper): ln(β/(1−α)) and ln((1−β)/α), ±2.94 at 0.05.
func (t Test) Bounds() (lower, upper float64) {
	return math.Log(t.Beta / (1 - t.Alpha)), math.Log((1 - t.Beta) / t.Alpha)
}

// Pentanomial counts game pairs by the candidate's score in the pair:
// [0] lost both, [1] a loss and a draw, [2] a win and a loss or two
// draws, [3] a win and a draw, [4] won both.
type Pentanomial [5]int

// Add files a pair from the candidate's two game scores (1 a win, ½ a
// draw, 0 a loss).
func (p *Pentanomial) Add(a, b float64) {
	i := int(math.Round(2 * (a + b)))
	p[min(4, max(0, i))]++
}

// Pairs is the number of pairs counted.
func (p Pentanomial) Pairs() int { return p[0] + p[1] + p[2] + p[3] + p[4] }

// Games counts the candidate's wins, draws and losses over the pairs'
// games as far as the pentanomial tells them (a pair scoring 1 counts as
// a win and a loss).
func (p Pentanomial) Games() (won, drawn, lost int) {
	return 2*p[4] + p[3] + p[2], p[3] + p[1], 2*p[0] + p[1] + p[2]
}

// prior is one pseudo-pair added to the counts, spread around an even
// score, so that a streak of identical pairs is not taken for certainty
// (with no spread at all the variance would be zero): it weighs like one
// pair and fades as pairs are played.
var prior = [5]float64{0.1, 0.2, 0.4, 0.2, 0.1}

// moments are the mean and variance of a pair's score per game, and the
// number of pairs they rest on (prior included).
func (p Pentanomial) moments() (n, mu, variance float64) {
	var w [5]float64
	for i := range w {
		w[i] = float64(p[i]) + prior[i]
		n += w[i]
	}
	for i := range w {
		mu += w[i] * float64(i) / 4
	}
	mu /= n
	for i := range w {
		d := float64(i)/4 - mu
		variance += w[i] * d * d
	}
	return n, mu, variance / n
}

// Score is the expected score per game of a bot elo Elo stronger.
func Score(elo float64) float64 { return 1 / (1 + math.Pow(10, -elo/400)) }

// Elo is the Elo difference that expects score s per game: ±Inf at a
// score of 1 or 0 (and beyond).
func Elo(s float64) float64 {
	switch {
	case s >= 1:
		return math.Inf(1)
	case s <= 0:
		return math.Inf(-1)
	}
	return -400 * math.Log10(1/s-1)
}

// LLR is the log-likelihood ratio of H1 against H0 given the pairs.
func (t Test) LLR(p Pentanomial) float64 {
	if p.Pairs() == 0 {
		return 0
	}
	n, mu, v := p.moments()
	s0, s1 := Score(t.Elo0), Score(t.Elo1)
	return n * (s1 - s0) * (2*mu - s0 - s1) / (2 * v)
}

// Decision is the test's verdict so far.
type Decision int

// The verdicts.
const (
	Continue Decision = iota
	AcceptH0
	AcceptH1
)

func (d Decision) String() string {
	return [...]string{"continue", "H0 accepted", "H1 accepted"}[d]
}

// Decide tells whether the pairs so far accept a hypothesis.
func (t Test) Decide(p Pentanomial) Decision {
	llr := t.LLR(p)
	lo, hi := t.Bounds()
	switch {
	case llr >= hi:
		return AcceptH1
	case llr <= lo:
		return AcceptH0
	}
	return Continue
}

// Estimate is the candidate's Elo difference with its 95% interval, from
// the mean pair score and its standard error (the prior included, so a
// streak gives a finite estimate; a bound past a score of 1 or 0 is
// ±Inf).
func Estimate(p Pentanomial) (elo, lo, hi float64) {
	n, mu, v := p.moments()
	se := math.Sqrt(v / n)
	return Elo(mu), Elo(mu - 1.96*se), Elo(mu + 1.96*se)
}

// FixedPairs is how many pairs a test of fixed length needs to tell H0
// from H1 with the same error rates (a one-sided z-test of the mean pair
// score), at the variance of a pair's score seen in p. The SPRT needs
// fewer on average.
func (t Test) FixedPairs(p Pentanomial) int {
	_, _, v := p.moments()
	za, zb := zQuantile(1-t.Alpha), zQuantile(1-t.Beta)
	d := Score(t.Elo1) - Score(t.Elo0)
	return int(math.Ceil((za + zb) * (za + zb) * v / (d * d)))
}

// zQuantile is the standard normal quantile (by bisection on Erf: exact
// enough, and no table).
func zQuantile(q float64) float64 {
	lo, hi := -10.0, 10.0
	for range 100 {
		mid := (lo + hi) / 2
		if 0.5*(1+math.Erf(mid/math.Sqrt2)) < q {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}
