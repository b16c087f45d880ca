// Package skill rates players from match results with the Weng–Lin
// Bayesian approximation (R. C. Weng and C.-J. Lin, "A Bayesian
// Approximation Method for Online Ranking", JMLR 12, 2011), under the
// Plackett–Luce model of a ranking (the paper's Algorithm 4), the model
// OpenSkill uses by default.
//
// A player's skill is a normal belief: mean Mu, standard deviation Sigma.
// A match of any number of players, each with a place (ties allowed),
// moves every mean towards what the places say and shrinks every Sigma.
// Ordinal (Mu − 3σ) is the conservative figure leaderboards sort by.
//
// The package is pure: the same ratings and places always give the same
// result, so a ladder's ratings can be recomputed from its history.
package skill

import (
	"fmt"
	"math"

	"arena/internal/errs"
)

// Rating is a belief about a player's skill.
type Rating struct {
	Mu    float64 `json:"mu"`
	Sigma float64 `json:"sigma"`
}

// Ordinal is the conservative skill, Mu − 3·Sigma: with 99.7% belief the
// skill is at least this.
func (r Rating) Ordinal() float64 { return r.Mu - 3*r.Sigma }

// Model holds the model's constants.
type Model struct {
	// Mu and Sigma are a new player's rating.
	Mu    float64 `json:"mu"`
	Sigma float64 `json:"sigma"`
	// Beta is the spread of a player's performance around its skill.
	Beta float64 `json:"beta"`
	// Tau is added (as a variance, τ²) to every Sigma before a match, so
	// a rating never stops moving: skills may change over time.
	Tau float64 `json:"tau"`
	// Kappa is the least fraction of its variance a rating keeps in one
	// match (a floor that keeps Sigma positive).
	Kappa float64 `json:"kappa"`
}

// Default is the model with OpenSkill's defaults: μ = 25, σ = μ/3,
// β = σ/2, τ = μ/300, κ = 0.0001.
func Default() Model {
	return Model{Mu: 25, Sigma: 25.0 / 3, Beta: 25.0 / 6, Tau: 25.0 / 300, Kappa: 0.0001}
}

// New is a new player's rating.
func (m Model) New() Rating { return Rating{Mu: m.Mu, Sigma: m.Sigma} }

// ErrInput is wrapped by Rate's errors about its arguments.
var ErrInput = errs.New(errs.ErrInvalid, "bad rating input")

// Rate returns the players' ratings after a match. ratings holds one
// rating per player; places holds each player's place (lower is better,
// equal places are a tie; only their order matters). A match of fewer
// than two players changes nothing.
func (m Model) Rate(ratings []Rating, places []int) ([]Rating, error) {
	n := len(ratings)
	if len(places) != n {
		return nil, fmt.Errorf("%w: %d ratings and %d places", ErrInput, n, len(places))
	}
	for i, r := range ratings {
		if !(r.Sigma > 0) || math.IsInf(r.Sigma, 0) || math.IsNaN(r.Mu) || math.IsInf(r.Mu, 0) {
			return nil, fmt.Errorf("%w: rating %d is μ %v, σ %v", ErrInput, i, r.Mu, r.Sigma)
		}
	}
	out := make([]Rating, n)
	copy(out, ratings)
	if n < 2 {
		return out, nil
	}
	// The dynamics: every belief widens a little before the match.
	variance := make([]float64, n)
	for i, r := range ratings {
		variance[i] = r.Sigma*r.Sigma + m.Tau*m.Tau
	}
	betaSq := m.Beta * m.Beta
	c := 0.0
	for _, v := range variance {
		c += v + betaSq
	}
	c = math.Sqrt(c)
	// strength[i] = exp(μ_i / c); sumQ[q] sums it over the players placed
	// at q's place or below; tied[q] counts the players sharing q's place.
	strength := make([]float64, n)
	for i, r := range ratings {
		strength[i] = math.Exp(r.Mu / c)
	}
	sumQ := make([]float64, n)
	tied := make([]float64, n)
	for q := range n {
		for s := range n {
			if places[s] >= places[q] {
				sumQ[q] += strength[s]
			}
			if places[s] == places[q] {
				tied[q]++
			}
		}
	}
	for i := range n {
		omega, delta := 0.0, 0.0
		for q := range n {
			if places[q] > places[i] {
				continue
			}
			p := strength[i] / sumQ[q]
			if q == i {
				omega += (1 - p) / tied[q]
			} else {
				omega -= p / tied[q]
			}
			delta += p * (1 - p) / tied[q]
		}
		sigma := math.Sqrt(variance[i])
		gamma := sigma / c
		omega *= variance[i] / c
		delta *= gamma * variance[i] / (c * c)
		out[i] = Rating{
			Mu:    ratings[i].Mu + omega,
			Sigma: sigma * math.Sqrt(math.Max(1-delta, m.Kappa)),
		}
	}
	return out, nil
}

// WinProbability is the chance that a player rated a places ahead of one
// rated b in a two-player match, under the model's performance noise.
func (m Model) WinProbability(a, b Rating) float64 {
	d := math.Sqrt(2*m.Beta*m.Beta + a.Sigma*a.Sigma + b.Sigma*b.Sigma)
	return 0.5 * math.Erfc(-(a.Mu-b.Mu)/(d*math.Sqrt2))
}

// Quality is how even and informative a two-player match between a and b
// would be, from 0 to 1 (TrueSkill's match quality: the chance of a draw
// relative to a draw between equals): high for close means, lowered by
// the uncertainty of either.
func (m Model) Quality(a, b Rating) float64 {
	twoBetaSq := 2 * m.Beta * m.Beta
	v := twoBetaSq + a.Sigma*a.Sigma + b.Sigma*b.Sigma
	d := a.Mu - b.Mu
	return math.Sqrt(twoBetaSq/v) * math.Exp(-d*d/(2*v))
}
