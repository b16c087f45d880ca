package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap"

	"arena/dispatch"
	"arena/orchestrator"
)

// natsSide is the server's side of NATS: a client, the embedded server
// it runs unless ARENA_NATS names a cluster, and the dispatcher that
// plays the queue's matches on the workers.
type natsSide struct {
	nc       *nats.Conn
	embedded *dispatch.Embedded
	disp     *dispatch.Dispatcher
	// remote: workers on other hosts may take matches.
	remote bool
}

// startNATS connects the server to NATS (the embedded server, JetStream
// under the data folder, unless cfg.NATS is set) and sets the work queue
// up. pin resolves a bot's image to its id.
func startNATS(ctx context.Context, cfg Config, log *zap.Logger, pin func(context.Context, string) (string, error)) (*natsSide, error) {
	n := &natsSide{remote: cfg.NATS != "" || cfg.NATSListen != ""}
	var err error
	if cfg.NATS != "" {
		n.nc, err = dispatch.Dial(cfg.NATS, "arena serve")
	} else {
		host, _ := os.Hostname()
		n.embedded, err = dispatch.Start(dispatch.Node{Name: "arena-" + host, Dir: filepath.Join(cfg.Data, "nats"), Listen: cfg.NATSListen})
		if err == nil {
			n.nc, err = n.embedded.Connect("arena serve")
		}
	}
	if err != nil {
		n.close()
		return nil, platformErr(err)
	}
	js, err := jetstream.New(n.nc)
	if err == nil {
		// A cluster that is just starting has no JetStream leader yet.
		sctx, cancel := context.WithTimeout(ctx, time.Minute)
		for {
			actx, cancelTry := context.WithTimeout(sctx, 10*time.Second)
			err = dispatch.Setup(actx, js, dispatch.Config{Lease: cfg.NATSLease, MaxDeliveries: cfg.NATSDeliveries, Replicas: cfg.NATSReplicas})
			cancelTry()
			if err == nil || sctx.Err() != nil {
				break
			}
			log.Info("nats not ready, trying again", zap.Error(err))
			time.Sleep(time.Second)
		}
		cancel()
	}
	if err == nil {
		n.disp, err = dispatch.NewDispatcher(ctx, n.nc, "server", pin, log.Named("dispatch"))
	}
	if err != nil {
		n.close()
		return nil, platformErr(fmt.Errorf("nats: %w", err))
	}
	return n, nil
}

// inFlight is how many matches the server's queue hands to NATS at once.
func (n *natsSide) inFlight(cfg Config) int {
	switch {
	case cfg.NATSInFlight > 0:
		return cfg.NATSInFlight
	case n.remote:
		return 64
	default:
		return max(1, cfg.Concurrency)
	}
}

func (n *natsSide) close() {
	if n.disp != nil {
		n.disp.Close()
	}
	if n.nc != nil {
		n.nc.Close()
	}
	if n.embedded != nil {
		n.embedded.Stop()
	}
}

// localWorker plays matches of the work queue in this process.
func localWorker(ctx context.Context, nc *nats.Conn, name string, concurrency int, player orchestrator.Player, reap func(context.Context, string) error, log *zap.Logger) (stop func(), err error) {
	w, err := dispatch.NewWorker(nc, dispatch.WorkerConfig{
		Name: name, Concurrency: concurrency, Games: games(), Player: player, Reap: reap, Log: log.Named("worker"),
	})
	if err != nil {
		return nil, err
	}
	wctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := w.Run(wctx); err != nil {
			log.Error("worker", zap.Error(err))
		}
	}()
	return func() { cancel(); <-done }, nil
}

// cmdNATS runs one node of a NATS cluster (JetStream on): what arena's
// tests and small installations use where no NATS image is at hand.
func cmdNATS(ctx context.Context, args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("arena nats", flag.ContinueOnError)
	fs.SetOutput(stderr)
	name := fs.String("name", envOr("ARENA_NATS_NAME", "arena-nats"), "server name, unique in the cluster (env ARENA_NATS_NAME)")
	listen := fs.String("listen", envOr("ARENA_NATS_LISTEN", "0.0.0.0:4222"), "HOST:PORT for clients (env ARENA_NATS_LISTEN)")
	cluster := fs.String("cluster", envOr("ARENA_NATS_CLUSTER", ""), "HOST:PORT for the other nodes; empty: a single server (env ARENA_NATS_CLUSTER)")
	routes := fs.String("routes", envOr("ARENA_NATS_ROUTES", ""), "comma-separated nats-route://HOST:PORT of the other nodes (env ARENA_NATS_ROUTES)")
	data := fs.String("data", envOr("ARENA_DATA", "arena-nats-data"), "folder of JetStream's files (env ARENA_DATA)")
	noAdvertise := fs.Bool("no-advertise", false, "do not tell clients the other nodes' addresses: they reconnect only to the URLs they were given")
	fs.Usage = func() {
		fmt.Fprint(stderr, "Usage: arena nats [flags]\n\nRuns a NATS server with JetStream, alone or as a node of a cluster.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageErr("%v (see arena nats -h)", err)
	}
	var rs []string
	for _, r := range strings.Split(*routes, ",") {
		if r = strings.TrimSpace(r); r != "" {
			rs = append(rs, r)
		}
	}
	ns, err := dispatch.Start(dispatch.Node{Name: *name, Dir: *data, Listen: *listen, Cluster: *cluster, Routes: rs, NoAdvertise: *noAdvertise})
	if err != nil {
		return platformErr(err)
	}
	fmt.Fprintf(stderr, "arena: nats %s listening on %s\n", *name, *listen)
	<-ctx.Done()
	ns.Stop()
	return nil
}

func envOr(key, def string) string {
	if v, ok := os.LookupEnv(key); ok {
		return v
	}
	return def
}

// benchDispatcher plays a bench's matches on the workers of a NATS
// cluster; it sets the work queue up (with the defaults) when no server
// did.
func benchDispatcher(ctx context.Context, urls string, orch *orchestrator.Orchestrator, log *zap.Logger) (*dispatch.Dispatcher, func(), error) {
	nc, err := dispatch.Dial(urls, "arena bench")
	if err != nil {
		return nil, nil, err
	}
	js, err := jetstream.New(nc)
	if err == nil {
		if _, serr := js.Stream(ctx, dispatch.MatchesStream); errors.Is(serr, jetstream.ErrStreamNotFound) {
			err = dispatch.Setup(ctx, js, dispatch.Config{})
		}
	}
	var disp *dispatch.Dispatcher
	name := fmt.Sprintf("bench-%d", os.Getpid())
	if err == nil {
		disp, err = dispatch.NewDispatcher(ctx, nc, name, func(ctx context.Context, ref string) (string, error) {
			img, err := orch.Image(ctx, ref)
			return img.ID, err
		}, log.Named("dispatch"))
	}
	if err != nil {
		nc.Close()
		return nil, nil, fmt.Errorf("nats %s: %w", urls, err)
	}
	return disp, func() {
		disp.Close()
		_ = js.DeleteConsumer(context.WithoutCancel(ctx), dispatch.EventsStream, name)
		nc.Close()
	}, nil
}
