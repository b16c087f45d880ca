package platform

import (
	"testing"

	"arena/engine"
	"arena/matches"
)

// A check match whose every seat faulted alike at one turn (two Pac-Man
// bots claiming one role) is the pairing's fault, to be played again
// against another example bot; one seat's fault, or faults that differ,
// are the bot's.
func TestAPairingFault(t *testing.T) {
	same := "both seats claim role 0"
	bot := func(st engine.Status, turn int, detail string) matches.BotResult {
		return matches.BotResult{Status: st, FaultTurn: turn, FaultDetail: detail}
	}
	for _, tc := range []struct {
		name string
		bots []matches.BotResult
		want bool
	}{
		{"both claim one role", []matches.BotResult{bot(engine.StatusIllegal, 1, same), bot(engine.StatusIllegal, 1, same)}, true},
		{"the bot alone faults", []matches.BotResult{bot(engine.StatusCrashed, 1, "exit 3"), bot(engine.StatusOK, 0, "")}, false},
		{"both play", []matches.BotResult{bot(engine.StatusOK, 0, ""), bot(engine.StatusOK, 0, "")}, false},
		{"faults at other turns", []matches.BotResult{bot(engine.StatusCrashed, 1, "exit 3"), bot(engine.StatusCrashed, 2, "exit 3")}, false},
		{"faults of other kinds", []matches.BotResult{bot(engine.StatusCrashed, 1, same), bot(engine.StatusIllegal, 1, same)}, false},
		{"one seat", []matches.BotResult{bot(engine.StatusIllegal, 1, same)}, false},
	} {
		if got := aPairingFault(matches.Result{Bots: tc.bots}); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
