package web

import (
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"arena/internal/testsupport/poll"
)

// scrape reads GET /metrics with the headers given (name, value pairs).
func scrape(t *testing.T, url string, header ...string) string {
	t.Helper()
	req, _ := http.NewRequest("GET", url+"/metrics", nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/plain") {
		t.Fatalf("GET /metrics: %d %s", res.StatusCode, body)
	}
	return string(body)
}

// metric is the value of one series in a scrape (its labels in name
// order, as the format writes them), and whether it is there.
func metric(text, series string) (float64, bool) {
	for _, line := range strings.Split(text, "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			return f, err == nil
		}
	}
	return 0, false
}

// The metrics move with the matches: one started and ended, its bot's
// crash, its answers and its duration, the requests by route; the queue's
// waiting matches by kind are there from the start.
func TestMetricsMoveWithAMatch(t *testing.T) {
	ts := newTestServer(t, Config{}, 1)
	before := scrape(t, ts.url)
	if v, ok := metric(before, `arena_matches_waiting{kind="ladder"}`); !ok || v != 0 {
		t.Errorf("arena_matches_waiting{kind=\"ladder\"}: %v %v", v, ok)
	}
	for _, name := range []string{"arena_match_slots 1", "arena_builds_waiting 0", "go_goroutines", "process_resident_memory_bytes", `arena_disk_bytes{part="replays"}`} {
		if !strings.Contains(before, "\n"+name) {
			t.Errorf("no %s in the scrape", name)
		}
	}
	status, created := ts.do(t, "POST", "/api/matches", `{"game":"tanks","seed":3,"bots":["bots/crashy","arena/tanks-random"],"settings":{"zone_radius":6}}`)
	if status != 201 {
		t.Fatalf("create: %d %v", status, created)
	}
	if m := ts.waitFinal(t, created["id"].(string)); m["status"] != "finished" {
		t.Fatalf("match: %v", m)
	}
	var after string
	want := map[string]float64{
		`arena_matches_started_total{game="tanks",kind="hand"}`:                    1,
		`arena_matches_ended_total{game="tanks",kind="hand",status="finished"}`:    1,
		`arena_bot_faults_total{game="tanks",status="crashed"}`:                    1,
		`arena_match_duration_seconds_count{game="tanks",kind="hand"}`:             1,
		`arena_http_requests_total{code="201",method="POST",route="/api/matches"}`: 1,
	}
	poll.Until(t, 5*time.Second, func() error {
		after = scrape(t, ts.url)
		missing := ""
		for series, v := range want {
			if got, ok := metric(after, series); !ok || got != v {
				missing = series
			}
		}
		if missing != "" {
			return fmt.Errorf("%s is not as wanted:\n%s", missing, after)
		}
		return nil
	})
	if n, _ := metric(after, `arena_answer_seconds_count{game="tanks"}`); n < 2 {
		t.Errorf("%v answers counted", n)
	}
	if n, _ := metric(after, `arena_http_requests_total{code="200",method="GET",route="/metrics"}`); n < 1 {
		t.Errorf("the scrapes themselves are not counted")
	}
}
