package matches_test

import (
	"testing"

	"arena/engine"
	"arena/engine/pacman"
	"arena/engine/snake"
	"arena/engine/tanks"
	"arena/judger"
	"arena/matches"
	"arena/orchestrator"
	"arena/sandbox"
)

// The replay bounds come from the numbers the recorder and the games
// bound a replay with: the replay budget, each game's cap on an answer,
// the stderr kept per turn.
func TestReplayBoundsFollowTheBudgetAndTheCaps(t *testing.T) {
	if matches.DefaultReplayBudget != orchestrator.DefaultReplayBudget {
		t.Errorf("the readers' default budget %d is not the recorder's %d", matches.DefaultReplayBudget, orchestrator.DefaultReplayBudget)
	}
	if matches.DefaultAnswerCap != max(judger.MaxLength, judger.MaxLogicMessage) {
		t.Errorf("the default cap %d is not a logic game's (%d, %d)", matches.DefaultAnswerCap, judger.MaxLength, judger.MaxLogicMessage)
	}
	const kib, mib = 1 << 10, 1 << 20
	stderr := int64(sandbox.DefaultStderrCaps.PerTake)
	for _, c := range []struct {
		game engine.Game
		cap  int
	}{{tanks.New(), 4 * kib}, {snake.New(), 4 * kib}, {pacman.New(), kib}} {
		if got := matches.AnswerCap(c.game); got != c.cap {
			t.Errorf("%s caps an answer at %d, want %d", c.game.Name(), got, c.cap)
		}
		m, _ := c.game.Map(c.game.Maps()[0].Name)
		got := matches.Request{Game: c.game, Map: m}.ReplayBounds(0)
		// The stderr of a turn is longer than an answer of a built-in game.
		if want := (matches.ReplayBounds{File: 256 * mib, Frame: 16 * mib, String: 6*stderr + kib}); got != want {
			t.Errorf("%s: %+v, want %+v", c.game.Name(), got, want)
		}
	}
	logic := judger.New("games/ttt", 2)
	m, _ := logic.Map("default")
	if got, want := (matches.Request{Game: logic, Map: m}).ReplayBounds(0), (matches.ReplayBounds{File: 256 * mib, Frame: 24*mib + 4*kib, String: 6*mib + kib}); got != want {
		t.Errorf("a logic game: %+v, want %+v", got, want)
	}
	if got := matches.BoundsFor(64*mib, 4*kib); got.File != 512*mib || got.Frame != 32*mib {
		t.Errorf("a 64 MiB budget: %+v", got)
	}
	// A lower budget counts fewer answers, not fewer states.
	if got := matches.BoundsFor(1*mib, 4*kib); got != matches.BoundsFor(matches.DefaultReplayBudget, 4*kib) {
		t.Errorf("a 1 MiB budget: %+v", got)
	}
	if matches.DefaultReplayBounds != matches.BoundsFor(0, matches.DefaultAnswerCap) {
		t.Errorf("the default bounds: %+v", matches.DefaultReplayBounds)
	}
}
