// Package web is Arena's HTTP server: the JSON API to start, list, watch
// and cancel matches, the live stream of a match's frames (Server-Sent
// Events), the ladders (registration, leaderboards and their live stream,
// entry pages; the server runs the ladders' matches through its queue),
// and the page (plain JavaScript and canvas, embedded).
//
// server.go builds the server (Config, Deps, New), its routes, the one
// error handler, Serve and Shutdown; auth.go says who a request acts for
// (sessions, the principal, the route guards); guard.go holds the
// defences. The handlers are one file per resource: matches.go and
// stream.go (a match's live stream), games.go, images.go, ladder.go,
// contests.go, users.go (accounts, signing up, in and out), tokens.go,
// teams.go, invites.go, registry.go with checks.go and pulled.go (pushed
// bots: their checks, their copies on the engine), builds.go and
// player.go (a logic game's viewer page).
package web

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/alexedwards/scs/v2"
	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
	"go.uber.org/zap"
	"golang.org/x/net/netutil"

	"arena/accounts"
	"arena/contest"
	"arena/engine"
	"arena/imageref"
	"arena/internal/errs"
	"arena/ladder"
	"arena/matches"
	"arena/registry"
	"arena/store"
)

//go:embed static
var staticFiles embed.FS

// Config is the server's policy.
type Config struct {
	// Auth is AuthLocal (the zero value: no accounts, every visitor acts
	// as the admin) or AuthAccounts (see auth.go).
	Auth string
	// Public is what anonymous visitors may do in accounts mode:
	// PublicRead (the zero value) or PublicNone.
	Public string
	// SessionLifetime is how long a session lasts from sign-in (0:
	// DefaultSessionLifetime).
	SessionLifetime time.Duration
	// Token, when set, must accompany requests that start or cancel
	// matches in local mode (Authorization: Bearer TOKEN); in accounts
	// mode it is the admin's token.
	Token string
	// Hosts are the names the server answers to (Host header, without
	// port); "*" answers to any. Empty: DefaultHosts.
	Hosts []string
	// QueueMax bounds the matches waiting to start (0: 256); past it a
	// start is refused with 429.
	QueueMax int
	// StartsPerMinute bounds the matches one user (in local mode, one
	// client) may start a minute, in bursts of StartsBurst (0: 60 and 20;
	// negative: no limit).
	StartsPerMinute, StartsBurst int
	// UserQueueMax bounds the matches one user may have waiting (0: no
	// bound beyond QueueMax).
	UserQueueMax int
	// ReadsPerMinute bounds the API requests of one anonymous client a
	// minute in accounts mode, in bursts of a fifth of it (0: 600;
	// negative: no limit).
	ReadsPerMinute int
	// SignupsPerHour bounds the sign-ups from one client an hour, in
	// bursts of half of it (0: 10; negative: no limit).
	SignupsPerHour int
	// MaxConnections bounds the connections served at once; more wait to
	// be accepted (0: 1024).
	MaxConnections int
	// HeaderTimeout bounds reading a request's headers, and IdleTimeout
	// how long a kept-alive connection waits for its next request (0: 5 s
	// and 60 s).
	HeaderTimeout, IdleTimeout time.Duration
	// Allow lists glob patterns (path.Match) that bot images must match;
	// empty allows every local image.
	Allow []string
	// PullMissing lets matches pull images that are not present; by
	// default only local images are accepted.
	PullMissing bool
	// MaxBodyBytes caps request bodies.
	MaxBodyBytes int64
	// DefaultBots are the page's suggested images per game.
	DefaultBots map[string][]string
	// Limits are the limits matches run under (zero: the games' own).
	Limits matches.Limits
	// Resources are what each bot may use, shown in /api/games.
	Resources Resources
	// FinishOnShutdown lets running matches finish on shutdown (up to the
	// shutdown's deadline) instead of cancelling them.
	FinishOnShutdown bool
	// Ladder is the ladders' policy.
	Ladder LadderConfig
	// Registry is the OCI registry's policy (see registry.go).
	Registry RegistryConfig
	// Builds is how uploads are built (with Deps.Builder).
	Builds BuildsConfig
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

// Resources are what each bot may use.
type Resources struct {
	MemoryBytes int64
	CPUs        float64
	Pids        int64
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

// Deps are the server's collaborators.
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
	// Ping checks the Docker engine for /healthz.
	Ping func(ctx context.Context) error
	// Queue says whether matches can be queued to workers (for
	// /healthz; nil: no work queue), Workers how the workers stand.
	Queue   func() error
	Workers func() any
	// Stdio says how bots' stdio travels (for /healthz).
	Stdio func() string
	// HasImage tells whether an image is present on the engine (for the
	// default bots in /api/games); nil: not known.
	HasImage func(ctx context.Context, ref string) bool
	// Reap removes a match's containers (after a restart).
	Reap func(ctx context.Context, matchID string) error
	// Accounts are the server's accounts (accounts mode only).
	Accounts *accounts.Service
	// Engine pulls pushed bots onto the server's engine by digest and
	// removes the versions nothing pins (pulled.go); nil: pushed bots
	// cannot play.
	Engine EngineImages
	// Builder, when set, builds bots from uploaded source (POST
	// /api/builds; it needs the registry, where it pushes them).
	Builder Builder
	// Players are the viewer pages the operator's logic games ship (game
	// → file path → content), served to the page's sandboxed iframe
	// (player.go).
	Players map[string]map[string][]byte
	// Logic checks the image of a logic game an admin registers (nil: no
	// game can be registered).
	Logic LogicChecker
	// Binary, when set, is the arena command's static binary, offered at
	// /download/arena: the command line for those who run the server
	// with compose and have no Go.
	Binary string
	Log    *zap.Logger
	Now    func() time.Time
}

// Server is the HTTP server and the match queue behind it.
type Server struct {
	cfg   Config
	deps  Deps
	log   *zap.Logger
	now   func() time.Time
	queue *matches.Queue
	// live holds the records of the matches this server queued that are
	// not over, so viewers of a live match never wait on the database.
	live    sync.Map // id → store.Match
	echo    *echo.Echo
	closing chan struct{}
	once    sync.Once
	// ladder makes ladder matches for the queue and rates them.
	ladder *ladder.Ladder
	// contests run the contests' freezes and finals (with the ladders).
	contests *contest.Contests
	// sessions are accounts mode's sessions; images which images may
	// play.
	sessions *scs.SessionManager
	images   accounts.Images
	// builds are the uploads built (nil: none), building their runner.
	builds   *builds
	building sync.WaitGroup
	// registry is the OCI registry under /v2/ (nil: none); collecting
	// its garbage collector's loop, started by Serve.
	registry   *registry.Registry
	collecting sync.WaitGroup
	// checks are the pushed versions' checks (checks.go).
	checks checks
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
	// The ladders' loop: started by Serve, stopped by Shutdown.
	ladderMu      sync.Mutex
	ladderShut    bool
	stopLadder    context.CancelFunc
	ladderStopped chan struct{}
}

// New builds the server. Call Recover before serving.
func New(cfg Config, deps Deps) *Server {
	if deps.Log == nil {
		deps.Log = zap.NewNop()
	}
	if deps.Now == nil {
		deps.Now = time.Now
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = 64 << 10
	}
	if len(cfg.Hosts) == 0 {
		cfg.Hosts = DefaultHosts
	}
	if cfg.QueueMax <= 0 {
		cfg.QueueMax = 256
	}
	if cfg.StartsPerMinute == 0 {
		cfg.StartsPerMinute, cfg.StartsBurst = 60, 20
	}
	if cfg.StartsBurst <= 0 {
		cfg.StartsBurst = max(1, cfg.StartsPerMinute/3)
	}
	if cfg.MaxConnections <= 0 {
		cfg.MaxConnections = 1024
	}
	if cfg.HeaderTimeout <= 0 {
		cfg.HeaderTimeout = 5 * time.Second
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = 60 * time.Second
	}
	if cfg.Auth == "" {
		cfg.Auth = AuthLocal
	}
	if cfg.Public == "" {
		cfg.Public = PublicRead
	}
	if cfg.SessionLifetime <= 0 {
		cfg.SessionLifetime = DefaultSessionLifetime
	}
	if cfg.ReadsPerMinute == 0 {
		cfg.ReadsPerMinute = 600
	}
	if cfg.SignupsPerHour == 0 {
		cfg.SignupsPerHour = 10
	}
	if deps.Games == nil {
		deps.Games = engine.NewCatalog()
	}
	s := &Server{cfg: cfg, deps: deps, log: deps.Log, now: deps.Now, closing: make(chan struct{}),
		images:     accounts.Images{Allow: cfg.Allow, Examples: examples(cfg.DefaultBots)},
		registered: map[string]bool{}, unoffered: map[string]string{}, players: map[string]map[string][]byte{}}
	for name, files := range deps.Players {
		s.players[name] = files
	}
	s.checks.init()
	s.pulls.init()
	if cfg.Auth == AuthAccounts {
		s.sessions = newSessions(deps.Store, cfg.SessionLifetime)
	}
	if cfg.Registry.CollectEvery <= 0 {
		s.cfg.Registry.CollectEvery = 24 * time.Hour
	}
	if cfg.Registry.UploadDeadline <= 0 {
		s.cfg.Registry.UploadDeadline = 30 * time.Minute
	}
	if cfg.Registry.PulledGrace <= 0 {
		s.cfg.Registry.PulledGrace = defaultPulledGrace
	}
	var player matches.Player = deps.Orchestrator
	if deps.Player != nil {
		player = deps.Player
	}
	opts := []matches.QueueOption{matches.WithLineMax(cfg.UserQueueMax)}
	if dir, err := liveFrames(deps.Store); err == nil {
		opts = append(opts, matches.WithFrameFiles(dir))
	} else {
		s.log.Warn("live frames are kept in memory", zap.Error(err))
	}
	s.queue = matches.NewQueue(player, deps.Concurrency, cfg.QueueMax, s.record, opts...)
	inFlight := cfg.Ladder.InFlight
	if inFlight <= 0 {
		inFlight = max(1, deps.Concurrency) + 1
	}
	s.ladder = ladder.New(ladder.Config{Enabled: cfg.Ladder.Enabled, MaxEntries: cfg.Ladder.MaxEntries, MaxPerOwner: cfg.Ladder.MaxPerOwner, InFlight: inFlight, Limits: cfg.Limits}, ladder.Deps{
		Store: deps.Store, Games: deps.Games, Queue: ladderQueue{s}, Log: deps.Log.Named("ladder"), Now: deps.Now,
		Image: func(ctx context.Context, ref string) (string, error) {
			if err := s.pushedState(ctx, ref, true); err != nil {
				return "", err
			}
			return s.imageID(ctx, ref)
		},
		Game: func(ctx context.Context, id string) (string, error) {
			img, err := deps.Orchestrator.Image(ctx, id)
			return img.Game, err
		},
	})
	s.contests = contest.New(contest.Config{InFlight: inFlight}, contest.Deps{
		Store: deps.Store, Games: deps.Games, Queue: ladderQueue{s}, Log: deps.Log.Named("contests"), Now: deps.Now,
		Image: s.imageID,
		Labels: func(ctx context.Context, id string) (string, string) {
			img, _ := deps.Orchestrator.Image(ctx, id)
			return img.Game, img.Authors
		},
	})
	s.echo = s.routes()
	return s
}

// SetSlots sets how many matches the server plays at once (those its
// player's workers have room for): more start at once, fewer stop none.
func (s *Server) SetSlots(n int) { s.queue.SetSlots(n) }

// NewWithRegistry is New with the OCI registry of cfg.Registry served
// under /v2/.
func NewWithRegistry(ctx context.Context, cfg Config, deps Deps) (*Server, error) {
	s := New(cfg, deps)
	if !cfg.Registry.Enabled {
		return s, nil
	}
	reg, err := registry.New(ctx, registry.Config{Dir: cfg.Registry.Dir, Storage: cfg.Registry.Storage}, registry.Deps{
		Authenticate: s.registryAuth,
		Pushed:       s.recordPush,
		Deleted: func(ctx context.Context, repo, digest string) {
			if err := deps.Store.ForgetManifest(ctx, repo, digest); err != nil {
				s.log.Error("forget a deleted manifest", zap.Error(err))
			}
		},
		AllowPush: s.allowPush,
		Open:      cfg.Auth != AuthAccounts && cfg.Token == "",
		Log:       s.log.Named("registry"),
	})
	if err != nil {
		return nil, err
	}
	s.registry = reg
	s.newBuilds()
	return s, nil
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

// Handler is the server's HTTP handler.
func (s *Server) Handler() http.Handler { return s.echo }

func (s *Server) routes() *echo.Echo {
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.HTTPErrorHandler = s.handleError
	e.Pre(s.serveRegistry)
	e.Use(middleware.Recover())
	e.Use(middleware.RequestLoggerWithConfig(middleware.RequestLoggerConfig{
		LogMethod: true, LogURI: true, LogStatus: true, LogLatency: true, LogError: true, HandleError: true,
		LogValuesFunc: func(c echo.Context, v middleware.RequestLoggerValues) error {
			fields := []zap.Field{zap.String("method", v.Method), zap.String("uri", v.URI), zap.Int("status", v.Status), zap.Duration("latency", v.Latency)}
			if v.Error != nil {
				fields = append(fields, zap.Error(v.Error))
			}
			if v.Status >= 500 {
				s.log.Error("request", fields...)
			} else {
				s.log.Info("request", fields...)
			}
			return nil
		},
	}))
	e.Use(middleware.BodyLimitWithConfig(middleware.BodyLimitConfig{Limit: fmt.Sprintf("%dB", s.cfg.MaxBodyBytes),
		// An upload to build is bounded by its own limit (builds.go).
		Skipper: isUpload}))
	e.Use(s.allowHost, s.sameOrigin, s.identify)
	starts := []echo.MiddlewareFunc{s.guardChanges}
	if s.cfg.StartsPerMinute > 0 {
		starts = append(starts, s.limitStarts(s.cfg.StartsPerMinute, s.cfg.StartsBurst))
	}
	read := []echo.MiddlewareFunc{s.readable}
	changes := []echo.MiddlewareFunc{s.guardChanges}
	account := []echo.MiddlewareFunc{s.accountsOnly, s.signedIn}
	admin := []echo.MiddlewareFunc{s.accountsOnly, s.adminOnly}

	e.GET("/healthz", s.health)
	e.GET("/download/arena", s.downloadBinary, read...)
	// A logic's player is static viewer code, public as the page's own files are.
	e.GET("/games/:game/player/*", s.playerFile)
	api := e.Group("/api")
	if s.accountsMode() && s.cfg.ReadsPerMinute > 0 {
		api.Use(s.limitAnonymousReads(s.cfg.ReadsPerMinute))
	}
	// Who one is, and the way in.
	api.GET("/me", s.me)
	api.PUT("/me/password", s.changePassword, account...)
	signups := []echo.MiddlewareFunc{s.accountsOnly}
	if s.cfg.SignupsPerHour > 0 {
		signups = append(signups, s.limitSignUps(s.cfg.SignupsPerHour))
	}
	api.POST("/users", s.signUp, signups...)
	api.POST("/session", s.signIn, s.accountsOnly)
	api.DELETE("/session", s.signOut, s.accountsOnly)
	api.GET("/tokens", s.listTokens, account...)
	api.POST("/tokens", s.createToken, account...)
	api.DELETE("/tokens/:id", s.revokeToken, account...)
	api.GET("/teams", s.listTeams, account...)
	api.POST("/teams", s.createTeam, account...)
	api.GET("/teams/:name", s.getTeam, account...)
	api.POST("/teams/:name/members", s.inviteMember, account...)
	api.POST("/teams/:name/join", s.joinTeam, account...)
	api.DELETE("/teams/:name/members/:user", s.removeMember, account...)
	api.GET("/users", s.listUsers, admin...)
	api.PATCH("/users/:name", s.patchUser, admin...)
	api.GET("/invites", s.listInvites, admin...)
	api.POST("/invites", s.createInvite, admin...)
	api.DELETE("/invites/:id", s.deleteInvite, admin...)
	// Matches and ladders.
	api.GET("/games", s.listGames, read...)
	api.POST("/games", s.registerGame, s.guardChanges, s.adminOnly)
	api.GET("/games/registered", s.listRegisteredGames, s.guardChanges, s.adminOnly)
	api.DELETE("/games/:name", s.removeGame, s.guardChanges, s.adminOnly)
	api.GET("/images", s.listImages, s.signedIn)
	api.GET("/matches", s.listMatches, read...)
	api.POST("/matches", s.createMatch, starts...)
	api.POST("/builds", s.createBuild, starts...)
	api.GET("/builds/:id", s.getBuild, s.guardChanges)
	api.GET("/matches/:id", s.getMatch, read...)
	api.DELETE("/matches/:id", s.cancelMatch, changes...)
	api.GET("/matches/:id/replay", s.getReplay, read...)
	api.GET("/matches/:id/stream", s.stream, read...)
	api.GET("/ladders", s.listLadders, read...)
	api.GET("/ladders/:game", s.getLadder, read...)
	api.GET("/ladders/:game/stream", s.streamLadder, read...)
	api.POST("/ladders/:game/entries", s.registerEntry, starts...)
	api.GET("/ladders/:game/entries/:id", s.getEntry, read...)
	api.PATCH("/ladders/:game/entries/:id", s.patchEntry, changes...)
	api.DELETE("/ladders/:game/entries/:id", s.deleteEntry, changes...)
	// Contests.
	api.GET("/contests", s.listContests, read...)
	api.POST("/contests", s.createContest, s.guardChanges, s.adminOnly)
	api.GET("/contests/:id", s.getContest, read...)
	api.PATCH("/contests/:id", s.patchContest, s.guardChanges, s.adminOnly)
	api.POST("/contests/:id/rerun", s.rerunContest, s.guardChanges, s.adminOnly)
	api.POST("/contests/:id/clone", s.cloneContest, s.guardChanges, s.adminOnly)
	api.POST("/contests/:id/entries", s.enterContest, starts...)
	api.PATCH("/contests/:id/entries/:eid", s.patchContestEntry, changes...)
	api.GET("/contests/:id/standings", s.contestStandings, read...)
	api.GET("/contests/:id/export", s.exportContest, read...)
	// The registry's own: the visitor's images, deleting, collecting.
	api.GET("/registry", s.getRegistry, s.signedIn)
	api.DELETE("/registry/repositories/*", s.deleteRepository, changes...)
	api.POST("/registry/gc", s.collect, s.guardChanges, s.adminOnly)

	page, _ := fs.Sub(staticFiles, "static") // the folder is embedded above
	e.GET("/*", echo.WrapHandler(http.FileServer(http.FS(page))))
	return e
}

// apiError is an error with its HTTP status, for the central handler:
// only for answers that are purely HTTP (415, 413, 501). Every other
// refusal is an error of a class (package errs), which handleError maps.
type apiError struct {
	status int
	msg    string
}

func (e *apiError) Error() string { return e.msg }

func badRequest(format string, a ...any) error {
	return errs.Errorf(errs.ErrInvalid, format, a...)
}

func conflict(format string, a ...any) error {
	return errs.Errorf(errs.ErrConflict, format, a...)
}

func notFound(format string, a ...any) error {
	return errs.Errorf(errs.ErrNotFound, format, a...)
}

// classStatus is the status of each class of error (package errs).
var classStatus = map[error]int{
	errs.ErrNotFound:        http.StatusNotFound,
	errs.ErrInvalid:         http.StatusBadRequest,
	errs.ErrConflict:        http.StatusConflict,
	errs.ErrUnauthenticated: http.StatusUnauthorized,
	errs.ErrDenied:          http.StatusForbidden,
	errs.ErrUnavailable:     http.StatusServiceUnavailable,
	errs.ErrTooMany:         http.StatusTooManyRequests,
}

// handleError is the one place where errors become HTTP responses:
// {"error": "..."} with a 4xx for the caller's mistakes and a 5xx for the
// platform's. The status is the error's class's (errs.Class), with a
// Retry-After when an error of too many says how long to wait; an error
// of no class is a 500.
func (s *Server) handleError(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	status, msg := http.StatusInternalServerError, err.Error()
	var ae *apiError
	var he *echo.HTTPError
	switch {
	case errors.As(err, &ae):
		status, msg = ae.status, ae.msg
	case errors.As(err, &he):
		status = he.Code
		msg = fmt.Sprint(he.Message)
		if status == http.StatusRequestEntityTooLarge {
			msg = fmt.Sprintf("request body is larger than %d bytes", s.cfg.MaxBodyBytes)
		}
	default:
		if st, ok := classStatus[errs.Class(err)]; ok {
			status = st
		}
		if d := errs.RetryAfter(err); d > 0 && status == http.StatusTooManyRequests {
			c.Response().Header().Set("Retry-After", strconv.Itoa(max(1, int(math.Ceil(d.Seconds())))))
		}
	}
	if status >= 500 {
		s.log.Error("request failed", zap.String("uri", c.Request().RequestURI), zap.Error(err))
	}
	if c.Request().Method == http.MethodHead {
		c.NoContent(status)
		return
	}
	c.JSON(status, map[string]string{"error": msg})
}

func (s *Server) health(c echo.Context) error {
	status := map[string]any{"status": "ok", "docker": "ok"}
	if s.deps.Stdio != nil {
		status["stdio"] = s.deps.Stdio()
	}
	if s.deps.Workers != nil {
		status["workers"] = s.deps.Workers()
	}
	if s.deps.Queue != nil {
		status["queue"] = "ok"
		if err := s.deps.Queue(); err != nil {
			status["status"], status["queue"] = "unavailable", err.Error()
			return c.JSON(http.StatusServiceUnavailable, status)
		}
	}
	if s.deps.Ping != nil {
		ctx, cancel := context.WithTimeout(c.Request().Context(), 3*time.Second)
		defer cancel()
		if err := s.deps.Ping(ctx); err != nil {
			status["status"], status["docker"] = "unavailable", err.Error()
			return c.JSON(http.StatusServiceUnavailable, status)
		}
	}
	return c.JSON(http.StatusOK, status)
}

// Recover marks the matches that were not over when the server last
// stopped as failed ("interrupted") and removes their containers.
func (s *Server) Recover(ctx context.Context) error {
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

// Shutdown stops the ladders and takes no more matches, cancels (or lets
// finish, as configured) the ones in progress, removes their containers,
// and closes the HTTP side. Live viewers are disconnected.
func (s *Server) Shutdown(ctx context.Context) error {
	s.ladderMu.Lock()
	s.ladderShut = true
	stop, stopped := s.stopLadder, s.ladderStopped
	s.ladderMu.Unlock()
	if stop != nil {
		stop()
		<-stopped
	}
	s.shutChecks(ctx)
	s.queue.Shutdown(ctx, s.cfg.FinishOnShutdown)
	s.once.Do(func() { close(s.closing) })
	err := s.echo.Shutdown(ctx)
	s.collecting.Wait()
	s.building.Wait()
	if s.registry != nil {
		s.registry.Close()
	}
	return err
}

// startLadder runs the ladders' loop until Shutdown (once).
func (s *Server) startLadder() {
	s.ladderMu.Lock()
	defer s.ladderMu.Unlock()
	if s.ladderShut || s.stopLadder != nil {
		return
	}
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
}

// downloadBinary is GET /download/arena: this server's own arena command,
// a static Linux binary (the one that runs it, in compose too).
func (s *Server) downloadBinary(c echo.Context) error {
	if s.deps.Binary == "" {
		return notFound("this server offers no arena binary (it was not built static: make build)")
	}
	f, err := os.Open(s.deps.Binary)
	if err != nil {
		return notFound("this server's arena binary cannot be read: %v", err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return err
	}
	c.Response().Header().Set("Content-Disposition", `attachment; filename="arena"`)
	http.ServeContent(c.Response(), c.Request(), "arena", info.ModTime(), f)
	return nil
}

// Serve serves HTTP on l until Shutdown; it then returns
// http.ErrServerClosed. At most MaxConnections connections are served at
// once (more wait to be accepted), headers must arrive within
// HeaderTimeout and stay under 16 KiB, bodies within a minute; idle
// connections close after IdleTimeout. Responses other than live streams
// must be written within a minute; a stream gives each write as long.
func (s *Server) Serve(l net.Listener) error {
	hs := s.echo.Server
	hs.ReadHeaderTimeout = s.cfg.HeaderTimeout
	hs.ReadTimeout = time.Minute
	hs.WriteTimeout = time.Minute
	hs.IdleTimeout = s.cfg.IdleTimeout
	hs.MaxHeaderBytes = 16 << 10
	s.echo.Listener = netutil.LimitListener(l, s.cfg.MaxConnections)
	s.startLadder()
	s.runBuilds()
	if s.registry != nil {
		// Pushed versions whose check the last stop cut, or that could
		// not be checked, are checked now, once the registry answers
		// (the engine pulls them from it).
		s.goCheck(func(ctx context.Context) {
			if err := s.checkPending(ctx); err != nil {
				s.log.Error("check the pushed versions still pending", zap.Error(err))
			}
		})
		// The registry's garbage goes every CollectEvery, and old pushed
		// versions leave the engine once nothing pins them, until
		// Shutdown.
		s.untilShutdown(s.collectRegularly)
		s.untilShutdown(s.pruneRegularly)
	}
	return s.echo.StartServer(hs)
}

// untilShutdown runs f in the background with a context that Shutdown
// ends, and waits for it there.
func (s *Server) untilShutdown(f func(ctx context.Context)) {
	s.collecting.Go(func() {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go func() {
			<-s.closing
			cancel()
		}()
		f(ctx)
	})
}
