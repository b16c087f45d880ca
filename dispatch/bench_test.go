package dispatch

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap"

	"arena/engine"
	"arena/engine/snake"
	"arena/orchestrator"
	"arena/orchestrator/fake"
)

// benchRig is an embedded NATS server with a dispatcher and one worker
// playing with scripted bots (no Docker), so what differs from playing
// in-process is the coordination through NATS alone.
func benchRig(b *testing.B, concurrency int) (direct, viaNATS orchestrator.Player) {
	ns, err := Start(Node{Name: "bench", Dir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(ns.Stop)
	dnc, err := ns.Connect("dispatcher")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(dnc.Close)
	wnc, err := ns.Connect("worker")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(wnc.Close)
	js, err := jetstream.New(dnc)
	if err != nil {
		b.Fatal(err)
	}
	if err := Setup(b.Context(), js, Config{}); err != nil {
		b.Fatal(err)
	}
	d, err := NewDispatcher(b.Context(), dnc, "server", nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(d.Close)
	orch := orchestrator.New(fake.NewLauncher(bots(nil)), orchestrator.WithLogger(zap.NewNop()))
	w, err := NewWorker(wnc, WorkerConfig{Name: "w1", Concurrency: concurrency, Games: []engine.Game{snake.New()}, Player: orch})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = w.Run(ctx) }()
	b.Cleanup(func() { cancel(); <-done })
	return orch, d
}

// oneTurn is a snake match that ends after one round.
func oneTurn(b *testing.B, i int) orchestrator.Request {
	req := request(b, fmt.Sprintf("%012x", i+1), nil)
	req.Settings = []byte(`{"max_rounds":1}`)
	return req
}

// BenchmarkCoordination times one 1-round match, played in-process and
// through NATS (publish, a worker's pull, start, frames, result); the p50
// difference is the coordination cost per match.
func BenchmarkCoordination(b *testing.B) {
	direct, viaNATS := benchRig(b, 1)
	for _, c := range []struct {
		name string
		p    orchestrator.Player
	}{{"in-process", direct}, {"nats", viaNATS}} {
		b.Run(c.name, func(b *testing.B) {
			var took []time.Duration
			i := 0
			for b.Loop() {
				i++
				start := time.Now()
				if _, err := c.p.Play(b.Context(), oneTurn(b, i+1_000_000*len(c.name))); err != nil {
					b.Fatal(err)
				}
				took = append(took, time.Since(start))
			}
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(took[len(took)*99/100].Microseconds())/1000, "p99-ms")
		})
	}
}

// BenchmarkTournament plays 1,000 1-round matches, 4 at a time, in-process
// and through NATS with one worker: matches per second each way.
func BenchmarkTournament(b *testing.B) {
	const matches, jobs = 1000, 4
	direct, viaNATS := benchRig(b, jobs)
	for _, c := range []struct {
		name string
		p    orchestrator.Player
	}{{"in-process", direct}, {"nats", viaNATS}} {
		b.Run(c.name, func(b *testing.B) {
			round := 0
			for b.Loop() {
				round++
				work := make(chan int)
				var wg sync.WaitGroup
				start := time.Now()
				for range jobs {
					wg.Go(func() {
						for i := range work {
							if _, err := c.p.Play(b.Context(), oneTurn(b, i)); err != nil {
								b.Error(err)
							}
						}
					})
				}
				for i := range matches {
					work <- 10_000_000*round + 100_000_000*len(c.name) + i
				}
				close(work)
				wg.Wait()
				b.ReportMetric(matches/time.Since(start).Seconds(), "matches/s")
			}
		})
	}
}
