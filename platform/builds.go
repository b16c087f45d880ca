package platform

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/distribution/reference"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"go.uber.org/zap"

	"arena/accounts"
	"arena/internal/errs"
	"arena/matches"
	"arena/sourcebuild"
)

// Builder builds a bot's image from an upload (sourcebuild.Builder).
// Prepare readies a kit's builds ahead of the first (its base image):
// a draft of the kit asks for it as it opens.
type Builder interface {
	Build(ctx context.Context, req sourcebuild.Request, log io.Writer) (v1.Image, error)
	Prepare(ctx context.Context, kit string) error
}

// BuildsConfig is how uploads are built.
type BuildsConfig struct {
	// MaxUpload bounds an upload's archive (default 16 MiB).
	MaxUpload int64
	// Queue bounds the builds waiting (default 16).
	Queue int
	// Parallel builds run at once, one per user (0: half the CPUs, at
	// least 1). A kit whose image is assembled from the files (Python,
	// JavaScript: no build step) takes no place: it is assembled at once.
	Parallel int
}

// parallel is how many builds run at once.
func (c BuildsConfig) parallel() int {
	if c.Parallel > 0 {
		return c.Parallel
	}
	return max(1, runtime.NumCPU()/2)
}

// Build is one build: its state (queued, building, pushed, failed), why
// it failed, its log so far, and the reference pushed.
type Build struct {
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
	all   map[string]*Build
	order []string
	logs  map[string]*boundedLog
	line  chan func(context.Context)
	// receiving are the owners whose upload is being read: each holds a
	// place in the line until it is queued or refused.
	receiving map[string]bool
	// ctx is the builds' (Start to Shutdown); nil before Start.
	ctx context.Context
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
func (s *Platform) newBuilds() {
	q := s.cfg.Builds.Queue
	if q <= 0 {
		q = 16
	}
	s.builds = &builds{all: map[string]*Build{}, logs: map[string]*boundedLog{}, line: make(chan func(context.Context), q), receiving: map[string]bool{}}
}

// runBuilds runs the builds, BuildsConfig.Parallel at once, until
// Shutdown, which stops those running; those waiting then fail, saying
// so.
func (s *Platform) runBuilds() {
	if s.builds == nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-s.stopping
		cancel()
	}()
	s.builds.ctx = ctx
	for range s.cfg.Builds.parallel() {
		s.loops.Go(func() { s.buildLine(ctx) })
	}
}

// buildLine runs the builds of the line, one after another, until ctx
// ends; then it fails those left.
func (s *Platform) buildLine(ctx context.Context) {
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
}

// HoldBuildPlace holds a place in the line for a user's upload while it
// is read, refusing (429) a user whose build is not done yet, or whose
// last upload is still being read, and a line without room (unless the
// upload names a kit with no build step, which waits in no line).
func (rs *Registry) HoldBuildPlace(user, kit string) error {
	s := rs.p
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
	if k, err := sourcebuild.FindKit(kit, sourcebuild.Source{}); kit != "" && err == nil && k.Build == nil {
		s.builds.receiving[user] = true
		return nil
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
func (s *Platform) ownerMayPush(ctx context.Context, o buildOwner, repo string) (accounts.Principal, error) {
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
func (s *Platform) runBuild(ctx context.Context, rec *Build, req sourcebuild.Request, owner buildOwner, log io.Writer) {
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
func (s *Platform) buildAndPush(ctx context.Context, rec *Build, req sourcebuild.Request, owner buildOwner, log io.Writer) (string, error) {
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
	s.keepSource(ctx, rec, req.Source, digest)
	return digest, nil
}

// keepSource keeps the upload with the version it built, for the
// similarity report; it counts against the owner's quota and goes with
// the version (store/sources.go).
func (s *Platform) keepSource(ctx context.Context, rec *Build, src sourcebuild.Source, digest string) {
	var buf bytes.Buffer
	if err := sourcebuild.TarGz(src.Files, &buf); err != nil {
		s.log.Warn("pack an upload to keep it", zap.String("build", rec.ID), zap.Error(err))
		return
	}
	ns, _, _ := strings.Cut(rec.Repository, "/")
	if _, err := s.deps.Store.KeepSource(ctx, digest, ns, buf.Bytes(), s.now()); err != nil {
		s.log.Error("keep an upload with its version", zap.String("build", rec.ID), zap.Error(err))
	}
}

func (s *Platform) finishBuild(rec *Build, digest string, err error) {
	s.builds.mu.Lock()
	defer s.builds.mu.Unlock()
	now := s.now()
	rec.FinishedAt, rec.Digest = &now, digest
	rec.State = "pushed"
	if err != nil {
		rec.State, rec.Error = "failed", err.Error()
	}
	s.metrics.Builds.WithLabelValues(rec.State).Inc()
}

// Builds says whether the server builds uploads: it has a builder and
// its registry.
func (rs *Registry) Builds() bool { return rs.p.buildsOn() }

func (s *Platform) buildsOn() bool {
	return s.deps.Builder != nil && s.registry != nil && s.builds != nil
}

// BuildRequest is an upload to build: the repository (NAME/bot, the
// owner's or a team's) and tag it is pushed as, the game, and the kit,
// main file and authors (none: told from the files).
type BuildRequest struct {
	Repository, Tag, Game string
	Kit, Main, Authors    string
}

// CheckBuild checks a build p asks for before its upload is read: where
// it would be pushed (a tag of latest when none is given), its game and
// its kit.
func (rs *Registry) CheckBuild(p accounts.Principal, r *BuildRequest) error {
	s := rs.p
	if !s.buildsOn() {
		return errs.New(errs.ErrNotFound, "this server builds no uploads (it needs its registry, ARENA_REGISTRY=on)")
	}
	if r.Tag == "" {
		r.Tag = "latest"
	}
	named, err := reference.ParseNormalizedNamed(r.Repository + ":" + r.Tag)
	if err != nil || reference.Domain(named) != "docker.io" || !strings.Contains(r.Repository, "/") {
		return errs.Errorf(errs.ErrInvalid, "repository %q, tag %q: want NAME/bot (your name or a team's) and a tag", r.Repository, r.Tag)
	}
	if _, err := s.deps.Games.Find(r.Game); err != nil {
		return errs.Errorf(errs.ErrInvalid, "game: %v", err)
	}
	if r.Kit != "" && !slices.Contains(sourcebuild.KitNames(), r.Kit) {
		return errs.Errorf(errs.ErrInvalid, "kit %q: one of %s (or none: told from the files)", r.Kit, strings.Join(sourcebuild.KitNames(), ", "))
	}
	return s.registry.MayPush(p, r.Repository)
}

// MaxUpload is the largest upload a build takes.
func (rs *Registry) MaxUpload() int64 { return rs.p.cfg.Builds.MaxUpload }

// ReleaseBuildPlace gives back the place HoldBuildPlace held for a
// user's upload that is not queued after all.
func (rs *Registry) ReleaseBuildPlace(user string) {
	s := rs.p
	s.builds.mu.Lock()
	delete(s.builds.receiving, user)
	s.builds.mu.Unlock()
}

// QueueBuild puts an upload in the builds' line, in the place
// HoldBuildPlace held for its owner (epoch: their session's, when the
// upload came in one), and returns the build as it stands.
func (rs *Registry) QueueBuild(p accounts.Principal, epoch int64, r BuildRequest, src sourcebuild.Source) (Build, error) {
	s := rs.p
	rec := &Build{ID: matches.NewMatchID(), Owner: p.Name, Repository: r.Repository, Tag: r.Tag, Reference: r.Repository + ":" + r.Tag,
		Game: r.Game, Kit: r.Kit, State: "queued", CreatedAt: s.now()}
	log := &boundedLog{}
	req := sourcebuild.Request{ID: rec.ID, Source: src, Kit: rec.Kit, Game: r.Game, Main: r.Main, Authors: r.Authors}
	owner := buildOwner{p: p, epoch: epoch}
	s.builds.mu.Lock()
	defer s.builds.mu.Unlock()
	delete(s.builds.receiving, p.Name)
	s.builds.all[rec.ID], s.builds.logs[rec.ID] = rec, log
	s.builds.order = append(s.builds.order, rec.ID)
	for len(s.builds.order) > buildsKept {
		delete(s.builds.all, s.builds.order[0])
		delete(s.builds.logs, s.builds.order[0])
		s.builds.order = s.builds.order[1:]
	}
	run := func(ctx context.Context) { s.runBuild(ctx, rec, req, owner, log) }
	if kit, err := sourcebuild.FindKit(req.Kit, src); err == nil && kit.Build == nil && s.builds.ctx != nil {
		// Assembled from the files, with no build step: at once.
		ctx := s.builds.ctx
		s.loops.Go(func() { run(ctx) })
		return *rec, nil
	}
	select {
	case s.builds.line <- run:
	default:
		// Not so: the place held is the one taken (only uploads send to
		// the line, each holding a place first).
		now := s.now()
		rec.State, rec.Error, rec.FinishedAt = "failed", "too many builds are waiting: try again in a while", &now
		return Build{}, errs.New(errs.ErrTooMany, rec.Error)
	}
	return *rec, nil
}

// BuildOf is a build as p may see it, with its log so far: their own (an
// admin's: any). Another's build is as absent as one that never was.
func (rs *Registry) BuildOf(p accounts.Principal, id string) (Build, error) {
	s := rs.p
	if s.builds == nil {
		return Build{}, errs.New(errs.ErrNotFound, "this server builds no uploads")
	}
	s.builds.mu.Lock()
	rec, ok := s.builds.all[id]
	var view Build
	if ok {
		view = *rec
		view.Log = s.builds.logs[rec.ID].String()
	}
	s.builds.mu.Unlock()
	if !ok || (view.Owner != p.Name && !p.Admin()) {
		return Build{}, errs.Errorf(errs.ErrNotFound, "no build %q", id)
	}
	return view, nil
}
