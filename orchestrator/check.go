package orchestrator

import (
	"errors"
	"fmt"

	"arena/engine"
)

// ErrForeignReplay is the kind of error of a replay that is not the
// request's match, or that the engine does not reproduce.
var ErrForeignReplay = errors.New("the replay is not the match's")

// CheckReplay says whether rep is a replay of req as this package writes
// one: the same match id, game, map (its data, not just its name), seed,
// settings and limits, the bots in seat order playing the images req
// pinned; and whether the game's engine reproduces every frame and the
// result from the answers it records. It is how a server checks a result
// that another host (a worker) reports.
func CheckReplay(req Request, rep *Replay) error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s", ErrForeignReplay, fmt.Sprintf(format, a...))
	}
	if rep == nil {
		return bad("no replay")
	}
	match, err := req.newMatch()
	if err != nil {
		return err
	}
	if rep.MatchID != req.MatchID {
		return bad("match %q, want %q", rep.MatchID, req.MatchID)
	}
	if rep.Game != req.Game.Name() {
		return bad("game %q, want %q", rep.Game, req.Game.Name())
	}
	if rep.Map != req.Map.Info().Name || rep.MapData != string(req.Map.Data()) {
		return bad("map %q is not map %q as the server has it", rep.Map, req.Map.Info().Name)
	}
	if rep.Seed != req.Seed {
		return bad("seed %d, want %d", rep.Seed, req.Seed)
	}
	if !sameJSON(rep.Settings, match.Settings()) {
		return bad("settings %s, want %s", rep.Settings, match.Settings())
	}
	lim := req.Limits.Resolve(req.Game.Protocol())
	if want := (LimitsRecord{AnswerTimeoutMS: ms(lim.AnswerTimeout), WarmUpMS: ms(lim.WarmUp), MaxMessageBytes: lim.MaxMessageBytes}); rep.Limits != want {
		return bad("limits %+v, want %+v", rep.Limits, want)
	}
	if r := rep.Result; r.MatchID != req.MatchID || r.Game != rep.Game || r.Map != rep.Map || r.Seed != rep.Seed {
		return bad("the result is of match %s (%s, %s, seed %d)", r.MatchID, r.Game, r.Map, r.Seed)
	}
	ids := BotIDs(req.Images)
	if len(rep.Bots) != len(ids) || len(rep.Result.Bots) != len(ids) {
		return bad("%d bots (%d in the result), want %d", len(rep.Bots), len(rep.Result.Bots), len(ids))
	}
	for i, b := range rep.Bots {
		if b.Seat != i || b.ID != ids[i] || b.Image != req.Images[i] {
			return bad("seat %d is %s playing %s, want %s playing %s", i, b.ID, b.Image, ids[i], req.Images[i])
		}
		if len(req.ImageIDs) > 0 && b.ImageID != req.ImageIDs[i] {
			return bad("seat %d played image %s, not the pinned %s", i, b.ImageID, req.ImageIDs[i])
		}
		if r := rep.Result.Bots[i]; r.Seat != i || r.ID != ids[i] || r.Image != b.Image || r.ImageID != b.ImageID {
			return bad("the result's seat %d is %s, want %s", i, r.ID, ids[i])
		}
	}
	if err := Verify([]engine.Game{req.Game}, rep); err != nil {
		return fmt.Errorf("%w: the engine does not reproduce it: %v", ErrForeignReplay, err)
	}
	return nil
}
