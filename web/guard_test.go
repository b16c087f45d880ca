package web

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"arena/platform"
)

const startBody = `{"game":"tanks","bots":["arena/tanks-random","arena/tanks-hunter"],"settings":{"zone_radius":3}}`

// A page of another site cannot start or cancel matches: no JSON body
// without a preflight, no foreign origin, no cross-site fetch.
func TestCrossSiteRequestsAreRefused(t *testing.T) {
	ts := newTestServer(t, Config{}, 1)
	tests := []struct {
		name   string
		method string
		header []string
		status int
		want   string
	}{
		{"text/plain no-cors fetch", "POST", []string{"Content-Type", "text/plain"}, 415, "Content-Type: application/json"},
		{"form post", "POST", []string{"Content-Type", "application/x-www-form-urlencoded"}, 415, "must be JSON"},
		{"foreign origin", "POST", []string{"Origin", "http://evil.example"}, 403, "requests from http://evil.example"},
		{"cross-site fetch", "POST", []string{"Sec-Fetch-Site", "cross-site"}, 403, "cross-site requests"},
		{"foreign origin cancelling", "DELETE", []string{"Origin", "https://evil.example"}, 403, "evil.example"},
		{"same origin", "POST", []string{"Origin", ts.url, "Sec-Fetch-Site", "same-origin"}, 201, ""},
		{"JSON with a charset", "POST", []string{"Content-Type", "application/json; charset=utf-8"}, 201, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path, body := "/api/matches", startBody
			if tt.method == "DELETE" {
				path, body = "/api/matches/000000000000", ""
			}
			status, m := ts.do(t, tt.method, path, body, tt.header...)
			if status != tt.status || !strings.Contains(fmt.Sprint(m["error"]), tt.want) {
				t.Errorf("%d %v, want %d naming %q", status, m, tt.status, tt.want)
			}
		})
	}
}

// DNS rebinding: a request naming a host the server is not known by is
// refused, the page included.
func TestHostAllowList(t *testing.T) {
	ts := newTestServer(t, Config{}, 1, with(platform.Config{Hosts: []string{"localhost", "127.0.0.1", "arena.example"}}))
	for _, tt := range []struct {
		host   string
		status int
	}{
		{"evil.example", 403},
		{"evil.example:5006", 403},
		{"localhost:5006", 200},
		{"ARENA.example", 200},
		{"127.0.0.1", 200},
	} {
		for _, path := range []string{"/", "/api/games"} {
			req, _ := http.NewRequest("GET", ts.url+path, nil)
			req.Host = tt.host
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != tt.status {
				t.Errorf("GET %s with Host %s: %d, want %d", path, tt.host, res.StatusCode, tt.status)
			}
		}
	}
	any := newTestServer(t, Config{}, 1, with(platform.Config{Hosts: []string{"*"}}))
	req, _ := http.NewRequest("GET", any.url+"/api/games", nil)
	req.Host = "whatever.example"
	if res, err := http.DefaultClient.Do(req); err != nil || res.StatusCode != 200 {
		t.Errorf("with *: %v %v", res, err)
	}
}

// The line is bounded: past its limit a start is 429 with Retry-After.
func TestQueueFull(t *testing.T) {
	ts := newTestServer(t, Config{}, 1, with(platform.Config{QueueMax: 2}))
	slow := `{"game":"tanks","bots":["bots/slow","bots/slow"]}`
	for i := 0; i < 3; i++ { // one running, two waiting
		if status, m := ts.do(t, "POST", "/api/matches", slow); status != 201 {
			t.Fatalf("start %d: %d %v", i, status, m)
		}
	}
	req, _ := http.NewRequest("POST", ts.url+"/api/matches", strings.NewReader(slow))
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 429 || res.Header.Get("Retry-After") == "" || res.Header.Get("Content-Type") != "application/json" {
		t.Errorf("past the limit: %d, Retry-After %q, %s", res.StatusCode, res.Header.Get("Retry-After"), res.Header.Get("Content-Type"))
	}
	// The refused match is not in the history as waiting.
	_, list := ts.do(t, "GET", "/api/matches?limit=10", "")
	for _, m := range list["matches"].([]any) {
		if st := m.(map[string]any)["status"]; st != "queued" && st != "starting" && st != "running" && st != "failed" {
			t.Errorf("status %v", st)
		}
	}
}

// Each client may start only so many matches a minute.
func TestStartRateLimit(t *testing.T) {
	ts := newTestServer(t, Config{StartsPerMinute: 6, StartsBurst: 3}, 4)
	for i := 0; i < 3; i++ {
		if status, m := ts.do(t, "POST", "/api/matches", startBody); status != 201 {
			t.Fatalf("start %d: %d %v", i, status, m)
		}
	}
	req, _ := http.NewRequest("POST", ts.url+"/api/matches", strings.NewReader(startBody))
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 429 || res.Header.Get("Retry-After") != "10" {
		t.Errorf("over the rate: %d, Retry-After %q", res.StatusCode, res.Header.Get("Retry-After"))
	}
	// Reading is not limited.
	if status, _ := ts.do(t, "GET", "/api/matches", ""); status != 200 {
		t.Errorf("read: %d", status)
	}
}

// slowConnections opens n connections that send part of a request and
// then nothing.
func slowConnections(t *testing.T, url string, n int) []net.Conn {
	t.Helper()
	addr := strings.TrimPrefix(url, "http://")
	conns := make([]net.Conn, 0, n)
	t.Cleanup(func() {
		for _, c := range conns {
			c.Close()
		}
	})
	for i := 0; i < n; i++ {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatalf("connection %d: %v", i, err)
		}
		fmt.Fprintf(c, "POST /api/matches HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n")
		conns = append(conns, c)
	}
	return conns
}

// Half-sent requests neither exhaust the server nor stop a match from
// starting and finishing.
func TestSlowClientsDoNotStopMatches(t *testing.T) {
	ts := newTestServer(t, Config{}, 1)
	slowConnections(t, ts.url, 2000)
	status, m := ts.do(t, "POST", "/api/matches", startBody)
	if status != 201 {
		t.Fatalf("start under 2000 slow connections: %d %v", status, m)
	}
	if got := ts.waitFinal(t, m["id"].(string)); got["status"] != "finished" {
		t.Errorf("match: %v", got)
	}
}

// Past the connection cap, new connections wait; the header timeout
// frees the places slow clients hold.
func TestConnectionCapAndHeaderTimeout(t *testing.T) {
	ts := newTestServer(t, Config{MaxConnections: 8, HeaderTimeout: 300 * time.Millisecond}, 1)
	conns := slowConnections(t, ts.url, 20)
	start := time.Now()
	if status, _ := ts.do(t, "GET", "/healthz", ""); status != 200 {
		t.Fatalf("healthz: %d", status)
	}
	if took := time.Since(start); took < 300*time.Millisecond {
		t.Errorf("served after %v: the cap did not hold", took)
	}
	// The slow clients were cut off.
	var wg sync.WaitGroup
	for _, c := range conns {
		wg.Go(func() {
			c.SetReadDeadline(time.Now().Add(5 * time.Second))
			line, err := bufio.NewReader(c).ReadString('\n')
			if err == nil && !strings.Contains(line, "408") {
				t.Errorf("a slow client got %q", line)
			}
		})
	}
	wg.Wait()
}
