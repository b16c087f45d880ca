package orchestrator_test

import (
	"testing"

	"arena/matches"
)

// A draw is said as one: nobody won, or every bot did; some bots winning
// together is a shared win.
func TestOutcome(t *testing.T) {
	bots := func(n int) []matches.BotResult { return make([]matches.BotResult, n) }
	for _, c := range []struct {
		winners []string
		bots    int
		draw    bool
		want    string
	}{
		{nil, 2, true, "draw"},
		{[]string{"a", "b"}, 2, true, "draw"},
		{[]string{"a"}, 2, false, "winner a"},
		{[]string{"a", "b"}, 3, false, "shared win: a, b"},
		{[]string{"a"}, 1, false, "winner a"},
	} {
		r := matches.Result{Winners: c.winners, Bots: bots(c.bots)}
		if r.Draw() != c.draw || r.Outcome() != c.want {
			t.Errorf("%v of %d bots: draw %v, %q; want %v, %q", c.winners, c.bots, r.Draw(), r.Outcome(), c.draw, c.want)
		}
	}
}
