package ladder

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"arena/engine"
	"arena/engine/tanks"
	"arena/ladder/skill"
	"arena/matches"
	"arena/store"
)

// queue records what the ladder submits; nothing is played.
type queue struct {
	mu   sync.Mutex
	reqs []matches.Request
}

func (q *queue) Submit(ctx context.Context, req matches.Request, insert func(context.Context, store.Match) error) error {
	m := store.Match{ID: req.MatchID, Status: "queued", Game: req.Game.Name(), Map: req.Map.Info().Name, Seed: req.Seed, Bots: req.Images, CreatedAt: time.Now()}
	if err := insert(ctx, m); err != nil {
		return err
	}
	q.mu.Lock()
	q.reqs = append(q.reqs, req)
	q.mu.Unlock()
	return nil
}

func newLadder(t *testing.T, st *store.Store, q Queue) *Ladder {
	return New(Config{Enabled: true, InFlight: 2}, Deps{Store: st, Games: engine.NewCatalog(tanks.New()), Queue: q,
		Image: func(_ context.Context, ref string) (string, error) {
			if strings.HasPrefix(ref, "sha256:") {
				return ref, nil
			}
			return "sha256:" + ref, nil
		}})
}

// finish records a finished match in which seat winner won.
func finish(t *testing.T, st *store.Store, req matches.Request, winner int) {
	t.Helper()
	res := matches.Result{MatchID: req.MatchID, Winners: []string{matches.BotIDs(req.Images)[winner]}}
	for i, id := range matches.BotIDs(req.Images) {
		b := matches.BotResult{Seat: i, ID: id, Status: engine.StatusOK}
		if i != winner {
			b.DeathReason, b.DeathTurn = "shot", 10
		}
		res.Bots = append(res.Bots, b)
	}
	data, _ := json.Marshal(res)
	if err := st.Finish(t.Context(), req.MatchID, store.Outcome{Status: "finished", Result: data}, time.Now()); err != nil {
		t.Fatal(err)
	}
}

// The ladder submits background matches of pinned images with their
// seeds fixed, rates the ones that finish, voids the ones a restart
// interrupted, and its ratings recompute to the same numbers.
func TestLadderSubmitsSettlesAndRecovers(t *testing.T) {
	st, err := store.Open(t.TempDir(), "test")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := t.Context()
	q := &queue{}
	l := newLadder(t, st, q)
	for _, name := range []string{"a", "b", "c"} {
		if _, _, err := l.Register(ctx, Registration{Game: "tanks", Name: name, Image: "bots/" + name, Owner: "admin", By: "admin"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.fill(ctx); err != nil {
		t.Fatal(err)
	}
	if len(q.reqs) != 2 {
		t.Fatalf("%d matches submitted, want 2 (InFlight)", len(q.reqs))
	}
	for _, r := range q.reqs {
		// Named by their images' references, pinned to their ids.
		if r.Priority != matches.Background || !strings.HasPrefix(r.Images[0], "bots/") || r.ImageIDs[0] != "sha256:"+r.Images[0] || r.Seed >= 1<<53 {
			t.Errorf("request %+v", r)
		}
	}
	// The same match number draws the same seed.
	if first, _ := st.LadderMatchOf(ctx, q.reqs[0].MatchID); matchRand("tanks", first.Seq).Uint64() == 0 {
		t.Error("no seed drawn")
	}
	finish(t, st, q.reqs[0], 0)
	l.Observe(matches.Update{ID: q.reqs[0].MatchID, State: matches.StateFinished})
	lm, _ := st.LadderMatchOf(ctx, q.reqs[0].MatchID)
	if lm.State != store.LadderRated || lm.Seats[0].Outcome != Win || lm.Seats[0].Mu <= lm.Seats[0].MuBefore {
		t.Errorf("the finished match: %+v", lm)
	}
	// A restart: the other match was interrupted; a new ladder voids it.
	if err := st.Finish(ctx, q.reqs[1].MatchID, store.Outcome{Status: "failed", Error: "interrupted: the server stopped during the match"}, time.Now()); err != nil {
		t.Fatal(err)
	}
	l2 := newLadder(t, st, &queue{})
	if err := l2.settlePending(ctx); err != nil {
		t.Fatal(err)
	}
	if lm, _ := st.LadderMatchOf(ctx, q.reqs[1].MatchID); lm.State != store.LadderVoid || !strings.Contains(lm.Note, "interrupted") {
		t.Errorf("the interrupted match: %+v", lm)
	}
	if n := len(l2.InFlight()); n != 0 {
		t.Errorf("%d games in flight after the restart", n)
	}
	rc, err := Recompute(ctx, st, skill.Default(), "tanks", true)
	if err != nil || rc.Matches != 1 || rc.MaxDiff != 0 {
		t.Errorf("recompute: %+v %v", rc, err)
	}
	b, err := l2.Leaderboard(ctx, "tanks")
	if err != nil || len(b.Entries) != 3 || b.Rated != 1 || len(b.Recent) != 2 {
		t.Errorf("board: %+v %v", b, err)
	}
}
