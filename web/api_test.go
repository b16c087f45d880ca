package web

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest"
	"go.uber.org/zap/zaptest/observer"

	"arena/accounts"
	"arena/engine"
	"arena/engine/tanks"
	"arena/internal/testsupport/poll"
	"arena/matches"
	"arena/orchestrator"
	"arena/orchestrator/fake"
	"arena/platform"
	"arena/store"
)

type testServer struct {
	*Server
	// pf is the platform the server serves.
	pf       *platform.Platform
	url      string
	launcher *fake.Launcher
	store    *store.Store
	// release lets the bots of image bots/held answer.
	release func()
	// accounts are the server's in accounts mode; clock its clock, which
	// a test may move on (skip).
	accounts *accounts.Service
	clock    *testClock
	// logs are what the server logged.
	logs *observer.ObservedLogs
	// engine is the platform's engine for pushed bots (useEngine).
	engine *fakeEngine
}

// serverOption sets what a test's platform is built with: its policy
// and its collaborators.
type serverOption func(c *platform.Config, d *platform.Deps)

// with builds the platform with the policy pc.
func with(pc platform.Config) serverOption {
	return func(c *platform.Config, _ *platform.Deps) { *c = pc }
}

// withDeps builds the platform with the collaborators f sets.
func withDeps(f func(d *platform.Deps)) serverOption {
	return func(_ *platform.Config, d *platform.Deps) { f(d) }
}

// registryAt builds the platform with its registry, at host.
func registryAt(host string) serverOption {
	return func(c *platform.Config, _ *platform.Deps) { c.Registry.Enabled, c.Registry.Host = true, host }
}

// testClock is the real time moved on by what a test skipped.
type testClock struct{ skipped atomic.Int64 }

func (c *testClock) Now() time.Time       { return time.Now().Add(time.Duration(c.skipped.Load())) }
func (c *testClock) skip(d time.Duration) { c.skipped.Add(int64(d)) }

func newTestServer(t *testing.T, cfg Config, concurrency int, opts ...serverOption) *testServer {
	t.Helper()
	// bots/slow answers after a delay, bots/held once released.
	hold := make(chan struct{})
	var once sync.Once
	release := func() { once.Do(func() { close(hold) }) }
	t.Cleanup(release)
	l := fake.NewLauncher(map[string]fake.Script{"arena/tanks-random": {Game: "tanks"}, "arena/tanks-hunter": {Game: "tanks"}, "arena/snake-greedy": {Game: "snake"}, "bots/slow": {Delay: 30 * time.Millisecond}, "bots/held": {Hold: hold},
		"bots/crashy": {Faults: map[int]fake.Fault{2: fake.Crash}}, "bots/gone": {}})
	st, err := store.Open(t.TempDir(), "test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	logs, seen := observer.New(zapcore.DebugLevel)
	log := zaptest.NewLogger(t, zaptest.WrapOptions(zap.WrapCore(func(c zapcore.Core) zapcore.Core { return zapcore.NewTee(c, logs) })))
	games, orch := []engine.Game{tanks.New()}, orchestrator.New(l, orchestrator.WithLogger(log))
	var player matches.Player
	if viaNATS {
		player = natsPlayer(t, orch, games, concurrency, log)
	}
	clock := &testClock{}
	var accts *accounts.Service
	if cfg.Auth == AuthAccounts {
		cheapPasswords(t)
		if accts, err = accounts.New(st, accounts.SignupInvite, accounts.WithClock(clock.Now), accounts.WithLogger(log.Named("accounts"))); err != nil {
			t.Fatal(err)
		}
	}
	eng := &fakeEngine{launcher: l}
	var pc platform.Config
	pd := platform.Deps{
		Games:        engine.NewCatalog(games...),
		Orchestrator: orch,
		Player:       player,
		Store:        st,
		Concurrency:  concurrency,
		Accounts:     accts,
		Engine:       eng,
		Log:          log,
		Now:          clock.Now,
	}
	for _, o := range opts {
		o(&pc, &pd)
	}
	pc.Resources = platform.Resources{MemoryBytes: 256 << 20, CPUs: 1, Pids: 64}
	if pc.DefaultBots == nil {
		pc.DefaultBots = map[string][]string{"tanks": {"arena/tanks-random", "arena/tanks-hunter"}}
	}
	if pc.Registry.Enabled && pc.Registry.Dir == "" {
		pc.Registry.Dir = t.TempDir()
	}
	// The real server: its timeouts and connection cap are under test.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	pc.Notify.Webhooks.Own = append(pc.Notify.Webhooks.Own, netip.MustParseAddrPort(ln.Addr().String()))
	p, err := platform.New(t.Context(), pc, pd)
	if err != nil {
		ln.Close()
		t.Fatal(err)
	}
	s := New(cfg, Deps{Services: p.Services(), Lifecycle: p, Metrics: p.Metrics(), Registry: p.Registry(), RegistryDeadline: p.Config().Registry.UploadDeadline, Log: log, Now: clock.Now})
	served := make(chan error, 1)
	go func() { served <- s.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		s.Shutdown(ctx)
		if err := <-served; !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("serve: %v", err)
		}
	})
	return &testServer{Server: s, pf: p, url: "http://" + ln.Addr().String(), launcher: l, store: st, release: release, accounts: accts, clock: clock, logs: seen, engine: eng}
}

// cheapPasswords makes password hashes cheap for a test (the parameters
// are kept in each hash, so nothing else changes).
func cheapPasswords(t *testing.T) {
	saved := *accounts.Params
	accounts.Params.Memory, accounts.Params.Iterations = 64, 1
	t.Cleanup(func() { *accounts.Params = saved })
}

// send sends a request, a JSON body if any, with the headers given as
// name, value pairs.
func (ts *testServer) send(t *testing.T, method, path, body string, header ...string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(method, ts.url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func (ts *testServer) do(t *testing.T, method, path, body string, header ...string) (int, map[string]any) {
	t.Helper()
	res := ts.send(t, method, path, body, header...)
	defer res.Body.Close()
	var out map[string]any
	data, _ := io.ReadAll(res.Body)
	if err := json.Unmarshal(data, &out); err != nil && len(data) > 0 && data[0] == '{' {
		t.Fatalf("%s %s: response is not JSON: %s", method, path, data)
	}
	return res.StatusCode, out
}

// waitFinal polls a match until its status is final.
func (ts *testServer) waitFinal(t *testing.T, id string) map[string]any {
	t.Helper()
	var m map[string]any
	poll.Until(t, 20*time.Second, func() error {
		_, m = ts.do(t, "GET", "/api/matches/"+id, "")
		if st := m["status"]; st != "finished" && st != "failed" && st != "cancelled" {
			return fmt.Errorf("match %s did not end: %v", id, m)
		}
		return nil
	})
	return m
}

func TestCreateMatchRejectsBadInput(t *testing.T) {
	ts := newTestServer(t, Config{MaxBodyBytes: 1024}, 1, with(platform.Config{Allow: []string{"arena/*", "bots/*"}}))
	tests := []struct {
		name   string
		body   string
		status int
		want   string
	}{
		{"not JSON", `hello`, 400, "request body is not a JSON match request"},
		{"empty body", ``, 400, "request body is not a JSON match request"},
		{"wrong shape", `{"game":"tanks","bots":"arena/tanks-random"}`, 400, "cannot unmarshal string"},
		{"unknown field", `{"game":"tanks","players":[]}`, 400, `unknown field "players"`},
		{"trailing content", `{"game":"tanks","bots":["arena/tanks-random","arena/tanks-hunter"]} {}`, 400, "content after the JSON object"},
		{"oversized", `{"game":"tanks","bots":["` + strings.Repeat("a", 2000) + `"]}`, 413, "larger than 1024 bytes"},
		{"unknown game", `{"game":"chess","bots":["arena/tanks-random","arena/tanks-hunter"]}`, 400, `game: unknown game "chess"`},
		{"unknown map", `{"game":"tanks","map":"atlantis","bots":["arena/tanks-random","arena/tanks-hunter"]}`, 400, `map: unknown map "atlantis"`},
		{"one bot", `{"game":"tanks","bots":["arena/tanks-random"]}`, 400, "map classic takes 2 bots, got 1"},
		{"too many bots", `{"game":"tanks","map":"triad","bots":["arena/a","arena/b","arena/c","arena/d"]}`, 400, "map triad takes 2 to 3 bots, got 4"},
		{"empty image", `{"game":"tanks","bots":["arena/tanks-random","  "]}`, 400, "bots[1]: empty image name"},
		{"malformed image", `{"game":"tanks","bots":["arena/tanks-random","arena/Bad Name"]}`, 400, `"arena/Bad Name" is not an image name`},
		{"not allowed", `{"game":"tanks","bots":["arena/tanks-random","evil/bot"]}`, 403, "bots[1]: image evil/bot is not allowed here (allowed: arena/*, bots/*)"},
		{"missing image", `{"game":"tanks","bots":["arena/tanks-random","arena/not-built"]}`, 400, "image arena/not-built is not known"},
		{"local bot", `{"game":"tanks","bots":["arena/tanks-random","exec:./bot"]}`, 403, "not allowed"},
		{"bad settings", `{"game":"tanks","bots":["arena/tanks-random","arena/tanks-hunter"],"settings":{"zone_radius":-1}}`, 400, "zone_radius -1 is outside"},
		{"negative seed", `{"game":"tanks","bots":["arena/tanks-random","arena/tanks-hunter"],"seed":-1}`, 400, "seed must be a whole number from 0 to 18446744073709551615 (as a string above 2^53, which JSON numbers lose in JavaScript), not -1"},
		{"seed past 2^64-1", `{"game":"tanks","bots":["arena/tanks-random","arena/tanks-hunter"],"seed":"18446744073709551616"}`, 400, `not "18446744073709551616"`},
		{"seed as a float", `{"game":"tanks","bots":["arena/tanks-random","arena/tanks-hunter"],"seed":1e+23}`, 400, "not 1e+23"},
		{"seed not digits", `{"game":"tanks","bots":["arena/tanks-random","arena/tanks-hunter"],"seed":"7a"}`, 400, `not "7a"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body := ts.do(t, "POST", "/api/matches", tt.body, "Content-Type", "application/json")
			if status != tt.status {
				t.Errorf("status %d, want %d (%v)", status, tt.status, body)
			}
			if msg, _ := body["error"].(string); !strings.Contains(msg, tt.want) {
				t.Errorf("error %q, want it to contain %q", msg, tt.want)
			}
		})
	}
	if n := len(ts.launcher.Bots()); n != 0 {
		t.Errorf("bad requests started %d bots", n)
	}
}

// A bot labelled for another game plays, with a warning saying so.
func TestAnotherGamesBotIsWarnedOf(t *testing.T) {
	ts := newTestServer(t, Config{}, 1)
	status, m := ts.do(t, "POST", "/api/matches", `{"game":"tanks","bots":["arena/tanks-random","arena/snake-greedy"],"settings":{"zone_radius":5}}`)
	want := "bots[1]: image arena/snake-greedy is labelled for snake (io.arena.game), not tanks: it will likely fault"
	if w, _ := m["warnings"].([]any); status != 201 || len(w) != 1 || w[0] != want || m["id"] == nil {
		t.Errorf("%d %v, want 201 with the warning %q", status, m, want)
	}
	if status, m := ts.do(t, "POST", "/api/matches", `{"game":"tanks","bots":["arena/tanks-random","arena/tanks-hunter"],"settings":{"zone_radius":5}}`); status != 201 || m["warnings"] != nil {
		t.Errorf("bots of the game: %d %v", status, m)
	}
}

// Seeds are exact end to end, up to 2^64−1: given as a string (as the
// page sends them) or as a number, played and shown as given.
func TestSeedsAreExact(t *testing.T) {
	ts := newTestServer(t, Config{}, 1)
	for _, seed := range []string{`"18446744073709551615"`, `"9007199254740993"`, `9007199254740993`} {
		status, created := ts.do(t, "POST", "/api/matches", `{"game":"tanks","seed":`+seed+`,"bots":["arena/tanks-random","arena/tanks-hunter"],"settings":{"zone_radius":5}}`)
		if status != 201 {
			t.Fatalf("create with seed %s: %d %v", seed, status, created)
		}
		m := ts.waitFinal(t, created["id"].(string))
		want := strings.Trim(seed, `"`)
		if m["seed_text"] != want || m["status"] != "finished" {
			t.Errorf("seed %s: the match shows %v (%v)", seed, m["seed_text"], m["status"])
		}
		var rep struct{ Seed uint64 }
		resp, err := http.Get(ts.url + "/api/matches/" + created["id"].(string) + "/replay")
		if err != nil {
			t.Fatal(err)
		}
		json.NewDecoder(resp.Body).Decode(&rep)
		resp.Body.Close()
		if strconv.FormatUint(rep.Seed, 10) != want {
			t.Errorf("seed %s: the replay was played with %d", seed, rep.Seed)
		}
	}
}

func TestLocalBotsAreNotReachable(t *testing.T) {
	ts := newTestServer(t, Config{}, 1)
	status, body := ts.do(t, "POST", "/api/matches", `{"game":"tanks","bots":["arena/tanks-random","exec:./bot"]}`)
	if status != 400 || !strings.Contains(fmt.Sprint(body["error"]), "local bots (exec:./bot) are not enabled here") {
		t.Errorf("%d %v", status, body)
	}
}

func TestMatchLifecycle(t *testing.T) {
	ts := newTestServer(t, Config{}, 1)
	status, created := ts.do(t, "POST", "/api/matches", `{"game":"tanks","seed":7,"bots":["arena/tanks-random","arena/tanks-hunter"],"settings":{"zone_radius":5}}`)
	if status != 201 {
		t.Fatalf("create: %d %v", status, created)
	}
	id := created["id"].(string)
	m := ts.waitFinal(t, id)
	if m["status"] != "finished" || m["replay"] != "/api/matches/"+id+"/replay" || m["seed"].(float64) != 7 || m["seed_text"] != "7" {
		t.Fatalf("match: %v", m)
	}
	res := m["result"].(map[string]any)
	if res["turns"].(float64) < 1 || len(res["bots"].([]any)) != 2 {
		t.Errorf("result: %v", res)
	}
	// The replay downloads and verifies.
	resp, err := http.Get(ts.url + "/api/matches/" + id + "/replay")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if cd := resp.Header.Get("Content-Disposition"); !strings.Contains(cd, "attachment") {
		t.Errorf("Content-Disposition %q", cd)
	}
	var rep matches.Replay
	if err := json.NewDecoder(resp.Body).Decode(&rep); err != nil {
		t.Fatal(err)
	}
	if err := matches.Verify([]engine.Game{tanks.New()}, &rep); err != nil {
		t.Errorf("downloaded replay: %v", err)
	}
	// It is in the history.
	_, list := ts.do(t, "GET", "/api/matches", "")
	if ms := list["matches"].([]any); len(ms) != 1 || ms[0].(map[string]any)["id"] != id {
		t.Errorf("history: %v", list)
	}
	// Cancelling a finished match is a conflict; unknown ids are 404.
	if status, _ := ts.do(t, "DELETE", "/api/matches/"+id, ""); status != 409 {
		t.Errorf("cancel finished: %d", status)
	}
	for _, path := range []string{"/api/matches/000000000000", "/api/matches/not-an-id", "/api/matches/abc/replay"} {
		if status, body := ts.do(t, "GET", path, ""); status != 404 || body["error"] == nil {
			t.Errorf("GET %s: %d %v", path, status, body)
		}
	}
	if ts.launcher.Running() != 0 {
		t.Errorf("%d bots still running", ts.launcher.Running())
	}
}

func TestQueueBoundsConcurrencyAndShowsPositions(t *testing.T) {
	ts := newTestServer(t, Config{}, 1)
	var ids []string
	for i := 0; i < 4; i++ {
		status, m := ts.do(t, "POST", "/api/matches", `{"game":"tanks","bots":["bots/held","arena/tanks-hunter"],"settings":{"zone_radius":6}}`)
		if status != 201 {
			t.Fatalf("create: %d %v", status, m)
		}
		ids = append(ids, m["id"].(string))
		if i > 0 {
			if pos := m["position"]; pos != float64(i) {
				t.Errorf("match %d: position %v, want %d", i, pos, i)
			}
		}
	}
	ts.release()
	// Never more than one match's bots at once: looked at every 5 ms until
	// the last match ends.
	if err := poll.Every(5*time.Millisecond, 30*time.Second, func() error {
		if n := ts.launcher.Running(); n > 2 {
			t.Fatalf("%d bots running with a concurrency of 1", n)
		}
		if _, m := ts.do(t, "GET", "/api/matches/"+ids[3], ""); m["status"] != "finished" {
			return fmt.Errorf("the last match is not finished: %v", m)
		}
		return nil
	}); err != nil {
		t.Fatalf("not so after 30s: %v", err)
	}
	for _, id := range ids {
		if m := ts.waitFinal(t, id); m["status"] != "finished" {
			t.Errorf("%s: %v", id, m["status"])
		}
	}
}

func TestCancel(t *testing.T) {
	ts := newTestServer(t, Config{}, 1)
	_, running := ts.do(t, "POST", "/api/matches", `{"game":"tanks","bots":["bots/slow","bots/slow"]}`)
	_, queued := ts.do(t, "POST", "/api/matches", `{"game":"tanks","bots":["bots/slow","bots/slow"]}`)
	for _, m := range []map[string]any{queued, running} {
		id := m["id"].(string)
		if status, body := ts.do(t, "DELETE", "/api/matches/"+id, ""); status != 202 {
			t.Fatalf("cancel %s: %d %v", id, status, body)
		}
		if got := ts.waitFinal(t, id); got["status"] != "cancelled" || !strings.Contains(fmt.Sprint(got["error"]), "cancelled on request") {
			t.Errorf("%s: %v", id, got)
		}
	}
	if ts.launcher.Running() != 0 {
		t.Errorf("%d bots still running after cancel", ts.launcher.Running())
	}
}

func TestToken(t *testing.T) {
	ts := newTestServer(t, Config{}, 1, with(platform.Config{Token: "s3cret"}))
	body := `{"game":"tanks","bots":["arena/tanks-random","arena/tanks-hunter"]}`
	if status, m := ts.do(t, "POST", "/api/matches", body); status != 401 || !strings.Contains(fmt.Sprint(m["error"]), "token") {
		t.Errorf("without token: %d %v", status, m)
	}
	if status, _ := ts.do(t, "POST", "/api/matches", body, "Authorization", "Bearer wrong"); status != 401 {
		t.Errorf("wrong token: %d", status)
	}
	// Only as a bearer token.
	if status, _ := ts.do(t, "POST", "/api/matches", body, "X-Arena-Token", "s3cret"); status != 401 {
		t.Errorf("token in another header: %d", status)
	}
	if status, _ := ts.do(t, "POST", "/api/matches", body, "Authorization", "s3cret"); status != 401 {
		t.Errorf("token without Bearer: %d", status)
	}
	status, m := ts.do(t, "POST", "/api/matches", body, "Authorization", "Bearer s3cret")
	if status != 201 {
		t.Fatalf("with token: %d %v", status, m)
	}
	// Reading needs no token.
	if status, _ := ts.do(t, "GET", "/api/matches/"+m["id"].(string), ""); status != 200 {
		t.Errorf("read: %d", status)
	}
}

func TestGamesAndHealth(t *testing.T) {
	ts := newTestServer(t, Config{}, 1)
	res, err := http.Get(ts.url + "/api/games")
	if err != nil {
		t.Fatal(err)
	}
	var games []gameInfo
	json.NewDecoder(res.Body).Decode(&games)
	res.Body.Close()
	if len(games) != 1 || games[0].Name != "tanks" || len(games[0].Maps) != 3 || games[0].DefaultBots[0].Image != "arena/tanks-random" || games[0].Limits.AnswerTimeoutMS != 100 {
		t.Errorf("games: %+v", games)
	}
	if status, m := ts.do(t, "GET", "/healthz", ""); status != 200 || m["status"] != "ok" {
		t.Errorf("healthz: %d %v", status, m)
	}
	res, err = http.Get(ts.url + "/")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if !strings.Contains(string(page), "<canvas id=\"board\"") {
		t.Errorf("the page is not served")
	}
}

func TestPagination(t *testing.T) {
	ts := newTestServer(t, Config{}, 2)
	var ids []string
	for i := 0; i < 5; i++ {
		_, m := ts.do(t, "POST", "/api/matches", `{"game":"tanks","bots":["arena/tanks-random","arena/tanks-hunter"],"settings":{"zone_radius":3}}`)
		ids = append(ids, m["id"].(string))
	}
	var seen []string
	path := "/api/matches?limit=2"
	for pages := 0; pages < 5; pages++ {
		_, page := ts.do(t, "GET", path, "")
		for _, m := range page["matches"].([]any) {
			seen = append(seen, m.(map[string]any)["id"].(string))
		}
		if page["next"] == nil {
			break
		}
		path = fmt.Sprintf("/api/matches?limit=2&before=%d", int64(page["next"].(float64)))
	}
	if len(seen) != 5 || seen[0] != ids[4] || seen[4] != ids[0] {
		t.Errorf("pages gave %v, want newest first %v", seen, ids)
	}
	if status, _ := ts.do(t, "GET", "/api/matches?limit=0", ""); status != 400 {
		t.Errorf("limit=0: %d", status)
	}
	for _, id := range ids {
		ts.waitFinal(t, id)
	}
}

// The stream sends every frame so far and then each new one, then "end";
// a finished match's, the match first.
func TestStream(t *testing.T) {
	ts := newTestServer(t, Config{}, 1)
	_, m := ts.do(t, "POST", "/api/matches", `{"game":"tanks","bots":["bots/slow","arena/tanks-hunter"],"settings":{"zone_radius":4}}`)
	id := m["id"].(string)
	res, err := http.Get(ts.url + "/api/matches/" + id + "/stream")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if ct := res.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	events := readEvents(t, res.Body)
	frames := 0
	var last map[string]any
	for _, e := range events {
		switch e.name {
		case "frame":
			var f matches.Frame
			if err := json.Unmarshal([]byte(e.data), &f); err != nil || f.Turn != frames || e.id != fmt.Sprint(frames) {
				t.Fatalf("frame %d: id %q turn %d err %v", frames, e.id, f.Turn, err)
			}
			frames++
		case "match":
			json.Unmarshal([]byte(e.data), &last)
		}
	}
	if events[len(events)-1].name != "end" || last["status"] != "finished" {
		t.Fatalf("stream ended with %v, last status %v", events[len(events)-1], last["status"])
	}
	turns := int(last["result"].(map[string]any)["turns"].(float64))
	if frames != turns+1 {
		t.Errorf("%d frames for %d turns", frames, turns)
	}
	// A late viewer of the finished match gets the same frames, from the
	// replay; one resuming after frame 2 gets the rest.
	req, _ := http.NewRequest("GET", ts.url+"/api/matches/"+id+"/stream", nil)
	req.Header.Set("Last-Event-ID", "2")
	res2, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res2.Body.Close()
	rest := 0
	late := readEvents(t, res2.Body)
	// The finished match first, so that a viewer knows its game and bots
	// before its frames.
	if late[0].name != "match" || !strings.Contains(late[0].data, `"status":"finished"`) {
		t.Errorf("a finished match's stream begins with %s %.200s, want the match, finished", late[0].name, late[0].data)
	}
	for _, e := range late {
		if e.name == "frame" {
			if rest == 0 && e.id != "3" {
				t.Errorf("resumed at frame %s, want 3", e.id)
			}
			rest++
		}
	}
	if rest != frames-3 {
		t.Errorf("resumed stream sent %d frames, want %d", rest, frames-3)
	}
}

type event struct{ id, name, data string }

func readEvents(t *testing.T, r io.Reader) []event {
	t.Helper()
	var out []event
	var cur event
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if cur.name != "" {
				out = append(out, cur)
				if cur.name == "end" {
					return out
				}
			}
			cur = event{}
		case strings.HasPrefix(line, "id: "):
			cur.id = line[4:]
		case strings.HasPrefix(line, "event: "):
			cur.name = line[7:]
		case strings.HasPrefix(line, "data: "):
			cur.data = line[6:]
		}
	}
	return out
}

// With FinishOnShutdown, a running match is played to its end before the
// server stops, while a queued one is dropped.
func TestShutdownLetsMatchesFinish(t *testing.T) {
	ts := newTestServer(t, Config{}, 1, with(platform.Config{FinishOnShutdown: true}))
	_, running := ts.do(t, "POST", "/api/matches", `{"game":"tanks","bots":["bots/held","arena/tanks-hunter"],"settings":{"zone_radius":4}}`)
	_, queued := ts.do(t, "POST", "/api/matches", `{"game":"tanks","bots":["bots/slow","arena/tanks-hunter"],"settings":{"zone_radius":4}}`)
	poll.Until(t, 10*time.Second, func() error {
		if _, m := ts.do(t, "GET", "/api/matches/"+running["id"].(string), ""); m["status"] != "running" {
			return fmt.Errorf("the first match never ran: %v", m)
		}
		return nil
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	done := make(chan struct{})
	go func() {
		ts.Shutdown(ctx)
		close(done)
	}()
	// The queued match is dropped at once; the running one goes on.
	poll.Until(t, 10*time.Second, func() error {
		if m, err := ts.store.Get(ctx, queued["id"].(string)); m.Status != "failed" {
			return fmt.Errorf("the queued match was not dropped: %s (%s), %v", m.Status, m.Error, err)
		}
		return nil
	})
	ts.release()
	<-done
	if m, _ := ts.store.Get(ctx, running["id"].(string)); m.Status != "finished" {
		t.Errorf("the running match: %s (%s)", m.Status, m.Error)
	}
	if m, _ := ts.store.Get(ctx, queued["id"].(string)); m.Status != "failed" || !strings.Contains(m.Error, "shutting down") {
		t.Errorf("the queued match: %s (%s)", m.Status, m.Error)
	}
	if ts.launcher.Running() != 0 {
		t.Errorf("%d bots still running", ts.launcher.Running())
	}
}

// A match plays its bots' images as they were when it was created: a tag
// rebuilt while the match waits in the line does not change it, whether
// the match is played here or by a worker.
func TestAMatchPlaysTheImagesItWasCreatedWith(t *testing.T) {
	ts := newTestServer(t, Config{}, 1)
	_, running := ts.do(t, "POST", "/api/matches", `{"game":"tanks","bots":["bots/held","arena/tanks-hunter"],"settings":{"zone_radius":4}}`)
	status, queued := ts.do(t, "POST", "/api/matches", `{"game":"tanks","bots":["bots/slow","arena/tanks-hunter"],"settings":{"zone_radius":4}}`)
	if status != http.StatusCreated {
		t.Fatalf("create: %d %v", status, queued)
	}
	// bots/slow is rebuilt meanwhile: it now crashes at its second turn.
	ts.launcher.Tag("bots/crashy", "bots/slow")
	ts.release()
	for _, m := range []map[string]any{running, queued} {
		if got := ts.waitFinal(t, m["id"].(string)); got["status"] != "finished" {
			t.Fatalf("match %s: %v", m["id"], got)
		}
	}
	_, rep := ts.do(t, "GET", "/api/matches/"+queued["id"].(string)+"/replay", "")
	res, _ := rep["result"].(map[string]any)
	bots, _ := rep["bots"].([]any)
	seats, _ := res["bots"].([]any)
	if len(bots) != 2 || len(seats) != 2 {
		t.Fatalf("replay: %v", rep)
	}
	if b := bots[0].(map[string]any); b["image"] != "bots/slow" || b["image_id"] != fake.ImageID("bots/slow") {
		t.Errorf("seat 1 played %v (%v), want bots/slow as it was (%s)", b["image"], b["image_id"], fake.ImageID("bots/slow"))
	}
	if s := seats[0].(map[string]any); s["status"] != "ok" {
		t.Errorf("seat 1: %v, want ok (the image before the rebuild)", s)
	}
	// A match created now plays the new build.
	_, later := ts.do(t, "POST", "/api/matches", `{"game":"tanks","bots":["bots/slow","arena/tanks-hunter"],"settings":{"zone_radius":4}}`)
	ts.waitFinal(t, later["id"].(string))
	_, rep = ts.do(t, "GET", "/api/matches/"+later["id"].(string)+"/replay", "")
	if b := rep["bots"].([]any)[0].(map[string]any); b["image_id"] != fake.ImageID("bots/crashy") {
		t.Errorf("a match created after the rebuild played %v, want %s", b["image_id"], fake.ImageID("bots/crashy"))
	}
}

// The server offers its own arena binary for download (compose users have
// no Go), and says so when it has none.
func TestDownloadArena(t *testing.T) {
	ts := newTestServer(t, Config{}, 1)
	res, err := http.Get(ts.url + "/download/arena")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusNotFound {
		t.Errorf("without a binary: %s", res.Status)
	}
	bin := filepath.Join(t.TempDir(), "arena")
	if err := os.WriteFile(bin, []byte("\x7fELF a static binary"), 0o755); err != nil {
		t.Fatal(err)
	}
	ts.deps.Binary = bin
	res, err = http.Get(ts.url + "/download/arena")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || string(body) != "\x7fELF a static binary" || res.Header.Get("Content-Disposition") != `attachment; filename="arena"` {
		t.Errorf("the binary: %s %q %q", res.Status, body, res.Header.Get("Content-Disposition"))
	}
}

// localAdmin is who every visitor of a server in local mode is.
var localAdmin = accounts.Principal{Name: accounts.AdminName, Role: accounts.RoleAdmin, Via: accounts.ViaLocal}
