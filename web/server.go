// Package web is Arena's HTTP server, in front of the platform (package
// platform, the use cases): the JSON API to start, list, watch and cancel
// matches, the live stream of a match's frames (Server-Sent Events), the
// ladders and contests, accounts, the registry, builds, and the page
// (plain JavaScript and canvas, embedded). A handler decodes a request,
// calls the platform (or reads the store, for lists and pages) and
// encodes the answer.
//
// server.go builds the server (Config, Deps, New), its routes, the one
// error handler, Serve and Shutdown; auth.go says who a request acts for
// (sessions, the principal, the route guards); guard.go holds the
// defences. The handlers are one file per resource: matches.go and
// stream.go (a match's live stream), games.go, images.go, ladder.go,
// contests.go, users.go (accounts, signing up, in and out), tokens.go,
// teams.go, invites.go, registry.go, builds.go, drafts.go and player.go
// (a logic game's viewer page).
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
	"net/netip"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/alexedwards/scs/v2"
	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
	"go.uber.org/zap"
	"golang.org/x/net/netutil"
	"golang.org/x/sync/semaphore"
	"golang.org/x/time/rate"

	"arena/internal/errs"
	"arena/metrics"
	"arena/platform"
	"arena/registry"
)

//go:embed static
var staticFiles embed.FS

// Config is the HTTP side's policy (the platform's is platform.Config).
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
	// StartsPerMinute bounds the matches one user (in local mode, one
	// client) may start a minute, in bursts of StartsBurst (0: 60 and 20;
	// negative: no limit).
	StartsPerMinute, StartsBurst int
	// ReadsPerMinute bounds the API requests of one anonymous client a
	// minute in accounts mode, in bursts of a fifth of it (0: 600;
	// negative: no limit).
	ReadsPerMinute int
	// SignupsPerHour bounds the sign-ups from one client an hour without
	// an invitation (0: 10; negative: no limit).
	SignupsPerHour int
	// TrustedProxies are the proxies whose connections may name the
	// client and the scheme (proxy.go); none: no one may.
	TrustedProxies []netip.Prefix
	// MaxConnections bounds the connections served at once; more wait to
	// be accepted (0: 1024).
	MaxConnections int
	// HeaderTimeout bounds reading a request's headers, and IdleTimeout
	// how long a kept-alive connection waits for its next request (0: 5 s
	// and 60 s).
	HeaderTimeout, IdleTimeout time.Duration
	// MaxBodyBytes caps request bodies.
	MaxBodyBytes int64
}

// Deps are the server's collaborators.
type Deps struct {
	// Services are what the server serves: its handlers decode a
	// request, call one of them and encode its answer.
	Services platform.Services
	// Lifecycle starts the services' loops when the server serves, and
	// stops them when it shuts down.
	Lifecycle Lifecycle
	// Metrics are the server's metrics, served at /metrics (admins).
	Metrics *metrics.Set
	// Registry is the OCI registry, served under /v2/ (nil: none), each
	// request within RegistryDeadline.
	Registry         *registry.Registry
	RegistryDeadline time.Duration
	// Ping checks the Docker engine for /healthz.
	Ping func(ctx context.Context) error
	// Queue says whether matches can be queued to workers (for
	// /healthz; nil: no work queue), Workers how the workers stand.
	Queue   func() error
	Workers func() any
	// Stdio says how bots' stdio travels (for /healthz).
	Stdio func() string
	// Binary, when set, is the arena command's static binary, offered at
	// /download/arena: the command line for those who run the server
	// with compose and have no Go.
	Binary string
	Log    *zap.Logger
	Now    func() time.Time
}

// Lifecycle starts and stops what the server serves (platform.Platform).
type Lifecycle interface {
	Start()
	Shutdown(ctx context.Context)
	Close()
}

// Server is the HTTP server in front of the platform.
type Server struct {
	cfg     Config
	deps    Deps
	svc     platform.Services
	log     *zap.Logger
	now     func() time.Time
	echo    *echo.Echo
	closing chan struct{}
	once    sync.Once
	// sessions are accounts mode's sessions.
	sessions *scs.SessionManager
	// signups count the sign-ups without invitation (admitSignUp; nil:
	// not limited).
	signups *middleware.RateLimiterMemoryStore
	// saving bounds the bytes of drafts' saves read at once (drafts.go).
	saving *semaphore.Weighted
}

// New builds the server in front of deps.Platform.
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
	s := &Server{cfg: cfg, deps: deps, svc: deps.Services, log: deps.Log, now: deps.Now, closing: make(chan struct{})}
	if cfg.Auth == AuthAccounts {
		s.sessions = newSessions(s.svc.People.Sessions(), cfg.SessionLifetime)
	}
	if cfg.SignupsPerHour > 0 {
		s.signups = middleware.NewRateLimiterMemoryStoreWithConfig(middleware.RateLimiterMemoryStoreConfig{
			Rate: rate.Limit(float64(cfg.SignupsPerHour) / 3600), Burst: cfg.SignupsPerHour, ExpiresIn: time.Hour,
		})
	}
	s.saving = semaphore.NewWeighted(2 * (2*s.svc.Drafts.FileLimits().Bytes + 1<<20))
	s.echo = s.routes()
	return s
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
			fields := []zap.Field{zap.String("method", v.Method), zap.String("uri", v.URI), zap.Int("status", v.Status), zap.Duration("latency", v.Latency),
				zap.String("client", s.clientIP(c.Request()))}
			if v.Error != nil {
				fields = append(fields, zap.Error(v.Error))
			}
			route := c.Path()
			if route == "" {
				route = "unmatched"
			}
			s.deps.Metrics.HTTPRequests.WithLabelValues(route, v.Method, strconv.Itoa(v.Status)).Inc()
			if v.Status >= 500 {
				s.log.Error("request", fields...)
			} else {
				s.log.Info("request", fields...)
			}
			return nil
		},
	}))
	e.Use(middleware.BodyLimitWithConfig(middleware.BodyLimitConfig{Limit: fmt.Sprintf("%dB", s.cfg.MaxBodyBytes),
		// An upload to build, a roster and a draft's save are bounded by
		// limits of their own (builds.go, roster.go, drafts.go).
		Skipper: func(c echo.Context) bool { return isUpload(c) || isRoster(c) || isDraftSave(c) }}))
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
	// Notifications, and the visitor's webhook.
	api.GET("/notifications", s.listNotifications, account...)
	api.POST("/notifications/read", s.readNotifications, append(changes, account...)...)
	api.GET("/me/webhook", s.getWebhook, account...)
	api.PUT("/me/webhook", s.putWebhook, append(changes, account...)...)
	api.DELETE("/me/webhook", s.deleteWebhook, append(changes, account...)...)
	api.POST("/users", s.signUp, s.accountsOnly)
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
	api.POST("/users/import", s.importRoster, admin...)
	api.POST("/users/:name/password-link", s.createPasswordLink, admin...)
	api.POST("/users/password", s.setPasswordByLink, s.accountsOnly)
	api.GET("/invites", s.listInvites, admin...)
	api.POST("/invites", s.createInvite, admin...)
	api.DELETE("/invites/:id", s.deleteInvite, admin...)
	// Matches and ladders.
	api.GET("/games", s.listGames, read...)
	api.POST("/games", s.registerGame, s.guardChanges, s.adminOnly)
	api.GET("/games/registered", s.listRegisteredGames, s.guardChanges, s.adminOnly)
	api.DELETE("/games/:name", s.removeGame, s.guardChanges, s.adminOnly)
	api.GET("/disk", s.getDisk, s.guardChanges, s.adminOnly)
	e.GET("/metrics", echo.WrapHandler(s.deps.Metrics.Handler()), s.adminOnly)
	api.GET("/images", s.listImages, s.signedIn)
	api.GET("/matches", s.listMatches, read...)
	api.POST("/matches", s.createMatch, starts...)
	api.POST("/builds", s.createBuild, starts...)
	api.GET("/builds/:id", s.getBuild, s.guardChanges)
	api.GET("/matches/:id", s.getMatch, read...)
	api.DELETE("/matches/:id", s.cancelMatch, changes...)
	api.GET("/matches/:id/replay", s.getReplay, read...)
	api.GET("/matches/:id/stream", s.stream, read...)
	api.GET("/matches/:id/moves", s.getMoves, s.signedIn)
	api.POST("/matches/:id/moves", s.postMove, append(changes, s.signedIn)...)
	api.GET("/challenges", s.listChallenges, s.signedIn)
	api.POST("/challenges", s.createChallenge, append(starts, s.signedIn)...)
	api.GET("/challenges/:id", s.getChallenge, s.signedIn)
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
	api.GET("/contests/:id/class", s.contestClass, s.signedIn)
	api.GET("/contests/:id/grades", s.contestGrades, s.signedIn)
	api.GET("/contests/:id/similarity", s.contestSimilarity, s.guardChanges, s.adminOnly)
	api.GET("/similarity", s.getSimilarity, s.guardChanges, s.adminOnly)
	api.POST("/contests/:id/gates/run", s.runGates, starts...)
	// Drafts written in the page, and the kits' starters they begin from.
	api.GET("/kits", s.listKits, read...)
	api.GET("/drafts", s.listDrafts, changes...)
	api.POST("/drafts", s.createDraft, changes...)
	api.GET("/drafts/:id", s.getDraft, changes...)
	api.PUT("/drafts/:id", s.saveDraft, changes...)
	api.PATCH("/drafts/:id", s.renameDraft, changes...)
	api.DELETE("/drafts/:id", s.deleteDraft, changes...)
	api.GET("/drafts/:id/saves/:version", s.getDraftSave, changes...)
	api.GET("/drafts/:id/opponents", s.draftOpponents, changes...)
	api.POST("/drafts/:id/run", s.runDraft, starts...)
	api.GET("/drafts/:id/run", s.getRun, changes...)
	api.GET("/drafts/:id/run/stream", s.streamRun, changes...)
	api.POST("/drafts/:id/submit", s.submitDraft, starts...)
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
// refusal is an error of a class (package errs), which handleError
// answers with its class's status (errs.HTTPStatus).
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

// handleError is the one place where errors become HTTP responses:
// {"error": "..."} with a 4xx for the caller's mistakes and a 5xx for the
// platform's. The status is the error's class's (errs.HTTPStatus), with
// a Retry-After when an error of too many says how long to wait; an
// error of no class is a 500.
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
		status = errs.HTTPStatus(err)
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

// Shutdown stops the platform (its ladders, its queue: the matches in
// progress are cancelled, or let finish, as configured) and closes the
// HTTP side. Live viewers are disconnected.
func (s *Server) Shutdown(ctx context.Context) error {
	s.deps.Lifecycle.Shutdown(ctx)
	s.once.Do(func() { close(s.closing) })
	err := s.echo.Shutdown(ctx)
	s.deps.Lifecycle.Close()
	return err
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
	s.deps.Lifecycle.Start()
	return s.echo.StartServer(hs)
}
