package dispatch

import (
	"context"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/distribution/reference"

	"arena/engine"
	"arena/matches"
	"arena/orchestrator"
	"arena/orchestrator/fake"
)

// preload puts an image on the engine as if it were there before the
// worker started, with those tags; it returns its id.
func (e *fakeEngine) preload(ref string, tags ...string) string {
	e.l.Add(ref, e.s)
	e.mu.Lock()
	defer e.mu.Unlock()
	e.nameLocked(ref)
	if e.tags == nil {
		e.tags = map[string]string{}
	}
	id := fake.ImageID(ref)
	for _, t := range tags {
		e.tags[t] = id
	}
	return id
}

// removedTags are the tags removed from the engine.
func (e *fakeEngine) removedTags() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []string
	for ref := range e.removed {
		out = append(out, ref)
	}
	return out
}

// handOut is a server's source of the pushed bots of those references.
func handOut(refs ...string) func(context.Context, string, io.Writer) error {
	return func(_ context.Context, id string, w io.Writer) error {
		for _, ref := range refs {
			if fake.ImageID(ref) == id {
				_, err := w.Write(archiveOf(ref))
				return err
			}
		}
		return ErrNotHandedOut
	}
}

// pushedMatch is a match of a pushed bot against bot/b.
func pushedMatch(t *testing.T, id, pushed string) matches.Request {
	r := request(t, id, nil)
	r.Images = []string{pushed, "bot/b"}
	r.ImageIDs = []string{fake.ImageID(pushed), fake.ImageID("bot/b")}
	return r
}

// playedWell plays a match and checks no bot failed to start.
func playedWell(t *testing.T, s *secured, req matches.Request) {
	rep, err := s.d.Play(t.Context(), req)
	if err != nil {
		t.Error(err)
		return
	}
	for _, b := range rep.Result.Bots {
		if b.Status == engine.StatusStartFailed {
			t.Errorf("%s: %s: %s", req.MatchID, b.ID, b.FaultDetail)
		}
	}
}

var up = fake.Script{Answer: func(int, [][]byte) []byte { return []byte("up") }}

// The images a worker fetched from the server are tagged as its own and
// leave its engine once no match used them for the idle time; the images
// it did not fetch stay.
func TestAWorkerRemovesTheImagesItFetchedOnceIdle(t *testing.T) {
	s := newSecured(t, func(c *DispatcherConfig) { c.Images = handOut("alice/bot:v1", "alice/bot:v2") })
	l := fake.NewLauncher(map[string]fake.Script{"bot/b": up})
	eng := &fakeEngine{l: l, s: up}
	const idle = time.Second
	s.remoteWorker(s.Join("w1"), WorkerConfig{Player: orchestrator.New(l), Images: eng, Concurrency: 2, FetchedIdle: idle, FetchedCheck: 20 * time.Millisecond})

	var wg sync.WaitGroup
	for i, v := range []string{"alice/bot:v1", "alice/bot:v2"} {
		wg.Go(func() { playedWell(t, s, pushedMatch(t, "fffffffffff"+string(rune('1'+i)), v)) })
	}
	wg.Wait()
	ended := time.Now()
	if n := eng.loads.Load(); n != 2 {
		t.Errorf("%d loads, want 2", n)
	}
	for _, v := range []string{"alice/bot:v1", "alice/bot:v2"} {
		ref := fetchedRef(fake.ImageID(v))
		if !eng.tagged(ref) {
			t.Errorf("%s fetched, but not tagged %s", v, ref)
		}
	}
	for _, v := range []string{"alice/bot:v1", "alice/bot:v2"} {
		id := fake.ImageID(v)
		ref := fetchedRef(id)
		waitFor(t, v+" removed", func() bool { return !eng.tagged(ref) })
		if at := eng.removedAt(ref); at.Sub(ended) < idle/2 {
			t.Errorf("%s removed %v after its match ended, before its idle time (%v)", v, at.Sub(ended), idle)
		}
		if eng.Has(t.Context(), id) {
			t.Errorf("%s still on the engine", v)
		}
	}
	time.Sleep(100 * time.Millisecond) // Sleeps on purpose: time to remove more, which it must not.
	if got := eng.removedTags(); len(got) != 2 {
		t.Errorf("tags removed: %q, want the two fetched", got)
	}
	if !eng.Has(t.Context(), fake.ImageID("bot/b")) {
		t.Error("bot/b, not fetched, removed")
	}
}

// An image a running match uses stays on the engine while the match
// runs, however long, and goes once idle after it.
func TestAnImageARunningMatchUsesIsNotRemoved(t *testing.T) {
	s := newSecured(t, func(c *DispatcherConfig) { c.Images = handOut("alice/bot:v1") })
	hold := make(chan struct{})
	l := fake.NewLauncher(map[string]fake.Script{"bot/b": up})
	eng := &fakeEngine{l: l, s: fake.Script{Answer: up.Answer, Hold: hold}}
	const idle = 50 * time.Millisecond
	s.remoteWorker(s.Join("w1"), WorkerConfig{Player: orchestrator.New(l), Images: eng, FetchedIdle: idle, FetchedCheck: 10 * time.Millisecond})

	id := fake.ImageID("alice/bot:v1")
	ref := fetchedRef(id)
	done := make(chan struct{})
	go func() {
		defer close(done)
		playedWell(t, s, pushedMatch(t, "fffffffffff3", "alice/bot:v1"))
	}()
	waitFor(t, "the image fetched and tagged", func() bool { return eng.tagged(ref) })
	// Sleeps on purpose: proves the image of the running match is not
	// removed meanwhile, ten idle times, fifty checks.
	time.Sleep(10 * idle)
	if !eng.removedAt(ref).IsZero() || !eng.Has(t.Context(), id) {
		t.Error("the image of a running match removed")
	}
	released := time.Now()
	close(hold)
	<-done
	waitFor(t, "the image removed after the match", func() bool { return !eng.tagged(ref) })
	if d := eng.removedAt(ref).Sub(released); d < idle {
		t.Errorf("removed %v after the match was let go on, before its idle time after it (%v)", d, idle)
	}
}

// The images a worker fetched before it restarted are known by their
// tag and removed once idle since it started (a removal the engine
// refuses is tried again); an image not tagged as fetched, even under
// the same repository, is never touched.
func TestAnImageFetchedBeforeARestartIsRemovedOnceIdle(t *testing.T) {
	s := newSecured(t)
	l := fake.NewLauncher(map[string]fake.Script{"bot/b": up})
	eng := &fakeEngine{l: l, s: up}
	earlier := fetchedRef(fake.ImageID("alice/bot:v0"))
	eng.preload("alice/bot:v0", earlier)
	others := map[string]string{
		"someone/else:v1":   eng.preload("someone/else:v1", "someone/else:v1"),
		"other/lookalike":   eng.preload("other/lookalike", FetchedRepo+":v1"),
		"loaded/untagged":   eng.preload("loaded/untagged"),
		"other/lookalike:2": eng.preload("other/lookalike:2", FetchedRepo+"x:"+strings.Replace(fake.ImageID("other/lookalike:2"), ":", "-", 1)),
	}
	eng.refuse = 1 // a container uses it, the first time
	const idle = 500 * time.Millisecond
	start := time.Now()
	s.remoteWorker(s.Join("w1"), WorkerConfig{Images: eng, FetchedIdle: idle, FetchedCheck: 20 * time.Millisecond})

	waitFor(t, "the image fetched before the restart removed", func() bool { return !eng.tagged(earlier) })
	if d := eng.removedAt(earlier).Sub(start); d < idle {
		t.Errorf("removed %v after the worker started, before its idle time (%v)", d, idle)
	}
	if eng.Has(t.Context(), fake.ImageID("alice/bot:v0")) {
		t.Error("the image is still on the engine")
	}
	time.Sleep(100 * time.Millisecond) // Sleeps on purpose: time to remove more, which it must not.
	if got := eng.removedTags(); len(got) != 1 {
		t.Errorf("tags removed: %q, want %s alone", got, earlier)
	}
	for ref, id := range others {
		if !eng.Has(t.Context(), id) {
			t.Errorf("%s, not fetched, removed", ref)
		}
	}
}

// A match that takes an image as its removal is under way waits for it,
// and fetches the image again: it does not start without it.
func TestAMatchWaitsForTheRemovalOfItsImage(t *testing.T) {
	s := newSecured(t, func(c *DispatcherConfig) { c.Images = handOut("alice/bot:v0") })
	l := fake.NewLauncher(map[string]fake.Script{"bot/b": up})
	eng := &fakeEngine{l: l, s: up}
	id := fake.ImageID("alice/bot:v0")
	ref := fetchedRef(id)
	eng.preload("alice/bot:v0", ref)
	removing, removed := make(chan struct{}), make(chan struct{})
	var once sync.Once
	eng.gate = func(string) {
		once.Do(func() {
			close(removing)
			<-removed
		})
	}
	s.remoteWorker(s.Join("w1"), WorkerConfig{Player: orchestrator.New(l), Images: eng, FetchedIdle: 10 * time.Millisecond, FetchedCheck: 10 * time.Millisecond})
	var release sync.Once
	t.Cleanup(func() { release.Do(func() { close(removed) }) })
	select {
	case <-removing:
	case <-time.After(20 * time.Second):
		t.Fatal("timed out waiting until the image's removal starts")
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		playedWell(t, s, pushedMatch(t, "fffffffffff4", "alice/bot:v0"))
	}()
	// Sleeps on purpose: the match is taken meanwhile, and proves it
	// waits for the removal (it does not start without its image).
	time.Sleep(300 * time.Millisecond)
	release.Do(func() { close(removed) })
	<-done
	if n := eng.loads.Load(); n != 1 {
		t.Errorf("%d loads, want 1: the image fetched again", n)
	}
	if n := s.starts("fffffffffff4"); n != 1 {
		t.Errorf("%d deliveries, want 1", n)
	}
}

// The tag of a fetched image is a valid reference under a host no
// registry has, and names the image's id alone.
func TestTheTagOfAFetchedImage(t *testing.T) {
	id := fake.ImageID("alice/bot:v1")
	ref := fetchedRef(id)
	named, err := reference.ParseNormalizedNamed(ref)
	if err != nil {
		t.Fatal(err)
	}
	tagged, ok := named.(reference.NamedTagged)
	if !ok || reference.Domain(named) != "arena-fetched.internal" || len(tagged.Tag()) > 128 || reference.FamiliarString(named) != ref {
		t.Errorf("%s: %v", ref, named)
	}
	if got := fetchedID(ref); got != id {
		t.Errorf("fetchedID(%s) = %q, want %s", ref, got, id)
	}
	hex := strings.TrimPrefix(id, "sha256:")
	for _, not := range []string{
		FetchedRepo + ":v1",
		FetchedRepo + ":sha256-" + hex[:63],
		FetchedRepo + ":sha256-" + strings.ToUpper(hex),
		FetchedRepo + "/x:sha256-" + hex,
		"other.example/pushed:sha256-" + hex,
		"pushed:sha256-" + hex,
	} {
		if got := fetchedID(not); got != "" {
			t.Errorf("fetchedID(%s) = %q, want none", not, got)
		}
	}
}
