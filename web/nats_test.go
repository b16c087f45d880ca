package web

import (
	"context"
	"sync"
	"testing"

	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap"

	"arena/dispatch"
	"arena/dispatch/natsd"
	"arena/engine"
	"arena/matches"
	"arena/orchestrator"
)

// viaNATS makes newTestServer play its matches through an embedded NATS
// server and a worker in the process, as arena serve does; withForger
// adds a second worker that swaps the seats of every result it reports,
// and forgers is the dispatcher's count of its refused reports.
var (
	viaNATS, withForger bool
	forgerRefused       func() int
)

// seatSwapper plays honestly, then swaps the seats of the result.
type seatSwapper struct{ matches.Player }

func (p seatSwapper) Play(ctx context.Context, req matches.Request) (*matches.Replay, error) {
	rep, err := p.Player.Play(ctx, req)
	if err == nil && len(rep.Bots) == 2 {
		rep.Bots[0].Image, rep.Bots[1].Image = rep.Bots[1].Image, rep.Bots[0].Image
		rep.Bots[0].ImageID, rep.Bots[1].ImageID = rep.Bots[1].ImageID, rep.Bots[0].ImageID
		rep.Result.Bots[0], rep.Result.Bots[1] = rep.Result.Bots[1], rep.Result.Bots[0]
	}
	return rep, err
}

// natsPlayer is a dispatcher to one worker that plays with o, on an
// embedded NATS server of the test's own.
func natsPlayer(t *testing.T, o *orchestrator.Orchestrator, games []engine.Game, concurrency int, log *zap.Logger) matches.Player {
	t.Helper()
	ns, err := natsd.Start(natsd.Node{Name: "web-test", Dir: t.TempDir()})
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
	stopForger := func() {}
	d, err := dispatch.NewDispatcherWith(t.Context(), nc, dispatch.DispatcherConfig{Name: "server", Log: log.Named("dispatch"),
		// As the embedded server revokes a quarantined worker's key.
		Quarantine: func(string, string) { go stopForger() },
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	if withForger {
		fnc, err := ns.Connect("forger")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(fnc.Close)
		f, err := dispatch.NewWorker(fnc, dispatch.WorkerConfig{Name: "forger", Games: games, Player: seatSwapper{o}, Log: log.Named("forger")})
		if err != nil {
			t.Fatal(err)
		}
		fctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); f.Run(fctx) }()
		var once sync.Once
		stopForger = func() { once.Do(func() { fnc.Close(); cancel(); <-done }) }
		t.Cleanup(stopForger)
		forgerRefused = func() int {
			for _, s := range d.Workers() {
				if s.Name == "forger" {
					return s.Refused
				}
			}
			return 0
		}
	}
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
	// A worker forging every result beside the honest one: the board is
	// the same, its forgeries refused.
	t.Run("ladder with a forging worker", func(t *testing.T) {
		withForger = true
		t.Cleanup(func() { withForger, forgerRefused = false, nil })
		TestLadderPlaysRatesAndRanks(t)
		if forgerRefused == nil || forgerRefused() == 0 {
			t.Error("the forging worker's results were never refused: it took no match, and the test proved nothing")
		}
	})
}
