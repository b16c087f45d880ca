package platform

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"
)

// Pushed bots on the server's engine.
//
// A pushed version is pulled onto the engine by its digest
// (HOST/NAME/bot@sha256:…, HOST the registry's address,
// RegistryConfig.Host) and held there by a tag of the registry's own
// host, one per version: HOST/NAME/bot:sha256-HEX. A pushed bot never
// gets a name on the engine that anything else could be using (an
// operator's image, a registered logic game, the example bots: none is
// named under the registry's host), and matches, ladders and contests
// play it by its id. (The tag, not the digest alone, holds it: the engine
// drops an image's digest references with the last tag of their
// repository, which a client pushing from the same engine removes.)
//
// Each version stays on the engine while something pins it: a tag of the
// registry names it now, a ladder entry or a contest's final plays it, a
// match that is not over plays it, or it was pulled in the last
// PulledGrace. Older versions leave the engine (pruneEngine) after a
// push, after a match that played one, and every pruneEvery.

// EngineImages is the server's engine as the registry's side needs it.
type EngineImages interface {
	// Pull makes the engine hold a pushed version: pull
	// (HOST/NAME/bot@DIGEST) pulled with auth (Docker's X-Registry-Auth)
	// unless the engine has it, and tagged tag.
	Pull(ctx context.Context, pull, tag, auth string) error
	// Pulled lists the engine's images that have tags of the registry at
	// host made by Pull (HOST/…:sha256-HEX): each with its id and those
	// tags.
	Pulled(ctx context.Context, host string) ([]PulledImage, error)
	// Remove removes one such tag; the image goes with its last tag,
	// unless a container uses it.
	Remove(ctx context.Context, tag string) error
}

// PulledImage is an image the engine holds for the registry.
type PulledImage struct {
	ID   string
	Refs []string
}

// HeldTag reports whether ref is a tag Pull makes (HOST/…:sha256-HEX).
func HeldTag(ref string) bool {
	i := strings.LastIndex(ref, ":sha256-")
	if i < 0 || strings.Contains(ref[i+1:], "/") || len(ref)-i-len(":sha256-") != 64 {
		return false
	}
	for _, c := range ref[i+len(":sha256-"):] {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// pruneEvery is how often versions nothing pins leave the engine, besides
// after pushes and matches.
const pruneEvery = 10 * time.Minute

// defaultPulledGrace is how long a version just pulled is kept whatever
// pins it: the time between its pull and the entry, final or match that
// pins it being recorded.
const defaultPulledGrace = 10 * time.Minute

// pulls are the versions this server pulled and what pins them in
// memory: the matches not over.
type pulls struct {
	mu sync.Mutex
	// at is when each reference was last pulled or resolved.
	at map[string]time.Time
	// matches are the image ids each match not over plays.
	matches map[string][]string
	// kick asks for a prune soon.
	kick chan struct{}
}

func (p *pulls) init() {
	p.at, p.matches, p.kick = map[string]time.Time{}, map[string][]string{}, make(chan struct{}, 1)
}

// wake asks the pruning loop to run soon.
func (p *pulls) wake() {
	select {
	case p.kick <- struct{}{}:
	default:
	}
}

// heldRef is the tag the engine holds a pushed version by.
func (s *Platform) heldRef(repo, digest string) string {
	return s.cfg.Registry.Host + "/" + repo + ":" + strings.Replace(digest, ":", "-", 1)
}

// pullVersion makes the engine hold a pushed version (repo@digest) and
// returns its tag there and its id.
func (s *Platform) pullVersion(ctx context.Context, repo, digest string) (ref, id string, err error) {
	if s.deps.Engine == nil {
		return "", "", fmt.Errorf("bot %s@%s: this server cannot pull pushed bots onto its engine", repo, digest)
	}
	ref = s.heldRef(repo, digest)
	s.pulls.mu.Lock()
	s.pulls.at[ref] = s.now()
	s.pulls.mu.Unlock()
	pull := s.cfg.Registry.Host + "/" + repo + "@" + digest
	if err := s.deps.Engine.Pull(ctx, pull, ref, s.registry.PlatformAuth(s.cfg.Registry.Host)); err != nil {
		return "", "", fmt.Errorf("bot %s: pull it from the registry: %w", repo, err)
	}
	img, err := s.deps.Orchestrator.Image(ctx, ref)
	if err != nil {
		return "", "", fmt.Errorf("bot %s: %w", repo, err)
	}
	return ref, img.ID, nil
}

// holdImages pins the images of a match until it is over.
func (s *Platform) holdImages(match string, ids []string) {
	if len(ids) == 0 {
		return
	}
	s.pulls.mu.Lock()
	s.pulls.matches[match] = ids
	s.pulls.mu.Unlock()
}

// releaseImages unpins the images of a match that is over.
func (s *Platform) releaseImages(match string) {
	s.pulls.mu.Lock()
	_, ok := s.pulls.matches[match]
	delete(s.pulls.matches, match)
	s.pulls.mu.Unlock()
	if ok {
		s.pulls.wake()
	}
}

// PruneEngine removes from the engine the pushed versions nothing pins
// (see above). It returns the references removed.
func (s *Platform) PruneEngine(ctx context.Context) ([]string, error) {
	if s.deps.Engine == nil || s.registry == nil {
		return nil, nil
	}
	images, err := s.deps.Engine.Pulled(ctx, s.cfg.Registry.Host)
	if err != nil || len(images) == 0 {
		return nil, err
	}
	tags, err := s.deps.Store.Tags(ctx)
	if err != nil {
		return nil, err
	}
	current := map[string]bool{}
	for _, t := range tags {
		current[s.heldRef(t.Repository, t.Digest)] = true
	}
	ids, err := s.deps.Store.PinnedImages(ctx)
	if err != nil {
		return nil, err
	}
	pinned := map[string]bool{}
	for _, id := range ids {
		pinned[id] = true
	}
	grace := s.cfg.Registry.PulledGrace
	s.pulls.mu.Lock()
	for _, ids := range s.pulls.matches {
		for _, id := range ids {
			pinned[id] = true
		}
	}
	recent := map[string]bool{}
	for ref, at := range s.pulls.at {
		if s.now().Sub(at) < grace {
			recent[ref] = true
		} else {
			delete(s.pulls.at, ref)
		}
	}
	s.pulls.mu.Unlock()
	var removed []string
	for _, img := range images {
		if pinned[img.ID] {
			continue
		}
		for _, ref := range img.Refs {
			if current[ref] || recent[ref] || !strings.HasPrefix(ref, s.cfg.Registry.Host+"/") || !HeldTag(ref) {
				continue
			}
			if err := s.deps.Engine.Remove(ctx, ref); err != nil {
				// In use by a container (a warm one, say): next time.
				s.log.Debug("remove an old pushed version from the engine", zap.String("image", ref), zap.Error(err))
				continue
			}
			removed = append(removed, ref)
		}
	}
	if len(removed) > 0 {
		s.log.Info("old pushed versions removed from the engine", zap.Strings("images", removed))
	}
	return removed, nil
}

// pruneRegularly prunes the engine every pruneEvery and when woken,
// until ctx ends.
func (s *Platform) pruneRegularly(ctx context.Context) {
	t := time.NewTicker(pruneEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-s.pulls.kick:
		}
		if _, err := s.PruneEngine(ctx); err != nil && ctx.Err() == nil {
			s.log.Warn("remove old pushed versions from the engine", zap.Error(err))
		}
	}
}
