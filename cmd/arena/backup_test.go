package main

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/docker/docker/api/types/image"

	"arena/backup"
	"arena/internal/testsupport/dockertest"
	"arena/internal/testsupport/poll"
)

// A backup taken while a ladder plays, restored into a new data folder:
// the new server has every match the backup counted (each finished one's
// replay verifies, from the restored file and over HTTP), the ladder's
// entries and ratings (recomputed from the restored history: the same),
// the accounts (they sign in, their API tokens work) and the pushed
// image (its manifest and every blob, by digest, from the new server's
// registry).
func TestBackupDuringALadderAndRestore(t *testing.T) {
	cli := dockertest.Client(t)
	bots := dockertest.ExampleBots(t, cli)
	seed := "arena-test/seedbot:labelled"
	dockertest.Build(t, cli, seed, "FROM "+bots[0]+"\nLABEL io.arena.game=tanks\n", nil)
	bin := arenaBinary(t)
	data := t.TempDir()
	port := freePort(t)
	host := fmt.Sprintf("127.0.0.1:%d", port)
	s := startServer(t, bin, data, port, "--auth", "accounts", "--admin-password", "the-admin-password", "--concurrency", "1")
	admin := signedIn(t, s.url, "admin", "the-admin-password")
	if status, body := admin.call(t, "POST", "/api/users", `{"name":"alice","password":"alice-password"}`); status != 201 {
		t.Fatalf("make alice: %d %v", status, body)
	}
	alice := signedIn(t, s.url, "alice", "alice-password")
	status, tok := alice.call(t, "POST", "/api/tokens", `{"name":"docker"}`)
	if status != 201 {
		t.Fatalf("alice's token: %d %v", status, tok)
	}
	token := tok["token"].(string)
	pushed := host + "/alice/seedbot:v1"
	if err := cli.ImageTag(t.Context(), seed, pushed); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cli.ImageRemove(context.Background(), pushed, image.RemoveOptions{})
		removeHeld(cli, host)
	})
	cfg := t.TempDir()
	if out, err := dockerCLI(t, cfg, token, "login", host, "-u", "alice", "--password-stdin"); err != nil {
		t.Fatalf("alice logs in: %v\n%s", err, out)
	}
	if out, err := dockerCLI(t, cfg, "", "push", pushed); err != nil {
		t.Fatalf("alice pushes: %v\n%s", err, out)
	}
	poll.Until(t, 2*time.Minute, func() error {
		if img := pushedImage(t, alice, "alice/seedbot:v1"); img["state"] != "ready" {
			return fmt.Errorf("alice's pushed bot is not ready: %v", img)
		}
		return nil
	})
	if status, body := alice.call(t, "POST", "/api/ladders/tanks/entries", `{"name":"seedbot","image":"alice/seedbot:v1"}`); status != 201 {
		t.Fatalf("alice's entry: %d %v", status, body)
	}
	if status, body := admin.call(t, "POST", "/api/ladders/tanks/entries", fmt.Sprintf(`{"name":"hunter","image":%q}`, bots[1])); status != 201 {
		t.Fatalf("the admin's entry: %d %v", status, body)
	}
	rated := func() int {
		_, b := admin.call(t, "GET", "/api/ladders/tanks", "")
		n, _ := b["rated"].(float64)
		return int(n)
	}
	poll.Until(t, 3*time.Minute, func() error {
		if n := rated(); n < 3 {
			return fmt.Errorf("%d ladder matches rated", n)
		}
		return nil
	})

	// The backup, while the ladder plays on.
	dest := filepath.Join(t.TempDir(), "backup")
	out, err := exec.Command(bin, "backup", "--data", data, dest).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "backed up "+data+" into "+dest) {
		t.Fatalf("arena backup: %v\n%s", err, out)
	}
	t.Logf("arena backup: %s", out)
	var m backup.Manifest
	raw, _ := os.ReadFile(filepath.Join(dest, "manifest.json"))
	if err := json.Unmarshal(raw, &m); err != nil || m.Matches < 4 || m.Replays < 3 || m.Registry != "folder" {
		t.Fatalf("the manifest: %+v (%v)", m, err)
	}
	after := rated()
	poll.Until(t, 2*time.Minute, func() error {
		if n := rated(); n <= after {
			return fmt.Errorf("the ladder stopped at %d rated matches after the backup", n)
		}
		return nil
	})
	s.cmd.Process.Signal(syscall.SIGTERM)
	s.cmd.Wait()
	// The engine forgets the bot pulled from the first server's registry.
	removeHeld(cli, host)

	restored := filepath.Join(t.TempDir(), "data")
	if out, err := exec.Command(bin, "restore", "--data", restored, dest).CombinedOutput(); err != nil || !strings.Contains(string(out), "restored the backup") {
		t.Fatalf("arena restore: %v\n%s", err, out)
	}
	if out, err := exec.Command(bin, "restore", "--data", restored, dest).CombinedOutput(); err == nil || !strings.Contains(string(out), "not empty") {
		t.Errorf("a second restore into the same folder: %v\n%s", err, out)
	}
	// The ratings are those the restored history gives.
	if out, err := exec.Command(bin, "ladder", "recompute", "tanks", "--data", restored).CombinedOutput(); err != nil || !strings.Contains(string(out), "by 0 at most") {
		t.Errorf("arena ladder recompute on the restored folder: %v\n%s", err, out)
	}
	// Every replay verifies from its restored file.
	files, _ := filepath.Glob(filepath.Join(restored, "replays", "*.json.zst"))
	if len(files) != m.Replays {
		t.Errorf("%d replay files restored, the manifest says %d", len(files), m.Replays)
	}
	for _, f := range files {
		if out, err := exec.Command(bin, "replay", "verify", f).CombinedOutput(); err != nil || !strings.Contains(string(out), ": ok,") {
			t.Errorf("arena replay verify %s: %v\n%s", filepath.Base(f), err, out)
		}
	}

	port2 := freePort(t)
	host2 := fmt.Sprintf("127.0.0.1:%d", port2)
	t.Cleanup(func() { removeHeld(cli, host2) })
	s2 := startServer(t, bin, restored, port2, "--auth", "accounts", "--ladder", "off", "--concurrency", "1")
	admin2 := signedIn(t, s2.url, "admin", "the-admin-password")
	alice2 := signedIn(t, s2.url, "alice", "alice-password")
	_, list := admin2.call(t, "GET", "/api/matches?limit=100", "")
	ms, _ := list["matches"].([]any)
	if len(ms) != m.Matches {
		t.Errorf("%d matches on the restored server, the backup counted %d", len(ms), m.Matches)
	}
	withReplay, kinds := 0, map[any]int{}
	for _, v := range ms {
		match := v.(map[string]any)
		kinds[match["kind"]]++
		if match["ladder"] != nil && match["kind"] != "ladder" {
			t.Errorf("a ladder's match of kind %v", match["kind"])
		}
		if match["replay"] == nil {
			continue
		}
		withReplay++
		res, err := admin2.Get(s2.url + match["replay"].(string))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 200 || !json.Valid(body) {
			t.Errorf("the replay of %v over HTTP: %d, %d bytes", match["id"], res.StatusCode, len(body))
		}
	}
	if kinds["ladder"] == 0 || kinds["check"] != 1 {
		t.Errorf("the restored matches' kinds: %v", kinds)
	}
	if withReplay != m.Replays {
		t.Errorf("%d restored matches offer a replay, the backup kept %d", withReplay, m.Replays)
	}
	_, board := admin2.call(t, "GET", "/api/ladders/tanks", "")
	var names []string
	for _, e := range board["entries"].([]any) {
		names = append(names, e.(map[string]any)["name"].(string))
	}
	if slices.Sort(names); !slices.Equal(names, []string{"hunter", "seedbot"}) {
		t.Errorf("the restored ladder's entries: %v", board)
	}
	if img := pushedImage(t, alice2, "alice/seedbot:v1"); img == nil || img["state"] != "ready" {
		t.Errorf("alice's pushed bot on the restored server: %v", img)
	}
	// The pushed image, whole, from the restored registry, with alice's
	// restored token.
	get := func(path, accept string) []byte {
		req, _ := http.NewRequest("GET", s2.url+path, nil)
		req.SetBasicAuth("alice", token)
		if accept != "" {
			req.Header.Set("Accept", accept)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		if res.StatusCode != 200 {
			t.Fatalf("GET %s: %d %s", path, res.StatusCode, body)
		}
		return body
	}
	manifest := get("/v2/alice/seedbot/manifests/v1", "application/vnd.oci.image.manifest.v1+json, application/vnd.docker.distribution.manifest.v2+json")
	var mf struct {
		Config struct{ Digest string }
		Layers []struct{ Digest string }
	}
	if err := json.Unmarshal(manifest, &mf); err != nil || mf.Config.Digest == "" || len(mf.Layers) == 0 {
		t.Fatalf("the restored manifest: %s (%v)", manifest, err)
	}
	for _, d := range append([]string{mf.Config.Digest}, func() (ds []string) {
		for _, l := range mf.Layers {
			ds = append(ds, l.Digest)
		}
		return
	}()...) {
		if got := fmt.Sprintf("sha256:%x", sha256.Sum256(get("/v2/alice/seedbot/blobs/"+d, ""))); got != d {
			t.Errorf("the restored blob %s reads as %s", d, got)
		}
	}
	// And the restored server plays it, pulled from its own registry.
	status, created := alice2.call(t, "POST", "/api/matches", `{"game":"tanks","bots":["alice/seedbot:v1","alice/seedbot:v1"],"settings":{"zone_radius":4}}`)
	if status != 201 {
		t.Fatalf("a match of the restored pushed bot: %d %v", status, created)
	}
	poll.Until(t, 2*time.Minute, func() error {
		_, got := alice2.call(t, "GET", "/api/matches/"+created["id"].(string), "")
		if got["status"] != "finished" {
			return fmt.Errorf("the match of the restored pushed bot: %v", got)
		}
		return nil
	})
}
