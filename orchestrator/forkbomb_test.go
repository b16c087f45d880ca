package orchestrator_test

import (
	"encoding/json"
	"testing"
	"time"

	"arena/engine"
	"arena/internal/testsupport/dockertest"
	"arena/matches"
)

// A fork bomb is counted however its bot ends: one that starts processes
// until refused and then crashes (its cgroup gone before the match ends)
// still reports the forks the pids limit refused.
func TestAForkBombThatCrashesIsCounted(t *testing.T) {
	cli := dockertest.Client(t)
	hunter := dockertest.ExampleBots(t, cli)[1]
	for _, stdio := range []string{"attach", "fifo"} {
		t.Run(stdio, func(t *testing.T) {
			bot := dockertest.TestBot(t, cli, "fork-bomb-at=2,exit-at=3")
			rep := play(t, cli, matches.Request{
				Seed: 3, Images: []string{bot, hunter}, Settings: json.RawMessage(`{"zone_radius":14}`),
				Limits: matches.Limits{AnswerTimeout: 5 * time.Second},
			}, stdio)
			b := rep.Result.Bots[0]
			if b.Status != engine.StatusCrashed || b.FaultTurn != 3 {
				t.Errorf("the bot: %s at turn %d (%s), want crashed at turn 3", b.Status, b.FaultTurn, b.FaultDetail)
			}
			if b.PidsLimitHits < 1 {
				t.Errorf("pids_limit_hits %d: the forks refused at turn 2 were not counted", b.PidsLimitHits)
			}
		})
	}
}
