package web

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"

	"arena/internal/testsupport/poll"
	"arena/orchestrator/fake"
	"arena/platform"
	"arena/sourcebuild"
)

// scriptedBuilder builds a draft into an image whose bot plays as its
// files say: TEST-CRASH in a file crashes it at turn 1, TEST-HOLD holds
// it until the test ends, and TEST-SLOW-BUILD holds its build until it is
// cancelled (counted in stopped). The engine plays each image by its
// digest.
type scriptedBuilder struct {
	mu      sync.Mutex
	scripts map[string]fake.Script
	hold    chan struct{}
	built   []sourcebuild.Request
	stopped int
}

func newScriptedBuilder(t *testing.T) *scriptedBuilder {
	b := &scriptedBuilder{scripts: map[string]fake.Script{}, hold: make(chan struct{})}
	t.Cleanup(func() { close(b.hold) })
	return b
}

// script is the bot of a pulled image (HOST/REPO@DIGEST), for the engine.
func (b *scriptedBuilder) script(ref string) (fake.Script, error) {
	_, digest, _ := strings.Cut(ref, "@")
	b.mu.Lock()
	defer b.mu.Unlock()
	s, ok := b.scripts[digest]
	if !ok {
		return fake.Script{}, fmt.Errorf("no test image %s", ref)
	}
	return s, nil
}

func (*scriptedBuilder) Prepare(context.Context, string) error { return nil }

func (b *scriptedBuilder) Build(ctx context.Context, req sourcebuild.Request, log io.Writer) (v1.Image, error) {
	fmt.Fprintln(log, "building", len(req.Source.Files), "files, main", req.Main)
	for _, f := range req.Source.Files {
		if strings.Contains(string(f.Data), "TEST-SLOW-BUILD") {
			<-ctx.Done()
			b.mu.Lock()
			b.stopped++
			b.mu.Unlock()
			return nil, ctx.Err()
		}
	}
	img, err := random.Image(1000, 1)
	if err != nil {
		return nil, err
	}
	cf, _ := img.ConfigFile()
	cf = cf.DeepCopy()
	cf.Config.Labels = map[string]string{sourcebuild.GameLabel: req.Game}
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		return nil, err
	}
	d, err := img.Digest()
	if err != nil {
		return nil, err
	}
	s := fake.Script{Game: "tanks"}
	for _, f := range req.Source.Files {
		if strings.Contains(string(f.Data), "TEST-CRASH") {
			s.Faults = map[int]fake.Fault{1: fake.Crash}
		}
		if strings.Contains(string(f.Data), "TEST-HOLD") {
			s.Hold = b.hold
		}
	}
	b.mu.Lock()
	b.scripts[d.String()] = s
	b.built = append(b.built, req)
	b.mu.Unlock()
	return img, nil
}

// runState waits until a draft's Run is in one of states, and returns it.
func (ms *matrixServer) runState(t *testing.T, header []string, path string, states ...string) map[string]any {
	t.Helper()
	var run map[string]any
	poll.Until(t, 20*time.Second, func() error {
		_, run = ms.do(t, "GET", path+"/run", "", header...)
		for _, s := range states {
			if run["state"] == s {
				return nil
			}
		}
		_, m := ms.do(t, "GET", fmt.Sprintf("/api/matches/%v", run["match"]), "", header...)
		return fmt.Errorf("the Run: %v, want one of %v; its match: %v", run, states, m)
	})
	return run
}

// A draft's Run builds it with its kit's recipe and plays it against an
// opponent of the run bar's: its image is pushed as the owner's Run image
// (OWNER/arena-run), which no check plays, no list shows and nobody
// pushes to or plays by name; a new Run cancels the last one's match; an
// opponent that is not the run bar's (another's bot) is refused; a draft
// submitted becomes a version as an upload does, and is checked.
func TestADraftRunsAndIsSubmitted(t *testing.T) {
	b := newScriptedBuilder(t)
	ms := newMatrixServer(t, Config{}, registryAt("127.0.0.1:5006"), withDeps(func(d *platform.Deps) { d.Builder = b }))
	engine := ms.useEngine(b.script)
	alice := ms.signIn(t, "alice")
	d := ms.draftAt(t, alice, "bot", "python", "")
	path := fmt.Sprintf("/api/drafts/%v", d["id"])

	_, opp := ms.do(t, "GET", path+"/opponents", "", alice...)
	if !strings.Contains(fmt.Sprint(opp["opponents"]), "arena/tanks-hunter") {
		t.Fatalf("the run bar's opponents: %v", opp)
	}
	if status, body := ms.do(t, "POST", path+"/run", `{"opponent":"bob/tank"}`, alice...); status != http.StatusBadRequest || !strings.Contains(fmt.Sprint(body["error"]), "other people's bots are for Challenges") {
		t.Errorf("a Run against another's bot: %d %v", status, body)
	}
	status, run := ms.do(t, "POST", path+"/run", `{"opponent":"arena/tanks-hunter"}`, alice...)
	if status != http.StatusAccepted || run["state"] != "building" {
		t.Fatalf("Run: %d %v", status, run)
	}
	run = ms.runState(t, alice, path, "done", "failed")
	if run["state"] != "done" || !strings.Contains(fmt.Sprint(run["log"]), "building 3 files, main bot.py") {
		t.Fatalf("the Run: %v", run)
	}
	m := ms.waitFinal(t, run["match"].(string))
	if m["status"] != "finished" || m["kind"] != "run" || !strings.HasPrefix(fmt.Sprint(m["bots"]), "[alice/arena-run:latest ") {
		t.Errorf("the Run's match: %v", m)
	}

	// No list shows the Run's image; nobody pushes to it or plays it.
	_, reg := ms.do(t, "GET", "/api/registry", "", alice...)
	_, imgs := ms.do(t, "GET", "/api/images?game=tanks", "", alice...)
	if strings.Contains(fmt.Sprint(reg["images"]), "arena-run") || strings.Contains(fmt.Sprint(imgs), "arena-run") {
		t.Errorf("the Run's image is listed: registry %v; images %v", reg["images"], imgs)
	}
	_, tok := ms.token(t, "alice")
	if status, body := ms.push(t, "alice", tok, "alice/arena-run", "latest", newImage(t, map[string]string{"io.arena.game": "tanks"}, "mine")); status != http.StatusForbidden || !strings.Contains(body, "Runs") {
		t.Errorf("alice pushes to alice/arena-run: %d %s", status, body)
	}
	if status, body := ms.do(t, "POST", "/api/matches", `{"game":"tanks","bots":["alice/arena-run:latest","arena/tanks-hunter"]}`, alice...); status != http.StatusBadRequest || !strings.Contains(fmt.Sprint(body["error"]), "Run image") {
		t.Errorf("a match of the Run's image by name: %d %v", status, body)
	}

	// A Run whose match plays on is cancelled by the next.
	if status, saved := ms.do(t, "PUT", path, asJSON(platform.DraftSaveRequest{Base: 1, Files: map[string]string{"bot.py": "# TEST-HOLD\n", "tanks.py": "", "draw.py": ""}}), alice...); status != http.StatusOK {
		t.Fatalf("save: %d %v", status, saved)
	}
	if status, body := ms.do(t, "POST", path+"/run", `{"opponent":"arena/tanks-hunter"}`, alice...); status != http.StatusAccepted {
		t.Fatalf("Run: %d %v", status, body)
	}
	first := ms.runState(t, alice, path, "playing")
	if status, body := ms.do(t, "POST", path+"/run", `{"opponent":"arena/tanks-random","base":1}`, alice...); status != http.StatusAccepted {
		t.Fatalf("the next Run: %d %v", status, body)
	}
	if m := ms.waitFinal(t, first["match"].(string)); m["status"] != "cancelled" {
		t.Errorf("the first Run's match: %v", m)
	}
	if next := ms.runState(t, alice, path, "done", "failed"); next["state"] != "done" || next["id"] == first["id"] {
		t.Errorf("the next Run: %v", next)
	}

	// A Run whose build is still running is stopped by the next: the
	// build sees its end, the next Run plays.
	if status, saved := ms.do(t, "PUT", path, asJSON(platform.DraftSaveRequest{Base: 2, Files: map[string]string{"bot.py": "# TEST-SLOW-BUILD\n", "tanks.py": "", "draw.py": ""}}), alice...); status != http.StatusOK {
		t.Fatalf("save: %d %v", status, saved)
	}
	if status, body := ms.do(t, "POST", path+"/run", `{"opponent":"arena/tanks-hunter"}`, alice...); status != http.StatusAccepted {
		t.Fatalf("Run: %d %v", status, body)
	}
	poll.Until(t, 10*time.Second, func() error {
		if _, log := ms.do(t, "GET", path+"/run", "", alice...); !strings.Contains(fmt.Sprint(log["log"]), "building") {
			return fmt.Errorf("the slow build did not start: %v", log)
		}
		return nil
	})
	if status, body := ms.do(t, "POST", path+"/run", `{"opponent":"arena/tanks-hunter","base":1}`, alice...); status != http.StatusAccepted {
		t.Fatalf("the Run after the slow build: %d %v", status, body)
	}
	if next := ms.runState(t, alice, path, "done", "failed"); next["state"] != "done" {
		t.Errorf("the Run after the slow build: %v", next)
	}
	poll.Until(t, 10*time.Second, func() error {
		b.mu.Lock()
		defer b.mu.Unlock()
		if b.stopped != 1 {
			return fmt.Errorf("the slow build was not stopped (%d stopped)", b.stopped)
		}
		return nil
	})

	// Played by the person: their seat is 1, the draft's 0; the next Run
	// cancels that match too.
	status, human := ms.do(t, "POST", path+"/run", `{"human":true,"base":1}`, alice...)
	if status != http.StatusAccepted || human["opponent"] != "you" || human["human"] != true {
		t.Fatalf("Play it yourself: %d %v", status, human)
	}
	human = ms.runState(t, alice, path, "playing")
	_, hm := ms.do(t, "GET", fmt.Sprintf("/api/matches/%v", human["match"]), "", alice...)
	if bots := fmt.Sprint(hm["bots"]); !strings.HasPrefix(bots, "[alice/arena-run:latest human:alice") {
		t.Errorf("the match played by the person: %v", hm)
	}
	if status, body := ms.do(t, "POST", path+"/run", `{"opponent":"arena/tanks-hunter","base":1}`, alice...); status != http.StatusAccepted {
		t.Fatalf("the Run after playing: %d %v", status, body)
	}
	if m := ms.waitFinal(t, human["match"].(string)); m["status"] != "cancelled" {
		t.Errorf("the match played by the person, after the next Run: %v", m)
	}
	last := ms.runState(t, alice, path, "done", "failed")

	// Each Run replaced the last one's image: the engine holds the last
	// Run's alone.
	poll.Until(t, 10*time.Second, func() error {
		var runs []string
		for _, ref := range engine.held() {
			if strings.Contains(ref, "/alice/arena-run:") {
				runs = append(runs, ref)
			}
		}
		if len(runs) != 1 {
			return fmt.Errorf("after %v the engine holds the Run images %v, want the last alone", last["id"], runs)
		}
		return nil
	})

	// Submitted: a version, built in the builds' line and checked.
	status, build := ms.do(t, "POST", path+"/submit", `{"base":1,"repository":"alice/mybot","tag":"v1"}`, alice...)
	if status != http.StatusAccepted {
		t.Fatalf("submit: %d %v", status, build)
	}
	if done := waitBuild(t, ms, build["id"].(string)); done["state"] != "pushed" {
		t.Fatalf("the submission's build: %v", done)
	}
	poll.Until(t, 20*time.Second, func() error {
		if got := ms.tagState(t, tok, "alice/mybot:v1"); got != "ready" {
			return fmt.Errorf("alice/mybot:v1 is %q", got)
		}
		return nil
	})
	if status, body := ms.do(t, "POST", path+"/submit", `{"repository":"alice/arena-run","tag":"v2"}`, alice...); status != http.StatusBadRequest {
		t.Errorf("a submission as the Run's repository: %d %v", status, body)
	}
}
