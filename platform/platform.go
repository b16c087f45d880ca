// Package platform is Arena's use cases, knowing nothing of HTTP: the
// match queue and what it records, the ladders and contests it feeds,
// the registry's pushed bots (their checks and their copies on the
// engine), builds from uploaded source, and the logic games admins
// register. The web package is its HTTP adapter; cmd/arena wires both.
//
// platform.go builds it (Config, Deps, New), starts and stops its loops;
// the use cases are one file each: matches.go, checks.go (a pushed
// version's check before it plays), pulled.go (pushed versions on the
// engine), registry.go, builds.go, games.go, names.go (who may play or
// own which image names, and a class roster's import), challenges.go
// (a bot against another's, for a number of games), people.go (seats
// people play), drafts.go (bots written in the page).
package platform

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"time"

	"go.uber.org/zap"

	"arena/accounts"
	"arena/contest"
	"arena/engine"
	"arena/imageref"
	"arena/judger"
	"arena/ladder"
	"arena/matches"
	"arena/metrics"
	"arena/registry"
	"arena/store"
)

// Config is the platform's policy.
type Config struct {
	// Token is the admin's token (ARENA_TOKEN): the registry's password
	// for the admin; in local mode, anyone's (no token: no password).
	Token string
	// Hosts are the names the server answers to (without port); "*"
	// answers to any. Empty: DefaultHosts. A bot named under one of them
	// is a bot of this server's registry.
	Hosts []string
	// QueueMax bounds the matches waiting to start (0: 256); past it a
	// start is refused as too many.
	QueueMax int
	// UserQueueMax bounds the matches one user may have waiting (0: no
	// bound beyond QueueMax).
	UserQueueMax int
	// Allow lists glob patterns (path.Match) that bot images must match;
	// empty allows every local image.
	Allow []string
	// PullMissing lets matches pull images that are not present; by
	// default only local images are accepted.
	PullMissing bool
	// DefaultBots are the example bots of each game: a pushed bot's
	// check plays against them, and no one may own their names.
	DefaultBots map[string][]string
	// Limits are the limits matches run under (zero: the games' own).
	Limits matches.Limits
	// LogicLimits are a logic game's logic's where its registration sets
	// none (ARENA_LOGIC_*; zero fields: judger.DefaultLimits).
	LogicLimits judger.Limits
	// FinishOnShutdown lets running matches finish on shutdown (up to the
	// shutdown's deadline) instead of cancelling them.
	FinishOnShutdown bool
	// Ladder is the ladders' policy.
	Ladder LadderConfig
	// Registry is the OCI registry's policy (see registry.go).
	Registry RegistryConfig
	// Builds is how uploads are built (with Deps.Builder).
	Builds BuildsConfig
	// Drafts is the drafts' policy (drafts.go).
	Drafts DraftsConfig
	// Challenges is the challenges' policy.
	Challenges ChallengeConfig
	// Seats is the policy of matches people play a seat of (seats.go).
	Seats SeatsConfig
	// Replays is how long replays are kept.
	Replays ReplayConfig
	// Notify is the notifications' policy (notify.go).
	Notify NotifyConfig
	// Resources are what each bot's container may use, shown in the
	// games' list.
	Resources Resources
}

// DefaultHosts are the names the server answers to unless told others.
var DefaultHosts = []string{"localhost", "127.0.0.1", "::1"}

// Deps are the platform's collaborators.
type Deps struct {
	// Games are the games on offer: the built-in ones and the operator's
	// (ARENA_GAMES); Recover adds those registered through the API.
	Games        *engine.Catalog
	Orchestrator Orchestrator
	Store        *store.Store
	// Concurrency bounds the matches played at once.
	Concurrency int
	// Player plays the queue's matches: nil, the Orchestrator on this
	// host; else, say, a dispatcher to workers on other hosts.
	Player matches.Player
	// HasImage tells whether an image is present on the engine (a
	// check's opponent); nil: not known.
	HasImage func(ctx context.Context, ref string) bool
	// Reap removes a match's containers (after a restart).
	Reap func(ctx context.Context, matchID string) error
	// Accounts are the server's accounts; nil: local mode, where every
	// visitor acts as the admin.
	Accounts *accounts.Service
	// Engine pulls pushed bots onto the server's engine by digest and
	// removes the versions nothing pins (pulled.go); nil: pushed bots
	// cannot play.
	Engine EngineImages
	// Builder, when set, builds bots from uploaded source (it needs the
	// registry, where it pushes them).
	Builder Builder
	// Players are the viewer pages the operator's logic games ship (game
	// → file path → content).
	Players map[string]map[string][]byte
	// Logic checks the image of a logic game an admin registers (nil: no
	// game can be registered).
	Logic LogicChecker
	// Metrics are the server's metrics (nil: a set of the platform's own).
	Metrics *metrics.Set
	Log     *zap.Logger
	Now     func() time.Time
}

// Platform is Arena's use cases: New builds it, Recover readies it after
// a restart, Start runs its loops and Shutdown stops them.
type Platform struct {
	cfg   Config
	deps  Deps
	log   *zap.Logger
	now   func() time.Time
	queue *matches.Queue
	// live holds the records of the matches queued here that are not
	// over, so viewers of a live match never wait on the database.
	live sync.Map // id → store.Match
	// metrics are the server's metrics (metrics.go); started holds when
	// each match playing started (startedAt).
	metrics   *metrics.Set
	startedAt sync.Map // id → time.Time
	// people holds the people's seats of the matches playing (people.go).
	people sync.Map // id → *person
	// peopleMu orders holdPeople's count and store.
	peopleMu sync.Mutex
	// services are the use cases by domain (services.go).
	services Services
	// runs are the drafts' Runs (runs.go).
	runs runs
	// ladder makes ladder matches for the queue and rates them.
	ladder *ladder.Ladder
	// contests run the contests' freezes and finals (with the ladders).
	contests *contest.Contests
	// images says which images may play.
	images accounts.Images
	// builds are the uploads built (nil: none).
	builds *builds
	// registry is the OCI registry (nil: none).
	registry *registry.Registry
	// checks are the pushed versions' checks (checks.go).
	checks checks
	// notify is the webhook calls waiting (notify.go).
	notify notifier
	// pulls are the pushed versions on the engine (pulled.go).
	pulls pulls
	// gamesMu orders the registrations and removals of logic games
	// (games.go): registered names those on offer, unoffered the reason
	// each other registered game is not.
	gamesMu    sync.Mutex
	registered map[string]bool
	unoffered  map[string]string
	// players are the logic games' players (deps.Players, and those of
	// registered games).
	playersMu sync.RWMutex
	players   map[string]map[string][]byte
	// The loops Start runs (the ladders', the builds', the registry's)
	// until Shutdown closes stopping; the ladders' own is stopped first.
	mu            sync.Mutex
	started, shut bool
	stopping      chan struct{}
	stopOnce      sync.Once
	loops         sync.WaitGroup
	stopLadder    context.CancelFunc
	ladderStopped chan struct{}
}

// New builds the platform, with its registry when cfg.Registry says so.
// Call Recover, then Start.
func New(ctx context.Context, cfg Config, deps Deps) (*Platform, error) {
	if deps.Log == nil {
		deps.Log = zap.NewNop()
	}
	if deps.Now == nil {
		deps.Now = time.Now
	}
	if deps.Games == nil {
		deps.Games = engine.NewCatalog()
	}
	if len(cfg.Hosts) == 0 {
		cfg.Hosts = DefaultHosts
	}
	if cfg.QueueMax <= 0 {
		cfg.QueueMax = 256
	}
	if cfg.Registry.CollectEvery <= 0 {
		cfg.Registry.CollectEvery = 24 * time.Hour
	}
	if cfg.Registry.UploadDeadline <= 0 {
		cfg.Registry.UploadDeadline = 30 * time.Minute
	}
	if cfg.Builds.MaxUpload <= 0 {
		cfg.Builds.MaxUpload = 16 << 20
	}
	if cfg.Registry.PulledGrace <= 0 {
		cfg.Registry.PulledGrace = defaultPulledGrace
	}
	if deps.Metrics == nil {
		deps.Metrics = metrics.New()
	}
	s := &Platform{cfg: cfg, deps: deps, log: deps.Log, now: deps.Now, stopping: make(chan struct{}), metrics: deps.Metrics,
		images:     accounts.Images{Allow: cfg.Allow, Examples: examples(cfg.DefaultBots)},
		registered: map[string]bool{}, unoffered: map[string]string{}, players: map[string]map[string][]byte{}}
	for name, files := range deps.Players {
		s.players[name] = files
	}
	s.images.Own = s.ownRegistry
	s.initServices()
	s.runs.init()
	s.checks.init()
	s.initNotify()
	s.pulls.init()
	var player matches.Player = deps.Orchestrator
	if deps.Player != nil {
		player = deps.Player
	}
	if cfg.Seats.Turn <= 0 {
		cfg.Seats.Turn = DefaultHumanTurn
	}
	// A match with people plays here, whoever plays the others.
	opts := []matches.QueueOption{matches.WithLineMax(cfg.UserQueueMax), matches.WithPeople(deps.Orchestrator, cfg.Seats.Matches)}
	if dir, err := liveFrames(deps.Store); err == nil {
		opts = append(opts, matches.WithFrameFiles(dir))
	} else {
		s.log.Warn("live frames are kept in memory", zap.Error(err))
	}
	opts = append(opts, matches.WithFrameHook(s.observeFrame))
	s.queue = matches.NewQueue(player, deps.Concurrency, cfg.QueueMax, s.record, opts...)
	inFlight := cfg.Ladder.InFlight
	if inFlight <= 0 {
		inFlight = max(1, deps.Concurrency) + 1
	}
	s.ladder = ladder.New(ladder.Config{Enabled: cfg.Ladder.Enabled, MaxEntries: cfg.Ladder.MaxEntries, MaxPerOwner: cfg.Ladder.MaxPerOwner, InFlight: inFlight, Limits: cfg.Limits}, ladder.Deps{
		Store: deps.Store, Games: deps.Games, Queue: ladderQueue{s}, Log: deps.Log.Named("ladder"), Now: deps.Now,
		Image: func(ctx context.Context, ref string) (string, error) {
			if err := s.pushedState(ctx, ref, "register it"); err != nil {
				return "", err
			}
			return s.imageID(ctx, ref)
		},
		Game: func(ctx context.Context, id string) (string, error) {
			img, err := deps.Orchestrator.Image(ctx, id)
			return img.Game, err
		},
		Faulted: s.notifyEntryFault,
	})
	s.contests = contest.New(contest.Config{InFlight: inFlight}, contest.Deps{
		Store: deps.Store, Games: deps.Games, Queue: ladderQueue{s}, Log: deps.Log.Named("contests"), Now: deps.Now,
		Image: s.imageID,
		Labels: func(ctx context.Context, id string) (string, string) {
			img, _ := deps.Orchestrator.Image(ctx, id)
			return img.Game, img.Authors
		},
		Notify: func(ctx context.Context, owner string, final bool, text, link string, fields map[string]any) {
			kind := NotifyContestFreeze
			if final {
				kind = NotifyContestFinal
			}
			s.notifyAll(ctx, s.peopleOf(ctx, owner), kind, text, link, fields)
		},
	})
	if !cfg.Registry.Enabled {
		s.registerGauges()
		return s, nil
	}
	reg, err := registry.New(ctx, registry.Config{Dir: cfg.Registry.Dir, Storage: cfg.Registry.Storage}, registry.Deps{
		Authenticate: s.registryAuth,
		Pushed:       s.recordPush,
		Deleted: func(ctx context.Context, repo, digest string) {
			if err := deps.Store.ForgetManifest(ctx, repo, digest); err != nil {
				s.log.Error("forget a deleted manifest", zap.Error(err))
			}
			if err := deps.Store.ForgetUntagged(ctx, repo, digest); err != nil {
				s.log.Error("forget a deleted manifest", zap.Error(err))
			}
		},
		AllowPush: s.allowPush,
		Open:      deps.Accounts == nil && cfg.Token == "",
		Log:       s.log.Named("registry"),
	})
	if err != nil {
		return nil, err
	}
	s.registry = reg
	s.newBuilds()
	s.registerGauges()
	return s, nil
}

// Config is the platform's policy, its defaults filled in.
func (s *Platform) Config() Config { return s.cfg }

// Registry is the OCI registry, nil when the server has none: an HTTP
// adapter the front end serves under /v2/, which the services call
// through Go methods.
func (s *Platform) Registry() *registry.Registry { return s.registry }

// accountsMode says whether the server has accounts (else every visitor
// acts as the admin).
func (s *Platform) accountsMode() bool { return s.deps.Accounts != nil }

// SetSlots sets how many matches are played at once (those the player's
// workers have room for): more start at once, fewer stop none.
func (s *Platform) SetSlots(n int) { s.queue.SetSlots(n) }

// Start runs the platform's loops until Shutdown: the ladders' and the
// contests', the builds', and with the registry the checks still pending,
// its garbage collection and the pruning of old pushed versions.
func (s *Platform) Start() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.shut || s.started {
		return
	}
	s.started = true
	ctx, cancel := context.WithCancel(context.Background())
	s.stopLadder, s.ladderStopped = cancel, make(chan struct{})
	go func() {
		defer close(s.ladderStopped)
		done := make(chan struct{})
		go func() {
			defer close(done)
			s.contests.Run(ctx)
		}()
		s.ladder.Run(ctx)
		<-done
	}()
	s.runBuilds()
	s.untilShutdown(s.expireRegularly)
	s.untilShutdown(s.expireNotifications)
	s.untilShutdown(s.deliverWebhooks)
	if s.registry != nil {
		// Pushed versions whose check the last stop cut, or that could
		// not be checked, are checked now, once the registry answers
		// (the engine pulls them from it).
		s.goCheck(func(ctx context.Context) {
			if err := s.checkPending(ctx); err != nil {
				s.log.Error("check the pushed versions still pending", zap.Error(err))
			}
		})
		s.untilShutdown(s.collectRegularly)
		s.untilShutdown(s.pruneRegularly)
	}
}

// Shutdown stops the ladders and the checks and takes no more matches,
// cancels (or lets finish, as configured) the ones in progress, and
// stops the loops; Close then closes the registry.
func (s *Platform) Shutdown(ctx context.Context) {
	s.mu.Lock()
	s.shut = true
	stop, stopped := s.stopLadder, s.ladderStopped
	s.mu.Unlock()
	if stop != nil {
		stop()
		<-stopped
	}
	s.shutChecks(ctx)
	s.queue.Shutdown(ctx, s.cfg.FinishOnShutdown)
	s.stopOnce.Do(func() { close(s.stopping) })
	s.loops.Wait()
}

// Close closes the registry (after Shutdown, once no request uses it).
func (s *Platform) Close() {
	if s.registry != nil {
		s.registry.Close()
	}
}

// LadderConfig is the ladders' policy.
type LadderConfig struct {
	// Enabled lets the ladders play (registration works either way).
	Enabled bool
	// MaxEntries bounds the entries of one game's ladder, MaxPerOwner
	// those of one user or team there (an admin's are not bounded) (0: no
	// limit).
	MaxEntries, MaxPerOwner int
	// InFlight bounds the ladder matches waiting or playing at once
	// (0: the concurrency plus one, so a slot that frees up is filled at
	// once; a match started by hand still goes first).
	InFlight int
}

// Orchestrator is what the server asks of the match runner
// (orchestrator.Orchestrator): the engine's images, a request pinned to
// them, and matches played on this host.
type Orchestrator interface {
	Image(ctx context.Context, ref string) (imageref.Image, error)
	Images(ctx context.Context, game string) ([]imageref.LocalImage, error)
	Pin(ctx context.Context, req matches.Request, images bool) (matches.Request, error)
	matches.Player
}

// liveFrames is the folder of the playing matches' frames in the data
// folder, emptied of what a server that stopped left there.
func liveFrames(st *store.Store) (string, error) {
	dir := filepath.Join(st.Dir(), "live")
	if err := os.RemoveAll(dir); err != nil {
		return "", err
	}
	return dir, os.MkdirAll(dir, 0o700)
}

// Recover marks the matches that were not over when the server last
// stopped as failed ("interrupted") and removes their containers.
func (s *Platform) Recover(ctx context.Context) error {
	if err := s.loadGames(ctx); err != nil {
		return err
	}
	ids, err := s.deps.Store.Unfinished(ctx)
	if err != nil {
		return err
	}
	for _, id := range ids {
		if s.deps.Reap != nil {
			if err := s.deps.Reap(ctx, id); err != nil {
				s.log.Warn("remove the containers of an interrupted match", zap.String("match", id), zap.Error(err))
			}
		}
		if err := s.deps.Store.Finish(ctx, id, store.Outcome{Status: string(matches.StateFailed), Error: "interrupted: the server stopped during the match"}, s.now()); err != nil {
			return err
		}
		s.log.Warn("match interrupted by the last shutdown", zap.String("match", id))
	}
	return nil
}

// untilShutdown runs f in the background with a context that Shutdown
// ends, and waits for it there.
func (s *Platform) untilShutdown(f func(ctx context.Context)) {
	s.loops.Go(func() {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go func() {
			<-s.stopping
			cancel()
		}()
		f(ctx)
	})
}
