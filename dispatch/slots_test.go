package dispatch

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"arena/matches"
)

// delayed is a worker's player that says which match it starts, then
// plays it after a pause.
type delayed struct {
	matches.Player
	pause   time.Duration
	started func(id string)
}

func (d *delayed) Play(ctx context.Context, req matches.Request) (*matches.Replay, error) {
	d.started(req.MatchID)
	select {
	case <-time.After(d.pause):
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
	return d.Player.Play(ctx, req)
}

// counting is the server's player that counts the matches it plays at
// once, and the most it ever did.
type counting struct {
	matches.Player
	mu        sync.Mutex
	now, most int
}

func (c *counting) Play(ctx context.Context, req matches.Request) (*matches.Replay, error) {
	c.mu.Lock()
	c.now++
	c.most = max(c.most, c.now)
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		c.now--
		c.mu.Unlock()
	}()
	return c.Player.Play(ctx, req)
}

func (c *counting) mostAtOnce() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.most
}

// Workers say how many matches they take; the dispatcher adds them up,
// without a quarantined worker, one fallen silent, or a report naming
// another worker than its subject, and tells its watchers of every
// change. A worker that stops says it takes none.
func TestWorkersReportTheirSlots(t *testing.T) {
	r := newRig(t, Config{})
	var mu sync.Mutex
	var told []int
	stop := r.d.WatchSlots(func(n int) {
		mu.Lock()
		told = append(told, n)
		mu.Unlock()
	})
	defer stop()
	if mu.Lock(); !slices.Equal(told, []int{0}) {
		t.Errorf("the watcher was told %v before any worker came, want [0]", told)
	}
	mu.Unlock()
	hold := make(chan struct{})
	w1 := r.worker("w1", bots(hold), WorkerConfig{Concurrency: 2})
	r.worker("w2", bots(hold), WorkerConfig{Concurrency: 3})
	waitFor(t, "the workers' slots add up", func() bool { return r.d.Slots() == 5 })

	// What a worker plays shows in its standing.
	var wg sync.WaitGroup
	wg.Go(func() {
		if _, err := r.d.Play(t.Context(), request(t, "sssssssssss1", nil)); err != nil {
			t.Error(err)
		}
	})
	playing := func() (n int) {
		for _, s := range r.d.Workers() {
			n += s.Playing
		}
		return n
	}
	waitFor(t, "a worker says it plays the match", func() bool { return playing() == 1 })
	close(hold)
	wg.Wait()
	waitFor(t, "the worker says it plays none", func() bool { return playing() == 0 })

	// A report naming another worker than its subject is ignored; one
	// of a worker that then falls silent counts until slotsKept.
	send := func(subjectOf string, rep slotsReport) {
		data, _ := json.Marshal(rep)
		if err := r.d.nc.Publish(slotsSubject(subjectOf), data); err != nil {
			t.Fatal(err)
		}
	}
	send("w1", slotsReport{V: Version, Worker: "w2", Slots: 100})
	send("w9", slotsReport{V: Version, Worker: "w9", Slots: 1})
	send("w9", slotsReport{V: Version + 1, Worker: "w9", Slots: 1000})
	waitFor(t, "the silent worker's report counts", func() bool { return r.d.Slots() == 6 })
	waitFor(t, "the silent worker counts for none", func() bool { return r.d.Slots() == 5 })

	// A quarantined worker counts for none.
	r.d.mu.Lock()
	for range r.d.cfg.QuarantineAfter {
		r.d.refuseLocked("w2", "sssssssssss2", "a test", nil)
	}
	r.d.mu.Unlock()
	waitFor(t, "the quarantined worker counts for none", func() bool { return r.d.Slots() == 2 })
	for _, s := range r.d.Workers() {
		if s.Name == "w2" && (!s.Quarantined || s.Slots != 0) {
			t.Errorf("the quarantined worker's standing: %+v", s)
		}
		if s.Name == "w1" && s.Slots != 2 {
			t.Errorf("w1's standing: %+v", s)
		}
	}

	// A worker that stops says so: it need not fall silent.
	w1.stop()
	waitFor(t, "the stopped worker says it takes none", func() bool {
		r.d.mu.Lock()
		defer r.d.mu.Unlock()
		return r.d.workers["w1"].slots == 0
	})
	waitFor(t, "no slots are left", func() bool { return r.d.Slots() == 0 })
	waitFor(t, "the watcher is told", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return told[len(told)-1] == 0
	})
	mu.Lock()
	defer mu.Unlock()
	for i := 1; i < len(told); i++ {
		if told[i] == told[i-1] {
			t.Errorf("the watcher was told %d twice in a row: %v", told[i], told)
		}
	}
	for _, n := range []int{5, 6, 2} {
		if !slices.Contains(told, n) {
			t.Errorf("the watcher was never told %d: %v", n, told)
		}
	}
}

// With the workers on other hosts, the queue's owners are still served
// in turn: the queue hands the work queue only as many matches as the
// two workers take (one each), so alice's one match, queued after bob's
// thirty, is the next to start on a worker, not the thirty-first; and
// the server never has more matches out than the workers' slots.
func TestTheQueueServesOwnersInTurnWithTwoWorkers(t *testing.T) {
	r := newRig(t, Config{})
	var mu sync.Mutex
	var order []string // the matches as they start on a worker
	for _, name := range []string{"w1", "w2"} {
		r.worker(name, bots(nil), WorkerConfig{Concurrency: 1, Player: &delayed{pause: 150 * time.Millisecond, started: func(id string) {
			mu.Lock()
			order = append(order, id)
			mu.Unlock()
		}}})
	}
	waitFor(t, "both workers say they take a match", func() bool { return r.d.Slots() == 2 })

	server := &counting{Player: r.d}
	aliceDone := make(chan matches.Update, 1)
	q := matches.NewQueue(server, 64, 0, func(u matches.Update) {
		if u.ID == "alice00" && u.State.Final() {
			aliceDone <- u
		}
	})
	t.Cleanup(func() { q.Shutdown(context.Background(), false) })
	stop := r.d.FeedSlots(q, 64) // ARENA_NATS_INFLIGHT's old default, as a cap
	defer stop()
	if slots, _ := q.Slots(); slots != 2 {
		t.Fatalf("the queue has %d slots, want 2", slots)
	}

	owned := func(owner string, i int) matches.Request {
		req := request(t, fmt.Sprintf("%s%02d", owner, i), nil)
		req.Owner = owner
		return req
	}
	var bobs []string
	for i := range 30 {
		req := owned("bob", i)
		if _, err := q.Enqueue(req); err != nil {
			t.Fatal(err)
		}
		bobs = append(bobs, req.MatchID)
	}
	// Those the queue handed out are in the work queue when alice comes.
	waitFor(t, "bob's matches handed out are in the work queue", func() bool {
		for _, id := range bobs {
			if st, _, ok := q.Status(id); ok && st != matches.StateQueued && !r.d.waiting(id) {
				return false
			}
		}
		return true
	})
	mu.Lock()
	before := len(order)
	mu.Unlock()
	if _, err := q.Enqueue(owned("alice", 0)); err != nil {
		t.Fatal(err)
	}
	select {
	case u := <-aliceDone:
		if u.State != matches.StateFinished {
			t.Fatalf("alice's match ended %s: %v", u.State, u.Err)
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("alice's match did not end")
	}
	mu.Lock()
	after := slices.Clone(order[before:])
	mu.Unlock()
	// Of bob's matches not yet on a worker when hers came, those out
	// already (as many as the workers' two slots) may start before hers,
	// and one handed out with hers (two slots freed at once); no other.
	if i := slices.Index(after, "alice00"); i < 0 || i > 3 {
		t.Errorf("alice's match started on a worker after %d of bob's matches that waited when it came, want at most 3: %v", i, after)
	}
	if n := server.mostAtOnce(); n > 2 {
		t.Errorf("the queue had %d matches out at once, more than the workers' 2 slots", n)
	}
}
