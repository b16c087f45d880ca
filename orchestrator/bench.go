package orchestrator

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"sync"

	"arena/engine"
	"arena/internal/errs"
	"arena/matches"
)

// BenchPlan is a tournament of two-player matches: every pairing, on
// every map, repeated.
type BenchPlan struct {
	Game engine.Game
	Maps []engine.Map
	// Bots play each other (every unordered pair) unless Opponents is
	// given; then every bot plays every opponent.
	Bots      []string
	Opponents []string
	// Repeats plays each pairing on each map this many times, the seats
	// swapped every other time.
	Repeats  int
	Seed     uint64
	Settings json.RawMessage
	Limits   matches.Limits
}

// BenchMatch is one match of a plan.
type BenchMatch struct {
	Index  int
	Map    engine.Map
	Seed   uint64
	Images []string // seat order
}

// Matches lists the plan's matches in a fixed order, each with a seed
// derived from the plan's seed and its index: the same plan always plays
// the same matches.
func (p BenchPlan) Matches() []BenchMatch {
	type pair struct{ a, b string }
	var pairs []pair
	if len(p.Opponents) > 0 {
		for _, a := range p.Bots {
			for _, b := range p.Opponents {
				if a != b {
					pairs = append(pairs, pair{a, b})
				}
			}
		}
	} else {
		for i, a := range p.Bots {
			for _, b := range p.Bots[i+1:] {
				if a != b {
					pairs = append(pairs, pair{a, b})
				}
			}
		}
	}
	var out []BenchMatch
	for _, pr := range pairs {
		for _, m := range p.Maps {
			for r := 0; r < max(1, p.Repeats); r++ {
				images := []string{pr.a, pr.b}
				if r%2 == 1 {
					images = []string{pr.b, pr.a}
				}
				i := len(out)
				out = append(out, BenchMatch{Index: i, Map: m, Seed: DeriveSeed(p.Seed, uint64(i)), Images: images})
			}
		}
	}
	return out
}

// DeriveSeed is the seed of match i of a tournament seeded with seed
// (SplitMix64), kept to 53 bits like every seed Arena picks.
func DeriveSeed(seed, i uint64) uint64 {
	z := seed + (i+1)*0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return (z ^ (z >> 31)) >> 11
}

// BenchOutcome is one finished (or failed) match of a tournament.
type BenchOutcome struct {
	Match  BenchMatch
	Result *matches.Result // nil when the platform could not play it
	Err    error
}

// RunBench plays a plan's matches, jobs at a time, and calls report (from
// one goroutine at a time) as each ends. When ctx is cancelled it starts
// nothing more, cancels the matches in progress (their containers are
// removed) and returns ctx's error.
func (o *Orchestrator) RunBench(ctx context.Context, plan BenchPlan, jobs int, report func(BenchOutcome)) error {
	return o.RunBenchOn(ctx, o, plan, jobs, report)
}

// RunBenchOn is RunBench with the matches played by p (a dispatcher to
// workers on other hosts, say); the orchestrator still checks them.
func (o *Orchestrator) RunBenchOn(ctx context.Context, p matches.Player, plan BenchPlan, jobs int, report func(BenchOutcome)) error {
	planned := plan.Matches()
	if len(planned) == 0 {
		return errs.New(errs.ErrInvalid, "the plan has no matches: it needs at least two different bots")
	}
	// Every match and every image is checked before the first starts.
	for _, m := range planned {
		req := matches.Request{Game: plan.Game, Map: m.Map, Seed: m.Seed, Images: m.Images, Settings: plan.Settings}
		if err := o.Validate(ctx, req, false); err != nil {
			return err
		}
	}
	for _, ref := range slices.Compact(slices.Sorted(slices.Values(append(slices.Clone(plan.Bots), plan.Opponents...)))) {
		if _, err := o.launcher.Image(ctx, ref); err != nil {
			return err
		}
	}
	work := make(chan BenchMatch)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for w := 0; w < max(1, jobs); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for m := range work {
				rep, err := p.Play(ctx, matches.Request{Game: plan.Game, Map: m.Map, Seed: m.Seed, Images: m.Images, Settings: plan.Settings, Limits: plan.Limits})
				if ctx.Err() != nil {
					continue // interrupted: not a result
				}
				out := BenchOutcome{Match: m, Err: err}
				if err == nil {
					out.Result = &rep.Result
				}
				mu.Lock()
				report(out)
				mu.Unlock()
			}
		}()
	}
	for _, m := range planned {
		select {
		case work <- m:
			continue
		case <-ctx.Done():
		}
		break
	}
	close(work)
	wg.Wait()
	return ctx.Err()
}

// Standing is one bot's record in a tournament.
type Standing struct {
	Bot                     string
	Played, Won, Drew, Lost int
	// Reasons counts how the bot's matches ended for it: death reasons
	// and fault statuses ("alive" when it was still in at the end).
	Reasons map[string]int
}

// Rate is the bot's score per match: a win 1, a draw ½.
func (s Standing) Rate() float64 {
	if s.Played == 0 {
		return 0
	}
	return (float64(s.Won) + float64(s.Drew)/2) / float64(s.Played)
}

// Interval is the 95% Wilson score interval of Rate.
func (s Standing) Interval() (lo, hi float64) {
	if s.Played == 0 {
		return 0, 1
	}
	const z = 1.959964
	n := float64(s.Played)
	p := s.Rate()
	den := 1 + z*z/n
	mid := (p + z*z/(2*n)) / den
	half := z * math.Sqrt(p*(1-p)/n+z*z/(4*n*n)) / den
	return max(0, mid-half), min(1, mid+half)
}

// Table keeps the standings of a tournament.
type Table struct {
	rows map[string]*Standing
}

// NewTable starts a table with the given bots at zero.
func NewTable(bots ...string) *Table {
	t := &Table{rows: map[string]*Standing{}}
	for _, b := range bots {
		t.row(b)
	}
	return t
}

func (t *Table) row(bot string) *Standing {
	s := t.rows[bot]
	if s == nil {
		s = &Standing{Bot: bot, Reasons: map[string]int{}}
		t.rows[bot] = s
	}
	return s
}

// Add counts a finished match. Bots are named by image (a seat's id
// without its #n suffix).
func (t *Table) Add(m BenchMatch, r *matches.Result) {
	winners := map[string]bool{}
	for _, w := range r.Winners {
		winners[w] = true
	}
	for seat, b := range r.Bots {
		s := t.row(m.Images[seat])
		s.Played++
		switch {
		case winners[b.ID] && len(r.Winners) == 1:
			s.Won++
		case winners[b.ID], len(r.Winners) == 0:
			s.Drew++
		default:
			s.Lost++
		}
		reason := b.DeathReason
		if b.Status != engine.StatusOK && b.Status != "" {
			reason = string(b.Status)
		}
		if reason == "" {
			reason = "alive"
		}
		s.Reasons[reason]++
	}
}

// Ranking is the standings, best first: by rate, then wins, then name.
func (t *Table) Ranking() []Standing {
	out := make([]Standing, 0, len(t.rows))
	for _, s := range t.rows {
		c := *s
		c.Reasons = map[string]int{}
		for k, v := range s.Reasons {
			c.Reasons[k] = v
		}
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Rate() != b.Rate() {
			return a.Rate() > b.Rate()
		}
		if a.Won != b.Won {
			return a.Won > b.Won
		}
		return a.Bot < b.Bot
	})
	return out
}

// ReasonSummary formats a bot's reasons, most frequent first.
func (s Standing) ReasonSummary() string {
	keys := make([]string, 0, len(s.Reasons))
	for k := range s.Reasons {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int {
		if s.Reasons[a] != s.Reasons[b] {
			return s.Reasons[b] - s.Reasons[a]
		}
		if a < b {
			return -1
		}
		return 1
	})
	out := ""
	for i, k := range keys {
		if i > 0 {
			out += ", "
		}
		out += fmt.Sprintf("%s %d", k, s.Reasons[k])
	}
	return out
}
