package ladder

import (
	"context"
	"encoding/json"
	"fmt"
	"math"

	"arena/ladder/skill"
	"arena/matches"
	"arena/store"
)

// Recomputed is what a recomputation found.
type Recomputed struct {
	Game string
	// Matches counts the rated matches replayed; Entries the entries that
	// played them.
	Matches, Entries int
	// MaxDiff is the largest difference between a stored figure (μ or σ,
	// of an entry or of a seat before or after a match) and the
	// recomputed one: 0 when the history gives the same numbers.
	MaxDiff float64
	// Changed counts the matches whose verdict now differs (a match that
	// would now be void is kept, with its stored places).
	Changed int
}

// Recompute rates a game's ladder again from its history: every rated
// match, in the order it was rated, judged again from its stored result
// and rated with model from fresh ratings. With write, the recomputed
// figures replace the stored ones.
func Recompute(ctx context.Context, st *store.Store, model skill.Model, game string, write bool) (Recomputed, error) {
	rated, err := st.RatedMatches(ctx, game)
	if err != nil {
		return Recomputed{}, err
	}
	out := Recomputed{Game: game, Matches: len(rated)}
	ratings := map[int64]skill.Rating{}
	var seats []store.Rerating
	diff := func(a, b float64) { out.MaxDiff = math.Max(out.MaxDiff, math.Abs(a-b)) }
	for _, lm := range rated {
		m, err := st.Get(ctx, lm.MatchID)
		if err != nil {
			return Recomputed{}, err
		}
		var res *matches.Result
		if len(m.Result) > 0 {
			res = new(matches.Result)
			if err := json.Unmarshal(m.Result, res); err != nil {
				return Recomputed{}, fmt.Errorf("match %s: its result: %w", m.ID, err)
			}
		}
		v := Judge(m.Status, m.Error, res, len(lm.Seats))
		if v.Void != "" {
			out.Changed++
			v = Verdict{}
			for _, s := range lm.Seats {
				v.Places, v.Outcomes, v.Statuses = append(v.Places, s.Place), append(v.Outcomes, s.Outcome), append(v.Statuses, s.Status)
			}
		}
		before := make([]skill.Rating, len(lm.Seats))
		for i, s := range lm.Seats {
			r, ok := ratings[s.EntryID]
			if !ok {
				r = model.New()
			}
			before[i] = r
			if v.Places[i] != s.Place || v.Outcomes[i] != s.Outcome {
				out.Changed++
			}
		}
		after, err := model.Rate(before, v.Places)
		if err != nil {
			return Recomputed{}, fmt.Errorf("match %s: %w", m.ID, err)
		}
		for i, s := range lm.Seats {
			ratings[s.EntryID] = after[i]
			diff(s.MuBefore, before[i].Mu)
			diff(s.SigmaBefore, before[i].Sigma)
			diff(s.Mu, after[i].Mu)
			diff(s.Sigma, after[i].Sigma)
			seats = append(seats, store.Rerating{MatchID: lm.MatchID, Seat: s.Seat, Place: v.Places[i], Outcome: v.Outcomes[i], Status: v.Statuses[i],
				MuBefore: before[i].Mu, SigmaBefore: before[i].Sigma, Mu: after[i].Mu, Sigma: after[i].Sigma})
		}
	}
	entries, err := st.Entries(ctx, game)
	if err != nil {
		return Recomputed{}, err
	}
	final := map[int64][2]float64{}
	for _, e := range entries {
		r, ok := ratings[e.ID]
		if !ok {
			r = model.New()
		} else {
			out.Entries++
		}
		diff(e.Mu, r.Mu)
		diff(e.Sigma, r.Sigma)
		final[e.ID] = [2]float64{r.Mu, r.Sigma}
	}
	if write {
		def := model.New()
		if err := st.ReplaceRatings(ctx, game, seats, final, [2]float64{def.Mu, def.Sigma}); err != nil {
			return Recomputed{}, err
		}
	}
	return out, nil
}
