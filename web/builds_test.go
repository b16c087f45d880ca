package web

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"

	"arena/internal/testsupport/poll"
	"arena/platform"
	"arena/sourcebuild"
)

// fakeBuilder builds an image labelled for the game from any upload that
// has bot.py, and fails the others as a compile error would.
type fakeBuilder struct{ built []sourcebuild.Request }

func (*fakeBuilder) Prepare(context.Context, string) error { return nil }

func (f *fakeBuilder) Build(_ context.Context, req sourcebuild.Request, log io.Writer) (v1.Image, error) {
	f.built = append(f.built, req)
	fmt.Fprintln(log, "building", len(req.Source.Files), "files")
	if !req.Source.Has("bot.py") && !req.Source.Has("bot.cpp") {
		fmt.Fprintln(log, "bot.py: no such file")
		return nil, fmt.Errorf("%w: the build step exited with code 1 (see the log)", sourcebuild.ErrBuild)
	}
	img, err := random.Image(1000, 1)
	if err != nil {
		return nil, err
	}
	cf, _ := img.ConfigFile()
	cf = cf.DeepCopy()
	cf.Config.Labels = map[string]string{sourcebuild.GameLabel: req.Game}
	return mutate.ConfigFile(img, cf)
}

func zipped(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for name, body := range files {
		w, _ := zw.Create(name)
		w.Write([]byte(body))
	}
	zw.Close()
	return buf.Bytes()
}

// An upload is built and pushed as its owner's, then checked as a push
// is; a build that fails says why in its log; what is not the owner's,
// not an archive a form cannot send, or an archive that writes outside
// its folder is refused before anything is built; another's build cannot
// be read.
func TestBuildsFromUploads(t *testing.T) {
	b := &fakeBuilder{}
	ms := newMatrixServer(t, Config{}, registryAt("127.0.0.1:5006"), withDeps(func(d *platform.Deps) { d.Builder = b }))
	ms.useEngine(nil)
	_, alice := ms.token(t, "alice")
	_, bob := ms.token(t, "bob")
	upload := func(tok, query, contentType string, body []byte) (int, map[string]any) {
		t.Helper()
		req, _ := http.NewRequest("POST", ms.url+"/api/builds?"+query, bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+tok)
		req.Header.Set("Content-Type", contentType)
		return doJSON(t, req)
	}
	get := func(tok, id string) (int, map[string]any) {
		t.Helper()
		req, _ := http.NewRequest("GET", ms.url+"/api/builds/"+id, nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		return doJSON(t, req)
	}
	wait := func(id string) map[string]any {
		t.Helper()
		var v map[string]any
		poll.Until(t, 20*time.Second, func() error {
			if _, v = get(alice, id); v["state"] != "pushed" && v["state"] != "failed" {
				return fmt.Errorf("build %s: %v", id, v)
			}
			return nil
		})
		return v
	}
	good := zipped(t, map[string]string{"mybot/bot.py": "print('[]')", "mybot/tanks.py": "x = 1"})
	status, v := upload(alice, "repository=alice/built&tag=v1&game=tanks", "application/zip", good)
	if status != http.StatusAccepted || v["state"] != "queued" || v["reference"] != "alice/built:v1" {
		t.Fatalf("alice's upload: %d %v", status, v)
	}
	done := wait(v["id"].(string))
	if done["state"] != "pushed" || !strings.HasPrefix(fmt.Sprint(done["digest"]), "sha256:") || !strings.Contains(fmt.Sprint(done["log"]), "building 2 files") || !strings.Contains(fmt.Sprint(done["log"]), "pushed alice/built@sha256:") {
		t.Errorf("the build: %v", done)
	}
	if len(b.built) != 1 || b.built[0].Game != "tanks" || !b.built[0].Source.Has("bot.py") {
		t.Errorf("built: %+v", b.built)
	}
	// The pushed version is alice's, and is checked.
	auth := []string{"Authorization", "Bearer " + alice}
	poll.Until(t, 20*time.Second, func() error {
		_, reg := ms.do(t, "GET", "/api/registry", "", auth...)
		imgs, _ := reg["images"].([]any)
		if len(imgs) != 1 || imgs[0].(map[string]any)["state"] != "ready" {
			return fmt.Errorf("the built bot was not checked ready: %v", reg)
		}
		if img := imgs[0].(map[string]any); img["reference"] != "alice/built:v1" || img["pushed_by"] != "alice" {
			t.Errorf("the pushed version: %v", img)
		}
		return nil
	})
	// A build that fails: why, in its log.
	_, v = upload(alice, "repository=alice/built&tag=v2&game=tanks", "application/gzip", tarGzOf(t, map[string]string{"main.py": "x"}))
	if failed := wait(v["id"].(string)); failed["state"] != "failed" || !strings.Contains(fmt.Sprint(failed["error"]), "exited with code 1") || !strings.Contains(fmt.Sprint(failed["log"]), "bot.py: no such file") {
		t.Errorf("a failed build: %v", failed)
	}
	// Bob may not read alice's build.
	if status, _ := get(bob, v["id"].(string)); status != http.StatusNotFound {
		t.Errorf("bob reads alice's build: %d", status)
	}
	for _, c := range []struct {
		what, tok, query, contentType string
		body                          []byte
		status                        int
		want                          string
	}{
		{"to another's namespace", bob, "repository=alice/built&game=tanks", "application/zip", good, 403, "alice/built"},
		{"a form's type", alice, "repository=alice/built&game=tanks", "multipart/form-data", good, 415, "the body must be the bot's folder as a .zip or .tar.gz"},
		{"text", alice, "repository=alice/built&game=tanks", "text/plain", good, 415, "Content-Type"},
		{"zip slip", alice, "repository=alice/built&game=tanks", "application/zip", zipped(t, map[string]string{"bot.py": "x", "../../evil": "x"}), 400, `entry "../../evil": a path that climbs out`},
		{"not an archive", alice, "repository=alice/built&game=tanks", "application/octet-stream", []byte("print()"), 400, "not a zip or a .tar.gz archive"},
		{"no game", alice, "repository=alice/built", "application/zip", good, 400, "game"},
		{"no namespace", alice, "repository=built&game=tanks", "application/zip", good, 400, "want NAME/bot"},
		{"unknown kit", alice, "repository=alice/built&game=tanks&kit=rust", "application/zip", good, 400, `kit "rust": one of go, cpp, python, javascript`},
	} {
		status, v := upload(c.tok, c.query, c.contentType, c.body)
		if status != c.status || !strings.Contains(fmt.Sprint(v["error"]), c.want) {
			t.Errorf("%s: %d %v, want %d and %q", c.what, status, v, c.status, c.want)
		}
	}
	if len(b.built) != 2 {
		t.Errorf("%d builds made, want 2: refused uploads build nothing", len(b.built))
	}
	// From another site, nothing.
	req, _ := http.NewRequest("POST", ms.url+"/api/builds?repository=alice/built&game=tanks", bytes.NewReader(good))
	req.Header.Set("Authorization", "Bearer "+alice)
	req.Header.Set("Content-Type", "application/zip")
	req.Header.Set("Origin", "https://evil.example")
	if status, _ := doJSON(t, req); status != http.StatusForbidden {
		t.Errorf("an upload from another site: %d", status)
	}
	// The upload is kept with its version, counted against alice's quota,
	// and goes with it.
	digest := fmt.Sprint(done["digest"])
	archive, kept, err := ms.store.Source(t.Context(), digest)
	if err != nil || !kept {
		t.Fatalf("the upload of %s is not kept: %v", digest, err)
	}
	if src, err := sourcebuild.Read(archive, sourcebuild.DefaultLimits); err != nil || !src.Has("bot.py") || !src.Has("tanks.py") {
		t.Errorf("the kept upload: %+v, %v", src, err)
	}
	if u, _ := ms.store.RegistryUsage(t.Context(), "alice"); u.Bytes < int64(len(archive)) {
		t.Errorf("alice's usage %d leaves out her kept upload's %d bytes", u.Bytes, len(archive))
	}
	// The metrics count the builds by outcome, the check's match, the
	// registry's repository.
	_, admin := ms.token(t, "admin")
	text := scrape(t, ms.url, "Authorization", "Bearer "+admin)
	for series, want := range map[string]float64{`arena_builds_total{outcome="pushed"}`: 1, `arena_builds_total{outcome="failed"}`: 1,
		`arena_matches_ended_total{game="tanks",kind="check",status="finished"}`: 1, "arena_registry_repositories": 1} {
		if got, ok := metric(text, series); !ok || got != want {
			t.Errorf("%s = %v (%v), want %v", series, got, ok, want)
		}
	}
	if status, _ := doJSON(t, func() *http.Request {
		r, _ := http.NewRequest("GET", ms.url+"/metrics", nil)
		r.Header.Set("Authorization", "Bearer "+alice)
		return r
	}()); status != http.StatusForbidden {
		t.Errorf("alice reads the metrics: %d", status)
	}
	if status, _ := ms.do(t, "DELETE", "/api/registry/repositories/alice/built", "", auth...); status != http.StatusNoContent {
		t.Fatalf("alice deletes her repository: %d", status)
	}
	if _, kept, _ := ms.store.Source(t.Context(), digest); kept {
		t.Errorf("the upload stayed after its version went")
	}
}

func tarGzOf(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var fs []sourcebuild.File
	for name, body := range files {
		fs = append(fs, sourcebuild.File{Name: name, Data: []byte(body)})
	}
	var buf bytes.Buffer
	if err := sourcebuild.TarGz(fs, &buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func doJSON(t *testing.T, req *http.Request) (int, map[string]any) {
	t.Helper()
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var v map[string]any
	if err := json.NewDecoder(res.Body).Decode(&v); err != nil && !errors.Is(err, io.EOF) {
		t.Fatalf("%s %s: %d, not JSON: %v", req.Method, req.URL, res.StatusCode, err)
	}
	return res.StatusCode, v
}

// heldBuilder builds nothing until released.
type heldBuilder struct{ release chan struct{} }

func (heldBuilder) Prepare(context.Context, string) error { return nil }

func (h heldBuilder) Build(ctx context.Context, _ sourcebuild.Request, _ io.Writer) (v1.Image, error) {
	select {
	case <-h.release:
	case <-ctx.Done():
	}
	return nil, fmt.Errorf("%w: held", sourcebuild.ErrBuild)
}

// One build at a time per user: a second upload while the first is not
// done is 429, saying which build it waits for; another user's is taken.
func TestOneBuildAtATimePerUser(t *testing.T) {
	h := heldBuilder{release: make(chan struct{})}
	ms := newMatrixServer(t, Config{}, registryAt("127.0.0.1:5006"), withDeps(func(d *platform.Deps) { d.Builder = h }))
	defer close(h.release)
	upload := func(user, repo string) (int, map[string]any) {
		t.Helper()
		_, tok := ms.token(t, user)
		req, _ := http.NewRequest("POST", ms.url+"/api/builds?game=tanks&repository="+repo, bytes.NewReader(zipped(t, map[string]string{"bot.py": "x"})))
		req.Header.Set("Authorization", "Bearer "+tok)
		req.Header.Set("Content-Type", "application/zip")
		return doJSON(t, req)
	}
	status, first := upload("alice", "alice/one")
	if status != http.StatusAccepted {
		t.Fatalf("alice's first build: %d %v", status, first)
	}
	if status, v := upload("alice", "alice/two"); status != http.StatusTooManyRequests || !strings.Contains(fmt.Sprint(v["error"]), "your build "+first["id"].(string)+" is not done yet") {
		t.Errorf("alice's second build: %d %v", status, v)
	}
	if status, v := upload("bob", "bob/one"); status != http.StatusAccepted {
		t.Errorf("bob's build beside alice's: %d %v", status, v)
	}
}
