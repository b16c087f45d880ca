package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/client"
	"go.uber.org/zap"

	"arena/accounts"
	"arena/dispatch"
	"arena/dispatch/trust"
	"arena/engine"
	"arena/internal/errs"
	"arena/matches"
	"arena/metrics"
	"arena/orchestrator"
	"arena/platform"
	"arena/sandbox"
	"arena/store"
	"arena/web"
	"arena/webhook"
)

// defaultBots are the page's suggestions: the example bots.
var defaultBots = map[string][]string{
	"tanks":  {"arena/tanks-random", "arena/tanks-hunter"},
	"snake":  {"arena/snake-greedy", "arena/snake-random"},
	"pacman": {"arena/pacman-runner", "arena/pacman-ghosts"},
}

func serveFlags(out io.Writer) (*flag.FlagSet, map[string]*string) {
	fs := flag.NewFlagSet("arena serve", flag.ContinueOnError)
	fs.SetOutput(out)
	vals := register(fs, true)
	fs.Usage = func() {
		fmt.Fprint(out, `Usage: arena serve [flags]

Serves the web page and the API: open http://HOST:PORT, type bot image
names, press Start and watch. Matches wait in a queue and run a few at a
time; the history (SQLite) and the replays live in the data folder. Only
images present on the engine are accepted unless pulling is enabled, and
local (exec:) bots are never available here. On SIGINT or SIGTERM the
server stops taking matches, cancels (or finishes) the running ones and
removes their containers.

Each game has a ladder: bots registered on the page (or POST
/api/ladders/GAME/entries) play rated matches by themselves while the
server runs and two entries or more are active, in the same queue as the
matches started by hand, which go first (ARENA_LADDER=off stops them).

Flags (each also read from its ARENA_* environment variable):
`)
		fs.PrintDefaults()
	}
	return fs, vals
}

func cmdServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, vals := serveFlags(stderr)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageErr("%v (see arena help serve)", err)
	}
	tuneGC()
	surviveBrokenPipes()
	if fs.NArg() > 0 {
		return usageErr("serve takes no arguments, got %q", fs.Args())
	}
	cfg, err := load(vals)
	if err != nil {
		return usageErr("%v", err)
	}
	_, most, err := cfg.slotRange()
	if err != nil {
		return usageErr("%v", err)
	}
	if cfg.Concurrency == 0 && cfg.NATS == "" && cfg.NATSListen == "" {
		return usageErr("setting --concurrency / ARENA_CONCURRENCY = 0 leaves every match to workers of other hosts, which need a way in: set ARENA_NATS_LISTEN (or ARENA_NATS)")
	}
	log := newLogger(cfg.LogLevel, stderr)
	defer log.Sync()
	sv := &serving{cfg: cfg, most: most, log: log, stderr: stderr}
	defer sv.close()
	// Each part in turn, on what the ones before made.
	for _, start := range []func(context.Context) error{sv.openStore, sv.startSandbox, sv.startDispatch, sv.startPlatform, sv.startWeb} {
		if err := start(ctx); err != nil {
			return err
		}
	}
	return sv.serve(ctx)
}

// serving is a server's parts as cmdServe makes them, by concern: the
// store (with the accounts and the port), the sandbox (the engine, the
// janitor, the orchestrator), dispatch (NATS, this host's worker), the
// platform (with the registry, the builder and the games), and web.
// What each part opens is closed, in reverse, by close.
type serving struct {
	cfg    Config
	most   int
	log    *zap.Logger
	stderr io.Writer
	closes []func()

	host, addr string
	st         *store.Store
	auth       string
	accts      *accounts.Service
	listener   net.Listener

	cli     *client.Client
	d       *sandbox.Docker
	owner   sandbox.Owner
	janitor *sandbox.Janitor
	orch    *orchestrator.Orchestrator
	met     *metrics.Set

	ns         *natsSide
	built      atomic.Pointer[platform.Platform]
	stopWorker func()

	pf        *platform.Platform
	logicImgs *logicImages
	srv       *web.Server
}

// onClose has f run when the server closes, before what came earlier.
func (sv *serving) onClose(f func()) { sv.closes = append(sv.closes, f) }

// close closes what the parts opened, the last first.
func (sv *serving) close() {
	for i := len(sv.closes) - 1; i >= 0; i-- {
		sv.closes[i]()
	}
}

// openStore opens the data folder first, then the port: a second server
// on the same folder or port stops here, before it touches any
// container.
func (sv *serving) openStore(ctx context.Context) error {
	cfg := sv.cfg
	sv.addr = net.JoinHostPort(cfg.Host, strconv.Itoa(cfg.Port))
	sv.host, _ = os.Hostname()
	st, err := store.Open(cfg.Data, fmt.Sprintf("arena serve (pid %d on %s, http://%s)", os.Getpid(), sv.host, sv.addr))
	if err != nil {
		return platformErr(err)
	}
	sv.st = st
	sv.onClose(func() { st.Close() })
	if sv.auth, sv.accts, err = startAccounts(ctx, cfg, st, sv.log, sv.stderr); err != nil {
		return err
	}
	if sv.listener, err = net.Listen("tcp", sv.addr); err != nil {
		return platformErr(fmt.Errorf("listen on %s: %w", sv.addr, err))
	}
	sv.onClose(func() { sv.listener.Close() })
	return nil
}

// startSandbox connects to the engine (local bots are never reachable
// from the web), with the warm pool, the janitor and the orchestrator.
func (sv *serving) startSandbox(ctx context.Context) error {
	cfg, log := sv.cfg, sv.log
	extra := []sandbox.Option{sandbox.WithPool(cfg.Pool, poolIdle), sandbox.WithPoolMax(cfg.PoolMax)}
	if cfg.Pull == "missing" {
		extra = append(extra, sandbox.WithPullMissing())
	}
	cli, d, _, err := sandboxes(ctx, cfg, log, sv.stderr, false, extra...)
	if err != nil {
		return err
	}
	sv.cli, sv.d = cli, d
	sv.onClose(func() { cli.Close() })
	sv.onClose(func() { d.Close(context.WithoutCancel(ctx)) })
	// Told to stop, the warm containers go at once, while the matches
	// end (the Close above waits for them).
	stop := context.AfterFunc(ctx, func() { d.Close(context.WithoutCancel(ctx)) })
	sv.onClose(func() { stop() })
	log.Info("bots' stdio", zap.String("path", d.StdioPath()))
	if sv.owner, err = sandbox.Self(); err != nil {
		return platformErr(err)
	}
	sv.janitor = newJanitor(cli, sv.owner, cfg.StdioDir, log)
	sv.orch = orchestrator.New(orchestrator.Docker(d), cfg.Orchestrator(log)...)
	sv.met = metrics.New()
	containerGauges(sv.met, cli, d, sv.owner)
	return nil
}

// startDispatch starts NATS JetStream, through which the matches go: the
// embedded server unless ARENA_NATS names a cluster. This host plays
// ARENA_CONCURRENCY of them at once itself, as a worker in this process.
// The workers that lack a pushed bot get it from the registry, once the
// platform (which holds it) is built.
func (sv *serving) startDispatch(ctx context.Context) error {
	cfg, cli := sv.cfg, sv.cli
	ownWorker := trust.OwnWorkerPrefix + trust.SafeWorkerName(sv.host)
	ns, err := startNATS(ctx, cfg, sv.log, dispatch.DispatcherConfig{
		// A worker's replay is read within the bounds of this server's
		// budget.
		ReplayBudget: cfg.ReplayBudget,
		Images: func(ctx context.Context, id string, w io.Writer) error {
			if pf := sv.built.Load(); pf != nil {
				return pf.ExportPushed(ctx, id, w)
			}
			return errors.New("the server is starting")
		},
		// A logic game's match on a worker: its logic from this engine,
		// its result played again here before it counts (the server's own
		// worker's is not).
		Logic: func(ctx context.Context, id string, w io.Writer) error {
			body, err := cli.ImageSave(ctx, []string{id})
			if err != nil {
				return err
			}
			defer body.Close()
			_, err = io.Copy(w, body)
			return err
		},
		VerifyLogic:  sv.orch.VerifyHosted,
		VerifyAtOnce: cfg.VerifyAtOnce,
		Own:          ownWorker,
	})
	if err != nil {
		return err
	}
	sv.ns = ns
	sv.onClose(ns.close)
	// The matches of a server that stopped are over (Recover).
	if err := ns.disp.Purge(ctx); err != nil {
		return platformErr(fmt.Errorf("nats: clear the work queue: %w", err))
	}
	sv.stopWorker = func() {}
	if cfg.Concurrency > 0 {
		reapLost := func(ctx context.Context, id string) error {
			_, err := sv.janitor.RemoveLostMatch(ctx, id)
			return err
		}
		if sv.stopWorker, err = localWorker(ctx, ns.nc, ownWorker, cfg.Concurrency, sv.most, sv.orch, reapLost, sv.log); err != nil {
			return platformErr(err)
		}
	}
	sv.onClose(sv.stopWorker)
	return nil
}

// startPlatform builds the platform: its games (the operator's logic
// games checked), its registry, the builder of uploads (in the sandbox,
// pushing to the registry), and recovers from the last stop.
func (sv *serving) startPlatform(ctx context.Context) error {
	cfg, cli := sv.cfg, sv.cli
	var bld platform.Builder
	if cfg.Registry {
		b, err := builder(ctx, cfg, cli, sv.owner, sv.log, sv.stderr)
		if err != nil {
			return err
		}
		bld = b
	}
	sv.logicImgs = newLogicImages(cli, filepath.Join(cfg.Data, "players"), cfg.LogicLimits)
	gamesServed, players, err := servedGames(ctx, sv.logicImgs, cfg.LogicGames)
	if err != nil {
		return usageErr("%v", err)
	}
	pf, err := platform.New(ctx, platformConfig(cfg), platform.Deps{
		Games:        engine.NewCatalog(gamesServed...),
		Orchestrator: sv.orch,
		Player:       sv.ns.disp,
		Store:        sv.st,
		Concurrency:  sv.ns.inFlight(cfg),
		HasImage: func(ctx context.Context, ref string) bool {
			_, err := cli.ImageInspect(ctx, ref)
			return err == nil
		},
		Reap: func(ctx context.Context, id string) error {
			_, err := sv.janitor.RemoveMatch(ctx, id)
			return err
		},
		Accounts: sv.accts,
		Engine:   engineImages{cli},
		Builder:  bld,
		Players:  players,
		Logic:    sv.logicImgs.check,
		Metrics:  sv.met,
		Log:      sv.log,
	})
	if err != nil {
		return platformErr(fmt.Errorf("registry: %w", err))
	}
	sv.pf = pf
	sv.built.Store(pf)
	// The queue hands the work queue as many matches as the workers
	// report slots: the rest wait in the owners' lines, served in turn.
	sv.onClose(sv.ns.disp.FeedSlots(pf, sv.ns.inFlight(cfg)))
	if err := pf.Recover(ctx); err != nil {
		return platformErr(err)
	}
	// The players' saves of images no game offered now uses.
	sv.logicImgs.prune()
	workerGauges(sv.met, sv.ns.disp)
	return nil
}

// platformConfig is the platform's policy from the settings.
func platformConfig(cfg Config) platform.Config {
	registryHost := cfg.RegistryHost
	if registryHost == "" {
		registryHost = net.JoinHostPort("127.0.0.1", strconv.Itoa(cfg.Port))
	}
	return platform.Config{
		Token:            cfg.Token,
		Hosts:            serverHosts(cfg),
		QueueMax:         cfg.QueueMax,
		UserQueueMax:     cfg.UserQueueMax,
		Allow:            cfg.Allow,
		PullMissing:      cfg.Pull == "missing",
		DefaultBots:      defaultBots,
		Limits:           matches.Limits{AnswerTimeout: cfg.AnswerTimeout, WarmUp: cfg.WarmUp},
		LogicLimits:      cfg.LogicLimits,
		FinishOnShutdown: cfg.Shutdown == "finish",
		Ladder:           platform.LadderConfig{Enabled: cfg.Ladder, MaxEntries: cfg.LadderMax, MaxPerOwner: cfg.LadderPerOwner},
		Challenges:       platform.ChallengeConfig{PerDay: cfg.ChallengesPerDay, Ranked: cfg.RankedChallenges},
		Seats:            platform.SeatsConfig{Turn: cfg.HumanTurn, Matches: cfg.HumanMatches, PerUser: cfg.HumanPerUser},
		Replays:          platform.ReplayConfig{Keep: cfg.KeepReplays},
		Resources:        platform.Resources{MemoryBytes: cfg.MemoryBytes, CPUs: cfg.CPUs, Pids: cfg.PidsLimit},
		Notify:           platform.NotifyConfig{Webhooks: webhook.Policy{Allow: cfg.WebhookAllow, Own: ownAddresses(cfg)}, FromOthersPerHour: cfg.NotifyFromOthers},
		Registry: platform.RegistryConfig{Enabled: cfg.Registry, Dir: filepath.Join(cfg.Data, "registry"), Storage: cfg.RegistryStorage, Host: registryHost,
			MaxBytes: cfg.RegistryQuota, MaxRepos: cfg.RegistryMaxRepos, MaxTags: cfg.RegistryMaxTags},
		Drafts: platform.DraftsConfig{History: cfg.DraftHistory},
		Builds: platform.BuildsConfig{Parallel: cfg.Builds},
	}
}

// startWeb makes the web server in front of the platform's services,
// and the metrics' own address when one is set.
func (sv *serving) startWeb(ctx context.Context) error {
	cfg, pf, cli := sv.cfg, sv.pf, sv.cli
	// The command line for compose users: this binary, when static.
	binary, _ := os.Executable()
	if static, err := sandbox.IsStatic(binary); err != nil || !static {
		binary = ""
	}
	sv.srv = web.New(web.Config{
		Auth:            sv.auth,
		Public:          cfg.Public,
		ReadsPerMinute:  cfg.ReadRate,
		SignupsPerHour:  cfg.SignupRate,
		TrustedProxies:  cfg.TrustedProxies,
		StartsPerMinute: cfg.StartsPerMinute,
		MaxConnections:  cfg.MaxConnections,
	}, web.Deps{
		Services:         pf.Services(),
		Lifecycle:        pf,
		Metrics:          pf.Metrics(),
		Registry:         pf.Registry(),
		RegistryDeadline: pf.Config().Registry.UploadDeadline,
		Queue:            sv.ns.disp.Health,
		Workers:          func() any { return sv.ns.disp.Workers() },
		Ping: func(ctx context.Context) error {
			_, err := cli.Ping(ctx)
			return err
		},
		Stdio:  sv.d.StdioPath,
		Binary: binary,
		Log:    sv.log,
	})
	if cfg.MetricsListen != "" {
		stop, err := serveMetrics(cfg.MetricsListen, sv.met, sv.log)
		if err != nil {
			return platformErr(err)
		}
		sv.onClose(stop)
		fmt.Fprintf(sv.stderr, "arena: metrics on http://%s/metrics (no sign-in: keep the address private)\n", cfg.MetricsListen)
	}
	return nil
}

// serve serves until ctx ends, then shuts the server down: the web side
// and the platform (its matches cancelled or let finish), then this
// host's worker, whose matches end and whose containers go.
func (sv *serving) serve(ctx context.Context) error {
	cfg, stderr := sv.cfg, sv.stderr
	served := make(chan error, 1)
	go func() { served <- sv.srv.Serve(sv.listener) }()
	at := fmt.Sprintf("%d match(es) at a time here", cfg.Concurrency)
	if sv.most > cfg.Concurrency {
		at = fmt.Sprintf("%d to %d matches at a time here, as its CPUs idle", cfg.Concurrency, sv.most)
	}
	fmt.Fprintf(stderr, "arena: serving http://%s (%s mode, data in %s, %s)\n", sv.addr, sv.auth, cfg.Data, at)
	switch {
	case cfg.NATS != "":
		fmt.Fprintf(stderr, "arena: workers take matches from NATS at %s\n", trust.Redact(cfg.NATS))
	case cfg.NATSListen != "":
		fmt.Fprintf(stderr, "arena: workers of other hosts connect to nats://%s (TLS; a worker joins with the token of arena join-token --data %s)\n", cfg.NATSListen, cfg.Data)
	}
	select {
	case err := <-served:
		return platformErr(fmt.Errorf("serve on %s: %w", sv.addr, err))
	case <-ctx.Done():
	}
	fmt.Fprintln(stderr, "arena: shutting down")
	shutCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.ShutdownTimeout)
	defer cancel()
	if err := sv.srv.Shutdown(shutCtx); err != nil {
		sv.log.Warn("shutdown", zap.Error(err))
	}
	sv.stopWorker()
	if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return platformErr(err)
	}
	return nil
}

// startAccounts sets the server's accounts up: in accounts mode the
// accounts themselves, the admin's password (ARENA_ADMIN_PASSWORD), and
// once, while there is no account, how to make the first; in local mode
// a warning when the page is reachable beyond this host.
func startAccounts(ctx context.Context, cfg Config, st *store.Store, log *zap.Logger, stderr io.Writer) (string, *accounts.Service, error) {
	mode := cfg.authMode()
	if mode == web.AuthLocal {
		if !loopback(cfg.Host) {
			fmt.Fprintf(stderr, "arena: warning: local mode (ARENA_AUTH=local) on %s: anyone who reaches the page acts as the admin; publish it on this host's loopback only, or set ARENA_AUTH=accounts\n", cfg.Host)
		}
		return mode, nil, nil
	}
	accts, err := accounts.New(st, cfg.Signup, accounts.WithLogger(log.Named("accounts")), accounts.WithTeamsPerUser(cfg.TeamsPerUser),
		accounts.WithTeamChanges(cfg.TeamChanges),
		accounts.WithLimits(accounts.Limits{AccountBurst: cfg.AccountTries, AccountEvery: accounts.DefaultLimits.AccountEvery,
			ClientBurst: cfg.ClientTries, ClientEvery: accounts.DefaultLimits.ClientEvery}))
	if err != nil {
		return "", nil, usageErr("setting --signup / ARENA_SIGNUP: %v", err)
	}
	if cfg.AdminPassword != "" {
		if err := accts.EnsureAdmin(ctx, cfg.AdminPassword); err != nil {
			if errs.IsInvalid(err) {
				return "", nil, usageErr("setting --admin-password / %v", err)
			}
			return "", nil, platformErr(err)
		}
		return mode, accts, nil
	}
	if n, err := st.CountUsers(ctx); err != nil {
		return "", nil, platformErr(err)
	} else if n == 0 {
		fmt.Fprintln(stderr, "arena: accounts mode, and no account yet: set ARENA_ADMIN_PASSWORD (for docker compose, a line in .env) and start again to make the admin account; then sign in as admin and invite people")
	}
	return mode, accts, nil
}

// Pull is the server's side of engineImages (platform.EngineImages): a pushed
// version pulled by digest and held by a tag of the registry's host.
func (e engineImages) Pull(ctx context.Context, pull, tag, auth string) error {
	// The image may go while it is tagged (a client that pushed from this
	// engine removes its own tag, the last but ours): pulled again then.
	for try := 0; ; try++ {
		if _, err := e.cli.ImageInspect(ctx, pull); err != nil || try > 0 {
			body, err := e.cli.ImagePull(ctx, pull, image.PullOptions{RegistryAuth: auth})
			if err != nil {
				return err
			}
			err = sandbox.PullProgress(body)
			body.Close()
			if err != nil {
				return err
			}
		}
		err := e.cli.ImageTag(ctx, pull, tag)
		if err == nil {
			_, err = e.cli.ImageInspect(ctx, tag)
		}
		if err == nil || try == 2 || !cerrdefs.IsNotFound(err) {
			return err
		}
	}
}

func (e engineImages) Pulled(ctx context.Context, host string) ([]platform.PulledImage, error) {
	list, err := e.cli.ImageList(ctx, image.ListOptions{})
	if err != nil {
		return nil, err
	}
	var out []platform.PulledImage
	for _, im := range list {
		var refs []string
		for _, t := range im.RepoTags {
			if strings.HasPrefix(t, host+"/") && platform.HeldTag(t) {
				refs = append(refs, t)
			}
		}
		if len(refs) > 0 {
			out = append(out, platform.PulledImage{ID: im.ID, Refs: refs})
		}
	}
	return out, nil
}

func (e engineImages) Remove(ctx context.Context, tag string) error {
	_, err := e.cli.ImageRemove(ctx, tag, image.RemoveOptions{PruneChildren: true})
	return err
}

// poolIdle is how long warm containers are kept for an image nobody
// plays.
const poolIdle = 2 * time.Minute

// serverHosts are the names the server answers to: ARENA_HOSTS, else the
// loopback names and the address it listens on, when that is one address.
func serverHosts(cfg Config) []string {
	if len(cfg.Hosts) > 0 {
		return cfg.Hosts
	}
	hosts := slices.Clone(platform.DefaultHosts)
	if ip := net.ParseIP(cfg.Host); ip == nil || !ip.IsUnspecified() {
		hosts = append(hosts, cfg.Host)
	}
	return hosts
}

// ownAddresses are the addresses this server answers on (the page's, the
// metrics', NATS's), never a webhook's: a host name stands for its
// addresses, an empty host for every address of this host.
func ownAddresses(cfg Config) []netip.AddrPort {
	var out []netip.AddrPort
	for _, hp := range []string{net.JoinHostPort(cfg.Host, strconv.Itoa(cfg.Port)), cfg.MetricsListen, cfg.NATSListen} {
		host, port, err := net.SplitHostPort(hp)
		if err != nil {
			continue
		}
		n, err := strconv.ParseUint(port, 10, 16)
		if err != nil {
			continue
		}
		addrs := []netip.Addr{netip.IPv4Unspecified()}
		if host != "" {
			if a, err := netip.ParseAddr(host); err == nil {
				addrs = []netip.Addr{a}
			} else if found, err := webhook.Lookup(context.Background(), host); err == nil && len(found) > 0 {
				addrs = found
			}
		}
		for _, a := range addrs {
			out = append(out, netip.AddrPortFrom(a.Unmap(), uint16(n)))
		}
	}
	return out
}
