package platform

import (
	"context"
	"time"

	"arena/engine"
	"arena/matches"
	"arena/metrics"
	"arena/store"
)

// The platform's part of the metrics (metrics.Set): matches started and
// ended, bots' faults, answer times and match durations as they happen;
// the matches and builds waiting, the matches playing, the registry and
// the disk when a scraper asks.

// Metrics are the server's metrics.
func (s *Platform) Metrics() *metrics.Set { return s.metrics }

// registerGauges adds the figures read at each scrape.
func (s *Platform) registerGauges() {
	m := s.metrics
	m.Gauge("arena_matches_waiting", func() map[string]float64 {
		out := map[string]float64{}
		for _, k := range matches.Kinds {
			out[string(k)] = 0
		}
		for k, n := range s.queue.WaitingByKind() {
			out[string(k)] = float64(n)
		}
		return out
	})
	m.Gauge("arena_matches_playing", func() map[string]float64 {
		_, playing := s.queue.Slots()
		return map[string]float64{"": float64(playing)}
	})
	m.Gauge("arena_match_slots", func() map[string]float64 {
		slots, _ := s.queue.Slots()
		return map[string]float64{"": float64(slots)}
	})
	m.Gauge("arena_builds_waiting", func() map[string]float64 {
		n := 0
		if s.builds != nil {
			n = len(s.builds.line)
		}
		return map[string]float64{"": float64(n)}
	})
	if s.registry != nil {
		m.CachedGauge("arena_registry_repositories", 30*time.Second, func() map[string]float64 {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			repos, _, err := s.deps.Store.RegistryCounts(ctx)
			if err != nil {
				return nil
			}
			return map[string]float64{"": float64(repos)}
		})
	}
	m.CachedGauge("arena_disk_bytes", time.Minute, func() map[string]float64 {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		u, err := s.diskUsage(ctx)
		if err != nil {
			return nil
		}
		return map[string]float64{"replays": float64(u.Replays), "database": float64(u.Database), "registry": float64(u.Registry)}
	})
}

// metricGame is a game's name as the metrics' game label, the one place
// it is decided: a game on offer (built in, the operator's ARENA_GAMES,
// or one an admin registered) by its name; any other, a logic image a
// visitor named (logic:IMAGE) or a game removed since, as "logic". A
// label never carries what a user chose, so no one adds series to the
// metrics (served without authentication on ARENA_METRICS_LISTEN) by
// naming images.
func (s *Platform) metricGame(name string) string {
	if _, err := s.deps.Games.Find(name); err == nil {
		return name
	}
	return "logic"
}

// observeFrame counts the answers of a frame.
func (s *Platform) observeFrame(req *matches.Request, fr matches.Frame) {
	game := s.metricGame(req.Game.Name())
	for _, b := range fr.Bots {
		if b.Asked && b.Fault == "" && b.TimeUS > 0 {
			s.metrics.AnswerSeconds.WithLabelValues(game).Observe(float64(b.TimeUS) / 1e6)
		}
	}
}

// observeUpdate counts a match's start and end.
func (s *Platform) observeUpdate(u matches.Update) {
	v, ok := s.live.Load(u.ID)
	if !ok {
		return
	}
	rec := v.(store.Match)
	kind := string(matches.Kind(rec.Kind).OrHand())
	game := s.metricGame(rec.Game)
	switch {
	case u.State == matches.StateRunning:
		s.metrics.MatchesStarted.WithLabelValues(game, kind).Inc()
		s.startedAt.Store(u.ID, u.At)
	case u.State.Final():
		s.metrics.MatchesEnded.WithLabelValues(game, kind, string(u.State)).Inc()
		if at, ok := s.startedAt.LoadAndDelete(u.ID); ok {
			s.metrics.MatchSeconds.WithLabelValues(game, kind).Observe(u.At.Sub(at.(time.Time)).Seconds())
		}
		if u.Replay != nil {
			for _, b := range u.Replay.Result.Bots {
				if b.Status != engine.StatusOK {
					// A worker's replay says the status: one of the known
					// words, or "other" (no label from what it chose).
					status := string(b.Status)
					if !b.Status.Known() {
						status = "other"
					}
					s.metrics.BotFaults.WithLabelValues(game, status).Inc()
				}
			}
		}
	}
}
