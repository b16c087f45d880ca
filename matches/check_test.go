package matches_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"arena/engine"
	"arena/judger"
	"arena/matches"
)

// logicReplay is a replay of a logic game's match as the orchestrator
// writes one (its frames made up: only the logic could check them).
func logicReplay(t *testing.T, req matches.Request, logic *matches.LogicRecord) *matches.Replay {
	t.Helper()
	match, err := req.Match()
	if err != nil {
		t.Fatal(err)
	}
	ids := matches.BotIDs(req.Images)
	rep := &matches.Replay{Format: matches.ReplayFormat, MatchID: req.MatchID, Game: req.Game.Name(), Map: "default", Seed: req.Seed,
		Settings: match.Settings(), Limits: req.Limits.Resolve(req.Game.Protocol()).Record(), Logic: logic,
		Frames: []matches.Frame{{Turn: 0, State: json.RawMessage(`{"round":0}`)}, {Turn: 1, State: json.RawMessage(`{"round":1}`)}}}
	rep.Result = matches.Result{MatchID: req.MatchID, Game: rep.Game, Map: rep.Map, Seed: req.Seed, Winners: []string{}}
	for i, id := range ids {
		rep.Bots = append(rep.Bots, matches.ReplayBot{Seat: i, ID: id, Image: req.Images[i], ImageID: req.ImageIDs[i]})
		rep.Result.Bots = append(rep.Result.Bots, matches.BotResult{Seat: i, ID: id, Image: req.Images[i], ImageID: req.ImageIDs[i], Status: engine.StatusOK})
	}
	return rep
}

// A logic game's replay reported by another host is checked for the
// logic it names (the pinned one), in memory and as a stream; its frames
// are left for the logic to play again.
func TestALogicGamesReplayNamesItsPinnedLogic(t *testing.T) {
	pinned := "sha256:" + strings.Repeat("1", 64)
	game := judger.Named("ttt", "games/ttt", 2, "").Pinned(pinned)
	m, _ := game.Map("default")
	req := matches.Request{Game: game, Map: m, Seed: 3, MatchID: "mmmmmmmmmmm1", Images: []string{"a/bot", "b/bot"},
		ImageIDs: []string{"sha256:" + strings.Repeat("a", 64), "sha256:" + strings.Repeat("b", 64)}}
	for name, c := range map[string]struct {
		logic *matches.LogicRecord
		ok    bool
	}{
		"the pinned logic":  {&matches.LogicRecord{Image: "games/ttt", ImageID: pinned}, true},
		"another image":     {&matches.LogicRecord{Image: "games/ttt", ImageID: "sha256:" + strings.Repeat("2", 64)}, false},
		"another name":      {&matches.LogicRecord{Image: "other/ttt", ImageID: pinned}, false},
		"no logic recorded": {nil, false},
	} {
		t.Run(name, func(t *testing.T) {
			rep := logicReplay(t, req, c.logic)
			err := matches.CheckReplay(req, rep)
			var buf bytes.Buffer
			if werr := json.NewEncoder(&buf).Encode(rep); werr != nil {
				t.Fatal(werr)
			}
			frames := 0
			_, serr := matches.CheckReplayStream(req, bytes.NewReader(buf.Bytes()), io.Discard, func(int, matches.Frame) { frames++ })
			if c.ok && (err != nil || serr != nil || frames != 2) {
				t.Errorf("in memory: %v; as a stream: %v, %d frames", err, serr, frames)
			}
			if !c.ok && (!errors.Is(err, matches.ErrForeignReplay) || !errors.Is(serr, matches.ErrForeignReplay)) {
				t.Errorf("in memory: %v; as a stream: %v", err, serr)
			}
		})
	}
}
