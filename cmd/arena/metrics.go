package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/client"
	"go.uber.org/zap"

	"arena/dispatch"
	"arena/metrics"
	"arena/sandbox"
)

// containerGauges reports this server's containers: the bots' playing
// and the warm ones waiting in the pool.
func containerGauges(m *metrics.Set, cli *client.Client, d *sandbox.Docker, owner sandbox.Owner) {
	m.CachedGauge("arena_containers", 5*time.Second, func() map[string]float64 {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		list, err := cli.ContainerList(ctx, container.ListOptions{Filters: filters.NewArgs(filters.Arg("label", sandbox.LabelOwner+"="+owner.String()))})
		if err != nil {
			return nil
		}
		warm := d.WarmTotal()
		return map[string]float64{"playing": float64(max(0, len(list)-warm)), "warm": float64(warm)}
	})
}

// workerGauges reports the workers: those that said how many matches
// they take lately (joined), those quarantined for forged reports, and
// the matches they play.
func workerGauges(m *metrics.Set, d *dispatch.Dispatcher) {
	m.Gauge("arena_workers", func() map[string]float64 {
		out := map[string]float64{"joined": 0, "quarantined": 0}
		for _, w := range d.Workers() {
			switch {
			case w.Quarantined:
				out["quarantined"]++
			case w.Slots > 0:
				out["joined"]++
			}
		}
		return out
	})
	m.Gauge("arena_worker_matches_in_flight", func() map[string]float64 {
		n := 0
		for _, w := range d.Workers() {
			n += w.Playing
		}
		return map[string]float64{"": float64(n)}
	})
}

// serveMetrics serves GET /metrics without sign-in on addr
// (ARENA_METRICS_LISTEN); stop closes it.
func serveMetrics(addr string, m *metrics.Set, log *zap.Logger) (stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("metrics: listen on %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", m.Handler())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("serve the metrics", zap.Error(err))
		}
	}()
	return func() { srv.Close() }, nil
}
