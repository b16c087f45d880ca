package web

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/distribution/reference"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/labstack/echo/v4"
	"go.uber.org/zap"

	"arena/accounts"
	"arena/internal/errs"
	"arena/matches"
	"arena/sourcebuild"
)

// Bots built from source (sourcebuild/), for people without Docker:
//
//	POST /api/builds?repository=NAME/bot&tag=v1&game=tanks[&kit=python][&bot=bot.py][&authors=…]
//	     the body a .zip or .tar.gz of the bot's folder → 202 and the build
//	GET  /api/builds/ID   the build: its state (queued, building, pushed,
//	     failed), why it failed, its log so far, and the reference pushed
//
// A build's image is pushed to the registry as its owner would push it
// (their namespaces, their quotas), and is then checked as any push is;
// the owner is read afresh when the build starts and before it pushes
// (one who left the team, or whose account was disabled, pushes
// nothing). An upload is refused (one at a time, a full line) before its
// body is read.
// Builds run on the server's engine, one at a time, and are remembered
// in memory (the last 200): a restart forgets them, not what they pushed.

// Builder builds a bot's image from an upload (sourcebuild.Builder).
type Builder interface {
	Build(ctx context.Context, req sourcebuild.Request, log io.Writer) (v1.Image, error)
}

// BuildsConfig is how uploads are built.
type BuildsConfig struct {
	// MaxUpload bounds an upload's archive (default 16 MiB).
	MaxUpload int64
	// Queue bounds the builds waiting (default 16); one runs at a time.
	Queue int
}

// buildUploadTypes are the Content-Types an upload may be sent with:
// none is one a form of another site can send without asking first.
var buildUploadTypes = []string{"application/zip", "application/gzip", "application/x-gzip", "application/octet-stream"}

// buildRecord is one build, as GET /api/builds/ID shows it.
type buildRecord struct {
	ID         string     `json:"id"`
	Owner      string     `json:"owner"`
	Repository string     `json:"repository"`
	Tag        string     `json:"tag"`
	Reference  string     `json:"reference"`
	Game       string     `json:"game"`
	Kit        string     `json:"kit,omitempty"`
	State      string     `json:"state"`
	Error      string     `json:"error,omitempty"`
	Digest     string     `json:"digest,omitempty"`
	Log        string     `json:"log"`
	CreatedAt  time.Time  `json:"created_at"`
	FinishedAt *time.Time `json:"finished_at,omitempty"`
}

// buildLogMax bounds a build's log kept.
const buildLogMax = 256 << 10

// builds are the server's builds: the last ones, by id, and the line of
// those waiting.
type builds struct {
	mu    sync.Mutex
	all   map[string]*buildRecord
	order []string
	logs  map[string]*boundedLog
	line  chan func(context.Context)
	// receiving are the owners whose upload is being read: each holds a
	// place in the line until it is queued or refused.
	receiving map[string]bool
}

// buildsKept is how many builds are remembered.
const buildsKept = 200

// boundedLog keeps a build's log, at most buildLogMax bytes.
type boundedLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *boundedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if room := buildLogMax - l.buf.Len(); room > 0 {
		l.buf.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

func (l *boundedLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// newBuilds makes the builds' line (a server with a registry; it builds
// when it has a Builder).
func (s *Server) newBuilds() {
	q := s.cfg.Builds.Queue
	if q <= 0 {
		q = 16
	}
	s.builds = &builds{all: map[string]*buildRecord{}, logs: map[string]*boundedLog{}, line: make(chan func(context.Context), q), receiving: map[string]bool{}}
}

// runBuilds runs the builds, one at a time, until Shutdown, which stops
// the one running; those waiting then fail, saying so.
func (s *Server) runBuilds() {
	if s.builds == nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-s.closing
		cancel()
	}()
	s.building.Go(func() {
		for {
			select {
			case <-ctx.Done():
				for {
					select {
					case run := <-s.builds.line:
						run(ctx)
					default:
						return
					}
				}
			case run := <-s.builds.line:
				run(ctx)
			}
		}
	})
}

func (s *Server) createBuild(c echo.Context) error {
	if s.deps.Builder == nil || s.registry == nil || s.builds == nil {
		return notFound("this server builds no uploads (it needs its registry, ARENA_REGISTRY=on)")
	}
	p := who(c)
	q := c.QueryParams()
	repo, tag, game := strings.TrimSpace(q.Get("repository")), strings.TrimSpace(q.Get("tag")), strings.TrimSpace(q.Get("game"))
	if tag == "" {
		tag = "latest"
	}
	named, err := reference.ParseNormalizedNamed(repo + ":" + tag)
	if err != nil || reference.Domain(named) != "docker.io" || !strings.Contains(repo, "/") {
		return badRequest("repository %q, tag %q: want NAME/bot (your name or a team's) and a tag", repo, tag)
	}
	if _, err := s.deps.Games.Find(game); err != nil {
		return badRequest("game: %v", err)
	}
	if kit := q.Get("kit"); kit != "" && !slices.Contains(sourcebuild.KitNames(), kit) {
		return badRequest("kit %q: one of %s (or none: told from the files)", kit, strings.Join(sourcebuild.KitNames(), ", "))
	}
	if err := s.registry.MayPush(p, repo); err != nil {
		return err
	}
	mt, _, _ := mime.ParseMediaType(c.Request().Header.Get("Content-Type"))
	if !slices.Contains(buildUploadTypes, mt) {
		return &apiError{http.StatusUnsupportedMediaType, "the body must be the bot's folder as a .zip or .tar.gz, sent with Content-Type: " + strings.Join(buildUploadTypes, ", ")}
	}
	// One at a time, and the line's room, before the body is read: a
	// place is held while it is.
	if err := s.holdBuildPlace(p.Name); err != nil {
		return err
	}
	held := true
	defer func() {
		if held {
			s.builds.mu.Lock()
			delete(s.builds.receiving, p.Name)
			s.builds.mu.Unlock()
		}
	}()
	max := s.cfg.Builds.MaxUpload
	if max <= 0 {
		max = 16 << 20
	}
	data, err := io.ReadAll(io.LimitReader(c.Request().Body, max+1))
	if err != nil {
		return badRequest("reading the upload: %v", err)
	}
	if int64(len(data)) > max {
		return &apiError{http.StatusRequestEntityTooLarge, fmt.Sprintf("the upload is larger than %d bytes", max)}
	}
	src, err := sourcebuild.Read(data, sourcebuild.DefaultLimits)
	if err != nil {
		return badRequest("%v", err)
	}
	rec := &buildRecord{ID: matches.NewMatchID(), Owner: p.Name, Repository: repo, Tag: tag, Reference: repo + ":" + tag,
		Game: game, Kit: q.Get("kit"), State: "queued", CreatedAt: s.now()}
	log := &boundedLog{}
	req := sourcebuild.Request{ID: rec.ID, Source: src, Kit: rec.Kit, Game: game, Main: q.Get("bot"), Authors: q.Get("authors")}
	owner := buildOwner{p: p}
	if p.Via == accounts.ViaSession {
		owner.epoch = s.sessions.GetInt64(c.Request().Context(), sessionEpoch)
	}
	s.builds.mu.Lock()
	delete(s.builds.receiving, p.Name)
	held = false
	s.builds.all[rec.ID], s.builds.logs[rec.ID] = rec, log
	s.builds.order = append(s.builds.order, rec.ID)
	for len(s.builds.order) > buildsKept {
		delete(s.builds.all, s.builds.order[0])
		delete(s.builds.logs, s.builds.order[0])
		s.builds.order = s.builds.order[1:]
	}
	select {
	case s.builds.line <- func(ctx context.Context) { s.runBuild(ctx, rec, req, owner, log) }:
	default:
		// Not so: the place held is the one taken (only uploads send to
		// the line, each holding a place first).
		now := s.now()
		rec.State, rec.Error, rec.FinishedAt = "failed", "too many builds are waiting: try again in a while", &now
		s.builds.mu.Unlock()
		return errs.New(errs.ErrTooMany, rec.Error)
	}
	view := *rec
	s.builds.mu.Unlock()
	c.Response().Header().Set("Location", "/api/builds/"+rec.ID)
	return c.JSON(http.StatusAccepted, view)
}

// holdBuildPlace holds a place in the line for a user's upload while it
// is read, refusing (429) a user whose build is not done yet, or whose
// last upload is still being read, and a line without room.
func (s *Server) holdBuildPlace(user string) error {
	s.builds.mu.Lock()
	defer s.builds.mu.Unlock()
	for _, r := range s.builds.all {
		if r.Owner == user && (r.State == "queued" || r.State == "building") {
			return errs.Errorf(errs.ErrTooMany, "your build %s is not done yet: one at a time", r.ID)
		}
	}
	if s.builds.receiving[user] {
		return errs.Errorf(errs.ErrTooMany, "your last upload is still being received: one at a time")
	}
	if len(s.builds.line)+len(s.builds.receiving) >= cap(s.builds.line) {
		return errs.Errorf(errs.ErrTooMany, "too many builds are waiting: try again in a while")
	}
	s.builds.receiving[user] = true
	return nil
}

// buildOwner is who uploaded a build, as the upload's request knew
// them (and their session's epoch, when it was one).
type buildOwner struct {
	p     accounts.Principal
	epoch int64
}

// ownerMayPush reads a build's owner afresh, as a request of theirs
// would be read now: their account must still be there and enabled, and
// may still push to the repository (their own namespace, or a team's
// they are still a member of). It returns them as they are now. The
// admin of local mode or of ARENA_TOKEN has no account to read.
func (s *Server) ownerMayPush(ctx context.Context, o buildOwner, repo string) (accounts.Principal, error) {
	p := o.p
	if s.accountsMode() && p.Via != accounts.ViaLocal && p.Via != accounts.ViaAdminToken {
		now, err := s.deps.Accounts.Principal(ctx, p.Name, p.Via, o.epoch)
		if err != nil {
			return accounts.Anonymous, err
		}
		now.TokenID = p.TokenID
		p = now
	}
	if err := s.registry.MayPush(p, repo); err != nil {
		if ns, _, _ := strings.Cut(repo, "/"); ns != p.Name && o.p.Owns(ns) && !p.Owns(ns) {
			return accounts.Anonymous, errs.Errorf(errs.ErrDenied, "you are no longer a member of team %s", ns)
		}
		return accounts.Anonymous, err
	}
	return p, nil
}

// runBuild builds and pushes one upload, as its owner is now: their
// rights are read afresh when the build starts and again before it
// pushes (they may have left the team, or been disabled, meanwhile).
func (s *Server) runBuild(ctx context.Context, rec *buildRecord, req sourcebuild.Request, owner buildOwner, log io.Writer) {
	if ctx.Err() != nil {
		s.finishBuild(rec, "", errors.New("the server stopped before the build began"))
		return
	}
	digest, err := s.buildAndPush(ctx, rec, req, owner, log)
	if err != nil {
		fmt.Fprintf(log, "failed: %v\n", err)
		if !errors.Is(err, sourcebuild.ErrBuild) && !errs.IsDenied(err) && !errs.IsUnauthenticated(err) {
			s.log.Warn("a build failed", zap.String("build", rec.ID), zap.String("owner", rec.Owner), zap.Error(err))
		}
	}
	s.finishBuild(rec, digest, err)
}

// buildAndPush checks the owner's rights, builds, checks them again
// and pushes as the owner is now; it returns the digest pushed.
func (s *Server) buildAndPush(ctx context.Context, rec *buildRecord, req sourcebuild.Request, owner buildOwner, log io.Writer) (string, error) {
	if _, err := s.ownerMayPush(ctx, owner, rec.Repository); err != nil {
		return "", fmt.Errorf("not built: %w", err)
	}
	s.builds.mu.Lock()
	rec.State = "building"
	s.builds.mu.Unlock()
	img, err := s.deps.Builder.Build(ctx, req, log)
	if err != nil {
		return "", err
	}
	p, err := s.ownerMayPush(ctx, owner, rec.Repository)
	if err != nil {
		return "", fmt.Errorf("not pushed: %w", err)
	}
	fmt.Fprintf(log, "pushing %s\n", rec.Reference)
	digest, err := s.registry.Push(ctx, p, rec.Repository, rec.Tag, img)
	if err != nil {
		return "", err
	}
	fmt.Fprintf(log, "pushed %s@%s: its check follows (My bots)\n", rec.Repository, digest)
	return digest, nil
}

func (s *Server) finishBuild(rec *buildRecord, digest string, err error) {
	s.builds.mu.Lock()
	defer s.builds.mu.Unlock()
	now := s.now()
	rec.FinishedAt, rec.Digest = &now, digest
	rec.State = "pushed"
	if err != nil {
		rec.State, rec.Error = "failed", err.Error()
	}
}

func (s *Server) getBuild(c echo.Context) error {
	if s.builds == nil {
		return notFound("this server builds no uploads")
	}
	p := who(c)
	s.builds.mu.Lock()
	rec, ok := s.builds.all[c.Param("id")]
	var view buildRecord
	if ok {
		view = *rec
		view.Log = s.builds.logs[rec.ID].String()
	}
	s.builds.mu.Unlock()
	// Another's build is as absent as one that never was.
	if !ok || (view.Owner != p.Name && !p.Admin()) {
		return notFound("no build %q", c.Param("id"))
	}
	return c.JSON(http.StatusOK, view)
}
