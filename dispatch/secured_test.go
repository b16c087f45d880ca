package dispatch

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap/zaptest"

	"arena/dispatch/trust"
	"arena/engine"
	"arena/engine/snake"
	"arena/internal/testsupport/natstest"
	"arena/internal/testsupport/poll"
	"arena/orchestrator"
	"arena/orchestrator/fake"
)

// secured is arena serve's embedded NATS server: a listener on loopback,
// TLS and the trust folder's users, with the work queue set up and a
// dispatcher on it (in-process).
type secured struct {
	*rig
	*natstest.Server
}

func newSecured(t *testing.T, opts ...func(*DispatcherConfig)) *secured {
	t.Helper()
	srv := natstest.Secured(t)
	ns := srv.NS
	nc := connect(t, ns)
	js, _ := jetstream.New(nc)
	if err := Setup(t.Context(), js, Config{}); err != nil {
		t.Fatal(err)
	}
	cfg := DispatcherConfig{Name: "server", Log: zaptest.NewLogger(t).Named("dispatcher")}
	for _, o := range opts {
		o(&cfg)
	}
	d, err := NewDispatcherWith(t.Context(), nc, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	return &secured{rig: &rig{t: t, ns: ns, d: d, js: js, sent: map[string][2]string{}}, Server: srv}
}

// remoteWorker runs a worker over the network with its credentials,
// until the test ends or stop is called.
func (s *secured) remoteWorker(c *trust.Credentials, cfg WorkerConfig) (stop func()) {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(s.t.Context(), 20*time.Second)
	defer cancel()
	nc, err := trust.DialWorker(ctx, s.URL, c)
	if err != nil {
		s.t.Fatal(err)
	}
	s.t.Cleanup(nc.Close)
	// What a worker does, NATS lets it do.
	nc.SetErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
		s.t.Errorf("worker %s: NATS: %v", c.Name, err)
	})
	cfg.Name, cfg.Games = c.Name, []engine.Game{snake.New()}
	if cfg.Player == nil {
		cfg.Player = orchestrator.New(fake.NewLauncher(bots(nil)))
	}
	cfg.Log = zaptest.NewLogger(s.t).Named(c.Name)
	_, stop = runWorker(s.t, nc, cfg)
	return stop
}

// A joined worker plays matches (a big replay through its own bucket
// too), and NATS denies it everything a worker does not do; the matches
// play on.
func TestAWorkerMayDoOnlyWhatAWorkerDoes(t *testing.T) {
	s := newSecured(t)
	w1 := s.Join("w1")
	s.remoteWorker(w1, WorkerConfig{InlineMax: 1})
	play := func(id string) {
		t.Helper()
		rep, err := s.d.Play(t.Context(), request(t, id, nil))
		if err != nil {
			t.Fatal(err)
		}
		if rep.Result.Worker != "w1" {
			t.Fatalf("played by %q", rep.Result.Worker)
		}
	}
	play("ggggggggggg1")
	// It says how many matches it takes, under its own name.
	waitFor(t, "the worker's slots count", func() bool { return s.d.Slots() == 1 })

	// The worker's credentials in another's hands.
	var mu sync.Mutex
	var denied []string
	extra, err := w1.Options()
	if err != nil {
		t.Fatal(err)
	}
	nc, err := nats.Connect(s.URL, append(extra, nats.NoReconnect(), nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
		mu.Lock()
		denied = append(denied, err.Error())
		mu.Unlock()
	}))...)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	wasDenied := func(what, subject string) {
		t.Helper()
		want := fmt.Sprintf("permissions violation for %s", what)
		if err := poll.Wait(5*time.Second, func() error {
			mu.Lock()
			defer mu.Unlock()
			for _, d := range denied {
				if strings.Contains(strings.ToLower(d), want) && strings.Contains(d, subject) {
					return nil
				}
			}
			return fmt.Errorf("NATS did not deny %s %s (denied: %q)", what, subject, denied)
		}); err != nil {
			t.Error(err)
		}
	}
	js, _ := jetstream.New(nc)
	short := func() context.Context {
		ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
		t.Cleanup(cancel)
		return ctx
	}

	// Publish a job.
	nc.Publish(jobSubject("hhhhhhhhhhh1"), []byte(`{"v":2,"match":"hhhhhhhhhhh1","game":"snake"}`))
	wasDenied("publish", jobSubject("hhhhhhhhhhh1"))
	// Report as another worker.
	nc.Publish(eventSubject("w2", kindResult, "ggggggggggg1"), []byte(`{}`))
	wasDenied("publish", eventSubject("w2", kindResult, "ggggggggggg1"))
	// Show live frames as another worker.
	nc.Publish(liveSubject("w2", "ggggggggggg1"), []byte(`{}`))
	wasDenied("publish", liveSubject("w2", "ggggggggggg1"))
	// Say how many matches another worker takes.
	nc.Publish(slotsSubject("w2"), []byte(`{"v":2,"worker":"w2","slots":1000}`))
	wasDenied("publish", slotsSubject("w2"))
	// Hear the other workers' live frames.
	nc.Subscribe(livePrefix+">", func(*nats.Msg) {})
	wasDenied("subscription", livePrefix+">")
	// Ask for images as another worker (they would go to its bucket).
	nc.Publish(imageSubject("w2"), []byte(`{"v":2,"id":"sha256:`+strings.Repeat("a", 64)+`"}`))
	wasDenied("publish", imageSubject("w2"))
	// Listen to everything, or to the other workers' events.
	nc.Subscribe("arena.>", func(*nats.Msg) {})
	wasDenied("subscription", "arena.>")
	nc.Subscribe(eventsPrefix+">", func(*nats.Msg) {})
	wasDenied("subscription", eventsPrefix+">")
	nc.Subscribe("_INBOX.>", func(*nats.Msg) {})
	wasDenied("subscription", "_INBOX.>")
	// Delete or purge a stream, make a consumer, read another's bucket.
	if err := js.DeleteStream(short(), MatchesStream); err == nil {
		t.Error("the worker deleted the work queue")
	}
	wasDenied("publish", "$JS.API.STREAM.DELETE."+MatchesStream)
	if _, err := js.CreateOrUpdateConsumer(short(), EventsStream, jetstream.ConsumerConfig{Durable: "spy"}); err == nil {
		t.Error("the worker made a consumer of the events")
	}
	wasDenied("publish", "$JS.API.CONSUMER.CREATE."+EventsStream)
	if _, err := js.CreateOrUpdateConsumer(short(), MatchesStream, jetstream.ConsumerConfig{Durable: "thief"}); err == nil {
		t.Error("the worker made a consumer of the work queue")
	}
	wasDenied("publish", "$JS.API.CONSUMER.CREATE."+MatchesStream)
	if err := js.DeleteConsumer(short(), MatchesStream, ConsumerName); err == nil {
		t.Error("the worker deleted the workers' consumer")
	}
	wasDenied("publish", "$JS.API.CONSUMER.DELETE."+MatchesStream)
	if _, err := js.ObjectStore(short(), trust.BucketOf("w2")); err == nil {
		t.Error("the worker opened another worker's bucket")
	}
	wasDenied("publish", "$JS.API.STREAM.INFO.OBJ_"+trust.BucketOf("w2"))
	if _, err := js.CreateObjectStore(short(), jetstream.ObjectStoreConfig{Bucket: trust.BucketOf("w1") + "x"}); err == nil {
		t.Error("the worker made a stream")
	}
	wasDenied("publish", "$JS.API.STREAM.CREATE.")

	// Nothing of it took effect, and matches play on.
	if st, err := s.js.Stream(t.Context(), MatchesStream); err != nil {
		t.Errorf("the work queue: %v", err)
	} else if n := st.CachedInfo().State.Msgs; n != 0 {
		t.Errorf("%d jobs in the work queue", n)
	}
	play("ggggggggggg2")
}
