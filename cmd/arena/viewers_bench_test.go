package main

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"arena/internal/testsupport/dockertest"
	"arena/internal/testsupport/poll"
)

// BenchmarkThousandViewers watches one live match from 1,000 viewers of
// its stream while /healthz is asked every 20 ms, and reports /healthz's
// latency, the frames each viewer got, and the bots' timeouts (which the
// viewers must not cause). Run it with make bench.
func BenchmarkThousandViewers(b *testing.B) {
	cli := dockertest.Client(b)
	bots := dockertest.ExampleBots(b, cli)
	bin := arenaBinary(b)
	for b.Loop() {
		s := startServer(b, bin, b.TempDir(), freePort(b))
		id := s.post(b, fmt.Sprintf(`{"game":"tanks","map":"crossroads","seed":3,"bots":[%q,%q,%q,%q],"settings":{"zone_radius":40}}`, bots[0], bots[1], bots[0], bots[1]))
		ctx, cancel := context.WithCancel(b.Context())
		client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 2000, MaxConnsPerHost: 0}}
		var frames atomic.Int64
		var viewers, ended sync.WaitGroup
		const n = 1000
		for i := 0; i < n; i++ {
			viewers.Add(1)
			ended.Go(func() {
				req, _ := http.NewRequestWithContext(ctx, "GET", s.url+"/api/matches/"+id+"/stream", nil)
				res, err := client.Do(req)
				viewers.Done()
				if err != nil {
					return
				}
				defer res.Body.Close()
				sc := bufio.NewScanner(res.Body)
				sc.Buffer(make([]byte, 1<<20), 1<<22)
				for sc.Scan() {
					if strings.HasPrefix(sc.Text(), "event: frame") {
						frames.Add(1)
					}
				}
			})
		}
		viewers.Wait()
		var lat []time.Duration
		probe := &http.Client{Timeout: 5 * time.Second}
		// /healthz's latency every 20 ms until the match ends.
		if err := poll.Every(20*time.Millisecond, 10*time.Minute, func() error {
			t0 := time.Now()
			res, err := probe.Get(s.url + "/healthz")
			if err != nil {
				b.Fatalf("healthz: %v", err)
			}
			res.Body.Close()
			lat = append(lat, time.Since(t0))
			if m := s.get(b, id); m["status"] != "finished" && m["status"] != "failed" {
				return fmt.Errorf("the match did not end: %v", m["status"])
			}
			return nil
		}); err != nil {
			b.Fatal(err)
		}
		m := s.waitStatus(b, id, "finished")
		ended.Wait()
		cancel()
		timeouts := 0
		for _, bot := range m["result"].(map[string]any)["bots"].([]any) {
			if bot.(map[string]any)["status"] == "timeout" {
				timeouts++
			}
		}
		turns := m["result"].(map[string]any)["turns"].(float64)
		slices.Sort(lat)
		ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
		b.ReportMetric(ms(lat[len(lat)/2]), "healthz-p50-ms")
		b.ReportMetric(ms(lat[len(lat)*99/100]), "healthz-p99-ms")
		b.ReportMetric(ms(lat[len(lat)-1]), "healthz-max-ms")
		b.ReportMetric(float64(timeouts), "bot-timeouts")
		b.ReportMetric(turns, "turns")
		b.ReportMetric(float64(frames.Load())/n, "frames/viewer")
	}
}
