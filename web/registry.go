package web

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/distribution/distribution/v3/configuration"
	"github.com/distribution/reference"
	"github.com/labstack/echo/v4"
	"go.uber.org/zap"

	"arena/accounts"
	"arena/internal/errs"
	"arena/store"
)

// The registry's side of the server (registry/ is the registry itself):
//
//	/v2/…                                  the OCI registry (docker login, push, pull)
//	GET    /api/registry                   the visitor's images, usage, quotas and the docker commands
//	DELETE /api/registry/repositories/NAME a repository (its owner, or an admin)
//	POST   /api/registry/gc                a garbage collection now (admins)
//
// A pushed image is a bot: a match or a ladder entry names it as
// NAME/bot:tag, and the server makes its engine pull it from the registry
// by its digest, with the platform's credential, and pins it by its id
// (pulled.go: it is never tagged on the engine).

// RegistryConfig is the registry's policy.
type RegistryConfig struct {
	// Enabled serves the registry under /v2/.
	Enabled bool
	// Dir is where its blobs live; Storage, when set, is a storage
	// driver's configuration instead (see registry.ParseStorage).
	Dir     string
	Storage configuration.Storage
	// Host is the address this host's engine pulls from (HOST:PORT),
	// the one docker login and docker push name.
	Host string
	// Quotas per owner (user or team): bytes, repositories and tags
	// (0: no bound).
	MaxBytes       int64
	MaxRepos       int
	MaxTags        int
	CollectEvery   time.Duration // 0: a day
	UploadDeadline time.Duration // a push or pull request's own deadline (0: 30 min)
	// PulledGrace keeps a version pulled onto the engine at least this
	// long, whatever pins it (0: 10 min; see pulled.go).
	PulledGrace time.Duration
}

// serveRegistry answers /v2/ itself, before the page's middleware (a
// push is not JSON, nor a page of this origin), with the host allow-list
// and a deadline of its own.
func (s *Server) serveRegistry(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		p := c.Request().URL.Path
		if s.registry == nil || (p != "/v2" && !strings.HasPrefix(p, "/v2/")) {
			return next(c)
		}
		if !s.hostAllowed(c.Request().Host) {
			return errs.Errorf(errs.ErrDenied, "host %q is not one this server answers to (ARENA_HOSTS)", c.Request().Host)
		}
		if p == "/v2" {
			c.Request().URL.Path = "/v2/"
		}
		rc := http.NewResponseController(c.Response())
		rc.SetReadDeadline(time.Now().Add(s.cfg.Registry.UploadDeadline))
		rc.SetWriteDeadline(time.Now().Add(s.cfg.Registry.UploadDeadline))
		s.registry.ServeHTTP(c.Response(), c.Request())
		return nil
	}
}

// registryAuth authenticates a registry request: an account's name and
// API token (ARENA_TOKEN as the admin's); in local mode, anyone (with
// ARENA_TOKEN set, whoever sends it).
func (s *Server) registryAuth(ctx context.Context, name, token string) (accounts.Principal, error) {
	admin := accounts.Principal{Name: accounts.AdminName, Role: accounts.RoleAdmin, Via: accounts.ViaAdminToken}
	if s.cfg.Token != "" && subtle.ConstantTimeCompare([]byte(token), []byte(s.cfg.Token)) == 1 && (name == accounts.AdminName || !s.accountsMode()) {
		return admin, nil
	}
	if !s.accountsMode() {
		if s.cfg.Token == "" {
			admin.Via = accounts.ViaLocal
			return admin, nil
		}
		return accounts.Anonymous, errs.Errorf(errs.ErrUnauthenticated, "this server's registry takes ARENA_TOKEN as the password")
	}
	return s.deps.Accounts.ByToken(ctx, token)
}

// recordPush records a tag pushed, with what its image says of itself.
func (s *Server) recordPush(ctx context.Context, repo, tag, digest, by string) {
	im, err := s.registry.Describe(ctx, repo, digest)
	if err != nil {
		s.log.Warn("read a pushed image", zap.String("repository", repo), zap.String("tag", tag), zap.Error(err))
		return
	}
	ns, _, _ := strings.Cut(repo, "/")
	t := store.Tag{Repository: repo, Tag: tag, Owner: ns, Digest: digest, ImageID: im.ImageID, Size: im.Size, Game: im.Game, Authors: im.Authors, PushedBy: by, PushedAt: s.now()}
	if err := s.deps.Store.RecordTag(ctx, t); err != nil {
		s.log.Error("record a pushed tag", zap.Error(err))
		return
	}
	s.log.Info("image pushed", zap.String("repository", repo), zap.String("tag", tag), zap.String("digest", digest), zap.String("by", by))
	// The tag's last version may be pinned by nothing now.
	s.pulls.wake()
	// Checked before it plays, unless this very image was (pushed again)
	// or is being checked.
	got, ok, err := s.deps.Store.TagOf(ctx, repo, tag)
	if err != nil {
		s.log.Error("read a pushed tag", zap.Error(err))
		return
	}
	if ok && got.Digest == digest && got.State == store.TagPending {
		s.startCheck(got)
	}
}

// allowPush holds an owner to the quotas before a manifest is stored: a
// new repository past MaxRepos, a new tag past MaxTags, an image that
// would take the owner's images past MaxBytes (its size as stored, not
// as its manifest declares).
func (s *Server) allowPush(ctx context.Context, repo, tag, digest string, size int64) error {
	ns, _, _ := strings.Cut(repo, "/")
	u, err := s.deps.Store.RegistryUsage(ctx, ns)
	if err != nil {
		return err
	}
	tags, err := s.deps.Store.Tags(ctx, ns)
	if err != nil {
		return err
	}
	// A manifest pushed by digest (an index's images) adds no tag.
	newRepo, newTag := true, !strings.Contains(tag, ":")
	for _, t := range tags {
		if t.Repository == repo {
			newRepo = false
			if t.Tag == tag {
				newTag = false
			}
		}
		if t.Digest == digest {
			size = 0 // counted once, however many tags name it
		}
	}
	q := s.cfg.Registry
	switch {
	case q.MaxRepos > 0 && newRepo && u.Repositories >= q.MaxRepos:
		return errs.Errorf(errs.ErrDenied, "quota: %s has %d repositories, the most one may (ARENA_REGISTRY_MAX_REPOS); delete one on My bots", ns, u.Repositories)
	case q.MaxTags > 0 && newTag && u.Tags >= q.MaxTags:
		return errs.Errorf(errs.ErrDenied, "quota: %s has %d tags, the most one may (ARENA_REGISTRY_MAX_TAGS); delete a repository on My bots", ns, u.Tags)
	case q.MaxBytes > 0 && u.Bytes+size > q.MaxBytes:
		return errs.Errorf(errs.ErrDenied, "quota: %s's images weigh %s and this one %s, past the %s one may hold (ARENA_REGISTRY_QUOTA); delete a repository on My bots",
			ns, mib(u.Bytes), mib(size), mib(q.MaxBytes))
	}
	return nil
}

// pushedTag is the pushed tag a bot's reference names (NAME/bot:tag or
// HOST/NAME/bot:tag, this registry's), if it names one.
func (s *Server) pushedTag(ctx context.Context, ref string) (store.Tag, bool, error) {
	if s.registry == nil {
		return store.Tag{}, false, nil
	}
	named, err := reference.ParseNormalizedNamed(ref)
	if err != nil {
		return store.Tag{}, false, nil // the pin says what is wrong with it
	}
	if d := reference.Domain(named); d != "docker.io" && d != s.cfg.Registry.Host && (!s.hostAllowed(d) || slices.Contains(s.cfg.Hosts, "*")) {
		return store.Tag{}, false, nil // another registry's
	}
	tagged, ok := reference.TagNameOnly(named).(reference.NamedTagged)
	if !ok {
		return store.Tag{}, false, nil
	}
	return s.deps.Store.TagOf(ctx, reference.Path(named), tagged.Tag())
}

// gameLabel is the game a bot's image says it plays (io.arena.game): its
// pushed tag's, or its image's on the engine; "" when unknown.
func (s *Server) gameLabel(ctx context.Context, ref string) string {
	if t, ok, err := s.pushedTag(ctx, ref); err == nil && ok {
		return t.Game
	}
	img, err := s.deps.Orchestrator.Image(ctx, ref)
	if err != nil {
		return ""
	}
	return img.Game
}

// registryView is GET /api/registry.
type registryView struct {
	// Host is the registry's address as the visitor reaches it.
	Host   string          `json:"host"`
	Images []registryImage `json:"images"`
	Usage  map[string]any  `json:"usage"`
	// Commands are the lines a user types to push a bot.
	Commands []string `json:"commands"`
}

type registryImage struct {
	Reference  string    `json:"reference"`
	Repository string    `json:"repository"`
	Tag        string    `json:"tag"`
	Owner      string    `json:"owner"`
	Digest     string    `json:"digest"`
	ImageID    string    `json:"image_id"`
	Size       int64     `json:"size"`
	Game       string    `json:"game,omitempty"`
	Authors    string    `json:"authors,omitempty"`
	PushedBy   string    `json:"pushed_by"`
	PushedAt   time.Time `json:"pushed_at"`
	// The version's check before it plays: pending, ready or rejected;
	// its match, and why it was rejected (or is still pending), with what
	// the bot wrote to stderr.
	State      string     `json:"state"`
	CheckMatch string     `json:"check_match,omitempty"`
	Reason     string     `json:"reason,omitempty"`
	Stderr     string     `json:"stderr,omitempty"`
	CheckedAt  *time.Time `json:"checked_at,omitempty"`
}

func (s *Server) getRegistry(c echo.Context) error {
	if s.registry == nil {
		return notFound("this server has no registry (ARENA_REGISTRY=off)")
	}
	p := who(c)
	owners := p.Owners()
	if p.Admin() && c.QueryParam("all") == "1" {
		owners = nil
	}
	tags, err := s.deps.Store.Tags(c.Request().Context(), owners...)
	if err != nil {
		return err
	}
	// The commands name the registry as the visitor reaches the page.
	v := registryView{Host: c.Request().Host, Images: []registryImage{}, Usage: map[string]any{}}
	for _, t := range tags {
		v.Images = append(v.Images, registryImage{Reference: t.Repository + ":" + t.Tag, Repository: t.Repository, Tag: t.Tag, Owner: t.Owner,
			Digest: t.Digest, ImageID: t.ImageID, Size: t.Size, Game: t.Game, Authors: t.Authors, PushedBy: t.PushedBy, PushedAt: t.PushedAt,
			State: t.State, CheckMatch: t.CheckMatch, Reason: t.Reason, Stderr: t.Stderr})
		if !t.CheckedAt.IsZero() {
			v.Images[len(v.Images)-1].CheckedAt = &t.CheckedAt
		}
	}
	for _, o := range p.Owners() {
		u, err := s.deps.Store.RegistryUsage(c.Request().Context(), o)
		if err != nil {
			return err
		}
		q := s.cfg.Registry
		v.Usage[o] = map[string]any{"repositories": u.Repositories, "tags": u.Tags, "bytes": u.Bytes,
			"max_repositories": q.MaxRepos, "max_tags": q.MaxTags, "max_bytes": q.MaxBytes}
	}
	host, name := v.Host, p.Name
	pass := "an API token of yours (make one on your account page)"
	if !s.accountsMode() {
		pass = "anything"
		if s.cfg.Token != "" {
			pass = "ARENA_TOKEN"
		}
	}
	v.Commands = []string{
		fmt.Sprintf("docker login %s -u %s    # the password: %s", host, name, pass),
		fmt.Sprintf("docker tag my-bot %s/%s/my-bot:v1", host, name),
		fmt.Sprintf("docker push %s/%s/my-bot:v1", host, name),
		fmt.Sprintf("# then play it as %s/my-bot:v1", name),
	}
	return c.JSON(http.StatusOK, v)
}

// deleteRepository is DELETE /api/registry/repositories/NAME: every tag
// of it goes (its blobs at the next collection); its owner, a member of
// its team, or an admin.
func (s *Server) deleteRepository(c echo.Context) error {
	if s.registry == nil {
		return notFound("this server has no registry (ARENA_REGISTRY=off)")
	}
	repo := strings.Trim(c.Param("*"), "/")
	ns, _, _ := strings.Cut(repo, "/")
	if err := who(c).MayChange("repository "+repo, ns); err != nil {
		return err
	}
	ctx := c.Request().Context()
	tags, err := s.deps.Store.Tags(ctx, ns)
	if err != nil {
		return err
	}
	done := map[string]bool{}
	for _, t := range tags {
		if t.Repository != repo || done[t.Digest] {
			continue
		}
		done[t.Digest] = true
		if err := s.registry.Delete(ctx, repo, t.Digest); err != nil {
			return err
		}
	}
	if len(done) == 0 {
		return notFound("no repository %s in the registry", repo)
	}
	if err := s.deps.Store.ForgetManifest(ctx, repo, ""); err != nil {
		return err
	}
	s.log.Info("repository deleted", zap.String("repository", repo), zap.String("by", who(c).Name))
	s.pulls.wake()
	return c.NoContent(http.StatusNoContent)
}

// collect is POST /api/registry/gc (admins).
func (s *Server) collect(c echo.Context) error {
	if s.registry == nil {
		return notFound("this server has no registry (ARENA_REGISTRY=off)")
	}
	took, err := s.registry.Collect(c.Request().Context())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"took_ms": took.Milliseconds()})
}

// collectRegularly collects the registry's garbage every CollectEvery,
// until ctx ends.
func (s *Server) collectRegularly(ctx context.Context) {
	t := time.NewTicker(s.cfg.Registry.CollectEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if took, err := s.registry.Collect(ctx); err != nil {
			if !errors.Is(err, context.Canceled) {
				s.log.Error("collect the registry's garbage", zap.Error(err))
			}
		} else {
			s.log.Info("registry garbage collected", zap.Duration("took", took))
		}
	}
}

// mib is a byte count in MiB, with one decimal.
func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

// ExportPushed writes the pushed bot whose engine id is id as an archive
// the engine loads, read from the registry: what a joined worker whose
// engine lacks it is given (dispatch.ImageSource). Only images a tag
// names now, and whose check did not reject them, are handed out.
func (s *Server) ExportPushed(ctx context.Context, id string, w io.Writer) error {
	if s.registry == nil {
		return errs.New(errs.ErrNotFound, "this server has no registry: it hands out no image")
	}
	tags, err := s.deps.Store.TagsOfImage(ctx, id)
	if err != nil {
		return err
	}
	for _, t := range tags {
		if t.State == store.TagRejected {
			continue
		}
		_, err := s.registry.Export(ctx, t.Repository, t.Digest, w)
		return err
	}
	return errs.Errorf(errs.ErrNotFound, "no pushed bot is image %s", id)
}
