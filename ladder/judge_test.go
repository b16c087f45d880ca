package ladder

import (
	"slices"
	"testing"

	"arena/engine"
	"arena/matches"
)

// bot is a seat's result: its status, and whether (and when) it went out.
func bot(seat int, status engine.Status, deathTurn int) matches.BotResult {
	b := matches.BotResult{Seat: seat, ID: string(rune('a' + seat)), Status: status, DeathTurn: deathTurn}
	if deathTurn > 0 {
		b.DeathReason = "shot"
	}
	return b
}

func TestJudge(t *testing.T) {
	ok, timeout, crashed := engine.StatusOK, engine.StatusTimeout, engine.StatusCrashed
	result := func(winners []string, bots ...matches.BotResult) *matches.Result {
		return &matches.Result{Winners: winners, Bots: bots}
	}
	tests := []struct {
		name     string
		status   string
		res      *matches.Result
		seats    int
		void     bool
		places   []int
		outcomes []string
	}{
		{"a win", "finished", result([]string{"b"}, bot(0, ok, 40), bot(1, ok, 0)), 2, false, []int{1, 0}, []string{Loss, Win}},
		{"a draw", "finished", result(nil, bot(0, ok, 0), bot(1, ok, 0)), 2, false, []int{0, 0}, []string{Draw, Draw}},
		{"both out at once", "finished", result(nil, bot(0, ok, 9), bot(1, ok, 9)), 2, false, []int{0, 0}, []string{Draw, Draw}},
		{"a fault loses, even to the game's loser", "finished", result([]string{"a"}, bot(0, timeout, 0), bot(1, ok, 30)), 2, false, []int{1, 0}, []string{Loss, Win}},
		{"two faults share the last place", "finished", result(nil, bot(0, timeout, 0), bot(1, crashed, 0)), 2, false, []int{0, 0}, []string{Loss, Loss}},
		{"four players placed by survival", "finished", result([]string{"c"}, bot(0, ok, 12), bot(1, ok, 30), bot(2, ok, 0), bot(3, crashed, 0)), 4, false, []int{2, 1, 0, 3}, []string{Loss, Loss, Win, Loss}},
		{"shared win of three", "finished", result([]string{"a", "b"}, bot(0, ok, 0), bot(1, ok, 0), bot(2, ok, 5)), 3, false, []int{0, 0, 1}, []string{Win, Win, Loss}},
		{"seats out of order in the result", "finished", result([]string{"a"}, bot(1, ok, 3), bot(0, ok, 0)), 2, false, []int{0, 1}, []string{Win, Loss}},
		{"a bot that did not start", "finished", result([]string{"b"}, bot(0, engine.StatusStartFailed, 0), bot(1, ok, 0)), 2, true, nil, nil},
		{"interrupted", "failed", nil, 2, true, nil, nil},
		{"cancelled", "cancelled", nil, 2, true, nil, nil},
		{"no result", "finished", nil, 2, true, nil, nil},
		{"a result for other seats", "finished", result(nil, bot(0, ok, 0)), 2, true, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := Judge(tt.status, "why", tt.res, tt.seats)
			if (v.Void != "") != tt.void {
				t.Fatalf("void %q, want void %v", v.Void, tt.void)
			}
			if !slices.Equal(v.Places, tt.places) || !slices.Equal(v.Outcomes, tt.outcomes) {
				t.Errorf("places %v outcomes %v, want %v %v", v.Places, v.Outcomes, tt.places, tt.outcomes)
			}
		})
	}
}
