package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"time"

	"arena/dispatch"
	"arena/orchestrator"
	"arena/sandbox"
)

func workerFlags(out io.Writer) (*flag.FlagSet, map[string]*string, *workerOpts) {
	fs := flag.NewFlagSet("arena worker", flag.ContinueOnError)
	fs.SetOutput(out)
	vals := register(fs, false)
	o := &workerOpts{}
	host, _ := os.Hostname()
	fs.StringVar(&o.nats, "nats", envOr("ARENA_NATS", ""), "comma-separated URLs of the NATS servers (env ARENA_NATS)")
	fs.StringVar(&o.concurrency, "concurrency", envOr("ARENA_CONCURRENCY", ""), "matches played at once (default: half the CPUs, at least 1) (env ARENA_CONCURRENCY)")
	fs.StringVar(&o.name, "name", envOr("ARENA_WORKER_NAME", fmt.Sprintf("%s-%d", host, os.Getpid())), "the worker's name in match records (env ARENA_WORKER_NAME)")
	fs.DurationVar(&o.grace, "grace", 0, "on SIGINT or SIGTERM, how long running matches may finish before they are handed back")
	fs.BoolVar(&o.pull, "pull-missing", os.Getenv("ARENA_PULL") == "missing", "pull a match's image when it is not here (env ARENA_PULL=missing)")
	fs.Usage = func() {
		fmt.Fprint(out, `Usage: arena worker --nats URL[,URL…] [flags]

Plays matches for an arena serve on other hosts: takes them from the
NATS JetStream work queue, plays each on this host's Docker engine in the
same sandbox as arena serve, streams its frames back live and reports the
result and the replay. Each bot plays the exact image the server pinned;
a match whose image is not here is handed back with the reason. On SIGINT
or SIGTERM the worker takes no more matches, lets running ones finish for
--grace and hands the others back.

Flags (each also read from its ARENA_* environment variable):
`)
		fs.PrintDefaults()
	}
	return fs, vals, o
}

type workerOpts struct {
	nats, concurrency, name string
	grace                   time.Duration
	pull                    bool
}

func cmdWorker(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, vals, o := workerFlags(stderr)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageErr("%v (see arena help worker)", err)
	}
	if fs.NArg() > 0 {
		return usageErr("worker takes no arguments, got %q", fs.Args())
	}
	if o.nats == "" {
		return usageErr("no NATS to take matches from: give --nats nats://HOST:4222 (or ARENA_NATS)")
	}
	n := max(1, runtime.NumCPU()/2)
	if o.concurrency != "" {
		var err error
		if n, err = strconv.Atoi(o.concurrency); err != nil || n < 1 {
			return usageErr("setting --concurrency / ARENA_CONCURRENCY = %q: must be at least 1", o.concurrency)
		}
	}
	cfg, err := load(vals)
	if err != nil {
		return usageErr("%v", err)
	}
	log := newLogger(cfg.LogLevel, stderr)
	defer log.Sync()

	extra := []sandbox.Option{sandbox.WithPool(cfg.Pool, poolIdle)}
	if o.pull {
		extra = append(extra, sandbox.WithPullMissing())
	}
	cli, d, _, err := sandboxes(ctx, cfg, log, stderr, false, extra...)
	if err != nil {
		return err
	}
	defer cli.Close()
	defer d.Close(context.WithoutCancel(ctx))
	owner, err := sandbox.Self()
	if err != nil {
		return platformErr(err)
	}
	janitor := newJanitor(cli, owner, cfg.StdioDir, log)

	nc, err := dispatch.Dial(o.nats, "arena worker "+o.name)
	if err != nil {
		return platformErr(err)
	}
	defer nc.Close()
	w, err := dispatch.NewWorker(nc, dispatch.WorkerConfig{
		Name: o.name, Concurrency: n, Games: games(), Grace: o.grace, Log: log,
		Player: orchestrator.New(orchestrator.Docker(d), orchestrator.WithLogger(log)),
		Reap: func(ctx context.Context, id string) error {
			_, err := janitor.RemoveLostMatch(ctx, id)
			return err
		},
	})
	if err != nil {
		return platformErr(err)
	}
	fmt.Fprintf(stderr, "arena: worker %s taking matches from %s (%d at a time)\n", o.name, o.nats, n)
	if err := w.Run(ctx); err != nil {
		return platformErr(err)
	}
	fmt.Fprintf(stderr, "arena: worker %s stopped\n", o.name)
	return nil
}
