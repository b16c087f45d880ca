package dispatch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap/zaptest"

	"arena/dispatch/natsd"
	"arena/dispatch/trust"
	"arena/engine"
	"arena/engine/snake"
	"arena/internal/testsupport/poll"
	"arena/matches"
	"arena/orchestrator"
	"arena/orchestrator/fake"
	"arena/sandbox"
)

// rig is an embedded NATS server with the work queue set up and a
// dispatcher on it.
type rig struct {
	// sent are the key and round of each match the rig sent events on.
	sent map[string][2]string
	t    *testing.T
	ns   *natsd.Embedded
	d    *Dispatcher
	js   jetstream.JetStream
}

func newRig(t *testing.T, cfg Config) *rig {
	t.Helper()
	ns, err := natsd.Start(natsd.Node{Name: "test", Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ns.Stop)
	nc := connect(t, ns)
	js, _ := jetstream.New(nc)
	if err := Setup(t.Context(), js, cfg); err != nil {
		t.Fatal(err)
	}
	d, err := NewDispatcher(t.Context(), nc, "server", zaptest.NewLogger(t).Named("dispatcher"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	return &rig{t: t, ns: ns, d: d, js: js, sent: map[string][2]string{}}
}

func connect(t *testing.T, ns *natsd.Embedded) *nats.Conn {
	t.Helper()
	nc, err := ns.Connect(t.Name())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// worker starts a worker playing with scripted bots on its own
// connection; stop ends it (handing its matches back) and waits.
func (r *rig) worker(name string, scripts map[string]fake.Script, cfg WorkerConfig) *testWorker {
	r.t.Helper()
	nc := connect(r.t, r.ns)
	cfg.Name, cfg.Games = name, []engine.Game{snake.New()}
	l := fake.NewLauncher(scripts)
	if f, ok := cfg.Player.(*forger); ok {
		f.Player = orchestrator.New(l)
	} else if m, ok := cfg.Player.(*muted); ok {
		m.Player = orchestrator.New(l)
	} else if d, ok := cfg.Player.(*delayed); ok {
		d.Player = orchestrator.New(l)
	} else {
		cfg.Player = orchestrator.New(l)
	}
	cfg.Log = zaptest.NewLogger(r.t).Named(name)
	w, stop := runWorker(r.t, nc, cfg)
	return &testWorker{Worker: w, nc: nc, stop: stop, launcher: l}
}

// runWorker runs a worker on nc until the test ends or stop is called
// (stop waits for it; a second call does nothing).
func runWorker(t *testing.T, nc *nats.Conn, cfg WorkerConfig) (*Worker, func()) {
	t.Helper()
	w, err := NewWorker(nc, cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := w.Run(ctx); err != nil {
			t.Error(err)
		}
	}()
	var once sync.Once
	stop := func() { once.Do(func() { cancel(); <-done }) }
	t.Cleanup(stop)
	return w, stop
}

type testWorker struct {
	*Worker
	nc       *nats.Conn
	stop     func()
	launcher *fake.Launcher
}

func (w *testWorker) busy() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.running)
}

func request(t testing.TB, id string, onFrame func(matches.Frame)) matches.Request {
	t.Helper()
	g := snake.New()
	m, err := g.Map(g.Maps()[0].Name)
	if err != nil {
		t.Fatal(err)
	}
	images := []string{"bot/a", "bot/b"}
	return matches.Request{Game: g, Map: m, Seed: 7, Images: images, MatchID: id,
		ImageIDs: []string{fake.ImageID(images[0]), fake.ImageID(images[1])}, OnFrame: onFrame}
}

// answers are the bots of the tests: they go straight, or wait for hold.
func bots(hold <-chan struct{}) map[string]fake.Script {
	s := fake.Script{Answer: func(int, [][]byte) []byte { return []byte("up") }, Hold: hold}
	return map[string]fake.Script{"bot/a": s, "bot/b": s}
}

func TestAWorkerPlaysTheMatchAndStreamsItsFrames(t *testing.T) {
	r := newRig(t, Config{})
	r.worker("w1", bots(nil), WorkerConfig{})
	var turns []int
	rep, err := r.d.Play(t.Context(), request(t, "aaaaaaaaaaa1", func(f matches.Frame) { turns = append(turns, f.Turn) }))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Result.Worker != "w1" || rep.MatchID != "aaaaaaaaaaa1" {
		t.Errorf("result by %q of %q, want w1 and aaaaaaaaaaa1", rep.Result.Worker, rep.MatchID)
	}
	if len(turns) != len(rep.Frames) {
		t.Errorf("%d frames live, %d in the replay", len(turns), len(rep.Frames))
	}
	for i, turn := range turns {
		if turn != rep.Frames[i].Turn {
			t.Fatalf("live frame %d is turn %d, the replay's is %d", i, turn, rep.Frames[i].Turn)
		}
	}
}

// muted is a worker's player whose live frames are all lost on the way.
type muted struct{ matches.Player }

func (m *muted) Play(ctx context.Context, req matches.Request) (*matches.Replay, error) {
	req.OnFrame = nil
	return m.Player.Play(ctx, req)
}

// Live frames are plain NATS messages: one lost, or come after the
// result, is passed on from the checked replay before Play returns, in
// order and once, whether the replay came inline or through the spool.
func TestFramesLostLiveAreFilledFromTheReplay(t *testing.T) {
	for _, spool := range []bool{false, true} {
		t.Run(fmt.Sprintf("spool=%v", spool), func(t *testing.T) {
			r := newRig(t, Config{})
			cfg := WorkerConfig{Player: &muted{}}
			if spool {
				r.d.cfg.Spool = t.TempDir()
				cfg.InlineMax = 1
			}
			r.worker("w1", bots(nil), cfg)
			var turns []int
			rep, err := r.d.Play(t.Context(), request(t, "aaaaaaaaaab1", func(f matches.Frame) { turns = append(turns, f.Turn) }))
			if err != nil {
				t.Fatal(err)
			}
			frames := rep.Frames
			if spool {
				whole, err := matches.ReadReplay(rep.File)
				if err != nil {
					t.Fatal(err)
				}
				frames = whole.Frames
			}
			if len(frames) == 0 || len(turns) != len(frames) {
				t.Fatalf("%d frames passed on, %d in the replay", len(turns), len(frames))
			}
			for i, turn := range turns {
				if turn != frames[i].Turn {
					t.Fatalf("frame %d passed on is turn %d, the replay's is %d", i, turn, frames[i].Turn)
				}
			}
		})
	}
}

// The viewer passes each frame on once, in order, whichever source has
// it first; a live frame ahead leaves its gap; nothing after close.
func TestTheViewer(t *testing.T) {
	var got []int
	v := &viewer{on: func(f matches.Frame) { got = append(got, f.Turn) }}
	live := func(i int) { v.raw(i, json.RawMessage(fmt.Sprintf(`{"turn":%d}`, i))) }
	live(0)
	live(1)
	live(1) // a later delivery replaying a turn shown
	live(3) // 2 lost
	v.raw(4, json.RawMessage(`not json`))
	frames := make([]matches.Frame, 7)
	for i := range frames {
		frames[i].Turn = i
	}
	v.frame(2, frames[2]) // behind: shown already, or its gap left
	v.fill(frames[:6])
	v.close()
	live(6)
	v.fill(frames)
	if want := []int{0, 1, 3, 4, 5}; !slices.Equal(got, want) {
		t.Errorf("passed on %v, want %v", got, want)
	}
}

func TestABigReplayTravelsThroughTheObjectStore(t *testing.T) {
	r := newRig(t, Config{})
	r.worker("w1", bots(nil), WorkerConfig{InlineMax: 1})
	rep, err := r.d.Play(t.Context(), request(t, "aaaaaaaaaaa2", nil))
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Frames) == 0 {
		t.Fatal("a replay without frames")
	}
	obs, err := r.js.ObjectStore(t.Context(), trust.BucketOf("w1"))
	if err != nil {
		t.Fatal(err)
	}
	if list, _ := obs.List(t.Context()); len(list) != 0 {
		t.Errorf("%d replays left in the object store", len(list))
	}
}

// With a spool folder, a big replay is checked as it streams from the
// object store into a file there: the result names the file, which holds
// the replay as the worker sent it, and no frame is in memory. A forged
// one is refused the same way, and leaves no file.
func TestABigReplayIsCheckedIntoASpoolFile(t *testing.T) {
	r := newRig(t, Config{})
	spool := t.TempDir()
	r.d.cfg.Spool = spool
	honest := r.worker("w1", bots(nil), WorkerConfig{InlineMax: 1})
	rep, err := r.d.Play(t.Context(), request(t, "aaaaaaaaaaa3", nil))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Frames != nil || rep.File == "" || filepath.Dir(rep.File) != spool || rep.Result.Worker != "w1" {
		t.Fatalf("the result: %d frames, file %q, worker %q", len(rep.Frames), rep.File, rep.Result.Worker)
	}
	whole, err := matches.ReadReplay(rep.File)
	if err != nil {
		t.Fatal(err)
	}
	if err := matches.CheckReplay(request(t, "aaaaaaaaaaa3", nil), whole); err != nil || len(whole.Frames) == 0 {
		t.Errorf("the spooled replay: %d frames, %v", len(whole.Frames), err)
	}
	kept := filepath.Join(t.TempDir(), "kept.json")
	if err := matches.MoveReplay(kept, rep); err != nil {
		t.Fatal(err)
	}
	if files, _ := os.ReadDir(spool); len(files) != 0 {
		t.Errorf("%d files left in the spool once the replay is kept", len(files))
	}

	honest.stop()
	f := &forger{forge: forgeries["wrong seed"], times: 1}
	bad := r.worker("forger", bots(nil), WorkerConfig{Player: f, InlineMax: 1})
	var wg sync.WaitGroup
	wg.Go(func() { rep, err = r.d.Play(t.Context(), request(t, "aaaaaaaaaaa4", nil)) })
	waitFor(t, "the forger's big result is refused", func() bool { return r.refused("forger") == 1 })
	bad.stop()
	r.worker("w2", bots(nil), WorkerConfig{InlineMax: 1})
	wg.Wait()
	if err != nil || rep.Result.Worker != "w2" {
		t.Fatalf("after the forgery: %v, %+v", err, rep)
	}
	if files, _ := os.ReadDir(spool); len(files) != 1 {
		t.Errorf("%d files in the spool, want the honest replay's alone", len(files))
	}
}

func TestAMatchWhoseWorkerLostNATSIsPlayedByAnother(t *testing.T) {
	r := newRig(t, Config{Lease: time.Second})
	hold := make(chan struct{})
	dead := r.worker("dead", bots(hold), WorkerConfig{})
	done := make(chan error, 1)
	var rep *matches.Replay
	go func() {
		var err error
		rep, err = r.d.Play(t.Context(), request(t, "aaaaaaaaaaa3", nil))
		done <- err
	}()
	waitFor(t, "the first worker takes the match", func() bool { return r.d.attempt("aaaaaaaaaaa3") == 1 })
	// Cut it off: no more progress acks.
	dead.nc.Close()
	r.worker("alive", bots(nil), WorkerConfig{})
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if rep.Result.Worker != "alive" {
		t.Errorf("played by %q, want alive", rep.Result.Worker)
	}
	// The cut-off worker stopped its own bots when it lost the lease.
	waitFor(t, "the cut-off worker stops its match", func() bool { return dead.busy() == 0 })
	close(hold)
}

func TestALongMatchKeepsItsLease(t *testing.T) {
	r := newRig(t, Config{Lease: 400 * time.Millisecond})
	// The bots wait for 1.5 s: almost four leases.
	hold := make(chan struct{})
	time.AfterFunc(1500*time.Millisecond, func() { close(hold) })
	r.worker("w1", bots(hold), WorkerConfig{})
	r.worker("w2", bots(hold), WorkerConfig{})
	if _, err := r.d.Play(t.Context(), request(t, "aaaaaaaaaaa4", nil)); err != nil {
		t.Fatal(err)
	}
	if n := r.starts("aaaaaaaaaaa4"); n != 1 {
		t.Errorf("%d deliveries, want 1", n)
	}
}

func TestALateResultIsRefused(t *testing.T) {
	r := newRig(t, Config{})
	done := make(chan error, 1)
	var rep *matches.Replay
	go func() {
		var err error
		rep, err = r.d.Play(t.Context(), request(t, "aaaaaaaaaaa5", nil))
		done <- err
	}()
	waitFor(t, "the match is published", func() bool { return r.d.waiting("aaaaaaaaaaa5") })
	const id = "aaaaaaaaaaa5"
	good := replayOf(t, request(t, id, nil))
	r.send("cut-off", Event{Kind: kindStart, Match: id, Attempt: 1})
	r.send("other", Event{Kind: kindStart, Match: id, Attempt: 2})
	r.send("cut-off", Event{Kind: kindResult, Match: id, Attempt: 1, Replay: good})
	r.send("other", Event{Kind: kindResult, Match: id, Attempt: 2, Replay: good})
	r.send("other", Event{Kind: kindResult, Match: id, Attempt: 2, Replay: good})
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if rep.Result.Worker != "other" {
		t.Errorf("result by %q, want other's", rep.Result.Worker)
	}
	if s := r.d.Workers(); len(s) != 2 || s[0].Refused != 0 || s[1].Refused != 0 {
		t.Errorf("a late report counted as refused: %+v", s)
	}
}

func TestAWorkerWithoutTheImageHandsTheMatchBackUntilTheLastDelivery(t *testing.T) {
	r := newRig(t, Config{MaxDeliveries: 3})
	none := map[string]fake.Script{}
	r.worker("w1", none, WorkerConfig{})
	r.worker("w2", none, WorkerConfig{})
	rep, err := r.d.Play(t.Context(), request(t, "aaaaaaaaaaa6", nil))
	if err != nil {
		t.Fatal(err)
	}
	// The last delivery plays it without them: each bot start_failed,
	// naming its image and the worker, then every earlier reason.
	for i, b := range rep.Result.Bots {
		img := []string{"bot/a", "bot/b"}[i]
		if b.Status != engine.StatusStartFailed {
			t.Errorf("%s: %s, want start_failed", img, b.Status)
		}
		if !strings.HasPrefix(b.FaultDetail, "image "+img+" ("+fake.ImageID(img)+") is not on worker "+rep.Result.Worker+":") {
			t.Errorf("%s's detail does not name its image on worker %s: %q", img, rep.Result.Worker, b.FaultDetail)
		}
		if n := strings.Count(b.FaultDetail, "not known to the fake launcher"); n != 3 {
			t.Errorf("%d reasons in %q, want 3 (one a delivery)", n, b.FaultDetail)
		}
	}
	if rep.Result.Worker != "w1" && rep.Result.Worker != "w2" {
		t.Errorf("played by %q", rep.Result.Worker)
	}
}

// A worker that lacks a pinned image pulls it by its digest (when its
// pull policy allows) and plays it only if it is that image.
func TestAWorkerPullsAMissingImageByItsDigest(t *testing.T) {
	r := newRig(t, Config{MaxDeliveries: 2})
	s := fake.Script{Answer: func(int, [][]byte) []byte { return []byte("up") }}
	// This worker has bot/b, and can pull bot/a by its digest.
	digest := "registry.example/bot/a@sha256:" + strings.Repeat("a", 64)
	r.worker("w1", map[string]fake.Script{"bot/b": s, digest: s}, WorkerConfig{})
	req := request(t, "aaaaaaaaaaa8", nil)
	req.ImageIDs[0] = fake.ImageID(digest)
	req.ImageDigests = []string{digest, ""}
	rep, err := r.d.Play(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range rep.Result.Bots {
		if b.Status == engine.StatusStartFailed {
			t.Errorf("%s: %s (%s)", b.ID, b.Status, b.FaultDetail)
		}
	}
	// A digest that names another image is not the pinned one.
	req = request(t, "aaaaaaaaaaa9", nil)
	req.ImageDigests = []string{digest, ""}
	rep, err = r.d.Play(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	if b := rep.Result.Bots[0]; b.Status != engine.StatusStartFailed || !strings.Contains(b.FaultDetail, "not the pinned one") {
		t.Errorf("bot/a: %s (%s), want start_failed: not the pinned one", b.Status, b.FaultDetail)
	}
}

func TestAStoppingWorkerHandsItsMatchBack(t *testing.T) {
	r := newRig(t, Config{})
	hold := make(chan struct{})
	leaving := r.worker("leaving", bots(hold), WorkerConfig{})
	done := make(chan error, 1)
	var rep *matches.Replay
	go func() {
		var err error
		rep, err = r.d.Play(t.Context(), request(t, "aaaaaaaaaaa7", nil))
		done <- err
	}()
	waitFor(t, "the worker takes the match", func() bool { return r.d.attempt("aaaaaaaaaaa7") == 1 })
	leaving.stop()
	r.worker("staying", bots(nil), WorkerConfig{})
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if rep.Result.Worker != "staying" {
		t.Errorf("played by %q, want staying", rep.Result.Worker)
	}
}

func TestCancellingAMatchStopsItOnItsWorker(t *testing.T) {
	r := newRig(t, Config{})
	hold := make(chan struct{})
	defer close(hold)
	w := r.worker("w1", bots(hold), WorkerConfig{})
	ctx, cancel := context.WithCancelCause(t.Context())
	done := make(chan error, 1)
	go func() {
		_, err := r.d.Play(ctx, request(t, "aaaaaaaaaaa8", nil))
		done <- err
	}()
	waitFor(t, "the worker takes the match", func() bool { return r.d.attempt("aaaaaaaaaaa8") == 1 })
	cancel(matches.ErrCancelled)
	if err := <-done; !errors.Is(err, matches.ErrCancelled) {
		t.Fatalf("got %v, want ErrCancelled", err)
	}
	waitFor(t, "the worker stops the match", func() bool { return w.busy() == 0 })
}

// A worker that plays on a delivery whose lease ran out unnoticed (its
// progress acks still went through, say while the cluster elected a
// leader) gives it up, stopping its bots, once the server sees a later
// delivery start elsewhere; and is told again when it reports late.
func TestAWorkerGivesUpADeliveryALaterOneSuperseded(t *testing.T) {
	r := newRig(t, Config{})
	hold := make(chan struct{})
	defer close(hold)
	w := r.worker("w1", bots(hold), WorkerConfig{})
	const id = "aaaaaaaaaab2"
	done := make(chan error, 1)
	go func() {
		_, err := r.d.Play(t.Context(), request(t, id, nil))
		done <- err
	}()
	waitFor(t, "the worker takes the match", func() bool { return r.d.attempt(id) == 1 && w.launcher.Running() == 2 })
	// Another worker's second delivery starts.
	r.send("other", Event{Kind: kindStart, Match: id, Attempt: 2})
	waitFor(t, "the worker gives its delivery up", func() bool { return w.busy() == 0 })
	if n := w.launcher.Running(); n != 0 {
		t.Errorf("%d bots of the superseded delivery still run", n)
	}
	// The match is the later delivery's: end it.
	r.send("other", Event{Kind: kindResult, Match: id, Attempt: 2, Replay: replayOf(t, request(t, id, nil))})
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// A delivery that overlapped the one whose result counted (its start
// event late, say while the cluster elected a leader) is stopped when its
// worker reports it: the match is over.
func TestADeliveryOfAnEndedMatchIsStopped(t *testing.T) {
	r := newRig(t, Config{})
	const id = "aaaaaaaaaab6"
	done := make(chan error, 1)
	go func() {
		_, err := r.d.Play(t.Context(), request(t, id, nil))
		done <- err
	}()
	waitFor(t, "the match is queued", func() bool { return r.d.waiting(id) })
	// Another worker takes it, plays it and reports (its message acked
	// later, or never: it died).
	r.send("other", Event{Kind: kindStart, Match: id, Attempt: 1})
	r.send("other", Event{Kind: kindResult, Match: id, Attempt: 1, Replay: replayOf(t, request(t, id, nil))})
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	// The match's message, still in the work queue, is delivered again.
	r.takenAndStopped(id, 2)
}

// takenAndStopped starts a worker whose bots never answer, waits until it
// takes the match, as its delivery, and until it stops it on the server's
// word, leaving no bot running and nothing in the work queue.
func (r *rig) takenAndStopped(id string, delivery uint64) {
	r.t.Helper()
	hold := make(chan struct{})
	defer close(hold)
	w := r.worker("w1", bots(hold), WorkerConfig{})
	waitFor(r.t, "the worker takes the match", func() bool { return r.starts(id) == delivery })
	waitFor(r.t, "the worker stops the match", func() bool { return w.busy() == 0 && r.queued() == 0 })
	if n := w.launcher.Running(); n != 0 {
		r.t.Errorf("%d bots of the match still run", n)
	}
}

// A cancel can overtake its match's delivery: the worker remembers it,
// and stops the match as it takes it, before any bot starts.
func TestACancelThatOvertakesTheDeliveryStopsTheMatch(t *testing.T) {
	r := newRig(t, Config{})
	w := r.worker("w1", bots(nil), WorkerConfig{})
	const id = "aaaaaaaaaab1"
	w.stopMatch(id, errCancelled) // as the cancel message would
	ctx, cancel := context.WithCancelCause(t.Context())
	done := make(chan error, 1)
	go func() {
		_, err := r.d.Play(ctx, request(t, id, nil))
		done <- err
	}()
	waitFor(t, "the worker says it stopped the match", func() bool {
		r.d.mu.Lock()
		defer r.d.mu.Unlock()
		if wt := r.d.waits[id]; wt != nil {
			select {
			case <-wt.stopped:
				return true
			default:
			}
		}
		return false
	})
	cancel(matches.ErrCancelled)
	if err := <-done; !errors.Is(err, matches.ErrCancelled) {
		t.Fatalf("got %v, want ErrCancelled", err)
	}
	if n := len(w.launcher.Bots()); n != 0 {
		t.Errorf("%d bots were started for a cancelled match", n)
	}
}

// brokerJS is JetStream whose publishes of matches go through publish
// (the broker as a test has it behave).
type brokerJS struct {
	jetstream.JetStream
	publish func(ctx context.Context, subject string, data []byte, opts ...jetstream.PublishOpt) (*jetstream.PubAck, error)
}

func (b *brokerJS) Publish(ctx context.Context, subject string, data []byte, opts ...jetstream.PublishOpt) (*jetstream.PubAck, error) {
	if !strings.HasPrefix(subject, matchesSubject+".") {
		return b.JetStream.Publish(ctx, subject, data, opts...)
	}
	return b.publish(ctx, subject, data, opts...)
}

// queued is how many matches wait in the work queue.
func (r *rig) queued() uint64 {
	r.t.Helper()
	s, err := r.js.Stream(r.t.Context(), MatchesStream)
	if err != nil {
		r.t.Fatal(err)
	}
	info, err := s.Info(r.t.Context())
	if err != nil {
		r.t.Fatal(err)
	}
	return info.State.Msgs
}

// A match cancelled while its publish waits for the broker's ack (stored
// already) is taken back from the work queue once the ack comes.
func TestAMatchCancelledWhileItsPublishWaitsIsTakenBack(t *testing.T) {
	r := newRig(t, Config{})
	inner := r.d.js
	stored, release := make(chan struct{}), make(chan struct{})
	r.d.js = &brokerJS{JetStream: inner, publish: func(ctx context.Context, subject string, data []byte, opts ...jetstream.PublishOpt) (*jetstream.PubAck, error) {
		ack, err := inner.Publish(ctx, subject, data, opts...)
		close(stored)
		select { // the ack on its way
		case <-release:
			return ack, err
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}}
	const id = "aaaaaaaaaab3"
	ctx, cancel := context.WithCancelCause(t.Context())
	done := make(chan error, 1)
	go func() {
		_, err := r.d.Play(ctx, request(t, id, nil))
		done <- err
	}()
	<-stored
	cancel(matches.ErrCancelled)
	close(release)
	if err := <-done; !errors.Is(err, matches.ErrCancelled) {
		t.Fatalf("got %v, want ErrCancelled", err)
	}
	if n := r.queued(); n != 0 {
		t.Errorf("%d matches left in the work queue, want 0", n)
	}
}

// A publish whose ack never comes may have stored the match all the same:
// Play fails, and a worker that takes the match later is told to stop it.
func TestAMatchWhosePublishLostItsAckIsStoppedOnItsWorker(t *testing.T) {
	r := newRig(t, Config{})
	r.d.publishCap = 500 * time.Millisecond
	inner := r.d.js
	r.d.js = &brokerJS{JetStream: inner, publish: func(ctx context.Context, subject string, data []byte, opts ...jetstream.PublishOpt) (*jetstream.PubAck, error) {
		if _, err := inner.Publish(ctx, subject, data, opts...); err != nil {
			return nil, err
		}
		return nil, nats.ErrTimeout // stored, the ack lost
	}}
	const id = "aaaaaaaaaab4"
	_, err := r.d.Play(t.Context(), request(t, id, nil))
	if err == nil || !strings.Contains(err.Error(), "queue match "+id+" on nats") {
		t.Fatalf("got %v, want the publish's failure", err)
	}
	// The job stored unacked is purged from the work queue.
	if n := r.queued(); n != 0 {
		t.Fatalf("%d matches in the work queue, want none", n)
	}
}

// A delivery of a match this dispatcher queued but has no record of (the
// server restarted since) is stopped, not played.
func TestADeliveryOfAMatchWithNoRecordIsStopped(t *testing.T) {
	r := newRig(t, Config{})
	const id = "aaaaaaaaaac1"
	job := jobOf(request(t, id, nil))
	job.Round, job.Key, job.Owner = 1, "k", "server"
	data, _ := json.Marshal(job)
	if _, err := r.js.Publish(t.Context(), jobSubject(id), data); err != nil {
		t.Fatal(err)
	}
	r.takenAndStopped(id, 1)
}

// The work queue's streams and consumers, deleted, are made again, and
// matches play on; a dispatcher that does not have the queue's setup
// says what is missing.
func TestAWorkQueueDeletedIsMadeAgain(t *testing.T) {
	r := newRig(t, Config{})
	healer, err := NewDispatcherWith(t.Context(), connect(t, r.ns), DispatcherConfig{Name: "healer", Setup: &Config{}, Log: zaptest.NewLogger(t).Named("healer")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(healer.Close)
	r.worker("w1", bots(nil), WorkerConfig{})
	for _, st := range []string{MatchesStream, EventsStream} {
		if err := r.js.DeleteStream(t.Context(), st); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.d.Check(t.Context()); err == nil || !strings.Contains(err.Error(), "stream "+MatchesStream) {
		t.Errorf("a dispatcher without the setup: got %v, want the missing stream named", err)
	}
	if err := healer.Check(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := healer.Check(t.Context()); err != nil {
		t.Errorf("after it was made again: %v", err)
	}
	rep, err := healer.Play(t.Context(), request(t, "aaaaaaaaaac2", nil))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Result.Worker != "w1" {
		t.Errorf("played by %q", rep.Result.Worker)
	}
}

// A match cancelled while the broker does not answer reports the cancel,
// not the publish's failure.
func TestACancelDuringABrokerOutageReportsTheCancel(t *testing.T) {
	r := newRig(t, Config{})
	r.d.publishCap = 2 * time.Second
	called := make(chan struct{}, 1)
	r.d.js = &brokerJS{JetStream: r.d.js, publish: func(ctx context.Context, _ string, _ []byte, _ ...jetstream.PublishOpt) (*jetstream.PubAck, error) {
		select {
		case called <- struct{}{}:
		default:
		}
		<-ctx.Done()
		return nil, nats.ErrNoResponders
	}}
	ctx, cancel := context.WithCancelCause(t.Context())
	done := make(chan error, 1)
	go func() {
		_, err := r.d.Play(ctx, request(t, "aaaaaaaaaab5", nil))
		done <- err
	}()
	<-called
	cancel(matches.ErrCancelled)
	if err := <-done; !errors.Is(err, matches.ErrCancelled) {
		t.Fatalf("got %v, want ErrCancelled", err)
	}
}

func TestUnknownVersionsAreRefused(t *testing.T) {
	for _, v := range []int{Version - 1, Version + 1} {
		var ev Event
		err := trust.Decode(fmt.Appendf(nil, `{"v":%d,"kind":"result","match":"x"}`, v), &ev)
		if !errors.Is(err, ErrVersion) {
			t.Errorf("v%d: got %v, want ErrVersion", v, err)
		}
		if ev.Match != "" {
			t.Errorf("v%d was read: %+v", v, ev)
		}
	}
	var ev Event
	if err := trust.Decode([]byte(`{"kind":"result"}`), &ev); !errors.Is(err, ErrVersion) {
		t.Errorf("no version: got %v, want ErrVersion", err)
	}
}

// A job a worker cannot make a match of (a version from the future, a
// game it does not have) fails its match with the worker's reason; the
// worker says it took it first, so its report is believed, not counted
// against it.
func TestAJobAWorkerCannotPlayFailsItsMatch(t *testing.T) {
	for _, c := range []struct{ name, job, want string }{
		{"unknown version", `{"v":99,"match":"%s","round":1,"key":"k","game":"snake"}`, "unknown message version 99"},
		{"unknown game", fmt.Sprintf(`{"v":%d,"match":"%%s","round":1,"key":"k","game":"chess"}`, Version), "chess"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(t, Config{})
			r.worker("w1", bots(nil), WorkerConfig{})
			const id = "bbbbbbbbbbb1"
			// A match the dispatcher waits for, then a job for it.
			w := &wait{done: make(chan result, 1), key: "k", round: 1, holders: map[int]string{}}
			r.d.mu.Lock()
			r.d.waits[id] = w
			r.d.mu.Unlock()
			if _, err := r.js.Publish(t.Context(), jobSubject(id), []byte(fmt.Sprintf(c.job, id))); err != nil {
				t.Fatal(err)
			}
			select {
			case res := <-w.done:
				if !errors.Is(res.err, ErrNoWorker) || !strings.Contains(res.err.Error(), c.want) {
					t.Errorf("got %v, want %q named", res.err, c.want)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("no result")
			}
			if n := r.refused("w1"); n != 0 {
				t.Errorf("%d of the worker's reports refused", n)
			}
		})
	}
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	poll.Until(t, 20*time.Second, func() error {
		if !ok() {
			return fmt.Errorf("waiting until %s", what)
		}
		return nil
	})
}

// starts counts the deliveries of a match that a worker took.
func (r *rig) starts(id string) uint64 {
	s, err := r.js.Stream(r.t.Context(), EventsStream)
	if err != nil {
		r.t.Fatal(err)
	}
	info, err := s.Info(r.t.Context(), jetstream.WithSubjectFilter(eventSubject("*", kindStart, id)))
	if err != nil {
		r.t.Fatal(err)
	}
	var n uint64
	for _, c := range info.State.Subjects {
		n += c
	}
	return n
}

// send publishes an event as worker would for a match the dispatcher
// waits for (or waited for, when the rig sent on it before): under its
// name, of the match's current round unless ev says, with its proof.
func (r *rig) send(worker string, ev Event) {
	r.t.Helper()
	r.d.mu.Lock()
	if w := r.d.waits[ev.Match]; w != nil {
		r.sent[ev.Match] = [2]string{w.key, strconv.Itoa(w.round)}
	}
	known, ok := r.sent[ev.Match]
	r.d.mu.Unlock()
	if !ok {
		r.t.Fatalf("match %s is not waited for", ev.Match)
	}
	key := known[0]
	if ev.Round == 0 {
		ev.Round, _ = strconv.Atoi(known[1])
	}
	ev.V, ev.Worker = Version, worker
	ev.Proof = proofOf(key, ev.Match, ev.Round, ev.Attempt, worker)
	data, _ := json.Marshal(ev)
	if _, err := r.js.Publish(r.t.Context(), eventSubject(worker, ev.Kind, ev.Match), data); err != nil {
		r.t.Fatal(err)
	}
}

// sendRaw publishes an event under worker's name as it is.
func (r *rig) sendRaw(worker string, ev Event) {
	r.t.Helper()
	ev.V, ev.Worker = Version, worker
	data, _ := json.Marshal(ev)
	if _, err := r.js.Publish(r.t.Context(), eventSubject(worker, ev.Kind, ev.Match), data); err != nil {
		r.t.Fatal(err)
	}
}

// replayOf is a genuine replay of the request, played here with the
// tests' bots.
func replayOf(t testing.TB, req matches.Request) json.RawMessage {
	t.Helper()
	rep, err := orchestrator.New(fake.NewLauncher(bots(nil))).Play(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	data, err := matches.EncodeReplay(rep)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// A match whose last delivery's worker died without a word fails, on
// JetStream's advisory that it will not deliver it again.
func TestAMatchWhoseLastWorkerDiedFails(t *testing.T) {
	r := newRig(t, Config{Lease: 500 * time.Millisecond, MaxDeliveries: 1})
	hold := make(chan struct{})
	defer close(hold)
	dead := r.worker("dead", bots(hold), WorkerConfig{})
	done := make(chan error, 1)
	go func() {
		_, err := r.d.Play(t.Context(), request(t, "ccccccccccc1", nil))
		done <- err
	}()
	waitFor(t, "the worker takes the match", func() bool { return r.d.attempt("ccccccccccc1") == 1 })
	dead.nc.Close()
	select {
	case err := <-done:
		if !errors.Is(err, ErrNoWorker) || !strings.Contains(err.Error(), "stopped answering") {
			t.Errorf("got %v, want ErrNoWorker saying the worker stopped answering", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the match never failed")
	}
}

// noDocker is the launcher of a worker whose engine cannot be reached.
type noDocker struct{}

func (noDocker) Check(string) error { return nil }
func (noDocker) Image(context.Context, string) (sandbox.Image, error) {
	return sandbox.Image{}, errors.New("Cannot connect to the Docker daemon at unix:///var/run/docker.sock")
}
func (noDocker) Launch(context.Context, sandbox.Spec) (orchestrator.Bot, error) {
	panic("launch without an engine")
}

// A worker that cannot reach Docker hands its matches back; one that
// can plays them.
func TestAWorkerWithoutDockerHandsItsMatchesBack(t *testing.T) {
	r := newRig(t, Config{MaxDeliveries: 50})
	nc := connect(t, r.ns)
	w, err := NewWorker(nc, WorkerConfig{Name: "broken", Games: []engine.Game{snake.New()}, Player: orchestrator.New(noDocker{}), Log: zaptest.NewLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() { defer close(stopped); w.Run(ctx) }()
	defer func() { cancel(); <-stopped }()
	done := make(chan error, 1)
	var rep *matches.Replay
	go func() {
		var err error
		rep, err = r.d.Play(t.Context(), request(t, "ddddddddddd1", nil))
		done <- err
	}()
	waitFor(t, "the broken worker hands the match back", func() bool {
		r.d.mu.Lock()
		defer r.d.mu.Unlock()
		w := r.d.waits["ddddddddddd1"]
		return w != nil && len(w.reasons) > 0 && strings.Contains(w.reasons[0], "Cannot connect to the Docker daemon")
	})
	r.worker("good", bots(nil), WorkerConfig{})
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if rep.Result.Worker != "good" {
		t.Errorf("played by %q, want good", rep.Result.Worker)
	}
}

// A match's limits reach the worker whole, a contest's memory limit
// included, and come back as the request the worker plays.
func TestAJobCarriesTheMatchsLimits(t *testing.T) {
	req := request(t, "aaaaaaaaaad1", nil)
	req.Limits = matches.Limits{AnswerTimeout: 300 * time.Millisecond, WarmUp: 2 * time.Second, MaxMessageBytes: 512, MemoryBytes: 128 << 20}
	data, err := json.Marshal(jobOf(req))
	if err != nil {
		t.Fatal(err)
	}
	var job Job
	if err := json.Unmarshal(data, &job); err != nil {
		t.Fatal(err)
	}
	w := &Worker{cfg: WorkerConfig{Games: []engine.Game{snake.New()}}}
	got, err := w.request(job)
	if err != nil {
		t.Fatal(err)
	}
	if got.Limits != req.Limits {
		t.Errorf("limits on the worker %+v, want %+v", got.Limits, req.Limits)
	}
}
