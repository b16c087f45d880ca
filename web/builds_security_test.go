package web

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"arena/internal/testsupport/poll"
	"arena/platform"
	"arena/sourcebuild"
)

// gatedBuilder builds as fakeBuilder does, once released, saying which
// builds it started.
type gatedBuilder struct {
	started chan string
	release chan struct{}
}

func newGatedBuilder() *gatedBuilder {
	return &gatedBuilder{started: make(chan string, 16), release: make(chan struct{})}
}

func (*gatedBuilder) Prepare(context.Context, string) error { return nil }

func (g *gatedBuilder) Build(ctx context.Context, req sourcebuild.Request, log io.Writer) (v1.Image, error) {
	g.started <- req.ID
	select {
	case <-g.release:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return (&fakeBuilder{}).Build(ctx, req, log)
}

func (g *gatedBuilder) waitStarted(t *testing.T) string {
	t.Helper()
	select {
	case id := <-g.started:
		return id
	case <-time.After(20 * time.Second):
		t.Fatal("no build started")
		return ""
	}
}

// watchedBody is an upload's body that counts what is read of it, and
// holds its reader, once it has begun, until let is closed.
type watchedBody struct {
	data  []byte
	read  atomic.Int64
	began chan struct{}
	let   chan struct{}
}

func newWatchedBody(data []byte, held bool) *watchedBody {
	w := &watchedBody{data: data, began: make(chan struct{}), let: make(chan struct{})}
	if !held {
		close(w.let)
	}
	return w
}

func (w *watchedBody) Read(p []byte) (int, error) {
	at := w.read.Load()
	if at == 0 {
		select {
		case <-w.began:
		default:
			close(w.began)
		}
		<-w.let
	}
	if at >= int64(len(w.data)) {
		return 0, io.EOF
	}
	n := copy(p, w.data[at:])
	w.read.Add(int64(n))
	return n, nil
}

// uploadThrough sends an upload to the server's handler, its body the
// one given, and returns the answer.
func uploadThrough(t *testing.T, ms *matrixServer, tok, repo string, body io.Reader) (int, map[string]any) {
	t.Helper()
	req := httptest.NewRequest("POST", ms.url+"/api/builds?game=tanks&repository="+repo, body)
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("Content-Type", "application/zip")
	rec := httptest.NewRecorder()
	ms.Handler().ServeHTTP(rec, req)
	var v map[string]any
	json.Unmarshal(rec.Body.Bytes(), &v)
	return rec.Code, v
}

// A second upload of a user whose build is queued or building, or
// whose last upload is still being read, and an upload while the line
// is full, are refused (429) before their body is read. (Uploads of a
// kit with a build step, one build at a time: the line fills.)
func TestBuildRefusedBeforeItsBodyIsRead(t *testing.T) {
	g := newGatedBuilder()
	ms := newMatrixServer(t, Config{}, with(platform.Config{Registry: platform.RegistryConfig{Enabled: true, Host: "127.0.0.1:5006"}, Builds: platform.BuildsConfig{Queue: 1, Parallel: 1}}),
		withDeps(func(d *platform.Deps) { d.Builder = g }))
	defer close(g.release)
	good := zipped(t, map[string]string{"bot.cpp": "int main() {}"})
	_, alice := ms.token(t, "alice")
	_, bob := ms.token(t, "bob")
	_, carol := ms.token(t, "carol")

	// Alice's first upload is read, and held half-way: a second of
	// hers is refused meanwhile.
	first := newWatchedBody(good, true)
	answered := make(chan map[string]any, 1)
	go func() {
		status, v := uploadThrough(t, ms, alice, "alice/one", first)
		if status != http.StatusAccepted {
			t.Errorf("alice's first upload: %d %v", status, v)
		}
		answered <- v
	}()
	<-first.began
	second := newWatchedBody(good, false)
	if status, v := uploadThrough(t, ms, alice, "alice/two", second); status != http.StatusTooManyRequests || !strings.Contains(fmt.Sprint(v["error"]), "your last upload is still being received: one at a time") {
		t.Errorf("alice's upload while her first is read: %d %v", status, v)
	}
	if n := second.read.Load(); n != 0 {
		t.Errorf("the refused upload's body was read: %d bytes", n)
	}
	close(first.let)
	v := <-answered
	g.waitStarted(t)

	// Her build is building: another of hers is refused, unread.
	second = newWatchedBody(good, false)
	if status, got := uploadThrough(t, ms, alice, "alice/two", second); status != http.StatusTooManyRequests || !strings.Contains(fmt.Sprint(got["error"]), fmt.Sprintf("your build %s is not done yet: one at a time", v["id"])) {
		t.Errorf("alice's upload while her build runs: %d %v", status, got)
	}
	if n := second.read.Load(); n != 0 {
		t.Errorf("the refused upload's body was read: %d bytes", n)
	}

	// Bob's waits in the line (of one): carol's finds it full.
	if status, got := uploadThrough(t, ms, bob, "bob/one", bytes.NewReader(good)); status != http.StatusAccepted {
		t.Fatalf("bob's upload: %d %v", status, got)
	}
	third := newWatchedBody(good, false)
	if status, got := uploadThrough(t, ms, carol, "carol/one", third); status != http.StatusTooManyRequests || !strings.Contains(fmt.Sprint(got["error"]), "too many builds are waiting: try again in a while") {
		t.Errorf("carol's upload to a full line: %d %v", status, got)
	}
	if n := third.read.Load(); n != 0 {
		t.Errorf("the refused upload's body was read: %d bytes", n)
	}
}

// A build's owner is read afresh when it starts and before it pushes: a
// member of team red whose upload for red/bot is queued or building
// when they leave red, or when their account is disabled, pushes
// nothing, and the build says why. Who stays pushes; local mode, with
// no accounts, builds as before.
func TestBuildOwnerReadAfresh(t *testing.T) {
	for _, c := range []struct {
		what   string
		queued bool // changed while queued; else while building
		change func(*testing.T, *matrixServer)
		want   string
	}{
		{"leaves the team while queued", true, leave, "not built: you are no longer a member of team red"},
		{"leaves the team while building", false, leave, "not pushed: you are no longer a member of team red"},
		{"disabled while queued", true, disable, "not built: the account carol is disabled"},
		{"disabled while building", false, disable, "not pushed: the account carol is disabled"},
		{"stays", false, func(*testing.T, *matrixServer) {}, ""},
	} {
		t.Run(c.what, func(t *testing.T) {
			g := newGatedBuilder()
			ms := newMatrixServer(t, Config{}, registryAt("127.0.0.1:5006"), oneBuildAtATime, withDeps(func(d *platform.Deps) { d.Builder = g }))
			released := false
			release := func() {
				if !released {
					released = true
					close(g.release)
				}
			}
			defer release()
			_, alice := ms.token(t, "alice")
			_, carol := ms.token(t, "carol")
			good := zipped(t, map[string]string{"bot.cpp": "int main() {}"})
			if c.queued {
				// Alice's build runs; carol's waits behind it.
				if status, v := uploadThrough(t, ms, alice, "alice/first", bytes.NewReader(good)); status != http.StatusAccepted {
					t.Fatalf("alice's upload: %d %v", status, v)
				}
				g.waitStarted(t)
			}
			status, v := uploadThrough(t, ms, carol, "red/bot", bytes.NewReader(good))
			if status != http.StatusAccepted {
				t.Fatalf("carol's upload for red: %d %v", status, v)
			}
			id := v["id"].(string)
			if !c.queued {
				if got := g.waitStarted(t); got != id {
					t.Fatalf("build %s started, want carol's %s", got, id)
				}
			}
			c.change(t, ms)
			release()
			done := waitBuild(t, ms, id)
			// What the registry holds, asked of it.
			held, err := ms.pf.Registry().Describe(t.Context(), "red/bot", "latest")
			if c.want == "" {
				if done["state"] != "pushed" || err != nil || held.Digest != done["digest"] {
					t.Errorf("carol's build: %v; the registry's red/bot:latest: %+v %v", done, held, err)
				}
				return
			}
			if done["state"] != "failed" || done["error"] != c.want || !strings.Contains(fmt.Sprint(done["log"]), c.want) {
				t.Errorf("carol's build: %v, want failed: %q", done, c.want)
			}
			if err == nil {
				t.Errorf("pushed for red: %+v", held)
			}
			if c.queued {
				select {
				case got := <-g.started:
					t.Errorf("build %s was built", got)
				default:
				}
			}
		})
	}
	t.Run("local mode", func(t *testing.T) {
		ts := newTestServer(t, Config{}, 1, registryAt("127.0.0.1:5006"), withDeps(func(d *platform.Deps) { d.Builder = &fakeBuilder{} }))
		req, _ := http.NewRequest("POST", ts.url+"/api/builds?game=tanks&repository=admin/bot", bytes.NewReader(zipped(t, map[string]string{"bot.py": "print()"})))
		req.Header.Set("Content-Type", "application/zip")
		status, v := doJSON(t, req)
		if status != http.StatusAccepted {
			t.Fatalf("an upload in local mode: %d %v", status, v)
		}
		id := v["id"].(string)
		poll.Until(t, 20*time.Second, func() error {
			_, v = ts.do(t, "GET", "/api/builds/"+id, "")
			switch v["state"] {
			case "pushed":
				return nil
			case "failed":
				t.Fatalf("the build in local mode: %v", v)
			}
			return fmt.Errorf("the build in local mode: %v", v)
		})
	})
}

func leave(t *testing.T, ms *matrixServer) {
	if err := ms.accounts.RemoveMember(t.Context(), ms.principal(t, "carol"), "red", "carol"); err != nil {
		t.Fatal(err)
	}
}

func disable(t *testing.T, ms *matrixServer) {
	if err := ms.accounts.SetUser(t.Context(), "carol", "player", true); err != nil {
		t.Fatal(err)
	}
}

// waitBuild waits for a build to be done, read as the admin.
func waitBuild(t *testing.T, ms *matrixServer, id string) map[string]any {
	t.Helper()
	var v map[string]any
	poll.Until(t, 20*time.Second, func() error {
		_, v = ms.do(t, "GET", "/api/builds/"+id, "", "Authorization", "Bearer "+matrixAdminToken)
		if v["state"] != "pushed" && v["state"] != "failed" {
			return fmt.Errorf("build %s: %v", id, v)
		}
		return nil
	})
	return v
}

// oneBuildAtATime builds uploads one at a time.
func oneBuildAtATime(c *platform.Config, _ *platform.Deps) { c.Builds.Parallel = 1 }

// ARENA_BUILDS builds run at once, one per user: two users' builds with a
// build step run together while a third waits; an upload of a kit with
// no build step (Python: the image is assembled from the files) waits in
// no line, even behind a full one.
func TestBuildsRunInParallel(t *testing.T) {
	g := newGatedBuilder()
	ms := newMatrixServer(t, Config{}, with(platform.Config{Registry: platform.RegistryConfig{Enabled: true, Host: "127.0.0.1:5006"}, Builds: platform.BuildsConfig{Queue: 1, Parallel: 2}}),
		withDeps(func(d *platform.Deps) { d.Builder = g }))
	defer close(g.release)
	cpp := zipped(t, map[string]string{"bot.cpp": "int main() {}"})
	ms.user(t, "erin")
	var ids []string
	for _, u := range []string{"alice", "bob", "carol"} {
		_, tok := ms.token(t, u)
		status, v := uploadThrough(t, ms, tok, u+"/one", bytes.NewReader(cpp))
		if status != http.StatusAccepted {
			t.Fatalf("%s's upload: %d %v", u, status, v)
		}
		ids = append(ids, v["id"].(string))
	}
	started := map[string]bool{g.waitStarted(t): true, g.waitStarted(t): true}
	if !started[ids[0]] || !started[ids[1]] {
		t.Errorf("builds started %v, want alice's and bob's %v", started, ids[:2])
	}
	// The line (of one) holds carol's: dave's C++ upload finds it full,
	// erin's Python upload is assembled at once.
	_, dave := ms.token(t, "dave")
	if status, v := uploadThrough(t, ms, dave, "dave/one", bytes.NewReader(cpp)); status != http.StatusTooManyRequests {
		t.Errorf("dave's upload to a full line: %d %v", status, v)
	}
	_, erin := ms.token(t, "erin")
	status, v := uploadThrough(t, ms, erin, "erin/py&kit=python", bytes.NewReader(zipped(t, map[string]string{"bot.py": "print()"})))
	if status != http.StatusAccepted {
		t.Fatalf("erin's Python upload: %d %v", status, v)
	}
	if got := g.waitStarted(t); got != v["id"] {
		t.Errorf("build %s started, want erin's %s, which waits in no line", got, v["id"])
	}
}
