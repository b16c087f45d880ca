package dispatch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"arena/internal/errs"
	"arena/matches"
)

// forger is a worker's player that plays the match, then changes its
// replay before the worker reports it; past times forgeries it holds the
// matches it takes until it is stopped.
type forger struct {
	matches.Player
	forge  func(*matches.Replay)
	times  int32
	played atomic.Int32
}

func (f *forger) Play(ctx context.Context, req matches.Request) (*matches.Replay, error) {
	if f.played.Load() >= f.times {
		<-ctx.Done()
		return nil, context.Cause(ctx)
	}
	rep, err := f.Player.Play(ctx, req)
	if err == nil {
		f.forge(rep)
		f.played.Add(1)
	}
	return rep, err
}

// The forgeries a worker could try with a real replay in hand.
var forgeries = map[string]func(*matches.Replay){
	"swapped seats": func(r *matches.Replay) {
		r.Bots[0].Image, r.Bots[1].Image = r.Bots[1].Image, r.Bots[0].Image
		r.Bots[0].ImageID, r.Bots[1].ImageID = r.Bots[1].ImageID, r.Bots[0].ImageID
		r.Result.Bots[0].Image, r.Result.Bots[1].Image = r.Result.Bots[1].Image, r.Result.Bots[0].Image
		r.Result.Bots[0].ImageID, r.Result.Bots[1].ImageID = r.Result.Bots[1].ImageID, r.Result.Bots[0].ImageID
	},
	"wrong seed": func(r *matches.Replay) {
		r.Seed++
		r.Result.Seed++
	},
	"another match's replay": func(r *matches.Replay) {
		r.MatchID, r.Result.MatchID = "ccccccccccc1", "ccccccccccc1"
	},
	"a replay the engine does not reproduce": func(r *matches.Replay) {
		if len(r.Result.Winners) == 0 {
			r.Result.Winners = []string{r.Bots[0].ID}
		} else {
			r.Result.Winners = nil
		}
	},
	"another map under the same name": func(r *matches.Replay) {
		r.MapData = strings.Replace(r.MapData, ".", "#", 1)
	},
}

// A worker that forges its result is refused, and the match is played
// again, by an honest worker: the server's result is the honest one.
func TestAForgedResultIsRefusedAndTheMatchPlayedAgain(t *testing.T) {
	for name, forge := range forgeries {
		t.Run(name, func(t *testing.T) {
			r := newRig(t, Config{})
			id := "ddddddddddd" + string(rune('a'+len(name)%26))
			f := &forger{forge: forge, times: 1}
			bad := r.worker("forger", bots(nil), WorkerConfig{Player: f})
			var rep *matches.Replay
			var err error
			var wg sync.WaitGroup
			wg.Go(func() { rep, err = r.d.Play(t.Context(), request(t, id, nil)) })
			waitFor(t, "the forger's result is refused", func() bool { return r.refused("forger") == 1 })
			bad.stop()
			r.worker("honest", bots(nil), WorkerConfig{})
			wg.Wait()
			if err != nil {
				t.Fatal(err)
			}
			if rep.Result.Worker != "honest" {
				t.Errorf("the result is %s's", rep.Result.Worker)
			}
			if err := matches.CheckReplay(request(t, id, nil), rep); err != nil {
				t.Errorf("the result taken fails the check: %v", err)
			}
			s := r.d.Workers()
			if i := slices.IndexFunc(s, func(w WorkerStanding) bool { return w.Name == "forger" }); i < 0 || !strings.Contains(s[i].LastRefusal, "its result") {
				t.Errorf("the forger's standing: %+v", s)
			}
		})
	}
}

// A worker whose results are refused again and again is quarantined:
// its reports are refused from then on, and the match is played by
// another.
func TestAWorkerRefusedAgainAndAgainIsQuarantined(t *testing.T) {
	r := newRig(t, Config{})
	quarantined := make(chan string, 1)
	f := &forger{forge: forgeries["wrong seed"], times: 3}
	bad := r.worker("forger", bots(nil), WorkerConfig{Player: f})
	r.d.cfg.Quarantine = func(worker, why string) {
		bad.nc.Close() // as the embedded NATS server disconnects it
		quarantined <- worker + ": " + why
	}
	const id = "eeeeeeeeeee1"
	var rep *matches.Replay
	var err error
	var wg sync.WaitGroup
	wg.Go(func() { rep, err = r.d.Play(t.Context(), request(t, id, nil)) })
	why := <-quarantined
	if !strings.HasPrefix(why, "forger: 3 reports refused") {
		t.Errorf("quarantined: %s", why)
	}
	r.worker("honest", bots(nil), WorkerConfig{})
	wg.Wait()
	bad.stop()
	if err != nil {
		t.Fatal(err)
	}
	if rep.Result.Worker != "honest" || f.played.Load() != 3 {
		t.Errorf("the result is %s's, after %d forgeries", rep.Result.Worker, f.played.Load())
	}
	for _, s := range r.d.Workers() {
		if s.Name == "forger" && !s.Quarantined {
			t.Errorf("the forger is not shown quarantined: %+v", s)
		}
	}
}

// Reports on a delivery a worker does not hold are refused: without the
// match's key, or for a delivery another worker took.
func TestReportsOnAnotherWorkersDeliveryAreRefused(t *testing.T) {
	r := newRig(t, Config{})
	const id = "fffffffffff1"
	var wg sync.WaitGroup
	var rep *matches.Replay
	var err error
	wg.Go(func() { rep, err = r.d.Play(t.Context(), request(t, id, nil)) })
	waitFor(t, "the match is published", func() bool { return r.d.waiting(id) })
	good := replayOf(t, request(t, id, nil))
	r.send("holder", Event{Kind: kindStart, Match: id, Attempt: 1})
	// A thief that was never handed the match: no valid proof.
	r.sendRaw("thief", Event{Kind: kindResult, Match: id, Round: 1, Attempt: 1, Replay: good, Proof: strings.Repeat("0", 64)})
	// One that was (an earlier delivery, say): its proof is good, but the
	// delivery is the holder's.
	r.send("thief", Event{Kind: kindStart, Match: id, Attempt: 1})
	r.send("thief", Event{Kind: kindResult, Match: id, Attempt: 1, Replay: good})
	waitFor(t, "the thief's reports are refused", func() bool { return r.refused("thief") == 3 })
	r.send("holder", Event{Kind: kindResult, Match: id, Attempt: 1, Replay: good})
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if rep.Result.Worker != "holder" {
		t.Errorf("the result is %s's", rep.Result.Worker)
	}
}

// refused is how many reports of worker the dispatcher refused.
func (r *rig) refused(worker string) int {
	for _, s := range r.d.Workers() {
		if s.Name == worker {
			return s.Refused
		}
	}
	return 0
}

func TestAfterPlay(t *testing.T) {
	invalid := errs.Errorf(errs.ErrInvalid, "bad map")
	logicImageAbsent := fmt.Errorf("the game's logic my/logic: %w", errs.Mark(matches.ErrImageNotFound, errors.New("not on this engine")))
	failed := errors.New("docker: no such image")
	logicFailed := errs.Mark(matches.ErrGameHost, errs.Mark(matches.ErrLogicFailed, errors.New("the logic crashed")))
	logicAbsent := errs.Mark(matches.ErrGameHost, errors.New("the game's logic did not start"))
	for _, tt := range []struct {
		name           string
		err, cause     error
		attempt, limit int
		want           after
	}{
		{"played", nil, nil, 1, 5, afterReport},
		{"played, then stopped", nil, errStopping, 1, 5, afterReport},
		{"played, then superseded", nil, errSuperseded, 1, 5, afterReport},
		{"lease lost", context.Canceled, errLeaseLost, 1, 5, afterGiveUp},
		{"superseded", context.Canceled, errSuperseded, 2, 5, afterGiveUp},
		{"cancelled", context.Canceled, errCancelled, 1, 5, afterStopped},
		{"cancelled on the last delivery", context.Canceled, errCancelled, 5, 5, afterStopped},
		{"the worker stops", context.Canceled, errStopping, 1, 5, afterHandBack},
		{"the worker stops on the last delivery", context.Canceled, errStopping, 5, 5, afterFail},
		{"invalid", invalid, nil, 1, 5, afterFail},
		{"could not play", failed, nil, 1, 5, afterHandBack},
		{"could not play the last delivery", failed, nil, 5, 5, afterFail},
		{"could not play, no limit", failed, nil, 9, 0, afterHandBack},
		{"its logic failed", logicFailed, nil, 1, 5, afterFail},
		{"its logic did not start", logicAbsent, nil, 1, 5, afterHandBack},
		{"its logic's image is not here", logicImageAbsent, nil, 1, 5, afterHandBack},
		{"its logic failed as the worker stopped", logicFailed, errStopping, 1, 5, afterHandBack},
	} {
		if got := afterPlay(tt.err, tt.cause, tt.attempt, tt.limit); got != tt.want {
			t.Errorf("%s: got %d, want %d", tt.name, got, tt.want)
		}
	}
}

// Live frames travel as plain NATS messages: the holder's frame with its
// proof is shown, even when it comes before its start was handled; one
// without a valid proof is refused (counted against the worker); one of
// a worker that does not hold the delivery is dropped.
func TestLiveFramesAreBelievedAsEventsAre(t *testing.T) {
	r := newRig(t, Config{})
	id := "lllllllllll1"
	var mu sync.Mutex
	var shown []int
	go r.d.Play(t.Context(), request(t, id, func(f matches.Frame) {
		mu.Lock()
		shown = append(shown, f.Turn)
		mu.Unlock()
	}))
	waitFor(t, "the match is queued", func() bool { return r.queued() == 1 })
	nc := connect(t, r.ns)
	r.d.mu.Lock()
	key, round := r.d.waits[id].key, r.d.waits[id].round
	r.d.mu.Unlock()
	live := func(worker string, seq int, proof string) {
		ev := Event{V: Version, Kind: kindFrame, Match: id, Worker: worker, Round: round, Attempt: 1, Seq: seq, Proof: proof,
			Frame: json.RawMessage(fmt.Sprintf(`{"turn":%d}`, seq+1))}
		data, _ := json.Marshal(ev)
		if err := nc.Publish(liveSubject(worker, id), data); err != nil {
			t.Fatal(err)
		}
		nc.Flush()
	}
	turns := func() []int {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(shown)
	}
	// Before its start: kept, and shown once the start is handled.
	live("w1", 0, proofOf(key, id, round, 1, "w1"))
	time.Sleep(100 * time.Millisecond) // Sleeps on purpose: time to show it, which it must not yet.
	if got := turns(); len(got) != 0 {
		t.Fatalf("a frame was shown before its delivery's start: %v", got)
	}
	r.send("w1", Event{Kind: kindStart, Match: id, Attempt: 1})
	waitFor(t, "the early frame is shown", func() bool { return len(turns()) == 1 })
	live("w1", 1, proofOf(key, id, round, 1, "w1"))
	waitFor(t, "the next frame is shown", func() bool { return len(turns()) == 2 })
	// Another worker, with its own valid proof: it holds nothing.
	live("w2", 2, proofOf(key, id, round, 1, "w2"))
	// The holder's name, a forged proof.
	live("w1", 2, "forged")
	waitFor(t, "the forged frame is refused", func() bool { return r.refused("w1") == 1 })
	time.Sleep(100 * time.Millisecond) // Sleeps on purpose: time to show the refused frames, which it must not.
	if got := turns(); !slices.Equal(got, []int{1, 2}) {
		t.Errorf("shown %v, want the holder's two genuine frames", got)
	}
	if n := r.refused("w2"); n != 0 {
		t.Errorf("a frame of a worker holding no delivery counted %d refusals", n)
	}
}
