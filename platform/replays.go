package platform

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.uber.org/zap"

	"arena/accounts"
	"arena/matches"
	"arena/store"
)

// ReplayConfig is how long replays are kept.
type ReplayConfig struct {
	// Keep is how long the replays of ExpiringKinds are kept after
	// their matches finish; 0 keeps them for ever. Their rows, results
	// and ratings stay.
	Keep time.Duration
}

// expireEvery is how often expired replays are removed.
const expireEvery = time.Hour

// ExpiringKinds are the matches whose replays expire: a ladder's, a
// contest's practice, a pushed bot's check and a challenge's. Those
// started by hand (a person's seat too), contest games and gate games
// are kept for ever.
var ExpiringKinds = []matches.Kind{matches.KindLadder, matches.KindPractice, matches.KindCheck, matches.KindChallenge, matches.KindRun}

// KeepReplays says how long the replays of ExpiringKinds are kept.
func (s *Platform) keepReplays() string {
	keep := s.cfg.Replays.Keep
	switch {
	case keep <= 0:
		return "for ever"
	case keep == 24*time.Hour:
		return "1 day"
	case keep%(24*time.Hour) == 0:
		return fmt.Sprintf("%d days", keep/(24*time.Hour))
	}
	return keep.String()
}

// ExpireReplays removes the replays of ExpiringKinds that are older than
// the setting, in batches; it returns how many it removed.
func (s *Platform) ExpireReplays(ctx context.Context) (int, error) {
	if s.cfg.Replays.Keep <= 0 {
		return 0, nil
	}
	kinds := make([]string, len(ExpiringKinds))
	for i, k := range ExpiringKinds {
		kinds[i] = string(k)
	}
	before := s.now().Add(-s.cfg.Replays.Keep)
	total := 0
	var freed int64
	for ctx.Err() == nil {
		n, f, err := s.deps.Store.ExpireReplays(ctx, kinds, before, 500)
		total, freed = total+n, freed+f
		if err != nil {
			return total, err
		}
		if n < 500 {
			break
		}
	}
	if total > 0 {
		s.log.Info("expired replays removed", zap.Int("replays", total), zap.String("freed", mib(freed)), zap.String("kept", s.keepReplays()))
	}
	return total, ctx.Err()
}

// expireRegularly removes expired replays at start and then every
// expireEvery.
func (s *Platform) expireRegularly(ctx context.Context) {
	t := time.NewTicker(expireEvery)
	defer t.Stop()
	for {
		if _, err := s.ExpireReplays(ctx); err != nil && !errors.Is(err, context.Canceled) {
			s.log.Error("remove expired replays", zap.Error(err))
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// DiskUsage is what the data folder and the registry hold.
type DiskUsage struct {
	store.DiskUsage
	// Registry is the bytes of the registry's blobs on this disk (0 with
	// the blobs in an object store, or no registry).
	Registry int64 `json:"registry_bytes"`
	// KeepReplays is how long the replays that expire are kept.
	KeepReplays string `json:"keep_replays"`
}

// Disk measures the data folder: the replays, the database and the
// registry's blobs when they are on this disk. Admins only.
func (st *Site) Disk(ctx context.Context, p accounts.Principal) (DiskUsage, error) {
	if err := staff(p, "see the disk's use"); err != nil {
		return DiskUsage{}, err
	}
	return st.p.diskUsage(ctx)
}

// diskUsage measures the data folder (see DiskUsage).
func (s *Platform) diskUsage(ctx context.Context) (DiskUsage, error) {
	u, err := s.deps.Store.Usage()
	if err != nil {
		return DiskUsage{}, err
	}
	out := DiskUsage{DiskUsage: u, KeepReplays: s.keepReplays()}
	if r := s.cfg.Registry; r.Enabled && r.Storage == nil && r.Dir != "" {
		out.Registry, _, err = store.FolderBytes(r.Dir)
	}
	return out, err
}
