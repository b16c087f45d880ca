package web

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"arena/internal/testsupport/poll"
	"arena/orchestrator/fake"
	"arena/platform"
	"arena/store"
)

// image is a small OCI image, as a client pushes it: a config with the
// labels given and one layer.
type image struct {
	config, layer, manifest []byte
}

func digestOf(b []byte) string { return fmt.Sprintf("sha256:%x", sha256.Sum256(b)) }

func newImage(t *testing.T, labels map[string]string, layer string) image {
	t.Helper()
	im := image{layer: []byte(layer)}
	im.config, _ = json.Marshal(map[string]any{"architecture": "amd64", "os": "linux", "config": map[string]any{"Labels": labels},
		"rootfs": map[string]any{"type": "layers", "diff_ids": []string{digestOf(im.layer)}}})
	im.manifest, _ = json.Marshal(map[string]any{"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
		"config": map[string]any{"mediaType": "application/vnd.oci.image.config.v1+json", "digest": digestOf(im.config), "size": len(im.config)},
		"layers": []map[string]any{{"mediaType": "application/vnd.oci.image.layer.v1.tar", "digest": digestOf(im.layer), "size": len(im.layer)}}})
	return im
}

// registryCall is one request to the registry with Basic credentials
// (none when user is empty); it returns the status and the body.
func (ts *testServer) registryCall(t *testing.T, user, pass, method, path, contentType string, body []byte) (*http.Response, []byte) {
	t.Helper()
	target := path
	if !strings.HasPrefix(path, "http") {
		target = ts.url + path
	}
	req, err := http.NewRequest(method, target, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if user != "" {
		req.SetBasicAuth(user, pass)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	req.Header.Set("Accept", "application/vnd.oci.image.manifest.v1+json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res, b
}

// push pushes an image to repo:tag as a client does (blobs, then the
// manifest) and returns the manifest's status and body.
func (ts *testServer) push(t *testing.T, user, pass, repo, tag string, im image) (int, string) {
	t.Helper()
	if status, body := ts.pushBlobs(t, user, pass, repo, im); status != http.StatusCreated {
		return status, body
	}
	res, body := ts.registryCall(t, user, pass, "PUT", "/v2/"+repo+"/manifests/"+tag, "application/vnd.oci.image.manifest.v1+json", im.manifest)
	return res.StatusCode, string(body)
}

// pushBlobs uploads an image's config and layer to repo.
func (ts *testServer) pushBlobs(t *testing.T, user, pass, repo string, im image) (int, string) {
	t.Helper()
	for _, blob := range [][]byte{im.config, im.layer} {
		res, body := ts.registryCall(t, user, pass, "POST", "/v2/"+repo+"/blobs/uploads/", "", nil)
		if res.StatusCode != http.StatusAccepted {
			return res.StatusCode, string(body)
		}
		loc := res.Header.Get("Location")
		sep := "?"
		if strings.Contains(loc, "?") {
			sep = "&"
		}
		res, body = ts.registryCall(t, user, pass, "PUT", loc+sep+"digest="+digestOf(blob), "application/octet-stream", blob)
		if res.StatusCode != http.StatusCreated {
			return res.StatusCode, string(body)
		}
	}
	return http.StatusCreated, ""
}

// The registry: alice pushes to alice/ and her team's red/, and her push
// is recorded with what its image says; bob may neither push to alice/
// nor pull from it, nobody anonymous may do anything, the platform pulls
// anything; quotas refuse with a clear error; deleting a repository and
// a collection leave no blob of it.
func TestRegistry(t *testing.T) {
	ms := newMatrixServer(t, Config{}, with(platform.Config{Registry: platform.RegistryConfig{Enabled: true, Host: "127.0.0.1:5006", MaxRepos: 3, MaxTags: 4}}))
	_, aliceTok := ms.token(t, "alice")
	_, bobTok := ms.token(t, "bob")
	im := newImage(t, map[string]string{"io.arena.game": "tanks", "org.opencontainers.image.authors": "alice@example.org"}, "the layer")

	if status, body := ms.push(t, "alice", aliceTok, "alice/tank", "v1", im); status != http.StatusCreated {
		t.Fatalf("alice pushes alice/tank:v1: %d %s", status, body)
	}
	if status, body := ms.push(t, "alice", aliceTok, "red/tank", "v1", im); status != http.StatusCreated {
		t.Fatalf("alice pushes red/tank:v1: %d %s", status, body)
	}
	status, body := ms.push(t, "bob", bobTok, "alice/tank", "evil", im)
	if status != http.StatusForbidden || !strings.Contains(body, "DENIED") || !strings.Contains(body, "bob may not push to alice/tank") {
		t.Errorf("bob pushes to alice/: %d %s", status, body)
	}
	for _, c := range []struct {
		who, pass string
		want      int
	}{
		{"alice", aliceTok, 200}, {"bob", bobTok, 403}, {"", "", 401}, {"alice", bobTok, 401}, {"alice", "arena_wrong", 401},
		{"arena-platform", "guess", 401},
	} {
		if res, body := ms.registryCall(t, c.who, c.pass, "GET", "/v2/alice/tank/manifests/v1", "", nil); res.StatusCode != c.want {
			t.Errorf("%q pulls alice/tank:v1: %d %s, want %d", c.who, res.StatusCode, body, c.want)
		} else if c.want == 401 && res.Header.Get("WWW-Authenticate") == "" {
			t.Errorf("%q: a 401 without a challenge", c.who)
		}
	}
	// The platform pulls everything, with its own credential.
	if b, err := ms.pf.Registry().Describe(t.Context(), "alice/tank", "v1"); err != nil || b.Game != "tanks" {
		t.Errorf("the platform reads alice/tank:v1: %+v %v", b, err)
	}
	// Pushed images are listed for their owners, with what they say.
	_, mine := ms.do(t, "GET", "/api/registry", "", "Authorization", "Bearer "+aliceTok)
	imgs := mine["images"].([]any)
	if len(imgs) != 2 {
		t.Fatalf("alice's images: %v", mine)
	}
	first := imgs[0].(map[string]any)
	if first["game"] != "tanks" || first["authors"] != "alice@example.org" || first["digest"] != digestOf(im.manifest) || first["size"] != float64(len(im.manifest)+len(im.config)+len(im.layer)) || first["pushed_by"] != "alice" {
		t.Errorf("alice's image: %v", first)
	}
	if _, theirs := ms.do(t, "GET", "/api/registry", "", "Authorization", "Bearer "+bobTok); len(theirs["images"].([]any)) != 0 {
		t.Errorf("bob is shown %v", theirs["images"])
	}
	// Quotas: a fourth repository (red's count is its own).
	ms.push(t, "alice", aliceTok, "alice/two", "v1", im)
	ms.push(t, "alice", aliceTok, "alice/three", "v1", im)
	if status, body := ms.push(t, "alice", aliceTok, "alice/four", "v1", im); status != http.StatusForbidden || !strings.Contains(body, "ARENA_REGISTRY_MAX_REPOS") {
		t.Errorf("past the repositories' quota: %d %s", status, body)
	}
	ms.push(t, "alice", aliceTok, "alice/tank", "v2", im)
	if status, body := ms.push(t, "alice", aliceTok, "alice/tank", "v3", im); status != http.StatusForbidden || !strings.Contains(body, "ARENA_REGISTRY_MAX_TAGS") {
		t.Errorf("past the tags' quota: %d %s", status, body)
	}
	// Deleting a repository: bob may not; alice may; its blobs go at the
	// next collection.
	if status, _ := ms.do(t, "DELETE", "/api/registry/repositories/alice/tank", "", "Authorization", "Bearer "+bobTok); status != http.StatusForbidden {
		t.Errorf("bob deletes alice/tank: %d", status)
	}
	if status, body := ms.do(t, "DELETE", "/api/registry/repositories/alice/tank", "", "Authorization", "Bearer "+aliceTok); status != http.StatusNoContent {
		t.Fatalf("alice deletes alice/tank: %d %v", status, body)
	}
	if res, _ := ms.registryCall(t, "alice", aliceTok, "GET", "/v2/alice/tank/manifests/v1", "", nil); res.StatusCode != http.StatusNotFound {
		t.Errorf("a deleted repository's tag: %d", res.StatusCode)
	}
	if status, _ := ms.do(t, "POST", "/api/registry/gc", "{}", "Authorization", "Bearer "+matrixAdminToken); status != http.StatusOK {
		t.Errorf("collect: %d", status)
	}
	// Still pullable elsewhere: the same blobs under red/tank.
	if res, _ := ms.registryCall(t, "alice", aliceTok, "GET", "/v2/red/tank/blobs/"+digestOf(im.layer), "", nil); res.StatusCode != http.StatusOK {
		t.Errorf("red/tank's layer after the collection: %d", res.StatusCode)
	}
}

// fakePulls makes the server's engine "pull" pushed images: the fake
// launcher learns each by its digest reference, with the behaviour of
// the test script its image was made with. It returns how a test makes a
// Tanks image of a layer and a script.
func fakePulls(t *testing.T, ms *matrixServer) func(layer string, s fake.Script) image {
	var mu sync.Mutex
	scripts := map[string]fake.Script{}
	ms.useEngine(func(ref string) (fake.Script, error) {
		_, digest, _ := strings.Cut(ref, "@")
		mu.Lock()
		defer mu.Unlock()
		s, ok := scripts[digest]
		if !ok {
			return fake.Script{}, fmt.Errorf("no test image %s", ref)
		}
		return s, nil
	})
	return func(layer string, s fake.Script) image {
		im := newImage(t, map[string]string{"io.arena.game": "tanks"}, layer)
		s.Game = "tanks"
		mu.Lock()
		scripts[digestOf(im.manifest)] = s
		mu.Unlock()
		return im
	}
}

// Each pushed version plays a check match before it may play: one that
// answers is ready; one that crashes at once is rejected, with the
// reason, the turn and its stderr, and plays neither a match nor a
// ladder; one still being checked enters no ladder yet; an image that
// says no game is rejected saying how to label it.
func TestPushedBotsAreChecked(t *testing.T) {
	ms := newMatrixServer(t, Config{}, registryAt("127.0.0.1:5006"))
	_, tok := ms.token(t, "alice")
	hold := make(chan struct{})
	var once sync.Once
	release := func() { once.Do(func() { close(hold) }) }
	t.Cleanup(release)
	tanksImage := fakePulls(t, ms)
	good := tanksImage("good", fake.Script{})
	bad := tanksImage("bad", fake.Script{Faults: map[int]fake.Fault{1: fake.Crash}, Stderr: func(n int) string { return fmt.Sprintf("panic: boom %d", n) }})
	slow := tanksImage("slow", fake.Script{Hold: hold})
	unlabelled := newImage(t, nil, "unlabelled")
	auth := []string{"Authorization", "Bearer " + tok}
	state := func() map[string]map[string]any {
		_, reg := ms.do(t, "GET", "/api/registry", "", auth...)
		out := map[string]map[string]any{}
		for _, v := range reg["images"].([]any) {
			img := v.(map[string]any)
			out[img["reference"].(string)] = img
		}
		return out
	}
	// (The server plays one match at a time: the held one last.) Each
	// check is queued (or decided) before the next push: queued in this
	// order.
	for _, p := range []struct {
		repo string
		im   image
	}{{"alice/good", good}, {"alice/bad", bad}, {"alice/nogame", unlabelled}, {"alice/slow", slow}} {
		if status, body := ms.push(t, "alice", tok, p.repo, "v1", p.im); status != http.StatusCreated {
			t.Fatalf("push %s: %d %s", p.repo, status, body)
		}
		poll.Until(t, 20*time.Second, func() error {
			if s := state()[p.repo+":v1"]; s["state"] == "pending" && s["check_match"] == nil && s["reason"] == nil {
				return fmt.Errorf("%s:v1's check is not queued: %v", p.repo, s)
			}
			return nil
		})
	}
	var got map[string]map[string]any
	poll.Until(t, 20*time.Second, func() error {
		if got = state(); got["alice/good:v1"]["state"] == "pending" || got["alice/bad:v1"]["state"] == "pending" || got["alice/nogame:v1"]["state"] == "pending" {
			return fmt.Errorf("the checks did not end: %v", got)
		}
		return nil
	})
	if g := got["alice/good:v1"]; g["state"] != "ready" || g["check_match"] == nil || g["checked_at"] == nil {
		t.Errorf("the good bot: %v", g)
	}
	b := got["alice/bad:v1"]
	if b["state"] != "rejected" || !strings.Contains(fmt.Sprint(b["reason"]), "crashed at turn 1") || !strings.Contains(fmt.Sprint(b["stderr"]), "panic: boom") {
		t.Errorf("the crashing bot: %v", b)
	}
	if n := got["alice/nogame:v1"]; n["state"] != "rejected" || !strings.Contains(fmt.Sprint(n["reason"]), "LABEL io.arena.game=") {
		t.Errorf("the unlabelled image: %v", n)
	}
	if s := got["alice/slow:v1"]; s["state"] != "pending" || s["check_match"] == nil {
		t.Errorf("the bot still being checked: %v", s)
	}
	// The bot fields suggest the versions that may play, not the rejected,
	// nor the engine's copy of one that was tagged to be pushed here.
	ms.launcher.Add("127.0.0.1:5006/alice/bad:v1", fake.Script{Game: "tanks"})
	_, suggested := ms.do(t, "GET", "/api/images?game=tanks", "", auth...)
	if s := fmt.Sprint(suggested["images"]); !strings.Contains(s, "alice/good:v1") || strings.Contains(s, "alice/bad:v1") || strings.Contains(s, "alice/nogame:v1") {
		t.Errorf("the images suggested to alice: %s", s)
	}
	// Its check match is alice's, in her history, against the example bot.
	_, m := ms.do(t, "GET", "/api/matches/"+fmt.Sprint(b["check_match"]), "", auth...)
	if m["owner"] != "alice" || fmt.Sprint(m["bots"]) != "[alice/bad:v1 arena/tanks-random]" {
		t.Errorf("the check match: %v", m)
	}

	// The rejected version plays nothing; the pending one no ladder yet;
	// the ready one both.
	match := func(ref string) (int, map[string]any) {
		return ms.do(t, "POST", "/api/matches", fmt.Sprintf(`{"game":"tanks","bots":[%q,"arena/tanks-random"]}`, ref), auth...)
	}
	entry := func(ref string) (int, map[string]any) {
		return ms.do(t, "POST", "/api/ladders/tanks/entries", fmt.Sprintf(`{"name":%q,"image":%q}`, strings.NewReplacer("/", "-", ":", "-").Replace(ref), ref), auth...)
	}
	if status, body := match("alice/bad:v1"); status != http.StatusBadRequest || !strings.Contains(fmt.Sprint(body["error"]), "rejected by its check") {
		t.Errorf("a match of the rejected version: %d %v", status, body)
	}
	if status, body := entry("alice/bad:v1"); status != http.StatusBadRequest || !strings.Contains(fmt.Sprint(body["error"]), "crashed at turn 1") {
		t.Errorf("a ladder entry of the rejected version: %d %v", status, body)
	}
	if status, body := entry("alice/slow:v1"); status != http.StatusConflict || !strings.Contains(fmt.Sprint(body["error"]), "still being checked") {
		t.Errorf("a ladder entry of the version being checked: %d %v", status, body)
	}
	if status, body := entry("alice/good:v1"); status != http.StatusCreated {
		t.Errorf("a ladder entry of the ready version: %d %v", status, body)
	}
	if status, body := match("alice/good:v1"); status != http.StatusCreated {
		t.Errorf("a match of the ready version: %d %v", status, body)
	}
	// A check cut short (its match cancelled) leaves the version pending
	// with the reason; pushing it again checks it again.
	slowCheck := got["alice/slow:v1"]["check_match"]
	if status, body := ms.do(t, "DELETE", "/api/matches/"+fmt.Sprint(slowCheck), "", auth...); status != http.StatusOK && status != http.StatusAccepted && status != http.StatusNoContent {
		t.Fatalf("alice cancels the check match: %d %v", status, body)
	}
	poll.Until(t, 20*time.Second, func() error {
		if s := state()["alice/slow:v1"]; !strings.Contains(fmt.Sprint(s["reason"]), "cancelled") {
			return fmt.Errorf("the cancelled check: %v", s)
		}
		return nil
	})
	if s := state()["alice/slow:v1"]; s["state"] != "pending" {
		t.Errorf("the version whose check was cancelled: %v", s)
	}
	release()
	ms.push(t, "alice", tok, "alice/slow", "v1", slow)
	poll.Until(t, 20*time.Second, func() error {
		if s := state()["alice/slow:v1"]; s["state"] != "ready" {
			return fmt.Errorf("the version pushed again after its check was cancelled: %v", s)
		}
		return nil
	})
	if s := state()["alice/slow:v1"]; s["check_match"] == slowCheck {
		t.Errorf("checked again by the same match: %v", s)
	}

	// The same image pushed again keeps its verdict, and plays no new
	// check; another image under the tag is checked anew.
	matches := func() int {
		_, list := ms.do(t, "GET", "/api/matches?mine=1&limit=100", "", auth...)
		return len(list["matches"].([]any))
	}
	before := matches()
	ms.push(t, "alice", tok, "alice/bad", "v1", bad)
	// Sleeps on purpose: proves no new check is played meanwhile.
	time.Sleep(300 * time.Millisecond)
	if s := state()["alice/bad:v1"]; s["state"] != "rejected" || s["check_match"] != b["check_match"] {
		t.Errorf("the rejected image pushed again: %v", s)
	}
	if n := matches(); n != before {
		t.Errorf("the rejected image pushed again played %d new matches", n-before)
	}
	ms.push(t, "alice", tok, "alice/bad", "v1", good)
	poll.Until(t, 20*time.Second, func() error {
		if s := state()["alice/bad:v1"]; s["state"] != "ready" {
			return fmt.Errorf("the fixed version: %v", s)
		}
		return nil
	})
}

// A ladder entry registered by a tag follows it: a new image pushed under
// the tag, once ready, becomes the entry's next version (the old one
// retired with its history); a rejected one leaves the entry alone.
func TestLadderEntriesFollowTheirTag(t *testing.T) {
	ms := newMatrixServer(t, Config{}, registryAt("127.0.0.1:5006"))
	_, tok := ms.token(t, "alice")
	version := fakePulls(t, ms)
	auth := []string{"Authorization", "Bearer " + tok}
	waitState := func(want string) {
		t.Helper()
		poll.Until(t, 20*time.Second, func() error {
			_, reg := ms.do(t, "GET", "/api/registry", "", auth...)
			if img := reg["images"].([]any)[0].(map[string]any); img["state"] != want {
				return fmt.Errorf("alice/bot:latest never %s: %v", want, img)
			}
			return nil
		})
	}
	entries := func() []map[string]any {
		t.Helper()
		var out []map[string]any
		for _, st := range []string{store.EntryActive, store.EntryRetired} {
			es, err := ms.store.Entries(t.Context(), "tanks", st)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range es {
				out = append(out, map[string]any{"version": e.Version, "state": e.State, "image_id": e.ImageID})
			}
		}
		return out
	}

	ms.push(t, "alice", tok, "alice/bot", "latest", version("v1", fake.Script{}))
	waitState("ready")
	if status, body := ms.do(t, "POST", "/api/ladders/tanks/entries", `{"name":"follower","image":"alice/bot:latest"}`, auth...); status != http.StatusCreated {
		t.Fatalf("register: %d %v", status, body)
	}
	first := entries()
	// A broken version: rejected, the entry stays on v1.
	ms.push(t, "alice", tok, "alice/bot", "latest", version("broken", fake.Script{Faults: map[int]fake.Fault{1: fake.Crash}}))
	waitState("rejected")
	// Sleeps on purpose: proves the entry does not follow it meanwhile.
	time.Sleep(100 * time.Millisecond)
	if got := entries(); len(got) != 1 || got[0]["version"] != 1 {
		t.Errorf("after a rejected version: %v", got)
	}
	// A good one: the entry's version 2, version 1 retired.
	ms.push(t, "alice", tok, "alice/bot", "latest", version("v2", fake.Script{}))
	waitState("ready")
	var got []map[string]any
	poll.Until(t, 10*time.Second, func() error {
		if got = entries(); len(got) != 2 {
			return fmt.Errorf("the entry did not follow its tag: %v", got)
		}
		return nil
	})
	if got[0]["state"] != "active" || got[0]["version"] != 2 || got[1]["state"] != "retired" || got[1]["version"] != 1 ||
		got[0]["image_id"] == first[0]["image_id"] || got[1]["image_id"] != first[0]["image_id"] {
		t.Errorf("after a ready version: %v (first %v)", got, first)
	}
}

// The quotas hold against what a client may lie about: an image whose
// manifest declares a layer of 1 byte is weighed as stored, a push that
// would take the owner past the bytes' quota is refused (not only the one
// after it), and an index weighs what it lists, counts as a tag, shows on
// My bots and is rejected by its check (it cannot play).
func TestRegistryQuotasAgainstLies(t *testing.T) {
	ms := newMatrixServer(t, Config{}, with(platform.Config{Registry: platform.RegistryConfig{Enabled: true, Host: "127.0.0.1:5006", MaxBytes: 500 << 10, MaxTags: 4}}))
	_, tok := ms.token(t, "alice")
	auth := []string{"Authorization", "Bearer " + tok}
	// A 200 KiB layer declared as 1 byte.
	big := newImage(t, map[string]string{"io.arena.game": "tanks"}, strings.Repeat("x", 200<<10))
	var m map[string]any
	json.Unmarshal(big.manifest, &m)
	m["layers"].([]any)[0].(map[string]any)["size"] = 1
	big.manifest, _ = json.Marshal(m)
	if status, body := ms.push(t, "alice", tok, "alice/big", "v1", big); status != http.StatusCreated {
		t.Fatalf("push alice/big:v1: %d %s", status, body)
	}
	_, reg := ms.do(t, "GET", "/api/registry", "", auth...)
	if size := reg["images"].([]any)[0].(map[string]any)["size"].(float64); size < 200<<10 {
		t.Errorf("a 200 KiB layer declared as 1 byte was weighed %v bytes", size)
	}
	// An index of it: it weighs what it lists (another 200 KiB).
	index, _ := json.Marshal(map[string]any{"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json",
		"manifests": []map[string]any{{"mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": digestOf(big.manifest), "size": len(big.manifest),
			"platform": map[string]string{"architecture": "amd64", "os": "linux"}}}})
	putIndex := func(tag string) (*http.Response, []byte) {
		return ms.registryCall(t, "alice", tok, "PUT", "/v2/alice/big/manifests/"+tag, "application/vnd.oci.image.index.v1+json", index)
	}
	if res, body := putIndex("multi"); res.StatusCode != http.StatusCreated {
		t.Fatalf("push an index: %d %s", res.StatusCode, body)
	}
	// Another 200 KiB image would pass the 500 KiB quota: refused now.
	other := newImage(t, map[string]string{"io.arena.game": "tanks"}, strings.Repeat("y", 200<<10))
	if status, body := ms.push(t, "alice", tok, "alice/other", "v1", other); status != http.StatusForbidden || !strings.Contains(body, "ARENA_REGISTRY_QUOTA") {
		t.Errorf("a push past the bytes' quota: %d %s", status, body)
	}
	// The same image, or index, under another tag weighs nothing more;
	// but each is a tag.
	if status, body := ms.push(t, "alice", tok, "alice/big", "v2", big); status != http.StatusCreated {
		t.Errorf("the same image under another tag: %d %s", status, body)
	}
	if res, body := putIndex("multi2"); res.StatusCode != http.StatusCreated {
		t.Errorf("the same index under another tag: %d %s", res.StatusCode, body)
	}
	if res, body := putIndex("multi3"); res.StatusCode != http.StatusForbidden || !strings.Contains(string(body), "ARENA_REGISTRY_MAX_TAGS") {
		t.Errorf("a fifth tag, an index's: %d %s", res.StatusCode, body)
	}
	poll.Until(t, 10*time.Second, func() error {
		_, reg = ms.do(t, "GET", "/api/registry", "", auth...)
		var multi map[string]any
		for _, v := range reg["images"].([]any) {
			if img := v.(map[string]any); img["reference"] == "alice/big:multi" {
				multi = img
			}
		}
		if multi == nil || multi["state"] != "rejected" || !strings.Contains(fmt.Sprint(multi["reason"]), "not an image") {
			return fmt.Errorf("the index on My bots: %v", multi)
		}
		return nil
	})
}

// Manifests pushed at the same moment cannot all pass the quotas: each is
// checked once the one before it is counted.
func TestRegistryQuotasHoldAgainstARace(t *testing.T) {
	ms := newMatrixServer(t, Config{}, with(platform.Config{Registry: platform.RegistryConfig{Enabled: true, Host: "127.0.0.1:5006", MaxTags: 3}}))
	_, tok := ms.token(t, "alice")
	var images []image
	for i := range 8 {
		im := newImage(t, map[string]string{"io.arena.game": "tanks"}, fmt.Sprintf("layer %d", i))
		if status, body := ms.pushBlobs(t, "alice", tok, "alice/many", im); status != http.StatusCreated {
			t.Fatalf("blobs %d: %d %s", i, status, body)
		}
		images = append(images, im)
	}
	var wg sync.WaitGroup
	var accepted atomic.Int64
	for i, im := range images {
		wg.Go(func() {
			res, body := ms.registryCall(t, "alice", tok, "PUT", fmt.Sprintf("/v2/alice/many/manifests/v%d", i), "application/vnd.oci.image.manifest.v1+json", im.manifest)
			switch {
			case res.StatusCode == http.StatusCreated:
				accepted.Add(1)
			case res.StatusCode != http.StatusForbidden || !strings.Contains(string(body), "ARENA_REGISTRY_MAX_TAGS"):
				t.Errorf("tag v%d: %d %s", i, res.StatusCode, body)
			}
		})
	}
	wg.Wait()
	if n := accepted.Load(); n != 3 {
		t.Errorf("8 tags pushed at once under a quota of 3: %d accepted", n)
	}
}
