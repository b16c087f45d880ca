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
	"go.uber.org/zap"

	"arena/accounts"
	"arena/dispatch"
	"arena/dispatch/trust"
	"arena/engine"
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

	// The data folder first, then the port: a second server on the same
	// folder or port stops here, before it touches any container.
	addr := net.JoinHostPort(cfg.Host, strconv.Itoa(cfg.Port))
	host, _ := os.Hostname()
	st, err := store.Open(cfg.Data, fmt.Sprintf("arena serve (pid %d on %s, http://%s)", os.Getpid(), host, addr))
	if err != nil {
		return platformErr(err)
	}
	defer st.Close()
	auth, accts, err := startAccounts(ctx, cfg, st, log, stderr)
	if err != nil {
		return err
	}
	listener, err := net.Listen("tcp", addr)
	if err != nil {
		return platformErr(fmt.Errorf("listen on %s: %w", addr, err))
	}
	defer listener.Close()

	extra := []sandbox.Option{sandbox.WithPool(cfg.Pool, poolIdle), sandbox.WithPoolMax(cfg.PoolMax)}
	if cfg.Pull == "missing" {
		extra = append(extra, sandbox.WithPullMissing())
	}
	// Local bots are never reachable from the web.
	cli, d, _, err := sandboxes(ctx, cfg, log, stderr, false, extra...)
	if err != nil {
		return err
	}
	defer cli.Close()
	defer d.Close(context.WithoutCancel(ctx))
	// Told to stop, the warm containers go at once, while the matches
	// end (the deferred Close waits for them).
	defer context.AfterFunc(ctx, func() { d.Close(context.WithoutCancel(ctx)) })()
	log.Info("bots' stdio", zap.String("path", d.StdioPath()))

	owner, err := sandbox.Self()
	if err != nil {
		return platformErr(err)
	}
	janitor := newJanitor(cli, owner, cfg.StdioDir, log)
	reap := func(ctx context.Context, id string) error {
		_, err := janitor.RemoveMatch(ctx, id)
		return err
	}
	orch := orchestrator.New(orchestrator.Docker(d), cfg.Orchestrator(log)...)
	met := metrics.New()
	containerGauges(met, cli, d, owner)

	// Matches go through NATS JetStream: the embedded server unless
	// ARENA_NATS names a cluster. This host plays ARENA_CONCURRENCY of
	// them at once itself, as a worker in this process.
	// The workers that lack a pushed bot get it from the registry, once
	// the platform (which holds it) is built.
	var built atomic.Pointer[platform.Platform]
	ownWorker := trust.OwnWorkerPrefix + trust.SafeWorkerName(host)
	ns, err := startNATS(ctx, cfg, log, dispatch.DispatcherConfig{
		// A worker's replay is read within the bounds of this server's
		// budget.
		ReplayBudget: cfg.ReplayBudget,
		Pin: func(ctx context.Context, ref string) (string, error) {
			img, err := orch.Image(ctx, ref)
			return img.ID, err
		},
		Images: func(ctx context.Context, id string, w io.Writer) error {
			if pf := built.Load(); pf != nil {
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
		VerifyLogic:  orch.VerifyHosted,
		VerifyAtOnce: cfg.VerifyAtOnce,
		Own:          ownWorker,
	})
	if err != nil {
		return err
	}
	defer ns.close()
	// The matches of a server that stopped are over (Recover below).
	if err := ns.disp.Purge(ctx); err != nil {
		return platformErr(fmt.Errorf("nats: clear the work queue: %w", err))
	}
	stopWorker := func() {}
	if cfg.Concurrency > 0 {
		reapLost := func(ctx context.Context, id string) error {
			_, err := janitor.RemoveLostMatch(ctx, id)
			return err
		}
		if stopWorker, err = localWorker(ctx, ns.nc, ownWorker, cfg.Concurrency, most, orch, reapLost, log); err != nil {
			return platformErr(err)
		}
	}
	defer stopWorker()
	// Uploads are built in the sandbox and pushed to the registry.
	var bld platform.Builder
	if cfg.Registry {
		b, err := builder(ctx, cfg, cli, owner, log, stderr)
		if err != nil {
			return err
		}
		bld = b
	}
	// The command line for compose users: this binary, when static.
	binary, _ := os.Executable()
	if static, err := sandbox.IsStatic(binary); err != nil || !static {
		binary = ""
	}
	registryHost := cfg.RegistryHost
	if registryHost == "" {
		registryHost = net.JoinHostPort("127.0.0.1", strconv.Itoa(cfg.Port))
	}
	hasImage := func(ctx context.Context, ref string) bool {
		_, err := cli.ImageInspect(ctx, ref)
		return err == nil
	}
	logicImgs := newLogicImages(cli, filepath.Join(cfg.Data, "players"), cfg.LogicLimits)
	gamesServed, players, err := servedGames(ctx, logicImgs, cfg.LogicGames)
	if err != nil {
		return usageErr("%v", err)
	}
	pf, err := platform.New(ctx, platform.Config{
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
		People:           platform.PeopleConfig{Turn: cfg.HumanTurn, Matches: cfg.HumanMatches, PerUser: cfg.HumanPerUser},
		Replays:          platform.ReplayConfig{Keep: cfg.KeepReplays},
		Notify:           platform.NotifyConfig{Webhooks: webhook.Policy{Allow: cfg.WebhookAllow, Own: ownAddresses(cfg)}, FromOthersPerHour: cfg.NotifyFromOthers},
		Registry: platform.RegistryConfig{Enabled: cfg.Registry, Dir: filepath.Join(cfg.Data, "registry"), Storage: cfg.RegistryStorage, Host: registryHost,
			MaxBytes: cfg.RegistryQuota, MaxRepos: cfg.RegistryMaxRepos, MaxTags: cfg.RegistryMaxTags},
	}, platform.Deps{
		Games:        engine.NewCatalog(gamesServed...),
		Orchestrator: orch,
		Player:       ns.disp,
		Store:        st,
		Concurrency:  ns.inFlight(cfg),
		HasImage:     hasImage,
		Reap:         reap,
		Accounts:     accts,
		Engine:       engineImages{cli},
		Builder:      bld,
		Players:      players,
		Logic:        logicImgs.check,
		Metrics:      met,
		Log:          log,
	})
	if err != nil {
		return platformErr(fmt.Errorf("registry: %w", err))
	}
	srv := web.New(web.Config{
		Auth:            auth,
		Public:          cfg.Public,
		ReadsPerMinute:  cfg.ReadRate,
		SignupsPerHour:  cfg.SignupRate,
		TrustedProxies:  cfg.TrustedProxies,
		StartsPerMinute: cfg.StartsPerMinute,
		MaxConnections:  cfg.MaxConnections,
		Resources:       web.Resources{MemoryBytes: cfg.MemoryBytes, CPUs: cfg.CPUs, Pids: cfg.PidsLimit},
	}, web.Deps{
		Platform: pf,
		Store:    st,
		Accounts: accts,
		Queue:    ns.disp.Health,
		Workers:  func() any { return ns.disp.Workers() },
		Ping: func(ctx context.Context) error {
			_, err := cli.Ping(ctx)
			return err
		},
		Stdio:    d.StdioPath,
		HasImage: hasImage,
		Binary:   binary,
		Log:      log,
	})
	built.Store(pf)
	// The queue hands the work queue as many matches as the workers
	// report slots: the rest wait in the owners' lines, served in turn.
	defer ns.disp.FeedSlots(pf, ns.inFlight(cfg))()
	if err := pf.Recover(ctx); err != nil {
		return platformErr(err)
	}
	// The players' saves of images no game offered now uses.
	logicImgs.prune()

	workerGauges(met, ns.disp)
	if cfg.MetricsListen != "" {
		stop, err := serveMetrics(cfg.MetricsListen, met, log)
		if err != nil {
			return platformErr(err)
		}
		defer stop()
		fmt.Fprintf(stderr, "arena: metrics on http://%s/metrics (no sign-in: keep the address private)\n", cfg.MetricsListen)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(listener) }()
	at := fmt.Sprintf("%d match(es) at a time here", cfg.Concurrency)
	if most > cfg.Concurrency {
		at = fmt.Sprintf("%d to %d matches at a time here, as its CPUs idle", cfg.Concurrency, most)
	}
	fmt.Fprintf(stderr, "arena: serving http://%s (%s mode, data in %s, %s)\n", addr, auth, cfg.Data, at)
	switch {
	case cfg.NATS != "":
		fmt.Fprintf(stderr, "arena: workers take matches from NATS at %s\n", trust.Redact(cfg.NATS))
	case cfg.NATSListen != "":
		fmt.Fprintf(stderr, "arena: workers of other hosts connect to nats://%s (TLS; a worker joins with the token of arena join-token --data %s)\n", cfg.NATSListen, cfg.Data)
	}
	select {
	case err := <-served:
		return platformErr(fmt.Errorf("serve on %s: %w", addr, err))
	case <-ctx.Done():
	}
	fmt.Fprintln(stderr, "arena: shutting down")
	shutCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.ShutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(shutCtx); err != nil {
		log.Warn("shutdown", zap.Error(err))
	}
	// The matches this host plays end and their containers go.
	stopWorker()
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
			if errors.Is(err, accounts.ErrInvalid) {
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
