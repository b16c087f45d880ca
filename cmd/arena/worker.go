package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/client"
	"github.com/nats-io/nats.go"
	"go.uber.org/zap"

	"arena/dispatch"
	"arena/dispatch/trust"
	"arena/orchestrator"
	"arena/sandbox"
)

func workerFlags(out io.Writer) (*flag.FlagSet, map[string]*string, *workerOpts) {
	fs := flag.NewFlagSet("arena worker", flag.ContinueOnError)
	fs.SetOutput(out)
	vals := register(fs, false)
	// The settings a worker shares with serve, and its own, from the
	// same table.
	maps.Copy(vals, registerOnly(fs, workerSettings...))
	maps.Copy(vals, registerFor(fs, "worker"))
	o := &workerOpts{}
	fs.DurationVar(&o.grace, "grace", 0, "on SIGINT or SIGTERM, how long running matches may finish before they are handed back")
	fs.BoolVar(&o.pull, "pull-missing", false, "the same as --pull missing")
	fs.Usage = func() {
		fmt.Fprint(out, `Usage: arena worker --nats URL[,URL…] --join TOKEN [flags]
       arena worker --nats nats://NAME:PASSWORD@HOST:4222 [flags]    (an external cluster)

Plays matches for an arena serve on other hosts: takes them from the
NATS JetStream work queue, plays each on this host's Docker engine in the
same sandbox as arena serve, streams its frames back live and reports the
result and the replay. Each bot plays the exact image the server pinned;
a match whose image is not here is handed back with the reason. On SIGINT
or SIGTERM the worker takes no more matches, lets running ones finish for
--grace and hands the others back.

With arena serve's embedded NATS, a worker joins once with the token
that arena join-token prints on the server; it then keeps a key of its
own (in --data) and connects with it, over TLS to the server whose CA
the token pinned. A refused token or key ends the worker with exit 1.
With an external cluster, its user's name and password go in the URL
(ARENA_NATS, to keep them out of the process list), and the user's name
is the worker's --name (see arena nats authorization).

Flags (each also read from its ARENA_* environment variable):
`)
		fs.PrintDefaults()
	}
	return fs, vals, o
}

// workerSettings are the settings of the table (config.go) a worker
// reads besides every command's: where NATS is, its data folder (for its
// key), how many matches it plays at once and its pull policy.
var workerSettings = []string{"nats", "nats-ca", "data", "concurrency", "concurrency-max", "pull"}

type workerOpts struct {
	nats, name string
	join, data string
	ca         string
	grace      time.Duration
	pull       bool
}

func cmdWorker(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, vals, o := workerFlags(stderr)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageErr("%v (see arena help worker)", err)
	}
	tuneGC()
	surviveBrokenPipes()
	if fs.NArg() > 0 {
		return usageErr("worker takes no arguments, got %q", fs.Args())
	}
	cfg, err := load(vals)
	if err != nil {
		return usageErr("%v", err)
	}
	o.nats, o.ca, o.data, o.name, o.join = cfg.NATS, cfg.NATSCA, cfg.Data, cfg.WorkerName, cfg.Join
	o.pull = o.pull || cfg.Pull == "missing"
	if o.nats == "" {
		return usageErr("no NATS to take matches from: give --nats nats://HOST:4222 (or ARENA_NATS)")
	}
	n := cfg.Concurrency
	if n < 1 {
		return usageErr("setting --concurrency / ARENA_CONCURRENCY = %d: a worker plays at least 1 match at a time", n)
	}
	_, most, err := cfg.slotRange()
	if err != nil {
		return usageErr("%v", err)
	}
	log := newLogger(cfg.LogLevel, stderr)
	defer log.Sync()
	// NATS first: a refused token or key ends the worker before anything
	// starts.
	nc, err := dialWorker(ctx, o)
	if err != nil {
		return err
	}
	defer nc.Close()

	extra := []sandbox.Option{sandbox.WithPool(cfg.Pool, poolIdle), sandbox.WithPoolMax(cfg.PoolMax)}
	if o.pull {
		extra = append(extra, sandbox.WithPullMissing())
	}
	cli, d, _, err := sandboxes(ctx, cfg, log, stderr, false, extra...)
	if err != nil {
		return err
	}
	defer cli.Close()
	defer d.Close(context.WithoutCancel(ctx))
	// Told to stop, the warm containers go at once, while the matches
	// end (the deferred Close waits for them).
	defer context.AfterFunc(ctx, func() { d.Close(context.WithoutCancel(ctx)) })()
	owner, err := sandbox.Self()
	if err != nil {
		return platformErr(err)
	}
	janitor := newJanitor(cli, owner, cfg.StdioDir, log)

	// A key revoked, or the worker quarantined, while it runs: NATS
	// closes the connection, and the worker stops.
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	// What NATS reports on the connection goes to the log, not straight
	// to stderr.
	nc.SetErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
		log.Warn("nats", zap.Error(err))
	})
	nc.SetClosedHandler(func(c *nats.Conn) {
		stop(fmt.Errorf("NATS closed the connection (the worker's key revoked, or the worker quarantined?): %v", c.LastError()))
	})
	w, err := dispatch.NewWorker(nc, dispatch.WorkerConfig{
		Name: o.name, Concurrency: n, MaxConcurrency: most, Games: games(), Grace: o.grace, Log: log,
		Spool:  filepath.Join(o.data, "outgoing"),
		Player: orchestrator.New(orchestrator.Docker(d), cfg.Orchestrator(log)...),
		Images: engineImages{cli},
		Reap: func(ctx context.Context, id string) error {
			_, err := janitor.RemoveLostMatch(ctx, id)
			return err
		},
	})
	if err != nil {
		return platformErr(err)
	}
	fmt.Fprintf(stderr, "arena: worker %s taking matches from %s (%d at a time)\n", o.name, trust.Redact(o.nats), n)
	if err := w.Run(ctx); err != nil {
		return platformErr(err)
	}
	if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) {
		return platformErr(cause)
	}
	fmt.Fprintf(stderr, "arena: worker %s stopped\n", o.name)
	return nil
}

// dialWorker connects the worker to NATS: with its own key when it has
// joined (joining first with --join when it has not), else as the user
// an external cluster's URL names. It sets o.name.
func dialWorker(ctx context.Context, o *workerOpts) (*nats.Conn, error) {
	creds, err := trust.LoadCredentials(o.data)
	if err != nil {
		return nil, platformErr(err)
	}
	if creds == nil && o.join == "" {
		// An external cluster: its user is the worker.
		if o.name == "" {
			host, _ := os.Hostname()
			o.name = trust.SafeWorkerName(fmt.Sprintf("%s-%d", host, os.Getpid()))
		}
		if err := trust.ValidWorkerName(o.name); err != nil {
			return nil, usageErr("%v", err)
		}
		nc, err := trust.DialChecked(ctx, o.nats, "arena worker "+o.name, trust.DialOptions{Inbox: trust.WorkerInbox(o.name), CAFile: o.ca})
		if errors.Is(err, trust.ErrRefused) {
			return nil, platformErr(fmt.Errorf("NATS refused worker %s (to join arena serve's NATS, give --join TOKEN; on an external cluster, its user and password in the URL): %w", o.name, err))
		}
		if err != nil {
			return nil, platformErr(err)
		}
		return nc, nil
	}
	if o.name == "" {
		if creds != nil {
			o.name = creds.Name
		} else {
			host, _ := os.Hostname()
			o.name = trust.SafeWorkerName(host)
		}
	}
	if err := trust.ValidWorkerName(o.name); err != nil {
		return nil, usageErr("%v", err)
	}
	join := func() error {
		tok, err := trust.ParseToken(o.join)
		if err != nil {
			return usageErr("--join / ARENA_JOIN: %v", err)
		}
		if creds, err = trust.Join(ctx, o.nats, tok, o.name, o.data); err != nil {
			return platformErr(fmt.Errorf("worker %s could not join: %w", o.name, err))
		}
		return nil
	}
	if creds == nil || creds.Name != o.name {
		if o.join == "" {
			return nil, usageErr("worker %s has not joined (its key in %s is %s's): give --join TOKEN (print one on the server with arena join-token)", o.name, o.data, creds.Name)
		}
		if err := join(); err != nil {
			return nil, err
		}
	}
	nc, err := trust.DialWorker(ctx, o.nats, creds)
	if errors.Is(err, trust.ErrRefused) && o.join != "" {
		// Its key is no longer known (revoked, or a server started
		// afresh): join again with the token.
		if jerr := join(); jerr != nil {
			return nil, jerr
		}
		nc, err = trust.DialWorker(ctx, o.nats, creds)
	}
	if err != nil {
		return nil, platformErr(err)
	}
	return nc, nil
}

// engineImages is the engine's images as Arena uses them: a worker's, as
// the dispatcher fetches pushed bots into it (dispatch.ImageStore); a
// server's, as it pulls pushed bots by digest (platform.EngineImages, in
// serve.go).
type engineImages struct{ cli *client.Client }

func (e engineImages) Has(ctx context.Context, id string) bool {
	_, err := e.cli.ImageInspect(ctx, id)
	return err == nil
}

func (e engineImages) Load(ctx context.Context, r io.Reader) error {
	resp, err := e.cli.ImageLoad(ctx, r, client.ImageLoadWithQuiet(true))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	return sandbox.PullProgress(resp.Body)
}

// A worker tags the images it fetched (under dispatch.FetchedRepo) and
// removes them by those tags once idle, with Remove (serve.go): one tag
// removed, not forced.
var _ dispatch.ImageStore = engineImages{}

func (e engineImages) Tag(ctx context.Context, id, ref string) error {
	return e.cli.ImageTag(ctx, id, ref)
}

func (e engineImages) Fetched(ctx context.Context) ([]dispatch.FetchedImage, error) {
	list, err := e.cli.ImageList(ctx, image.ListOptions{})
	if err != nil {
		return nil, err
	}
	var out []dispatch.FetchedImage
	for _, im := range list {
		var refs []string
		for _, t := range im.RepoTags {
			if strings.HasPrefix(t, dispatch.FetchedRepo+":") {
				refs = append(refs, t)
			}
		}
		if len(refs) > 0 {
			out = append(out, dispatch.FetchedImage{ID: im.ID, Refs: refs})
		}
	}
	return out, nil
}
