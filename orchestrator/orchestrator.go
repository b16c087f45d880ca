package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"go.uber.org/zap"

	"arena/engine"
	"arena/internal/errs"
	"arena/matches"
	"arena/sandbox"
)

// Orchestrator plays matches with one launcher.
type Orchestrator struct {
	launcher Launcher
	log      *zap.Logger
	now      func() time.Time
	grace    time.Duration // for stopping a bot
	// budget is the replay budget of a match: what its bots' answers may
	// add up to (see WithReplayBudget).
	budget int64
}

// DefaultReplayBudget is a match's replay budget unless set otherwise.
const DefaultReplayBudget = 32 << 20

// WithReplayBudget sets what a match's answers may add up to, shared
// equally by its bots (default DefaultReplayBudget; 0 or less: the
// default). A bot whose answers pass its share is faulted output_limit:
// with each game's cap on one answer, it bounds a match's replay and the
// memory Arena holds for it, however long the match and whatever the bots
// write. (Answers are never truncated: the replay is verified from them.)
func WithReplayBudget(bytes int64) Option {
	return func(o *Orchestrator) {
		if bytes > 0 {
			o.budget = bytes
		}
	}
}

// Option configures an Orchestrator.
type Option func(*Orchestrator)

// WithLogger sets the logger (default: none).
func WithLogger(l *zap.Logger) Option { return func(o *Orchestrator) { o.log = l } }

// WithClock sets the clock used for timings (default: time.Now).
func WithClock(now func() time.Time) Option { return func(o *Orchestrator) { o.now = now } }

// New returns an orchestrator that starts bots with l.
func New(l Launcher, opts ...Option) *Orchestrator {
	o := &Orchestrator{launcher: l, log: zap.NewNop(), now: time.Now, grace: 5 * time.Second, budget: DefaultReplayBudget}
	for _, opt := range opts {
		opt(o)
	}
	return o
}

// Validate checks a request without starting anything: the request's own
// Check, and every bot reference well formed for the launcher. With
// images, every image must also be available (matches.ErrImageNotFound
// otherwise). Input problems are of errs.ErrInvalid.
func (o *Orchestrator) Validate(ctx context.Context, req matches.Request, images bool) error {
	_, _, _, err := o.prepare(ctx, req, images)
	return err
}

// Pin is Validate that also pins each bot to its image as it is now, by
// its id, so the match plays those exact images whenever and wherever it
// is played (a tag rebuilt or moved meanwhile does not change it). Seats
// pinned already (a ladder's entries, a pushed bot) are kept, and get the
// digests to pull them by elsewhere when none were given; local bots are
// not pinned (they run their file as it is at the start). Without images
// (the images are pulled at play time) nothing more is pinned.
func (o *Orchestrator) Pin(ctx context.Context, req matches.Request, images bool) (matches.Request, error) {
	_, imgs, _, err := o.prepare(ctx, req, images)
	if err != nil || !images {
		return req, err
	}
	given := len(req.ImageDigests) > 0
	ids := make([]string, len(imgs))
	digests := make([]string, len(imgs))
	for i, img := range imgs {
		switch {
		case len(req.ImageIDs) > 0 && req.ImageIDs[i] != "":
			ids[i] = req.ImageIDs[i]
			if given {
				digests[i] = req.ImageDigests[i]
			} else {
				digests[i] = digestFor(img)
			}
		case req.People[i] != nil:
		case !sandbox.IsLocalRef(img.Ref):
			ids[i], digests[i] = img.ID, digestFor(img)
		}
	}
	req.ImageIDs, req.ImageDigests = ids, digests
	return req, nil
}

// digestFor picks the digest to pull an image by: one of the repository
// it was named by, else any.
func digestFor(img sandbox.Image) string {
	repo, _, _ := strings.Cut(img.Ref, "@")
	if i := strings.LastIndex(repo, ":"); i > strings.LastIndex(repo, "/") {
		repo = repo[:i] // the tag
	}
	for _, d := range img.Digests {
		if name, _, _ := strings.Cut(d, "@"); name == repo || strings.HasSuffix(name, "/"+repo) {
			return d
		}
	}
	if len(img.Digests) > 0 {
		return img.Digests[0]
	}
	return ""
}

// Image looks a bot's image up without starting anything: its id (a
// ladder pins its entries to it; a request may name an image by its id).
// Errors are of errs.ErrInvalid for a malformed reference and of kind
// matches.ErrImageNotFound for an absent image.
func (o *Orchestrator) Image(ctx context.Context, ref string) (sandbox.Image, error) {
	if err := o.launcher.Check(ref); err != nil {
		return sandbox.Image{}, errs.Mark(errs.ErrInvalid, err)
	}
	img, err := o.launcher.Image(ctx, ref)
	if errors.Is(err, sandbox.ErrBadReference) {
		return sandbox.Image{}, errs.Mark(errs.ErrInvalid, err)
	}
	return img, err
}

// prepare validates a request and resolves its images (when asked to).
// With req.MissingOn, a pinned image absent here is not an error: absent
// says why, by seat ("" for the others).
func (o *Orchestrator) prepare(ctx context.Context, req matches.Request, resolve bool) (_ engine.Match, _ []sandbox.Image, absent []string, _ error) {
	match, err := req.Match()
	if err != nil {
		return nil, nil, nil, err
	}
	for i, ref := range req.Images {
		if err := checkPerson(req, i); err != nil {
			return nil, nil, nil, err
		}
		if req.People[i] != nil {
			continue
		}
		if err := o.launcher.Check(ref); err != nil {
			return nil, nil, nil, errs.Errorf(errs.ErrInvalid, "bot %d: %w", i+1, err)
		}
	}
	if !resolve {
		return match, nil, nil, nil
	}
	if len(req.ImageIDs) > 0 && len(req.ImageIDs) != len(req.Images) {
		return nil, nil, nil, errs.Errorf(errs.ErrInvalid, "%d image ids for %d bots", len(req.ImageIDs), len(req.Images))
	}
	if len(req.ImageDigests) > 0 && len(req.ImageDigests) != len(req.ImageIDs) {
		return nil, nil, nil, errs.Errorf(errs.ErrInvalid, "%d image digests for %d image ids", len(req.ImageDigests), len(req.ImageIDs))
	}
	images := make([]sandbox.Image, len(req.Images))
	absent = make([]string, len(req.Images))
	for i, ref := range req.Images {
		if req.People[i] != nil {
			images[i] = sandbox.Image{Ref: ref}
			continue
		}
		if j := slices.Index(req.Images, ref); j < i {
			images[i], absent[i] = images[j], absent[j]
			continue
		}
		if len(req.ImageIDs) == 0 || req.ImageIDs[i] == "" {
			if images[i], err = o.launcher.Image(ctx, ref); err != nil {
				if errors.Is(err, sandbox.ErrBadReference) {
					return nil, nil, nil, errs.Errorf(errs.ErrInvalid, "bot %d: %w", i+1, err)
				}
				return nil, nil, nil, err
			}
			continue
		}
		digest := ""
		if len(req.ImageDigests) > 0 {
			digest = req.ImageDigests[i]
		}
		images[i], err = o.pinned(ctx, ref, req.ImageIDs[i], digest)
		if err != nil && req.MissingOn != "" && errors.Is(err, matches.ErrImageNotFound) {
			images[i] = sandbox.Image{Ref: ref, ID: req.ImageIDs[i]}
			absent[i] = fmt.Sprintf("image %s (%s) is not on %s: %v", ref, req.ImageIDs[i], req.MissingOn, err)
			continue
		}
		if err != nil {
			return nil, nil, nil, fmt.Errorf("bot %d: image %s (%s): %w", i+1, ref, req.ImageIDs[i], err)
		}
	}
	return match, images, absent, nil
}

// checkPerson checks seat i's reference against the request's people: a
// person's seat is named human:NAME, and only a person's is.
func checkPerson(req matches.Request, i int) error {
	ref, person := req.Images[i], req.People[i] != nil
	switch {
	case person && !matches.IsHumanRef(ref):
		return errs.Errorf(errs.ErrInvalid, "bot %d: a person's seat is named %sNAME, not %s", i+1, matches.HumanPrefix, ref)
	case !person && matches.IsHumanRef(ref):
		return errs.Errorf(errs.ErrInvalid, "bot %d: %s names a person's seat, and no person plays it", i+1, ref)
	}
	return nil
}

// pinned finds the image ref was pinned to by its id; absent, it pulls it
// by its digest when there is one and the pull policy allows (the
// launcher pulls only then), and takes it only if it is that image.
func (o *Orchestrator) pinned(ctx context.Context, ref, id, digest string) (sandbox.Image, error) {
	img, err := o.launcher.Image(ctx, id)
	if errors.Is(err, sandbox.ErrBadReference) {
		return sandbox.Image{}, errs.Mark(errs.ErrInvalid, err)
	}
	if err != nil && errors.Is(err, matches.ErrImageNotFound) && digest != "" {
		byDigest, derr := o.launcher.Image(ctx, digest)
		switch {
		case derr == nil && byDigest.ID == id:
			img, err = byDigest, nil
		case derr == nil:
			err = errs.Mark(matches.ErrImageNotFound, fmt.Errorf("%s is image %s, not the pinned one", digest, byDigest.ID))
		default:
			err = errs.Mark(matches.ErrImageNotFound, fmt.Errorf("not here, and by its digest: %w", derr))
		}
	}
	if err != nil {
		return sandbox.Image{}, err
	}
	img.Ref = ref
	return img, nil
}
