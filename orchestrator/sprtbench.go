package orchestrator

import (
	"context"
	"encoding/json"
	"sync"

	"arena/engine"
	"arena/internal/errs"
	"arena/matches"
	"arena/sprt"
)

// SPRTPlan is a sequential test of a candidate bot against a base: pairs
// of matches (one seed, the seats swapped), over the maps in turn, until
// the test accepts a hypothesis or MaxPairs pairs were played.
type SPRTPlan struct {
	Game            engine.Game
	Maps            []engine.Map
	Candidate, Base string
	Test            sprt.Test
	// MaxPairs stops an undecided test (0: no limit).
	MaxPairs int
	Seed     uint64
	Settings json.RawMessage
	Limits   matches.Limits
}

// Pair is pair i of a plan: its two matches, the candidate in seat 0 of
// the first and seat 1 of the second, on the same map with the same seed.
func (p SPRTPlan) Pair(i int) [2]BenchMatch {
	m := p.Maps[i%len(p.Maps)]
	seed := DeriveSeed(p.Seed, uint64(i))
	return [2]BenchMatch{
		{Index: 2 * i, Map: m, Seed: seed, Images: []string{p.Candidate, p.Base}},
		{Index: 2*i + 1, Map: m, Seed: seed, Images: []string{p.Base, p.Candidate}},
	}
}

// SPRTState is the test after a match: the pairs complete so far and the
// test's log-likelihood ratio and verdict on them.
type SPRTState struct {
	Pairs    sprt.Pentanomial
	LLR      float64
	Decision sprt.Decision
	// Failed counts the matches the platform could not play (their pairs
	// are not counted).
	Failed int
}

// CandidateScore is the candidate's score in a match: 1 for a win alone,
// ½ for a draw or a shared win, 0 for a loss.
func CandidateScore(m BenchMatch, r *matches.Result, candidate string) float64 {
	seat := -1
	for i, img := range m.Images {
		if img == candidate {
			seat = i
		}
	}
	if seat < 0 || seat >= len(r.Bots) {
		return 0
	}
	id := r.Bots[seat].ID
	won := false
	for _, w := range r.Winners {
		won = won || w == id
	}
	switch {
	case won && len(r.Winners) == 1:
		return 1
	case won, len(r.Winners) == 0:
		return 0.5
	}
	return 0
}

// RunSPRT plays a plan's pairs, jobs matches at a time, and calls report
// (from one goroutine at a time) as each match ends, with the test so
// far. It returns once the test accepts a hypothesis (the matches still
// playing are cancelled and not counted), MaxPairs pairs are complete, or
// ctx is done (then with ctx's error).
func (o *Orchestrator) RunSPRT(ctx context.Context, plan SPRTPlan, jobs int, report func(BenchOutcome, SPRTState)) (SPRTState, error) {
	var st SPRTState
	if err := o.checkSPRT(ctx, plan); err != nil {
		return st, err
	}

	playCtx, stop := context.WithCancel(ctx)
	defer stop()
	work := make(chan BenchMatch)
	var mu sync.Mutex
	type half struct {
		score float64
		ok    bool // played (else the pair does not count)
	}
	halves := map[int]half{} // pair → its first finished match
	decided := false
	var wg sync.WaitGroup
	for range max(1, jobs) {
		wg.Go(func() {
			for m := range work {
				rep, err := o.Play(playCtx, matches.Request{Game: plan.Game, Map: m.Map, Seed: m.Seed, Images: m.Images, Settings: plan.Settings, Limits: plan.Limits})
				if playCtx.Err() != nil {
					continue // interrupted or decided: not a result
				}
				out := BenchOutcome{Match: m, Err: err}
				mu.Lock()
				if decided {
					mu.Unlock()
					continue
				}
				pair, h := m.Index/2, half{ok: err == nil}
				if err != nil {
					st.Failed++
				} else {
					out.Result = &rep.Result
					h.score = CandidateScore(m, out.Result, plan.Candidate)
				}
				if first, seen := halves[pair]; !seen {
					halves[pair] = h
				} else if delete(halves, pair); first.ok && h.ok {
					st.Pairs.Add(first.score, h.score)
					st.LLR, st.Decision = plan.Test.LLR(st.Pairs), plan.Test.Decide(st.Pairs)
				}
				if st.Decision != sprt.Continue || (plan.MaxPairs > 0 && st.Pairs.Pairs() >= plan.MaxPairs) {
					decided = true
					stop()
				}
				report(out, st)
				mu.Unlock()
			}
		})
	}
feed:
	for i := 0; plan.MaxPairs <= 0 || i < plan.MaxPairs; i++ {
		for _, m := range plan.Pair(i) {
			select {
			case work <- m:
			case <-playCtx.Done():
				break feed
			}
		}
	}
	close(work)
	wg.Wait()
	if !decided {
		return st, ctx.Err()
	}
	return st, nil
}

// checkSPRT checks a plan before any match plays: its test, two different
// bots, the matches of a pair on each map, and both bots' images present.
func (o *Orchestrator) checkSPRT(ctx context.Context, plan SPRTPlan) error {
	if err := plan.Test.Validate(); err != nil {
		return errs.Errorf(errs.ErrInvalid, "--sprt: %w", err)
	}
	if plan.Candidate == plan.Base {
		return errs.New(errs.ErrInvalid, "the SPRT needs two different bots")
	}
	if len(plan.Maps) == 0 {
		return errs.New(errs.ErrInvalid, "no maps given")
	}
	for i := range plan.Maps {
		for _, m := range plan.Pair(i) {
			if err := o.Validate(ctx, matches.Request{Game: plan.Game, Map: m.Map, Seed: m.Seed, Images: m.Images, Settings: plan.Settings}, false); err != nil {
				return err
			}
		}
	}
	for _, ref := range []string{plan.Candidate, plan.Base} {
		if _, err := o.launcher.Image(ctx, ref); err != nil {
			return err
		}
	}
	return nil
}
