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
	"arena/dispatch/natsd"
	"arena/dispatch/trust"
	"arena/matches"
	"arena/orchestrator"
)

// natsSide is the server's side of NATS: a client, the embedded server
// it runs unless ARENA_NATS names a cluster, and the dispatcher that
// plays the queue's matches on the workers.
type natsSide struct {
	nc       *nats.Conn
	embedded *natsd.Embedded
	disp     *dispatch.Dispatcher
	// remote: workers on other hosts may take matches.
	remote bool
}

// startNATS connects the server to NATS (the embedded server, JetStream
// under the data folder, unless cfg.NATS is set) and sets the work queue
// up. dc is the dispatcher's part that is the server's (Pin, Images,
// Logic, VerifyLogic, Own).
func startNATS(ctx context.Context, cfg Config, log *zap.Logger, dc dispatch.DispatcherConfig) (*natsSide, error) {
	n := &natsSide{remote: cfg.NATS != "" || cfg.NATSListen != ""}
	var err error
	if cfg.NATS != "" {
		n.nc, err = trust.Dial(cfg.NATS, "arena serve", trust.DialOptions{CAFile: cfg.NATSCA})
	} else {
		// Every client but this process authenticates: the workers that
		// joined with a token (arena join-token), over TLS.
		var tr *trust.Trust
		tr, err = trust.OpenTrust(trustDir(cfg.Data))
		if err == nil && (cfg.NATSCert == "") != (cfg.NATSKey == "") {
			err = errors.New("ARENA_NATS_CERT and ARENA_NATS_KEY go together: set both, or neither")
		}
		if err == nil {
			err = tr.UseCertificate(cfg.NATSCert, cfg.NATSKey)
		}
		if err == nil {
			host, _ := os.Hostname()
			n.embedded, err = natsd.Start(natsd.Node{Name: "arena-" + trust.SafeWorkerName(host), Dir: filepath.Join(cfg.Data, "nats"),
				Listen: cfg.NATSListen, Trust: tr, Log: log.Named("nats")})
		}
		if err == nil {
			n.nc, err = n.embedded.Connect("arena serve")
		}
	}
	if err != nil {
		n.close()
		return nil, platformErr(err)
	}
	setup := dispatch.Config{Lease: cfg.NATSLease, MaxDeliveries: cfg.NATSDeliveries, Replicas: cfg.NATSReplicas}
	js, err := jetstream.New(n.nc)
	if err == nil {
		// A cluster that is just starting has no JetStream leader yet.
		sctx, cancel := context.WithTimeout(ctx, time.Minute)
		for {
			actx, cancelTry := context.WithTimeout(sctx, 10*time.Second)
			err = dispatch.Setup(actx, js, setup)
			cancelTry()
			if err == nil || sctx.Err() != nil {
				break
			}
			log.Info("nats not ready, trying again", zap.Error(err))
			time.Sleep(time.Second)
		}
		cancel()
	}
	dc.Name, dc.Log, dc.Setup, dc.BucketBytes = "server", log.Named("dispatch"), &setup, cfg.WorkerBucketBytes
	if err == nil {
		// Workers' big replays are checked into files beside the replays
		// (the same file system: kept by a rename), never into memory. What
		// a server that stopped left there is not a result of this one.
		dc.Spool = filepath.Join(cfg.Data, "incoming")
		if err = os.RemoveAll(dc.Spool); err == nil {
			err = os.MkdirAll(dc.Spool, 0o700)
		}
	}
	if err == nil {
		if e := n.embedded; e != nil {
			dc.Quarantine = func(worker, why string) {
				if err := e.Quarantine(worker, why); err != nil {
					log.Error("quarantine a worker", zap.String("worker", worker), zap.Error(err))
				}
			}
		}
		n.disp, err = dispatch.NewDispatcherWith(ctx, n.nc, dc)
	}
	if err != nil {
		n.close()
		return nil, platformErr(fmt.Errorf("nats: %w", err))
	}
	return n, nil
}

// inFlight is the most matches the server's queue hands to NATS at once
// (it hands as many as the workers report slots, up to this).
func (n *natsSide) inFlight(cfg Config) int {
	switch {
	case cfg.NATSInFlight > 0:
		return cfg.NATSInFlight
	case n.remote:
		return 64
	default:
		return max(1, cfg.Concurrency, cfg.ConcurrencyMax)
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
func localWorker(ctx context.Context, nc *nats.Conn, name string, concurrency, most int, player matches.Player, reap func(context.Context, string) error, log *zap.Logger) (stop func(), err error) {
	w, err := dispatch.NewWorker(nc, dispatch.WorkerConfig{
		Name: name, Concurrency: concurrency, MaxConcurrency: most, Games: games(), Player: player, Reap: reap, Log: log.Named("worker"),
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

// trustDir is where arena serve keeps its NATS trust: the CA, the
// server's certificate, the join secret and the joined workers.
func trustDir(data string) string { return filepath.Join(data, "nats-trust") }

// cmdNATS runs one node of a NATS cluster (JetStream on): what arena's
// tests and small installations use where no NATS image is at hand. Its
// users, their permissions and TLS come from a NATS configuration file.
func cmdNATS(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "authorization" {
		return cmdNATSAuthorization(args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "tls" {
		return cmdNATSTLS(args[1:], stdout, stderr)
	}
	fs := flag.NewFlagSet("arena nats", flag.ContinueOnError)
	fs.SetOutput(stderr)
	vals := registerFor(fs, "nats")
	noAdvertise := fs.Bool("no-advertise", false, "do not tell clients the other nodes' addresses: they reconnect only to the URLs they were given")
	fs.Usage = func() {
		fmt.Fprint(stderr, `Usage: arena nats --config FILE [flags]
       arena nats authorization --server NAME=PASSWORD --worker NAME=PASSWORD ...
       arena nats tls --dir DIR --names HOST,HOST...

Runs a NATS server with JetStream, alone or as a node of a cluster. Its
users and their permissions come from the configuration file (NATS's own
format), which must give some: no client connects without one, and a
cluster port needs a route password (cluster { authorization { ... } }).
arena nats authorization prints that file's authorization block with
Arena's permissions for a server and each worker; arena nats tls makes a
CA and the nodes' certificate and prints the tls block (clients check the
nodes with its ca.crt: ARENA_NATS_CA).

Flags:
`)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageErr("%v (see arena nats -h)", err)
	}
	cfg, err := loadOnly(vals)
	if err != nil {
		return usageErr("%v", err)
	}
	n := cfg.Node
	if n.Config == "" {
		return usageErr("arena nats needs --config FILE (ARENA_NATS_CONFIG) with its users: print them with arena nats authorization (see arena nats -h)")
	}
	ns, err := natsd.Start(natsd.Node{Name: n.Name, Dir: n.Data, Listen: n.Listen, Config: n.Config, Cluster: n.Cluster, Routes: n.Routes, NoAdvertise: *noAdvertise})
	if err != nil {
		return platformErr(err)
	}
	fmt.Fprintf(stderr, "arena: nats %s listening on %s\n", n.Name, n.Listen)
	<-ctx.Done()
	ns.Stop()
	return nil
}

// cmdNATSAuthorization prints the authorization block of an arena nats
// (or any NATS server's) configuration for a server's and workers' users.
func cmdNATSAuthorization(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("arena nats authorization", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var users []trust.NATSUser
	add := func(worker bool) func(string) error {
		return func(v string) error {
			name, pass, ok := strings.Cut(v, "=")
			if !ok || name == "" || pass == "" {
				return errors.New("want NAME=PASSWORD")
			}
			if worker {
				if err := trust.JoinableName(name); err != nil {
					return err
				}
			}
			users = append(users, trust.NATSUser{Name: name, Password: pass, Worker: worker})
			return nil
		}
	}
	fs.Func("server", "a server's user (arena serve --nats, arena bench --nats), NAME=PASSWORD: every permission", add(false))
	fs.Func("worker", "a worker's user, NAME=PASSWORD: a worker's permissions; NAME is also its --name", add(true))
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageErr("%v (see arena nats -h)", err)
	}
	if len(users) == 0 {
		return usageErr("give at least one --server or --worker NAME=PASSWORD")
	}
	fmt.Fprint(stdout, trust.AuthorizationConf(users))
	return nil
}

// cmdNATSTLS makes a CA and a server certificate for NATS nodes (kept in
// a folder, reused when run again) and prints the tls block of their
// configuration.
func cmdNATSTLS(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("arena nats tls", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("dir", "arena-nats-tls", "folder of the CA and the certificate (made if missing; keep it private)")
	names := fs.String("names", "", "comma-separated host names and addresses the nodes are dialled by (localhost and 127.0.0.1 always)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageErr("%v (see arena nats -h)", err)
	}
	var ns []string
	for _, n := range strings.Split(*names, ",") {
		if n = strings.TrimSpace(n); n != "" {
			ns = append(ns, n)
		}
	}
	abs, err := filepath.Abs(*dir)
	if err != nil {
		return platformErr(err)
	}
	t, err := trust.OpenTrust(abs, ns...)
	if err != nil {
		return platformErr(err)
	}
	fmt.Fprintf(stdout, "tls {\n  cert_file: %q\n  key_file: %q\n}\n", t.CertFile(), t.KeyFile())
	fmt.Fprintf(stderr, "arena: clients check the nodes against %s (ARENA_NATS_CA, or --nats-ca)\n", t.CAFile())
	return nil
}

// benchDispatcher plays a bench's matches on the workers of a NATS
// cluster, each pinned to this engine's images first (orchestrator.Pin);
// it sets the work queue up (with the defaults) when no server did.
func benchDispatcher(ctx context.Context, urls string, orch *orchestrator.Orchestrator, log *zap.Logger) (matches.Player, func(), error) {
	nc, err := trust.Dial(urls, "arena bench", trust.DialOptions{CAFile: settingValue("ARENA_NATS_CA")})
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
		disp, err = dispatch.NewDispatcherWith(ctx, nc, dispatch.DispatcherConfig{Name: name, Log: log.Named("dispatch"),
			// A logic game's results are believed once its logic, played
			// again here, reproduces them.
			VerifyLogic: orch.VerifyHosted})
	}
	if err != nil {
		nc.Close()
		return nil, nil, fmt.Errorf("nats %s: %w", urls, err)
	}
	return pinnedPlayer{orch, disp}, func() {
		disp.Close()
		_ = js.DeleteConsumer(context.WithoutCancel(ctx), dispatch.EventsStream, name)
		nc.Close()
	}, nil
}

// pinnedPlayer plays matches on another player (the workers) once the
// orchestrator pinned them to this engine's images.
type pinnedPlayer struct {
	orch *orchestrator.Orchestrator
	matches.Player
}

func (p pinnedPlayer) Play(ctx context.Context, req matches.Request) (*matches.Replay, error) {
	req, err := p.orch.Pin(ctx, req, true)
	if err != nil {
		return nil, err
	}
	return p.Player.Play(ctx, req)
}
