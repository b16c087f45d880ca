// Package metrics is what Arena tells Prometheus: the counters and
// histograms the platform and the HTTP server add to as things happen,
// and the gauges read when a scraper asks (the queue, the containers,
// the workers, the registry, the disk). Every metric is in Catalog, the
// one list the dashboard in deploy/ is checked against. GET /metrics
// serves them (web), and ARENA_METRICS_LISTEN on an address of its own.
package metrics

import (
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Desc describes a metric of Arena's.
type Desc struct {
	Name, Kind, Help string // Kind: counter, gauge or histogram
	Labels           []string
}

// Catalog is every metric Arena exports besides the Go runtime's (go_*)
// and the process's (process_*).
var Catalog = []Desc{
	{"arena_matches_waiting", "gauge", "Matches waiting to start, by kind (hand, challenge, ladder, check, practice, gate, contest).", []string{"kind"}},
	{"arena_matches_playing", "gauge", "Matches playing now in the server's slots (on this host or workers).", nil},
	{"arena_match_slots", "gauge", "Matches that may play at once (this host's concurrency, or the workers' slots).", nil},
	{"arena_matches_started_total", "counter", "Matches that started playing, by game and kind.", []string{"game", "kind"}},
	{"arena_matches_ended_total", "counter", "Matches that ended, by game, kind and status (finished, failed, cancelled).", []string{"game", "kind", "status"}},
	{"arena_bot_faults_total", "counter", "Bots faulted in finished matches, by game and status (timeout, crashed, bad_output, start_failed...).", []string{"game", "status"}},
	{"arena_answer_seconds", "histogram", "Time from a bot's input to its answer (wall clock), by game.", []string{"game"}},
	{"arena_match_duration_seconds", "histogram", "Time a match played, from its first frame to its end, by game and kind.", []string{"game", "kind"}},
	{"arena_builds_waiting", "gauge", "Builds of uploaded bots waiting to start.", nil},
	{"arena_builds_total", "counter", "Builds of uploaded bots that ended, by outcome (pushed, failed).", []string{"outcome"}},
	{"arena_containers", "gauge", "This server's containers: bots playing (playing) and warm ones ready in the pool (warm).", []string{"state"}},
	{"arena_workers", "gauge", "Workers heard from lately (joined; the server's own among them) and quarantined.", []string{"state"}},
	{"arena_worker_matches_in_flight", "gauge", "Matches the workers play now, as they last said.", nil},
	{"arena_registry_repositories", "gauge", "Repositories in the registry.", nil},
	{"arena_disk_bytes", "gauge", "Bytes the data folder's parts take: replays, database, registry (its blobs on this disk).", []string{"part"}},
	{"arena_http_requests_total", "counter", "HTTP requests answered, by route, method and status code.", []string{"route", "method", "code"}},
}

// Buckets are the histograms' buckets, in seconds.
var Buckets = map[string][]float64{
	"arena_answer_seconds":         {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10},
	"arena_match_duration_seconds": {1, 2.5, 5, 10, 20, 30, 60, 120, 300, 600, 1800},
}

// Set is the server's metrics.
type Set struct {
	std, reg *prometheus.Registry

	MatchesStarted *prometheus.CounterVec
	MatchesEnded   *prometheus.CounterVec
	BotFaults      *prometheus.CounterVec
	AnswerSeconds  *prometheus.HistogramVec
	MatchSeconds   *prometheus.HistogramVec
	Builds         *prometheus.CounterVec
	HTTPRequests   *prometheus.CounterVec
}

// New makes a set, with the Go runtime's and the process's metrics.
func New() *Set {
	s := &Set{std: prometheus.NewRegistry(), reg: prometheus.NewRegistry()}
	s.std.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	s.MatchesStarted = s.counter("arena_matches_started_total")
	s.MatchesEnded = s.counter("arena_matches_ended_total")
	s.BotFaults = s.counter("arena_bot_faults_total")
	s.Builds = s.counter("arena_builds_total")
	s.HTTPRequests = s.counter("arena_http_requests_total")
	s.AnswerSeconds = s.histogram("arena_answer_seconds")
	s.MatchSeconds = s.histogram("arena_match_duration_seconds")
	for _, outcome := range []string{"pushed", "failed"} {
		s.Builds.WithLabelValues(outcome)
	}
	return s
}

// desc is a metric of the catalog, of the kind given.
func desc(name, kind string) Desc {
	i := slices.IndexFunc(Catalog, func(d Desc) bool { return d.Name == name })
	if i < 0 || Catalog[i].Kind != kind {
		panic(fmt.Sprintf("metrics: %s is no %s of the catalog", name, kind))
	}
	return Catalog[i]
}

func (s *Set) counter(name string) *prometheus.CounterVec {
	d := desc(name, "counter")
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: d.Name, Help: d.Help}, d.Labels)
	s.reg.MustRegister(c)
	return c
}

func (s *Set) histogram(name string) *prometheus.HistogramVec {
	d := desc(name, "histogram")
	h := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: d.Name, Help: d.Help, Buckets: Buckets[name]}, d.Labels)
	s.reg.MustRegister(h)
	return h
}

// Gauge registers a gauge of the catalog read at each scrape: f returns
// its values by its label's value ("" for a gauge without a label).
func (s *Set) Gauge(name string, f func() map[string]float64) {
	d := desc(name, "gauge")
	s.reg.MustRegister(&gaugeFunc{desc: prometheus.NewDesc(d.Name, d.Help, d.Labels, nil), labelled: len(d.Labels) > 0, f: f})
}

// CachedGauge is Gauge for a figure that costs to read (a folder's
// size): f is asked at most once per every.
func (s *Set) CachedGauge(name string, every time.Duration, f func() map[string]float64) {
	var mu sync.Mutex
	var last map[string]float64
	var at time.Time
	s.Gauge(name, func() map[string]float64 {
		mu.Lock()
		defer mu.Unlock()
		if last == nil || time.Since(at) >= every {
			last, at = f(), time.Now()
		}
		return last
	})
}

// Handler serves the metrics in Prometheus's text format.
func (s *Set) Handler() http.Handler {
	return promhttp.HandlerFor(prometheus.Gatherers{s.std, s.reg}, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}

// gaugeFunc is a gauge whose values are read at each scrape.
type gaugeFunc struct {
	desc     *prometheus.Desc
	labelled bool
	f        func() map[string]float64
}

func (g *gaugeFunc) Describe(ch chan<- *prometheus.Desc) { ch <- g.desc }

func (g *gaugeFunc) Collect(ch chan<- prometheus.Metric) {
	for value, v := range g.f() {
		if !g.labelled {
			ch <- prometheus.MustNewConstMetric(g.desc, prometheus.GaugeValue, v)
			continue
		}
		ch <- prometheus.MustNewConstMetric(g.desc, prometheus.GaugeValue, v, value)
	}
}
