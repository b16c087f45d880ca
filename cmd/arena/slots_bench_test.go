package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"arena/internal/testsupport/dockertest"
	"arena/internal/testsupport/poll"
)

// BenchmarkSlotsFollowTheHost plays 24 Tanks matches of two bots that
// wait 40 ms an answer (sleeping, no CPU) on a server of one match slot,
// fixed, then one that follows the host (ARENA_CONCURRENCY_MAX=4). It
// reports the matches a second and the most slots the server had.
func BenchmarkSlotsFollowTheHost(b *testing.B) {
	cli := dockertest.Client(b)
	waiting := dockertest.TestBot(b, cli, "delay=40ms")
	bin := arenaBinary(b)
	for _, c := range []struct {
		name  string
		flags []string
	}{
		{"fixed", []string{"--concurrency", "1"}},
		{"follows", []string{"--concurrency", "1", "--concurrency-max", "4"}},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				metrics := fmt.Sprintf("127.0.0.1:%d", freePort(b))
				s := startServer(b, bin, b.TempDir(), freePort(b), append([]string{"--ladder", "off", "--metrics-listen", metrics}, c.flags...)...)
				start := time.Now()
				const n = 24
				ids := make([]string, n)
				for i := range ids {
					// Posted as fast as the server's limit of starts takes:
					// again every half second while it says 429.
					if err := poll.Every(500*time.Millisecond, 10*time.Minute, func() error {
						res, err := http.Post(s.url+"/api/matches", "application/json", strings.NewReader(fmt.Sprintf(`{"game":"tanks","bots":[%q,%q],"seed":%d}`, waiting, waiting, i+1)))
						if err != nil {
							b.Fatal(err)
						}
						var m map[string]any
						json.NewDecoder(res.Body).Decode(&m)
						res.Body.Close()
						switch res.StatusCode {
						case http.StatusCreated:
							ids[i] = m["id"].(string)
							return nil
						case http.StatusTooManyRequests:
							return fmt.Errorf("match %d: %d %v", i, res.StatusCode, m)
						default:
							b.Fatalf("match %d: %d %v", i, res.StatusCode, m)
						}
						return nil
					}); err != nil {
						b.Fatal(err)
					}
				}
				most := 0.0
				// The slots every 200 ms until each match ends.
				for _, id := range ids {
					if err := poll.Every(200*time.Millisecond, 10*time.Minute, func() error {
						if v, ok := scrapedMetric(b, metrics, "arena_match_slots"); ok {
							most = max(most, v)
						}
						switch m := s.get(b, id); m["status"] {
						case "finished":
							return nil
						case "failed":
							b.Fatalf("match %s: %v", id, m)
						default:
							return fmt.Errorf("match %s did not end: %v", id, m)
						}
						return nil
					}); err != nil {
						b.Fatal(err)
					}
				}
				took := time.Since(start)
				b.ReportMetric(n/took.Seconds(), "matches/s")
				b.ReportMetric(most, "most-slots")
				b.Logf("%s: %d matches in %.1f s, at most %.0f slots", c.name, n, took.Seconds(), most)
			}
		})
	}
}
