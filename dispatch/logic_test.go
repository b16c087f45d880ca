package dispatch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"go.uber.org/zap/zaptest"

	"arena/engine"
	"arena/judger"
	"arena/matches"
	"arena/orchestrator/fake"
)

// logicPlayer is a worker's player of logic games that runs no logic: it
// checks the game the job rebuilt (its logic pinned, its limits, its
// image on the engine) and writes the replay the orchestrator would,
// with the frame text given. With once, it holds the matches it takes
// after its first until it is stopped.
type logicPlayer struct {
	eng    *fakeEngine
	frame  string
	games  chan *judger.Game
	once   bool
	played atomic.Int32
}

func (p *logicPlayer) Play(ctx context.Context, req matches.Request) (*matches.Replay, error) {
	if p.once && p.played.Add(1) > 1 {
		<-ctx.Done()
		return nil, context.Cause(ctx)
	}
	lg, ok := req.Game.(*judger.Game)
	if !ok {
		return nil, fmt.Errorf("game %s is not a logic game on the worker", req.Game.Name())
	}
	ref, id := lg.HostImage()
	if !p.eng.Has(ctx, id) {
		return nil, fmt.Errorf("the logic %s is not on the worker's engine", id)
	}
	p.games <- lg
	match, err := req.Match()
	if err != nil {
		return nil, err
	}
	ids := matches.BotIDs(req.Images)
	rep := &matches.Replay{Format: matches.ReplayFormat, MatchID: req.MatchID, Game: req.Game.Name(), Map: req.Map.Info().Name,
		Seed: req.Seed, Settings: match.Settings(), Limits: req.Limits.Resolve(req.Game.Protocol()).Record(),
		Logic:  &matches.LogicRecord{Image: ref, ImageID: id},
		Frames: []matches.Frame{{Turn: 0, State: json.RawMessage(p.frame)}}}
	rep.Result = matches.Result{MatchID: req.MatchID, Game: rep.Game, Map: rep.Map, Seed: req.Seed, Winners: []string{}}
	for i := range ids {
		rep.Bots = append(rep.Bots, matches.ReplayBot{Seat: i, ID: ids[i], Image: req.Images[i], ImageID: req.ImageIDs[i]})
		rep.Result.Bots = append(rep.Result.Bots, matches.BotResult{Seat: i, ID: ids[i], Image: req.Images[i], ImageID: req.ImageIDs[i], Status: engine.StatusOK})
	}
	return rep, nil
}

// A logic game's match plays on a joined worker: its job carries the
// logic pinned to its image id and its limits; the worker, whose engine
// lacks the logic, gets it from the server (handed out only while a match
// of it is in flight); the server plays the logic again on the result
// before it counts (VerifyLogic, a bounded number at once), and a result
// that does not reproduce is refused and the match played again. The
// server's own worker's results are not played again.
func TestALogicGamesMatchOnAWorkerIsVerifiedOnTheServer(t *testing.T) {
	logicID := fake.ImageID("games/ttt-logic")
	var exports, verifies atomic.Int32
	var mu sync.Mutex
	var refusedFrames []string
	s := newSecured(t, func(c *DispatcherConfig) {
		c.Logic = func(_ context.Context, id string, w io.Writer) error {
			exports.Add(1)
			_, err := w.Write(archiveOf("games/ttt-logic"))
			return err
		}
		c.VerifyLogic = func(_ context.Context, g engine.Hosted, rep *matches.Replay) error {
			verifies.Add(1)
			if ref, id := g.HostImage(); ref != "games/ttt-logic" || id != logicID {
				return fmt.Errorf("verified with logic %s (%s)", ref, id)
			}
			if !strings.Contains(string(rep.Frames[0].State), "honest") {
				mu.Lock()
				refusedFrames = append(refusedFrames, string(rep.Frames[0].State))
				mu.Unlock()
				return &matches.Mismatch{Turn: 0, Reason: "the logic played again does otherwise"}
			}
			return nil
		}
		c.Own = "serve_here"
	})
	up := fake.Script{Answer: func(int, [][]byte) []byte { return []byte("up") }}
	l := fake.NewLauncher(map[string]fake.Script{"bot/a": up, "bot/b": up})
	eng := &fakeEngine{l: l, s: up}
	game := judger.Named("ttt", "games/ttt-logic", 2, "").Pinned(logicID).WithLimits(judger.Limits{RoundMS: 2500, MemoryBytes: 64 << 20})
	m, err := game.Map("default")
	if err != nil {
		t.Fatal(err)
	}
	req := func(id string) matches.Request {
		images := []string{"bot/a", "bot/b"}
		return matches.Request{Game: game, Map: m, Seed: 7, Images: images, MatchID: id,
			ImageIDs: []string{fake.ImageID(images[0]), fake.ImageID(images[1])}}
	}
	// The logic is not handed out with no match of it in flight.
	if _, err := (&imageServer{d: s.d, slots: make(chan struct{}, 1)}).put(t.Context(), "w1", logicID, s.d.log); !errors.Is(err, ErrNotHandedOut) {
		t.Errorf("a logic with no match in flight: %v", err)
	}

	// A forger first: its changed replay is refused, then an honest
	// worker plays the match.
	games := make(chan *judger.Game, 8)
	stopForger := s.remoteWorker(s.Join("forger"), WorkerConfig{Player: &logicPlayer{eng: eng, frame: `{"round":0,"forged":true}`, games: games, once: true}, Images: eng})
	var rep *matches.Replay
	done := make(chan error, 1)
	go func() {
		var err error
		rep, err = s.d.Play(t.Context(), req("lllllllllll1"))
		done <- err
	}()
	waitFor(t, "the forger refused", func() bool { return s.refused("forger") >= 1 })
	stopForger()
	stopHonest := s.remoteWorker(s.Join("w1"), WorkerConfig{Player: &logicPlayer{eng: eng, frame: `{"round":0,"honest":true}`, games: games}, Images: eng})
	if err := <-done; err != nil {
		t.Fatalf("the match: %v", err)
	}
	if rep.Result.Worker == "forger" || !strings.Contains(string(rep.Frames[0].State), "honest") {
		t.Errorf("the result counted: %s by %s", rep.Frames[0].State, rep.Result.Worker)
	}
	g := <-games
	if ref, id := g.HostImage(); g.Name() != "ttt" || ref != "games/ttt-logic" || id != logicID || g.Limits() != game.Limits() || g.Players() != 2 {
		t.Errorf("the game on the worker: %s %s %s %+v", g.Name(), ref, id, g.Limits())
	}
	if n := exports.Load(); n != 1 {
		t.Errorf("the logic handed out %d times, want once (the engine keeps it)", n)
	}
	if len(refusedFrames) == 0 || !strings.Contains(refusedFrames[0], "forged") {
		t.Errorf("the forged replays verified: %q", refusedFrames)
	}

	// The server's own worker (in its process, on its connection):
	// believed as it is.
	stopHonest()
	before := verifies.Load()
	runWorker(t, connect(t, s.ns), WorkerConfig{Name: "serve_here", Games: []engine.Game{}, Images: eng, Log: zaptest.NewLogger(t),
		Player: &logicPlayer{eng: eng, frame: `{"round":0,"own":true}`, games: games}})
	if rep, err := s.d.Play(t.Context(), req("lllllllllll2")); err != nil || rep.Result.Worker != "serve_here" {
		t.Fatalf("the own worker's match: %v", err)
	}
	if verifies.Load() != before {
		t.Errorf("the own worker's result was played again")
	}
}
