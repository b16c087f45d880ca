package platform

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/distribution/distribution/v3/configuration"
	"github.com/distribution/reference"
	"go.uber.org/zap"

	"arena/accounts"
	"arena/internal/errs"
	"arena/registry"
	"arena/store"
)

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

// registryAuth authenticates a registry request: an account's name and
// API token (ARENA_TOKEN as the admin's); in local mode, anyone (with
// ARENA_TOKEN set, whoever sends it).
func (s *Platform) registryAuth(ctx context.Context, name, token string) (accounts.Principal, error) {
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

// recordPush records a manifest pushed: by digest, it counts against its
// owner's quota until a tag names it or the next collection removes it
// (store.RecordUntagged); under a tag, with what its image says of
// itself, pending its check.
func (s *Platform) recordPush(ctx context.Context, p registry.Push) {
	repo, tag, digest, by := p.Repo, p.Ref, p.Digest, p.By
	ns, _, _ := strings.Cut(repo, "/")
	if !p.Tagged() {
		size, err := s.uncounted(ctx, p)
		if err == nil {
			err = s.deps.Store.RecordUntagged(ctx, repo, digest, ns, size, s.now())
		}
		if err != nil {
			s.log.Error("record a manifest pushed by digest", zap.Error(err))
		}
		return
	}
	// Its own digest and its index's images now count in its size.
	if err := s.deps.Store.ForgetUntagged(ctx, repo, append([]string{digest}, p.Children...)...); err != nil {
		s.log.Error("record a pushed tag", zap.Error(err))
	}
	im, err := s.registry.Describe(ctx, repo, digest)
	if err != nil {
		s.log.Warn("read a pushed image", zap.String("repository", repo), zap.String("tag", tag), zap.Error(err))
		return
	}
	t := store.Tag{Repository: repo, Tag: tag, Owner: ns, Digest: digest, ImageID: im.ImageID, Size: im.Size, Game: im.Game, Authors: im.Authors, PushedBy: by, PushedAt: s.now()}
	if err := s.deps.Store.RecordTag(ctx, t); err != nil {
		s.log.Error("record a pushed tag", zap.Error(err))
		return
	}
	if isRunRepo(repo) {
		// A Run's image: counted as a tag, checked by nothing.
		if _, err := s.deps.Store.CheckTag(ctx, repo, tag, digest, store.Tag{State: store.TagRun, Reason: "a draft's Run image: submit the draft to make a version"}); err != nil {
			s.log.Error("record a Run's image", zap.Error(err))
		}
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
// as its manifest declares). A manifest pushed by digest counts at once;
// what is counted already (a tag's, or pushed by digest before: an
// index's images) is not counted again.
func (s *Platform) allowPush(ctx context.Context, p registry.Push) error {
	repo, tag, digest, size := p.Repo, p.Ref, p.Digest, p.Bytes
	if isRunRepo(repo) && ctx.Value(runPushKey{}) == nil {
		return errs.Errorf(errs.ErrDenied, "%s holds the image of your drafts' Runs, which Arena pushes itself: push your bot under another name", repo)
	}
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
	newRepo, newTag := true, p.Tagged()
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
	if size > 0 {
		if size, err = s.uncounted(ctx, p); err != nil {
			return err
		}
	}
	q := s.cfg.Registry
	switch {
	case q.MaxRepos > 0 && newRepo && u.Repositories >= q.MaxRepos:
		return errs.Errorf(errs.ErrDenied, "quota: %s has %d repositories, the most one may (ARENA_REGISTRY_MAX_REPOS); delete one on My bots", ns, u.Repositories)
	case q.MaxTags > 0 && newTag && u.Tags >= q.MaxTags:
		return errs.Errorf(errs.ErrDenied, "quota: %s has %d tags, the most one may (ARENA_REGISTRY_MAX_TAGS); delete a repository on My bots", ns, u.Tags)
	case q.MaxBytes > 0 && u.Bytes+size > q.MaxBytes:
		return errs.Errorf(errs.ErrDenied, "quota: %s's images weigh %s (%s of it the saves of drafts) and this one %s, past the %s one may hold (ARENA_REGISTRY_QUOTA; images pushed by digest with no tag count until the daily collection); delete a repository on My bots, or a draft",
			ns, mib(u.Bytes), mib(u.Drafts), mib(size), mib(q.MaxBytes))
	}
	return nil
}

// uncounted is what a manifest pushed adds to its owner's usage beyond
// what the manifests pushed by digest before count already: itself again
// nothing, an index of them only its own bytes and its other images'.
func (s *Platform) uncounted(ctx context.Context, p registry.Push) (int64, error) {
	counted, err := s.deps.Store.UntaggedSizes(ctx, p.Repo, append([]string{p.Digest}, p.Children...)...)
	if err != nil {
		return 0, err
	}
	if _, ok := counted[p.Digest]; ok {
		return 0, nil
	}
	size := p.Bytes
	for _, c := range p.Children {
		size -= counted[c]
	}
	return max(0, size), nil
}

// pushedTag is the pushed tag a bot's reference names (see PushedName),
// if it names one.
func (s *Platform) pushedTag(ctx context.Context, ref string) (store.Tag, bool, error) {
	if s.registry == nil {
		return store.Tag{}, false, nil
	}
	repo, tag, ok := s.pushedName(ref)
	if !ok {
		return store.Tag{}, false, nil
	}
	return s.deps.Store.TagOf(ctx, repo, tag)
}

// pushedName is the repository and tag a bot's reference would have in
// this server's registry (NAME/bot:tag, or HOST/NAME/bot:tag with HOST
// this registry's address); false for another registry's, or a
// reference that does not parse.
func (s *Platform) pushedName(ref string) (repo, tag string, ok bool) {
	named, err := reference.ParseNormalizedNamed(ref)
	if err != nil {
		return "", "", false // the pin says what is wrong with it
	}
	if d := reference.Domain(named); d != "docker.io" && !s.ownRegistry(d) {
		return "", "", false // another registry's
	}
	tagged, ok := reference.TagNameOnly(named).(reference.NamedTagged)
	if !ok {
		return "", "", false
	}
	return reference.Path(named), tagged.Tag(), true
}

// gameLabel is the game a bot's image says it plays (io.arena.game): its
// pushed tag's, or its image's on the engine; "" when unknown.
func (s *Platform) gameLabel(ctx context.Context, ref string) string {
	if t, ok, err := s.pushedTag(ctx, ref); err == nil && ok {
		return t.Game
	}
	img, err := s.deps.Orchestrator.Image(ctx, ref)
	if err != nil {
		return ""
	}
	return img.Game
}

// collectRegularly collects the registry's garbage every CollectEvery,
// until ctx ends.
func (s *Platform) collectRegularly(ctx context.Context) {
	t := time.NewTicker(s.cfg.Registry.CollectEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if took, err := s.collectRegistry(ctx); err != nil {
			if !errors.Is(err, context.Canceled) {
				s.log.Error("collect the registry's garbage", zap.Error(err))
			}
		} else {
			s.log.Info("registry garbage collected", zap.Duration("took", took))
		}
	}
}

// collectRegistry removes the registry's blobs and manifests no tag
// names (registry.Collect), and forgets the manifests pushed by digest
// it removed: they no longer count against their owners' quotas.
func (s *Platform) collectRegistry(ctx context.Context) (time.Duration, error) {
	if s.registry == nil {
		return 0, errs.New(errs.ErrNotFound, "this server has no registry (ARENA_REGISTRY=off)")
	}
	start := s.now()
	took, err := s.registry.Collect(ctx)
	if err != nil {
		return took, err
	}
	// A push recorded since start may have been collected too: counted
	// until the next collection, never less than it holds.
	return took, s.deps.Store.CollectedUntagged(ctx, start)
}

// mib is a byte count in MiB, with one decimal.
func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

// ExportPushed writes the pushed bot whose engine id is id as an archive
// the engine loads, read from the registry: what a joined worker whose
// engine lacks it is given (dispatch.ImageSource). Only images a tag
// names now, and whose check did not reject them, are handed out.
func (s *Platform) ExportPushed(ctx context.Context, id string, w io.Writer) error {
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

// DeleteRepository deletes every tag of a repository (its blobs go at
// the next collection), for its owner, a member of its team, or an
// admin.
func (rs *Registry) DeleteRepository(ctx context.Context, p accounts.Principal, repo string) error {
	s := rs.p
	if s.registry == nil {
		return errs.New(errs.ErrNotFound, "this server has no registry (ARENA_REGISTRY=off)")
	}
	ns, _, _ := strings.Cut(repo, "/")
	if err := p.MayChange("repository "+repo, ns); err != nil {
		return err
	}
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
		return errs.Errorf(errs.ErrNotFound, "no repository %s in the registry", repo)
	}
	if err := s.deps.Store.ForgetManifest(ctx, repo, ""); err != nil {
		return err
	}
	s.log.Info("repository deleted", zap.String("repository", repo), zap.String("by", p.Name))
	s.pulls.wake()
	return nil
}

// RegistryView is what one sees of the registry: the pushed versions
// (theirs and their teams'; every one, for an admin who asks), each
// owner's usage against the quotas, and what to give docker login as
// the password.
type RegistryView struct {
	Images   []store.Tag
	Usage    map[string]UsageView
	Password string
}

// UsageView is an owner's usage of the registry, and the quotas.
type UsageView struct {
	Repositories    int   `json:"repositories"`
	Tags            int   `json:"tags"`
	Bytes           int64 `json:"bytes"`
	DraftBytes      int64 `json:"draft_bytes"`
	MaxRepositories int   `json:"max_repositories"`
	MaxTags         int   `json:"max_tags"`
	MaxBytes        int64 `json:"max_bytes"`
}

// View is the registry as p sees it: their own and their teams' (all, an
// admin's, every owner's).
func (rs *Registry) View(ctx context.Context, p accounts.Principal, all bool) (RegistryView, error) {
	s := rs.p
	if s.registry == nil {
		return RegistryView{}, errs.New(errs.ErrNotFound, "this server has no registry (ARENA_REGISTRY=off)")
	}
	if err := signedIn(p, "see your images"); err != nil {
		return RegistryView{}, err
	}
	owners := p.Owners()
	if p.Admin() && all {
		owners = nil
	}
	tags, err := s.deps.Store.Tags(ctx, owners...)
	if err != nil {
		return RegistryView{}, err
	}
	// A Run's image is no version: not listed.
	tags = slices.DeleteFunc(tags, func(t store.Tag) bool { return t.State == store.TagRun })
	v := RegistryView{Images: tags, Usage: map[string]UsageView{}, Password: "an API token of yours (make one on your account page)"}
	q := s.cfg.Registry
	for _, o := range p.Owners() {
		u, err := s.deps.Store.RegistryUsage(ctx, o)
		if err != nil {
			return RegistryView{}, err
		}
		v.Usage[o] = UsageView{Repositories: u.Repositories, Tags: u.Tags, Bytes: u.Bytes, DraftBytes: u.Drafts, MaxRepositories: q.MaxRepos, MaxTags: q.MaxTags, MaxBytes: q.MaxBytes}
	}
	if !s.accountsMode() {
		v.Password = "anything"
		if s.cfg.Token != "" {
			v.Password = "ARENA_TOKEN"
		}
	}
	return v, nil
}

// Collect collects the registry's garbage now (admins), and says how
// long it took.
func (rs *Registry) Collect(ctx context.Context, p accounts.Principal) (time.Duration, error) {
	if err := staff(p, "collect the registry's garbage"); err != nil {
		return 0, err
	}
	return rs.p.collectRegistry(ctx)
}
