package sandbox_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/docker/docker/client"
	"go.uber.org/zap"

	"arena/internal/testsupport/dockertest"
	"arena/sandbox"
)

// echoImage builds the arena binary and the probe image made of it (its
// echo command answers each line): the engine's client, the binary, the
// image and the owner Arena labels its containers with.
func echoImage(b *testing.B) (*client.Client, string, string, sandbox.Owner) {
	cli := dockertest.Client(b)
	exe := dockertest.GoBinary(b, dockertest.Root(), "./cmd/arena")
	ref, err := sandbox.ProbeImage(context.Background(), cli, exe)
	if err != nil {
		b.Fatal(err)
	}
	owner, _ := sandbox.Self()
	return cli, exe, ref, owner
}

// BenchmarkRoundTrip times one JSON line out to a bot and back (the bot is
// the arena binary echoing), over a local pipe and through a container on
// each stdio path. make bench runs it; arena doctor reports percentiles.
func BenchmarkRoundTrip(b *testing.B) {
	cli, exe, ref, owner := echoImage(b)
	line := []byte(`{"round":1,"mat":["##########","#..o.....#","#...1....#","#....2...#","##########"],"you":1}` + "\n")
	type bot interface {
		Send([]byte, time.Time) error
		Receive(context.Context, time.Time) ([]byte, error)
		Close(context.Context) error
	}
	// turn, when set, adds what the orchestrator does around an answer:
	// its CPU time before it and a thaw (the freeze is at the answer), its
	// figures and memory peak after.
	var turn bool
	run := func(b *testing.B, start func() (bot, error)) {
		c, err := start()
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close(context.Background())
		ctx := context.Background()
		for i := 0; i < 200; i++ { // warm up
			c.Send(line, time.Now().Add(5*time.Second))
			c.Receive(ctx, time.Now().Add(5*time.Second))
		}
		ct, _ := c.(*sandbox.Container)
		for b.Loop() {
			if turn && ct != nil {
				ct.CPUTime()
				ct.Thaw()
			}
			deadline := time.Now().Add(5 * time.Second)
			if err := c.Send(line, deadline); err != nil {
				b.Fatal(err)
			}
			if _, err := c.Receive(ctx, deadline); err != nil {
				b.Fatal(err)
			}
			if turn && ct != nil {
				ct.Sample()
				ct.MemPeak()
			}
		}
	}
	b.Run("pipe", func(b *testing.B) {
		l, err := sandbox.NewLocal(sandbox.DefaultPolicy(), zap.NewNop(), exe)
		if err != nil {
			b.Fatal(err)
		}
		run(b, func() (bot, error) {
			return l.Start(context.Background(), sandbox.Spec{Image: sandbox.Image{Ref: sandbox.LocalPrefix + exe + " " + sandbox.EchoCommand}, BotID: "pipe", MaxMessageBytes: 1 << 20})
		})
	})
	for _, path := range []string{"attach", "fifo", "fifo+turn"} {
		b.Run(path, func(b *testing.B) {
			turn = path == "fifo+turn"
			opts := []sandbox.Option{}
			if path != "attach" {
				opts = append(opts, sandbox.WithFIFO(dockertest.FIFO(b)))
			}
			d, err := sandbox.NewDocker(cli, sandbox.DefaultPolicy(), owner, opts...)
			if err != nil {
				b.Fatal(err)
			}
			img, err := d.Image(context.Background(), ref)
			if err != nil {
				b.Fatal(err)
			}
			run(b, func() (bot, error) {
				return d.Start(context.Background(), sandbox.Spec{Image: img, MatchID: "bench", BotID: "echo", MaxMessageBytes: 1 << 20})
			})
		})
	}
}

// BenchmarkTwoBotTurn times a turn of a game where two bots move at once,
// as the orchestrator plays it: each bot's CPU time read and the bot
// thawed, the state written to both, both answers read, their figures
// read. "let-run" lets both run between answers; "one-frozen" freezes one
// at its answers, as a bot that ran between answers is: its figures are
// those its freeze read, but its CPU time at its answer, and where the
// freeze has not read them when the turn ends they are read then.
func BenchmarkTwoBotTurn(b *testing.B) {
	cli, _, ref, owner := echoImage(b)
	d, err := sandbox.NewDocker(cli, sandbox.DefaultPolicy(), owner, sandbox.WithFIFO(dockertest.FIFO(b)))
	if err != nil {
		b.Fatal(err)
	}
	img, err := d.Image(context.Background(), ref)
	if err != nil {
		b.Fatal(err)
	}
	line := []byte(`{"round":1,"mat":["##########","#..o.....#","#...1....#","#....2...#","##########"],"you":1}` + "\n")
	ctx := context.Background()
	for _, frozen := range []bool{false, true} {
		name := "let-run"
		if frozen {
			name = "one-frozen"
		}
		b.Run(name, func(b *testing.B) {
			var bots [2]*sandbox.Container
			for k := range bots {
				c, err := d.Start(ctx, sandbox.Spec{Image: img, MatchID: "bench", BotID: fmt.Sprint("echo", k), MaxMessageBytes: 1 << 20})
				if err != nil {
					b.Fatal(err)
				}
				defer c.Close(context.Background())
				c.FreezeAtAnswers(frozen && k == 0)
				bots[k] = c
			}
			turn := func() {
				var wg sync.WaitGroup
				for _, c := range bots {
					wg.Go(func() {
						if _, _, ok := c.AnswerFigures(); !ok || !c.Frozen() {
							c.CPUTime()
						}
						c.Thaw()
						deadline := time.Now().Add(5 * time.Second)
						if err := c.Send(line, deadline); err != nil {
							b.Error(err)
							return
						}
						if _, err := c.Receive(ctx, deadline); err != nil {
							b.Error(err)
							return
						}
						if c.FiguresAfterAnswers() {
							c.CPUTime()
							return
						}
						c.Sample()
						c.MemPeak()
					})
				}
				wg.Wait()
				for _, c := range bots {
					if _, _, ok := c.AnswerFigures(); c.FiguresAfterAnswers() && !ok {
						c.Sample()
						c.MemPeak()
					}
				}
			}
			for i := 0; i < 200; i++ { // warm up
				turn()
			}
			for b.Loop() {
				turn()
			}
		})
	}
}
