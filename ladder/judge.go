package ladder

import (
	"cmp"
	"fmt"
	"slices"

	"arena/engine"
	"arena/matches"
)

// The outcomes of a rated seat.
const (
	Win  = "win"
	Draw = "draw"
	Loss = "loss"
)

// Verdict is how a ladder counts a match that is over.
type Verdict struct {
	// Void, when set, says why the match is not rated.
	Void string
	// Places are the seats' places (0 is first; equal places are a tie),
	// Outcomes their win, draw or loss, Statuses the bots' statuses.
	Places   []int
	Outcomes []string
	Statuses []string
}

// Judge decides how a match that is over counts: status and errMsg are
// the match's final status and error, res its result (nil when it has
// none), seats the number of seats the ladder filled. It is pure: the
// same match always gets the same verdict, so ratings can be recomputed
// from the history.
//
//   - A match that did not finish (failed: interrupted, the platform could
//     not play it; cancelled) is void, and so is one where a bot did not
//     start (start_failed: the platform could not run it, not a move of
//     the bot's).
//   - A bot that faulted (timeout, bad output, crash, out of memory,
//     output over the limit) lost: it takes the last place, shared with
//     every other bot that faulted, whatever the game made of it.
//   - The others are placed by the game: its winners first, then the bots
//     still in the game at the end, then the others by the turn they went
//     out (later is better). Equal places are ties.
func Judge(status, errMsg string, res *matches.Result, seats int) Verdict {
	if status != string(matches.StateFinished) {
		why := "the match " + status
		if errMsg != "" {
			why += ": " + errMsg
		}
		return Verdict{Void: why + " (not rated)"}
	}
	if res == nil || len(res.Bots) != seats {
		return Verdict{Void: "the match has no result for its seats (not rated)"}
	}
	bots := slices.Clone(res.Bots)
	slices.SortFunc(bots, func(a, b matches.BotResult) int { return cmp.Compare(a.Seat, b.Seat) })
	for i, b := range bots {
		if b.Seat != i {
			return Verdict{Void: fmt.Sprintf("the match's result has no seat %d (not rated)", i)}
		}
		if b.Status == engine.StatusStartFailed {
			return Verdict{Void: fmt.Sprintf("the bot in seat %d did not start (start_failed: %s); not rated", i+1, b.FaultDetail)}
		}
	}
	// A seat's standing: tier (0 winner, 1 in the game at the end, 2 out,
	// 3 faulted), then for tier 2 the turn it went out (later is better).
	type standing struct{ tier, out int }
	st := make([]standing, seats)
	v := Verdict{Places: make([]int, seats), Outcomes: make([]string, seats), Statuses: make([]string, seats)}
	for i, b := range bots {
		v.Statuses[i] = string(b.Status)
		switch {
		case b.Status != engine.StatusOK:
			st[i] = standing{tier: 3}
		case slices.Contains(res.Winners, b.ID):
			st[i] = standing{tier: 0}
		case b.DeathReason == "" && b.DeathTurn == 0:
			st[i] = standing{tier: 1}
		default:
			st[i] = standing{tier: 2, out: -b.DeathTurn}
		}
	}
	distinct := slices.Clone(st)
	slices.SortFunc(distinct, func(a, b standing) int { return cmp.Or(cmp.Compare(a.tier, b.tier), cmp.Compare(a.out, b.out)) })
	distinct = slices.Compact(distinct)
	for i := range st {
		v.Places[i] = slices.Index(distinct, st[i])
	}
	allTied := len(distinct) == 1
	for i := range st {
		switch {
		case st[i].tier == 3:
			v.Outcomes[i] = Loss
		case allTied:
			v.Outcomes[i] = Draw
		case v.Places[i] == 0:
			v.Outcomes[i] = Win
		default:
			v.Outcomes[i] = Loss
		}
	}
	return v
}
