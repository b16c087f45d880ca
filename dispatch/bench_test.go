package dispatch

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap"

	"arena/dispatch/natsd"
	"arena/dispatch/trust"
	"arena/engine"
	"arena/engine/snake"
	"arena/engine/tanks"
	"arena/matches"
	"arena/orchestrator"
	"arena/orchestrator/fake"
)

// benchRig is an embedded NATS server with a dispatcher and one worker
// playing with scripted bots (no Docker), so what differs from playing
// in-process is the coordination through NATS alone. With secure, the
// server is arena serve's (a listener, TLS, the trust folder's users)
// and the worker joins it and connects over loopback with its own key,
// as a worker of another host does; else the worker connects in-process.
func benchRig(b *testing.B, concurrency int, secure bool) (direct, viaNATS matches.Player) {
	node := natsd.Node{Name: "bench", Dir: b.TempDir()}
	if secure {
		t, err := trust.OpenTrust(b.TempDir())
		if err != nil {
			b.Fatal(err)
		}
		node.Trust, node.Listen = t, fmt.Sprintf("127.0.0.1:%d", freePort(b))
	}
	ns, err := natsd.Start(node)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(ns.Stop)
	dnc, err := ns.Connect("dispatcher")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(dnc.Close)
	var wnc *nats.Conn
	if secure {
		tok, _ := node.Trust.Token()
		jt, _ := trust.ParseToken(tok)
		url := "nats://" + node.Listen
		creds, err := trust.Join(b.Context(), url, jt, "w1", b.TempDir())
		if err != nil {
			b.Fatal(err)
		}
		wnc, err = trust.DialWorker(b.Context(), url, creds)
		if err != nil {
			b.Fatal(err)
		}
	} else if wnc, err = ns.Connect("worker"); err != nil {
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
	d, err := NewDispatcher(b.Context(), dnc, "server", nil)
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
func oneTurn(b *testing.B, i int) matches.Request {
	req := request(b, fmt.Sprintf("%012x", i+1), nil)
	req.Settings = []byte(`{"max_rounds":1}`)
	return req
}

// BenchmarkCoordination times one 1-round match, played in-process and
// through NATS (publish, a worker's pull, start, frames, the result and
// the server's check of it): the p50 difference is the coordination cost
// per match. "nats" has the worker on an in-process connection,
// "nats-tls" over loopback TCP with TLS and its own key.
func BenchmarkCoordination(b *testing.B) {
	direct, viaNATS := benchRig(b, 1, false)
	_, secured := benchRig(b, 1, true)
	// Match ids are never reused, not even by the runs of -count: the
	// work queue drops a job whose id it stored in the last 10 minutes.
	i := 0
	for _, c := range []struct {
		name string
		p    matches.Player
	}{{"in-process", direct}, {"nats", viaNATS}, {"nats-tls", secured}} {
		b.Run(c.name, func(b *testing.B) {
			var took []time.Duration
			for b.Loop() {
				i++
				start := time.Now()
				if _, err := c.p.Play(b.Context(), oneTurn(b, i)); err != nil {
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
	const games, jobs = 1000, 4
	direct, viaNATS := benchRig(b, jobs, false)
	// Match ids are never reused, not even by the runs of -count (see
	// BenchmarkCoordination).
	round := 0
	for _, c := range []struct {
		name string
		p    matches.Player
	}{{"in-process", direct}, {"nats", viaNATS}} {
		b.Run(c.name, func(b *testing.B) {
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
				for i := range games {
					work <- 10_000_000*round + i
				}
				close(work)
				wg.Wait()
				b.ReportMetric(games/time.Since(start).Seconds(), "matches/s")
			}
		})
	}
}

// BenchmarkCheckReplay is what the server spends checking a worker's
// result (CheckReplay: the replay decoded, checked against the job, and
// the engine run again on its answers), per turn of a whole default
// Tanks match of two tanks that idle.
func BenchmarkCheckReplay(b *testing.B) {
	g := tanks.New()
	m, err := g.Map(g.Maps()[0].Name)
	if err != nil {
		b.Fatal(err)
	}
	images := []string{"bot/a", "bot/b"}
	req := matches.Request{Game: g, Map: m, Seed: 7, Images: images, MatchID: "iiiiiiiiiii1",
		ImageIDs: []string{fake.ImageID(images[0]), fake.ImageID(images[1])}}
	idle := fake.Script{Answer: func(int, [][]byte) []byte { return []byte("[]") }}
	rep, err := orchestrator.New(fake.NewLauncher(map[string]fake.Script{"bot/a": idle, "bot/b": idle})).Play(b.Context(), req)
	if err != nil {
		b.Fatal(err)
	}
	data, err := matches.EncodeReplay(rep)
	if err != nil {
		b.Fatal(err)
	}
	turns := len(rep.Frames)
	for b.Loop() {
		var r matches.Replay
		if err := json.Unmarshal(data, &r); err != nil {
			b.Fatal(err)
		}
		if err := matches.CheckReplay(req, &r); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/float64(turns), "µs/turn")
	b.ReportMetric(float64(turns), "turns")
	b.ReportMetric(float64(len(data))/1024, "replay-KiB")
}

func freePort(b *testing.B) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
