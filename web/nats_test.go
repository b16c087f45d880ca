package web

import (
	"context"
	"testing"

	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap"

	"arena/dispatch"
	"arena/engine"
	"arena/orchestrator"
)

// viaNATS makes newTestServer play its matches through an embedded NATS
// server and a worker in the process, as arena serve does.
var viaNATS bool

// natsPlayer is a dispatcher to one worker that plays with o, on an
// embedded NATS server of the test's own.
func natsPlayer(t *testing.T, o *orchestrator.Orchestrator, games []engine.Game, concurrency int, log *zap.Logger) orchestrator.Player {
	t.Helper()
	ns, err := dispatch.Start(dispatch.Node{Name: "web-test", Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ns.Stop)
	nc, err := ns.Connect("server")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, _ := jetstream.New(nc)
	if err := dispatch.Setup(t.Context(), js, dispatch.Config{}); err != nil {
		t.Fatal(err)
	}
	d, err := dispatch.NewDispatcher(t.Context(), nc, "server", func(ctx context.Context, ref string) (string, error) {
		img, err := o.Image(ctx, ref)
		return img.ID, err
	}, log.Named("dispatch"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	w, err := dispatch.NewWorker(nc, dispatch.WorkerConfig{Name: "worker", Concurrency: max(1, concurrency), Games: games, Player: o, Log: log.Named("worker")})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); w.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return d
}

// The page's API, the live stream, cancelling and the ladders behave the
// same when the matches go through NATS to a worker.
func TestThroughNATS(t *testing.T) {
	viaNATS = true
	t.Cleanup(func() { viaNATS = false })
	for name, test := range map[string]func(*testing.T){
		"lifecycle": TestMatchLifecycle,
		"queue":     TestQueueBoundsConcurrencyAndShowsPositions,
		"cancel":    TestCancel,
		"stream":    TestStream,
		"shutdown":  TestShutdownLetsMatchesFinish,
		"ladder":    TestLadderPlaysRatesAndRanks,
		"pinned":    TestAMatchPlaysTheImagesItWasCreatedWith,
	} {
		t.Run(name, test)
	}
}
