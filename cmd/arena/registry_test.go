package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/client"

	"arena/botkits"
	"arena/dispatch"
	"arena/internal/testsupport/dockertest"
	"arena/internal/testsupport/poll"
	"arena/sourcebuild"
)

// dockerPushAs pushes the local image to the server's registry at host as
// repo:v1, with docker login and push as user (whose password is
// USER-password) does; the tag it made is removed when the test ends.
func dockerPushAs(t testing.TB, cli *client.Client, s *server, host, user, repo, local string) {
	t.Helper()
	_, tok := signedIn(t, s.url, user, user+"-password").call(t, "POST", "/api/tokens", `{"name":"docker"}`)
	cfg := t.TempDir()
	if out, err := dockerCLI(t, cfg, tok["token"].(string), "login", host, "-u", user, "--password-stdin"); err != nil {
		t.Fatalf("%s logs in: %v\n%s", user, err, out)
	}
	ref := fmt.Sprintf("%s/%s:v1", host, repo)
	if err := cli.ImageTag(t.Context(), local, ref); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.ImageRemove(context.Background(), ref, image.RemoveOptions{}) })
	if out, err := dockerCLI(t, cfg, "", "push", ref); err != nil {
		t.Fatalf("%s pushes: %v\n%s", user, err, out)
	}
}

// dockerCLI runs the docker command with a configuration folder of its own
// (its logins), and returns what it printed.
func dockerCLI(t testing.TB, config, stdin string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command("docker", args...)
	cmd.Env = append(os.Environ(), "DOCKER_CONFIG="+config)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// The registry with the real docker command, against arena serve on
// 127.0.0.1 (which the engine reaches without TLS): alice logs in with an
// API token and pushes alice/seedbot:v1; bob may neither push to alice/
// nor pull it, and nobody may without logging in; the server pulls it
// into its engine from the registry and checks it (ready), alice
// registers it on a ladder by its name, and the ladder plays it. A
// pushed bot that crashes at turn 1 is rejected, and enters no ladder.
func TestDockerPushToTheRegistry(t *testing.T) {
	cli := dockertest.Client(t)
	bots := dockertest.ExampleBots(t, cli)
	// Bots say which game they play, as the kits' images do.
	labelled := func(tag, from string) string {
		dockertest.Build(t, cli, tag, "FROM "+from+"\nLABEL io.arena.game=tanks\n", nil)
		return tag
	}
	seed := labelled("arena-test/seedbot:labelled", bots[0])
	crashing := labelled("arena-test/crashbot:labelled", dockertest.TestBot(t, cli, "exit-at=1"))
	port := freePort(t)
	host := fmt.Sprintf("127.0.0.1:%d", port)
	s := startServer(t, arenaBinary(t), t.TempDir(), port, "--auth", "accounts", "--admin-password", "the-admin-password")
	admin := signedIn(t, s.url, "admin", "the-admin-password")
	for _, u := range []string{"alice", "bob"} {
		if status, body := admin.call(t, "POST", "/api/users", fmt.Sprintf(`{"name":%q,"password":"%s-password"}`, u, u)); status != 201 {
			t.Fatalf("make %s: %d %v", u, status, body)
		}
	}
	token := func(user string) string {
		c := signedIn(t, s.url, user, user+"-password")
		status, body := c.call(t, "POST", "/api/tokens", `{"name":"docker"}`)
		if status != 201 {
			t.Fatalf("a token of %s: %d %v", user, status, body)
		}
		return body["token"].(string)
	}
	aliceCfg, bobCfg, nobodyCfg := t.TempDir(), t.TempDir(), t.TempDir()
	pushed := host + "/alice/seedbot:v1"
	if err := cli.ImageTag(t.Context(), seed, pushed); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, ref := range []string{pushed, host + "/alice/seedbot:evil", host + "/alice/crashbot:v1"} {
			cli.ImageRemove(context.Background(), ref, image.RemoveOptions{})
		}
		removeHeld(cli, host)
	})
	if out, err := dockerCLI(t, aliceCfg, token("alice"), "login", host, "-u", "alice", "--password-stdin"); err != nil {
		t.Fatalf("alice logs in: %v\n%s", err, out)
	}
	start := time.Now()
	if out, err := dockerCLI(t, aliceCfg, "", "push", pushed); err != nil {
		t.Fatalf("alice pushes: %v\n%s", err, out)
	}
	pushTook := time.Since(start)

	if out, err := dockerCLI(t, bobCfg, token("bob"), "login", host, "-u", "bob", "--password-stdin"); err != nil {
		t.Fatalf("bob logs in: %v\n%s", err, out)
	}
	if out, err := dockerCLI(t, bobCfg, "", "pull", pushed); err == nil || !strings.Contains(out, "denied") {
		t.Errorf("bob pulls alice's bot: %v\n%s", err, out)
	}
	if err := cli.ImageTag(t.Context(), bots[0], host+"/alice/seedbot:evil"); err != nil {
		t.Fatal(err)
	}
	if out, err := dockerCLI(t, bobCfg, "", "push", host+"/alice/seedbot:evil"); err == nil || !strings.Contains(out, "denied") {
		t.Errorf("bob pushes to alice/: %v\n%s", err, out)
	}
	if out, err := dockerCLI(t, nobodyCfg, "", "pull", pushed); err == nil {
		t.Errorf("a pull without logging in: %s", out)
	}
	// alice's pushed bot on the ladder, against the admin's entry: the
	// engine does not hold it under its name until the server pulls it.
	cli.ImageRemove(t.Context(), pushed, image.RemoveOptions{})
	alice := signedIn(t, s.url, "alice", "alice-password")
	_, reg := alice.call(t, "GET", "/api/registry", "")
	if imgs, _ := reg["images"].([]any); len(imgs) != 1 || imgs[0].(map[string]any)["reference"] != "alice/seedbot:v1" {
		t.Fatalf("alice's images: %v", reg)
	}
	// Checked first: it plays one match, then it is ready.
	state := func(ref string) map[string]any { return pushedImage(t, alice, ref) }
	// Ready within two minutes of the push's start.
	poll.Until(t, time.Until(start.Add(2*time.Minute)), func() error {
		img := state("alice/seedbot:v1")
		if img["state"] == "rejected" {
			t.Fatalf("alice's pushed bot was not found ready: %v", img)
		}
		if img["state"] != "ready" {
			return fmt.Errorf("alice's pushed bot was not found ready: %v", img)
		}
		return nil
	})
	ready := time.Since(start)
	if status, body := alice.call(t, "POST", "/api/ladders/tanks/entries", `{"name":"seedbot","image":"alice/seedbot:v1"}`); status != 201 {
		t.Fatalf("alice registers her pushed bot: %d %v", status, body)
	}
	registered := time.Since(start)
	if status, body := admin.call(t, "POST", "/api/ladders/tanks/entries", fmt.Sprintf(`{"name":"hunter","image":%q}`, bots[1])); status != 201 {
		t.Fatalf("the admin's entry: %d %v", status, body)
	}
	var board map[string]any
	poll.Until(t, time.Until(start.Add(2*time.Minute)), func() error {
		_, board = alice.call(t, "GET", "/api/ladders/tanks", "")
		if rated, _ := board["rated"].(float64); rated < 1 {
			return fmt.Errorf("no ladder match rated: %v", board)
		}
		return nil
	})
	t.Logf("pushed in %v; ready %v and registered %v after the push began; first ladder match rated %v after it", pushTook, ready, registered, time.Since(start))
	for _, e := range board["entries"].([]any) {
		if e := e.(map[string]any); e["name"] == "seedbot" && e["matches"] != float64(1) {
			t.Errorf("seedbot's board: %v", e)
		}
	}

	// A pushed bot that crashes at turn 1: rejected, with the reason and
	// its stderr, and kept off the ladder.
	if err := cli.ImageTag(t.Context(), crashing, host+"/alice/crashbot:v1"); err != nil {
		t.Fatal(err)
	}
	if out, err := dockerCLI(t, aliceCfg, "", "push", host+"/alice/crashbot:v1"); err != nil {
		t.Fatalf("alice pushes her crashing bot: %v\n%s", err, out)
	}
	var img map[string]any
	poll.Until(t, 2*time.Minute, func() error {
		if img = state("alice/crashbot:v1"); img["state"] == "pending" {
			return fmt.Errorf("the crashing bot's check did not end: %v", img)
		}
		return nil
	})
	if img["state"] != "rejected" || !strings.Contains(fmt.Sprint(img["reason"]), "at turn 1") {
		t.Errorf("the crashing bot's check: %v", img)
	}
	if status, body := alice.call(t, "POST", "/api/ladders/tanks/entries", `{"name":"crashbot","image":"alice/crashbot:v1"}`); status != 400 || !strings.Contains(fmt.Sprint(body["error"]), "rejected") {
		t.Errorf("alice registers her rejected bot: %d %v", status, body)
	}

	// The command line: arena login keeps a token (the owner's alone),
	// arena bots lists both versions with their checks, arena logout
	// revokes the token.
	config := t.TempDir()
	arena := func(stdin string, args ...string) (string, string, error) {
		cmd := exec.Command(arenaBinary(t), args...)
		cmd.Env = append(os.Environ(), "ARENA_CONFIG="+config, "ARENA_SERVER=")
		cmd.Stdin = strings.NewReader(stdin)
		var out, errOut strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		return out.String(), errOut.String(), err
	}
	if _, errOut, err := arena("wrong-password\n", "login", "--name", "alice", "--password-stdin", host); err == nil || !strings.Contains(errOut, "sign in") {
		t.Errorf("a login with a wrong password: %v %q", err, errOut)
	}
	if _, errOut, err := arena("", "bots", host); err == nil || !strings.Contains(errOut, "not logged in to http://"+host) {
		t.Errorf("bots before a login: %v %q", err, errOut)
	}
	if out, errOut, err := arena("alice-password\n", "login", "--name", "alice", "--password-stdin", host); err != nil || !strings.Contains(out, "logged in to http://"+host+" as alice") {
		t.Fatalf("alice's login: %v %q %q", err, out, errOut)
	}
	fi, err := os.Stat(filepath.Join(config, "credentials.json"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the kept token's file: %v %v", fi, err)
	}
	out, errOut, err := arena("", "bots", host)
	if err != nil {
		t.Fatalf("arena bots: %v %q", err, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "BOT") ||
		!strings.Contains(out, "alice/seedbot:v1") || !regexp.MustCompile(`alice/crashbot:v1 +tanks +rejected .*at turn 1`).MatchString(out) ||
		!regexp.MustCompile(`alice/seedbot:v1 +tanks +ready`).MatchString(out) {
		t.Errorf("arena bots:\n%s", out)
	}
	creds, _ := os.ReadFile(filepath.Join(config, "credentials.json"))
	var kept struct {
		Servers map[string]struct{ Token string }
	}
	json.Unmarshal(creds, &kept)
	tok := kept.Servers["http://"+host].Token
	if out, errOut, err := arena("", "logout", host); err != nil || !strings.Contains(out, "logged out") {
		t.Errorf("arena logout: %v %q %q", err, out, errOut)
	}
	req, _ := http.NewRequest("GET", s.url+"/api/registry", nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 401 {
		t.Errorf("the token after arena logout: %s, want 401", res.Status)
	}
	// A token made on the account page: a wrong one is refused, a right
	// one kept; logging out only forgets it, and says so.
	if _, errOut, err := arena("arena_not-a-token\n", "login", "--token-stdin", host); err == nil || !strings.Contains(errOut, "does not take that token") {
		t.Errorf("a login with a wrong token: %v %q", err, errOut)
	}
	if out, errOut, err := arena(token("alice")+"\n", "login", "--token-stdin", host); err != nil || !strings.Contains(out, "as alice") {
		t.Fatalf("a login with a token: %v %q %q", err, out, errOut)
	}
	if out, errOut, err := arena("", "bots", host); err != nil || !strings.Contains(out, "alice/seedbot:v1") {
		t.Errorf("arena bots with a given token: %v %q %q", err, out, errOut)
	}
	if _, errOut, err := arena("", "logout", host); err != nil || !strings.Contains(errOut, "stays valid until revoked") {
		t.Errorf("arena logout of a given token: %v %q", err, errOut)
	}
}

// A push replaces no image of the engine (the attack: a player whose
// name is the namespace of an engine image pushes an image of that name,
// which the server used to tag over the engine's): svcco pushes
// svcco/webapp:latest three times and, for its team red, red/app:latest,
// each time removing the tag its docker push used (as on a laptop where
// the engine is the server's too); the server checks and plays each
// version by its digest, and the engine's own svcco/webapp:latest and
// red/app:latest stay the operator's. Each version is held by one tag of
// the registry's host, and removing an old one's tag (as the server's
// pruning does) removes it and nothing else.
func TestAPushReplacesNoImageOfTheEngine(t *testing.T) {
	cli := dockertest.Client(t)
	bots := dockertest.ExampleBots(t, cli)
	operators := map[string]string{}
	for _, ref := range []string{"svcco/webapp:latest", "red/app:latest"} {
		operators[ref] = dockertest.Build(t, cli, ref, "FROM "+bots[1]+"\nLABEL io.arena.game=tanks who=operator\n", nil)
		t.Cleanup(func() { cli.ImageRemove(context.Background(), ref, image.RemoveOptions{}) })
	}
	idOf := func(ref string) string {
		t.Helper()
		img, err := cli.ImageInspect(t.Context(), ref)
		if err != nil {
			t.Fatalf("%s: %v", ref, err)
		}
		return img.ID
	}
	before := map[string]string{}
	for ref := range operators {
		before[ref] = idOf(ref)
	}
	port := freePort(t)
	host := fmt.Sprintf("127.0.0.1:%d", port)
	t.Cleanup(func() { removeHeld(cli, host) })
	s := startServer(t, arenaBinary(t), t.TempDir(), port, "--auth", "accounts", "--admin-password", "the-admin-password", "--allow", "arena-test/*",
		"--pool", "0") // no warm container holds an old version
	admin := signedIn(t, s.url, "admin", "the-admin-password")
	if status, body := admin.call(t, "POST", "/api/users", `{"name":"svcco","password":"svcco-password"}`); status != 201 {
		t.Fatalf("make svcco: %d %v", status, body)
	}
	svcco := signedIn(t, s.url, "svcco", "svcco-password")
	if status, body := svcco.call(t, "POST", "/api/teams", `{"name":"red"}`); status != 201 {
		t.Fatalf("svcco's team: %d %v", status, body)
	}
	_, tok := svcco.call(t, "POST", "/api/tokens", `{"name":"docker"}`)
	cfg := t.TempDir()
	if out, err := dockerCLI(t, cfg, tok["token"].(string), "login", host, "-u", "svcco", "--password-stdin"); err != nil {
		t.Fatalf("svcco logs in: %v\n%s", err, out)
	}
	state := func(ref string) map[string]any { return pushedImage(t, svcco, ref) }
	// Pushed, checked (ready) and played: each version in turn.
	var versions []string
	push := func(repo, version string) {
		t.Helper()
		local := host + "/" + repo + ":latest"
		dockertest.Build(t, cli, local, "FROM "+bots[0]+"\nLABEL io.arena.game=tanks who=svcco version="+repo+"-"+version+"\n", nil)
		if out, err := dockerCLI(t, cfg, "", "push", local); err != nil {
			t.Fatalf("push %s: %v\n%s", local, err, out)
		}
		var img map[string]any
		poll.Until(t, 2*time.Minute, func() error {
			img = state(repo + ":latest")
			if img["state"] != "ready" || img["digest"] == nil {
				return fmt.Errorf("%s's check: %v", repo, img)
			}
			return nil
		})
		// The pushing client's tag goes: only the server names it now,
		// and the match below plays it. (Removed once the server holds
		// it: a removal racing the server's tag can take the image with
		// it on the engine, which this test is not about.)
		cli.ImageRemove(t.Context(), local, image.RemoveOptions{})
		versions = append(versions, host+"/"+repo+"@"+img["digest"].(string))
		status, created := svcco.call(t, "POST", "/api/matches", `{"game":"tanks","bots":["`+repo+`:latest","`+bots[1]+`"],"settings":{"zone_radius":0}}`)
		if status != 201 {
			t.Fatalf("play %s: %d %v", repo, status, created)
		}
		m := s.waitStatus(t, created["id"].(string), "finished", "failed")
		if b := m["result"].(map[string]any)["bots"].([]any)[0].(map[string]any); b["image_id"] != idOf(versions[len(versions)-1]) {
			t.Errorf("%s's match played %v, not the version pushed (%s)", repo, b["image_id"], versions[len(versions)-1])
		}
	}
	for _, v := range []string{"1", "2", "3"} {
		push("svcco/webapp", v)
	}
	push("red/app", "1")
	for ref, id := range before {
		if got := idOf(ref); got != id {
			t.Errorf("the engine's %s is %s after the pushes, not the operator's %s", ref, got, id)
		}
	}
	// On the engine by digest, held by a tag of the registry's host alone.
	held := func(version string) string {
		repo, digest, _ := strings.Cut(version, "@")
		return repo + ":" + strings.Replace(digest, ":", "-", 1)
	}
	pulled, err := (engineImages{cli}).Pulled(t.Context(), host)
	if err != nil {
		t.Fatal(err)
	}
	byRef := map[string]string{}
	for _, p := range pulled {
		for _, r := range p.Refs {
			byRef[r] = p.ID
		}
	}
	for _, v := range versions {
		img, err := cli.ImageInspect(t.Context(), v)
		if err != nil || byRef[held(v)] != img.ID || len(img.RepoTags) != 1 || img.RepoTags[0] != held(v) {
			t.Errorf("version %s: tags %v, listed as held %v, %v", v, img.RepoTags, byRef, err)
		}
	}
	// Removing the old versions' tags removes them, and only them.
	for _, old := range versions[:2] {
		if err := (engineImages{cli}).Remove(t.Context(), held(old)); err != nil {
			t.Errorf("remove %s: %v", held(old), err)
		}
		if _, err := cli.ImageInspect(t.Context(), old); err == nil {
			t.Errorf("%s is still on the engine", old)
		}
	}
	for _, kept := range append(versions[2:], "svcco/webapp:latest", "red/app:latest") {
		if _, err := cli.ImageInspect(t.Context(), kept); err != nil {
			t.Errorf("%s went with the old versions: %v", kept, err)
		}
	}
}

// removeHeld removes the tags a server of the registry at host held its
// pushed bots by (forced: a killed server's warm containers may still
// use them).
func removeHeld(cli *client.Client, host string) {
	held, _ := (engineImages{cli}).Pulled(context.Background(), host)
	for _, p := range held {
		for _, ref := range p.Refs {
			cli.ImageRemove(context.Background(), ref, image.RemoveOptions{Force: true})
		}
	}
}

// heldImage is the image a server of the registry at host holds a pushed
// bot of repo by (the first it finds).
func heldImage(t *testing.T, cli *client.Client, host, repo string) (image.InspectResponse, error) {
	t.Helper()
	held, err := (engineImages{cli}).Pulled(t.Context(), host)
	if err != nil {
		return image.InspectResponse{}, err
	}
	for _, p := range held {
		for _, ref := range p.Refs {
			if strings.HasPrefix(ref, host+"/"+repo+":") {
				return cli.ImageInspect(t.Context(), ref)
			}
		}
	}
	return image.InspectResponse{}, fmt.Errorf("no image of %s held under %s", repo, host)
}

// A joined worker whose engine lacks a pushed bot gets it from the
// server: alice pushes, the server pins the image and queues its check,
// the image is then removed from the engine, and the worker that joins
// afterwards (the server plays no match itself), a container on a private
// Docker network that reaches the server's NATS port through the
// network's gateway, fetches it from the registry through NATS, loads it
// into the engine and plays the check.
func TestAJoinedWorkerFetchesAPushedBot(t *testing.T) {
	cli := dockertest.Client(t)
	bots := dockertest.ExampleBots(t, cli)
	bin := arenaBinary(t)
	data := t.TempDir()
	// The worker's network, private to the test; the server's NATS port
	// listens where the worker reaches it, the network's gateway.
	var rnd [4]byte
	rand.Read(rnd[:])
	network := fmt.Sprintf("arena-fetch-%x", rnd)
	docker(t, "network", "create", "--label", "arena-test="+network, network)
	t.Cleanup(func() { exec.Command("docker", "network", "rm", network).Run() })
	gateway := docker(t, "network", "inspect", "-f", "{{(index .IPAM.Config 0).Gateway}}", network)
	port, natsPort := freePort(t), freePort(t)
	host := fmt.Sprintf("127.0.0.1:%d", port)
	s := startServer(t, bin, data, port, "--auth", "accounts", "--admin-password", "the-admin-password", "--concurrency", "0", "--nats-listen", fmt.Sprintf("0.0.0.0:%d", natsPort))
	admin := signedIn(t, s.url, "admin", "the-admin-password")
	if status, body := admin.call(t, "POST", "/api/users", `{"name":"alice","password":"alice-password"}`); status != 201 {
		t.Fatalf("make alice: %d %v", status, body)
	}
	alice := signedIn(t, s.url, "alice", "alice-password")
	// The worker's image: the arena binary alone, as in the NATS cluster
	// test.
	workerImage := dockertest.Build(t, cli, "arena-test/arena-worker:"+fmt.Sprintf("%x", rnd),
		"FROM scratch\nCOPY arena /arena\nCOPY tmp/ /tmp/\nCOPY data/ /data/\nENTRYPOINT [\"/arena\"]\n",
		map[string]string{"arena": "@" + bin, "tmp/.keep": "", "data/.keep": ""})
	t.Cleanup(func() { cli.ImageRemove(context.Background(), workerImage, image.RemoveOptions{Force: true}) })
	status, body := alice.call(t, "POST", "/api/tokens", `{"name":"docker"}`)
	if status != 201 {
		t.Fatalf("alice's token: %d %v", status, body)
	}
	// An image of its own (a label no other test's image has): removing
	// it from the engine below takes no other test's image with it.
	pushed := host + "/alice/fetched:v1"
	dockertest.Build(t, cli, pushed, "FROM "+bots[0]+"\nLABEL io.arena.game=tanks io.arena.test=fetched\n", nil)
	t.Cleanup(func() {
		cli.ImageRemove(context.Background(), pushed, image.RemoveOptions{})
		removeHeld(cli, host)
	})
	config := t.TempDir()
	if out, err := dockerCLI(t, config, body["token"].(string), "login", host, "-u", "alice", "--password-stdin"); err != nil {
		t.Fatalf("alice logs in: %v\n%s", err, out)
	}
	if out, err := dockerCLI(t, config, "", "push", pushed); err != nil {
		t.Fatalf("alice pushes: %v\n%s", err, out)
	}
	// The server pulls it into the engine and queues its check: no
	// worker takes it yet.
	var check string
	poll.Until(t, time.Minute, func() error {
		_, list := admin.call(t, "GET", "/api/matches", "")
		ms, _ := list["matches"].([]any)
		for _, v := range ms {
			if m := v.(map[string]any); strings.Contains(fmt.Sprint(m["bots"]), "alice/fetched:v1") {
				check = m["id"].(string)
			}
		}
		if check == "" {
			return fmt.Errorf("no check match queued: %v", list)
		}
		return nil
	})
	info, err := heldImage(t, cli, host, "alice/fetched")
	if err != nil {
		t.Fatalf("the server did not pull the pushed bot: %v", err)
	}
	if _, err := cli.ImageRemove(t.Context(), info.ID, image.RemoveOptions{Force: true}); err != nil {
		t.Fatal(err)
	}
	// The worker holds what it fetches by a tag of its own.
	t.Cleanup(func() {
		cli.ImageRemove(context.Background(), dispatch.FetchedRepo+":"+strings.Replace(info.ID, ":", "-", 1), image.RemoveOptions{Force: true})
	})
	if _, err := cli.ImageInspect(t.Context(), info.ID); err == nil {
		t.Fatal("the image is still on the engine")
	}

	out, err := exec.Command(bin, "join-token", "--data", data).Output()
	if err != nil {
		t.Fatal(err)
	}
	// What compose gives Arena: the engine's socket, the host's cgroups
	// and pid namespace, the FIFO folder at the same path.
	stdio := t.TempDir()
	worker := "arena-fetch-w1-" + fmt.Sprintf("%x", rnd)
	docker(t, "run", "-d", "--name", worker, "--label", "arena-test="+network, "--network", network,
		"-v", "/var/run/docker.sock:/var/run/docker.sock", "-v", "/sys/fs/cgroup:/host/sys/fs/cgroup:ro", "-v", stdio+":"+stdio, "--pid", "host",
		"-e", "ARENA_CGROUP_ROOT=/host/sys/fs/cgroup", "-e", "ARENA_STDIO_DIR="+stdio,
		workerImage, "worker", "--nats", fmt.Sprintf("nats://%s:%d", gateway, natsPort), "--join", strings.TrimSpace(string(out)),
		"--data", "/data", "--name", "w1", "--concurrency", "1", "--log-level", "info")
	logs := func() string {
		out, _ := exec.Command("docker", "logs", worker).CombinedOutput()
		return string(out)
	}
	t.Cleanup(func() {
		exec.Command("docker", "stop", "-t", "20", worker).Run()
		exec.Command("docker", "rm", "-f", "-v", worker).Run()
	})
	m := s.waitStatus(t, check, "finished", "failed")
	if m["status"] != "finished" || strings.Contains(fmt.Sprint(m["result"]), "start_failed") {
		t.Fatalf("the check on the worker: %v\nworker's log:\n%s", m, logs())
	}
	// On the first delivery: not handed back for want of the image.
	if line := regexp.MustCompile(`.*image fetched from the server.*`).FindString(logs()); !strings.Contains(line, `"attempt": 1,`) {
		t.Errorf("the worker's log says no fetch on the first delivery:\n%s", logs())
	} else {
		t.Logf("the worker, in a container on %s: %s (an image of %d MB)", network, line, info.Size>>20)
	}
	if _, err := cli.ImageInspect(t.Context(), info.ID); err != nil {
		t.Errorf("the worker's engine does not hold the image: %v", err)
	}
	poll.Until(t, time.Minute, func() error {
		_, reg := alice.call(t, "GET", "/api/registry", "")
		imgs, _ := reg["images"].([]any)
		if len(imgs) == 1 && imgs[0].(map[string]any)["state"] == "ready" {
			return nil
		}
		return fmt.Errorf("alice's bot is not ready: %v", reg)
	})
}

// Every kit's starter for every game (botkits.Starters: the files the
// page's editor starts a draft from), sent with arena submit as a folder
// with its main (--bot) and no kit named, is built on the server in the
// sandbox with its kit's recipe, pushed as its owner's and checked by a
// match of its game: twelve builds (the Go ones start with an empty
// build cache, some 20 s each; about two minutes in all). A build that
// reaches for the network fails, its log saying why, and so does one
// that runs past its limit.
func TestSubmitEachKit(t *testing.T) {
	dockertest.Standins(t)
	bin := arenaBinary(t)
	port := freePort(t)
	host := fmt.Sprintf("127.0.0.1:%d", port)
	// No quota of bytes: six of the twelve images carry a Python or a
	// Node.js base of their own.
	s := startServer(t, bin, t.TempDir(), port, "--auth", "accounts", "--admin-password", "the-admin-password", "--registry-quota", "0")
	admin := signedIn(t, s.url, "admin", "the-admin-password")
	if status, body := admin.call(t, "POST", "/api/users", `{"name":"alice","password":"alice-password"}`); status != 201 {
		t.Fatalf("make alice: %d %v", status, body)
	}
	config := t.TempDir()
	arena := func(stdin string, args ...string) (string, error) {
		cmd := exec.Command(bin, args...)
		cmd.Env = append(os.Environ(), "ARENA_CONFIG="+config, "ARENA_SERVER=")
		cmd.Stdin = strings.NewReader(stdin)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := arena("alice-password\n", "login", "--name", "alice", "--password-stdin", host); err != nil {
		t.Fatalf("alice's login: %v\n%s", err, out)
	}
	folders := t.TempDir()
	starters := botkits.Starters()
	if len(starters) != 12 {
		t.Fatalf("%d starters, want 4 kits by 3 games", len(starters))
	}
	for _, st := range starters {
		dir := filepath.Join(folders, st.Kit+"-"+st.Game)
		for _, f := range st.Files {
			p := filepath.Join(dir, filepath.FromSlash(f.Name))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, f.Data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		name := "alice/" + st.Kit + "-" + st.Game + ":v1"
		start := time.Now()
		out, err := arena("", "submit", dir, "--game", st.Game, "--bot", st.Main, "--name", name, host)
		if err != nil || !strings.Contains(out, name+" is ready") || !strings.Contains(out, "kit "+st.Kit+", ") {
			t.Errorf("arena submit of the %s kit's %s starter (bot %s): %v\n%s", st.Kit, st.Game, st.Main, err, out)
			if st.Game == "pacman" && strings.Contains(out, "both seats claim role") {
				t.Errorf("(the check paired the Pac-Man starter with a bot claiming the same role: the example arena/pacman-runner, or itself when the engine has no example; platform/checks.go picks the opponent)")
			}
			continue
		}
		t.Logf("the %s kit's %s starter: uploaded, built, pushed and ready in %v", st.Kit, st.Game, time.Since(start).Round(100*time.Millisecond))
	}
	// They play as what they were pushed as.
	alice := signedIn(t, s.url, "alice", "alice-password")
	for _, bots := range []string{`"game":"tanks","bots":["alice/go-tanks:v1","alice/python-tanks:v1"]`, `"game":"snake","bots":["alice/cpp-snake:v1","alice/javascript-snake:v1"]`} {
		status, m := alice.call(t, "POST", "/api/matches", "{"+bots+"}")
		if status != 201 {
			t.Fatalf("a match of built bots (%s): %d %v", bots, status, m)
		}
		id := m["id"].(string)
		poll.Until(t, 2*time.Minute, func() error {
			if _, m = alice.call(t, "GET", "/api/matches/"+id, ""); m["status"] != "finished" && m["status"] != "failed" {
				return fmt.Errorf("the match of built bots did not end: %v", m)
			}
			return nil
		})
		if m["status"] != "finished" || strings.Contains(fmt.Sprint(m["result"]), "start_failed") {
			t.Errorf("a match of built bots (%s): %v", bots, m)
		}
	}

	// A module that needs the network to build: refused by the sandbox,
	// said in the log.
	net := t.TempDir()
	os.WriteFile(filepath.Join(net, "go.mod"), []byte("module netbot\n\ngo 1.22\n\nrequire github.com/google/uuid v1.6.0\n"), 0o644)
	os.WriteFile(filepath.Join(net, "go.sum"), []byte("github.com/google/uuid v1.6.0 h1:NIvaJDMOsjHA8n1jAhLSgzrAzy1Hgr+hNrb57e+94F0=\ngithub.com/google/uuid v1.6.0/go.mod h1:TIyPZe4MgqvfeYDBFedMoGGpEw/LqOeaOT+nhxU+yHo=\n"), 0o644)
	os.WriteFile(filepath.Join(net, "main.go"), []byte("package main\n\nimport (\n\t\"fmt\"\n\n\t\"github.com/google/uuid\"\n)\n\nfunc main() { fmt.Println(uuid.New()) }\n"), 0o644)
	out, err := arena("", "submit", net, "--game", "tanks", "--name", "alice/netbot:v1", host)
	if err == nil || !regexp.MustCompile(`proxy\.golang\.org.*(dial tcp|no such host|network is unreachable)`).MatchString(out) {
		t.Errorf("a build that needs the network: %v\n%s", err, out)
	} else {
		t.Logf("a build that needs the network:\n%s", out)
	}

	// A build past its limit (2 s here, for the Go kit's cold build).
	port2 := freePort(t)
	host2 := fmt.Sprintf("127.0.0.1:%d", port2)
	s2 := startServer(t, bin, t.TempDir(), port2, "--auth", "accounts", "--admin-password", "the-admin-password", "--build-timeout", "2s")
	if status, body := signedIn(t, s2.url, "admin", "the-admin-password").call(t, "POST", "/api/users", `{"name":"alice","password":"alice-password"}`); status != 201 {
		t.Fatalf("make alice: %d %v", status, body)
	}
	if out, err := arena("alice-password\n", "login", "--name", "alice", "--password-stdin", host2); err != nil {
		t.Fatalf("alice's login: %v\n%s", err, out)
	}
	out, err = arena("", "submit", filepath.Join(folders, "go-tanks"), "--game", "tanks", "--bot", "bot", "--name", "alice/slow:v1", host2)
	if err == nil || !strings.Contains(out, "the build ran past its limit of 2s") {
		t.Errorf("a build past its limit: %v\n%s", err, out)
	}
}

// The page uploads a bot's source too: an archive picked, and a folder's
// files dropped (packed into a .tar.gz by the page), are built, pushed as
// the visitor's and checked, the build's log shown as it comes.
func TestUploadInTheBrowser(t *testing.T) {
	dockertest.Standins(t)
	bin := arenaBinary(t)
	s := startServer(t, bin, t.TempDir(), freePort(t), "--auth", "accounts", "--admin-password", "the-admin-password", "--ladder", "off")
	admin := signedIn(t, s.url, "admin", "the-admin-password")
	if status, body := admin.call(t, "POST", "/api/users", `{"name":"alice","password":"alice-password"}`); status != 201 {
		t.Fatalf("make alice: %d %v", status, body)
	}
	kit := filepath.Join(dockertest.Root(), "botkits", "python")
	files, err := folderFiles(kit)
	if err != nil {
		t.Fatal(err)
	}
	var archive bytes.Buffer
	if err := sourcebuild.TarGz(files, &archive); err != nil {
		t.Fatal(err)
	}
	archivePath := filepath.Join(t.TempDir(), "pybot.tar.gz")
	if err := os.WriteFile(archivePath, archive.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := newBrowser(t, 1400, 1400)
	run, eval := browserSteps(t, ctx)
	built := func(what string) {
		t.Helper()
		if _, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](`["pushed", "failed"].includes(document.querySelector("#upload-log").dataset.state)`, chromedp.WithPollingTimeout(2*time.Minute))); err != nil {
			t.Fatalf("%s: %v\n%s", what, err, eval(`document.querySelector("#upload-log").textContent`))
		}
		if log := eval(`document.querySelector("#upload-log").textContent`); eval(`document.querySelector("#upload-log").dataset.state`) != "pushed" || !strings.Contains(log, "kit python") {
			t.Errorf("%s: the build's log:\n%s", what, log)
		}
		// The log goes on with the version's check, to its end.
		if _, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](`document.querySelector("#upload-log").dataset.check === "ready"`, chromedp.WithPollingTimeout(2*time.Minute))); err != nil {
			t.Errorf("%s: the check in the log: %v\n%s", what, err, eval(`document.querySelector("#upload-log").textContent`))
		} else if log := eval(`document.querySelector("#upload-log").textContent`); !strings.Contains(log, "check: ready") {
			t.Errorf("%s: the log ends:\n%s", what, log)
		}
	}
	run("sign in",
		chromedp.Navigate(s.url+"/#/signin"),
		chromedp.WaitVisible(chromedp.CSS("#signin-form")),
		chromedp.SetValue(chromedp.CSS("#signin-name"), "alice"),
		chromedp.SetValue(chromedp.CSS("#signin-password"), "alice-password"),
		chromedp.Click(chromedp.CSS("#signin-submit")),
		chromedp.Poll[chromedp.Void](`!!document.querySelector('#account-menu a[href="#/mybots"]')`, chromedp.WithPollingTimeout(10*time.Second)))
	run("upload an archive",
		chromedp.Evaluate[chromedp.Void](`location.hash = "#/mybots"`),
		chromedp.WaitVisible(chromedp.CSS("#upload-form")),
		// Every state My bots' table shows, as it changes.
		chromedp.Evaluate[chromedp.Void](`window.statesSeen = new Set();
			new MutationObserver(() => document.querySelectorAll("#registry-images .state").forEach(e => statesSeen.add(e.textContent)))
				.observe(document.querySelector("#registry-images"), { childList: true, subtree: true })`),
		chromedp.SetValue(chromedp.CSS("#upload-repo"), "alice/from-archive"),
		chromedp.SetUploadFiles(chromedp.CSS("#upload-archive"), []string{archivePath}),
		chromedp.Click(chromedp.CSS("#upload-start")))
	built("an archive")
	// A folder's files dropped: the page packs them.
	var js strings.Builder
	js.WriteString(`(() => { const dt = new DataTransfer();`)
	for _, f := range files {
		if strings.HasSuffix(f.Name, ".py") {
			fmt.Fprintf(&js, `dt.items.add(new File([%q], %q));`, f.Data, f.Name)
		}
	}
	js.WriteString(`document.querySelector("#upload-log").dataset.state = "";
		document.querySelector("#upload-repo").value = "alice/dropped";
		document.querySelector("#upload-drop").dispatchEvent(new DragEvent("drop", { dataTransfer: dt, bubbles: true, cancelable: true })); })()`)
	run("drop a folder's files", chromedp.Evaluate[chromedp.Void](js.String()))
	built("dropped files")
	// My bots shows both ready, the page not reloaded.
	if _, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](`(() => { const s = [...document.querySelectorAll("#registry-images .state")].map(e => e.textContent); return s.length === 2 && s.every(x => x === "ready"); })()`, chromedp.WithPollingTimeout(time.Minute))); err != nil {
		t.Errorf("My bots' versions: %v: %s", err, eval(`document.querySelector("#registry-images").textContent`))
	}
	if seen := eval(`[...statesSeen].sort().join(" ")`); seen != "pending ready" {
		t.Errorf("My bots showed the states %q, want pending then ready", seen)
	}
	// Both are alice's, and checked ready.
	alice := signedIn(t, s.url, "alice", "alice-password")
	poll.Until(t, 2*time.Minute, func() error {
		_, reg := alice.call(t, "GET", "/api/registry", "")
		ready := 0
		for _, v := range reg["images"].([]any) {
			if img := v.(map[string]any); img["state"] == "ready" && img["pushed_by"] == "alice" {
				ready++
			}
		}
		if ready != 2 {
			return fmt.Errorf("the uploaded bots were not checked ready: %v", reg)
		}
		return nil
	})
	if shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(90)); err == nil {
		saveArtefact(t, "web-upload.png", shot)
	}
}

// pushedImage is the visitor's pushed image ref as GET /api/registry
// shows it (nil: none).
func pushedImage(t testing.TB, c *webClient, ref string) map[string]any {
	t.Helper()
	_, reg := c.call(t, "GET", "/api/registry", "")
	imgs, _ := reg["images"].([]any)
	for _, v := range imgs {
		if img := v.(map[string]any); img["reference"] == ref {
			return img
		}
	}
	return nil
}
