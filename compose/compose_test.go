// Package compose tests the real docker-compose.yml and Dockerfiles on the
// real engine: from no Arena images to a match in the browser's API, for
// the platform's example bots and every starter kit.
package compose

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/api/types/volume"
	"github.com/docker/docker/client"

	"arena/internal/testsupport/dockertest"
	"arena/internal/testsupport/poll"
	"arena/sandbox"
)

// run runs a command in the repository's root and fails the test on error.
func run(t *testing.T, env []string, name string, args ...string) string {
	t.Helper()
	return runIn(t, dockertest.Root(), env, name, args...)
}

// runIn runs a command in dir and fails the test on error.
func runIn(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	t.Logf("%s %s (%.0fs)", name, strings.Join(args, " "), time.Since(start).Seconds())
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, tail(out.String(), 4000))
	}
	return out.String()
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// composeCommand is docker-compose (v1) where installed, else docker
// compose (v2).
func composeCommand(t *testing.T) []string {
	if _, err := exec.LookPath("docker-compose"); err == nil {
		return []string{"docker-compose"}
	}
	if err := exec.Command("docker", "compose", "version").Run(); err == nil {
		return []string{"docker", "compose"}
	}
	t.Fatal("neither docker-compose nor docker compose is installed")
	return nil
}

func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

type api struct{ url string }

func (a api) get(t *testing.T, path string, out any) int {
	t.Helper()
	res, err := http.Get(a.url + path)
	if err != nil {
		return 0
	}
	defer res.Body.Close()
	json.NewDecoder(res.Body).Decode(out)
	return res.StatusCode
}

// play starts a match through the API and waits for its end.
func (a api) play(t *testing.T, game string, bots ...string) map[string]any {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"game": game, "bots": bots})
	res, err := http.Post(a.url+"/api/matches", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	json.NewDecoder(res.Body).Decode(&m)
	res.Body.Close()
	if res.StatusCode != 201 {
		t.Fatalf("start %v: %d %v", bots, res.StatusCode, m)
	}
	id := m["id"].(string)
	poll.Until(t, 2*time.Minute, func() error {
		a.get(t, "/api/matches/"+id, &m)
		switch m["status"] {
		case "finished":
			return nil
		case "failed", "cancelled":
			t.Fatalf("match %v: %v", bots, m)
		}
		return fmt.Errorf("match %v did not finish: %v", bots, m)
	})
	return m
}

// checkGame checks that an image is labelled with the game it plays, as
// the kits' Dockerfiles label them (the page suggests images by it).
func checkGame(t *testing.T, cli *client.Client, ref, game string) {
	t.Helper()
	info, err := cli.ImageInspect(context.Background(), ref)
	if err != nil {
		t.Errorf("inspect %s: %v", ref, err)
		return
	}
	if info.Config == nil || info.Config.Labels[sandbox.GameLabel] != game {
		t.Errorf("%s: label %s is %q, want %q", ref, sandbox.GameLabel, info.Config.Labels[sandbox.GameLabel], game)
	}
}

func checkResult(t *testing.T, m map[string]any) {
	t.Helper()
	res := m["result"].(map[string]any)
	if res["winners"] == nil {
		t.Errorf("no winner: %v", res)
	}
	for _, b := range res["bots"].([]any) {
		b := b.(map[string]any)
		if b["status"] != "ok" {
			t.Errorf("%s is %s: %v", b["id"], b["status"], b["fault_detail"])
		}
		if b["cpu_ms"] == nil {
			t.Errorf("%s: no CPU figures from the container: %v", b["id"], b["accounting"])
		}
		// Arena in its container can freeze the bots between answers: a
		// bot that ran nothing there was let run, one that did (a runtime's
		// compiler or collector at work after an answer) was frozen from
		// then on, by the cgroup freezer either way.
		if timing, _ := b["timing"].(string); !strings.HasPrefix(timing, "cpu time; let run between answers, as it ran no more there than the tolerance (else frozen by the cgroup freezer)") &&
			!regexp.MustCompile(`^cpu time, frozen between answers by the cgroup freezer from turn \d+, having run there$`).MatchString(timing) {
			t.Errorf("%s: timing %q", b["id"], timing)
		}
	}
}

// arenaImages are the images docker compose builds.
var arenaImages = []string{"arena/arena:latest", "arena/tanks-random:latest", "arena/tanks-hunter:latest",
	"arena/snake-greedy:latest", "arena/snake-random:latest", "arena/pacman-runner:latest", "arena/pacman-ghosts:latest"}

// build is an image the test builds with docker build while it plays
// others' matches: done is closed once it is built (err, out and took say
// how).
type build struct {
	tag, dir string
	args     []string
	done     chan struct{}
	out      string
	err      error
	took     time.Duration
}

// buildAll starts the builds, at most n at once, in their order: the
// engine's builder spends most of a kit's build committing layers, so a
// few at once share the two CPUs better than one after another.
func buildAll(builds []*build, n int) {
	slots := make(chan struct{}, n)
	for _, b := range builds {
		b.done = make(chan struct{})
	}
	go func() {
		for _, b := range builds {
			slots <- struct{}{}
			go func() {
				defer func() { <-slots; close(b.done) }()
				cmd := exec.Command("docker", append(append([]string{"build", "-q", "-t", b.tag}, b.args...), b.dir)...)
				cmd.Env = append(os.Environ(), "DOCKER_BUILDKIT=0")
				start := time.Now()
				out, err := cmd.CombinedOutput()
				b.out, b.err, b.took = string(out), err, time.Since(start)
			}()
		}
	}()
}

// wait waits for the build and fails the test if it failed.
func (b *build) wait(t *testing.T) {
	t.Helper()
	<-b.done
	t.Logf("docker build -t %s %s (%.0fs)", b.tag, strings.Join(b.args, " "), b.took.Seconds())
	if b.err != nil {
		t.Fatalf("docker build -t %s %s: %v\n%s", b.tag, strings.Join(b.args, " "), b.err, tail(b.out, 4000))
	}
}

func TestDockerCompose(t *testing.T) {
	cli := dockertest.Client(t)
	ctx := context.Background()
	dockertest.Standins(t)

	// From an engine with no Arena images.
	for _, ref := range arenaImages {
		cli.ImageRemove(ctx, ref, image.RemoveOptions{Force: true, PruneChildren: true})
	}
	project := fmt.Sprintf("arenatest%d", os.Getpid())
	port := freePort(t)
	env := []string{"ARENA_PORT=" + fmt.Sprint(port), "COMPOSE_PROJECT_NAME=" + project, "DOCKER_BUILDKIT=0", "COMPOSE_DOCKER_CLI_BUILD=0"}
	compose := composeCommand(t)
	composeArgs := func(args ...string) []string { return append(compose[1:], args...) }
	downed := false
	t.Cleanup(func() {
		if !downed {
			exec.Command(compose[0], composeArgs("-p", project, "down", "-v")...).Run()
		}
	})
	// The kits' images (their base images are the stand-ins, not
	// Arena's): built from now on, a few at once, while compose builds
	// and the matches below play.
	kits, _ := filepath.Glob(filepath.Join(dockertest.Root(), "botkits", "*", "Dockerfile"))
	if len(kits) < 4 {
		t.Errorf("%d starter kits, want Go, Python, C++ and JavaScript", len(kits))
	}
	var kitBuilds []*build
	for _, dockerfile := range kits {
		kit := filepath.Base(filepath.Dir(dockerfile))
		kitBuilds = append(kitBuilds, &build{tag: project + "/kit-" + kit, dir: filepath.Dir(dockerfile)})
	}
	// The kits' bots for the other games: the C/C++ Snake player interface
	// (built from an example algorithm with the one-command build), and
	// every kit's Snake and Pac-Man bots but Go's (the example bots).
	others := []struct {
		kit, dockerfile, arg, game, opponent string
	}{
		{"cpp", "Dockerfile.snake", "ALGO=examples/greedy.c", "snake", "arena/snake-random"},
		{"python", "Dockerfile", "BOT=snake_greedy.py", "snake", "arena/snake-random"},
		{"javascript", "Dockerfile", "BOT=snake_greedy.js", "snake", "arena/snake-random"},
		{"python", "Dockerfile", "BOT=pacman_runner.py", "pacman", "arena/pacman-ghosts"},
		{"python", "Dockerfile", "BOT=pacman_ghosts.py", "pacman", "arena/pacman-runner"},
		{"javascript", "Dockerfile", "BOT=pacman_runner.js", "pacman", "arena/pacman-ghosts"},
		{"javascript", "Dockerfile", "BOT=pacman_ghosts.js", "pacman", "arena/pacman-runner"},
		{"cpp", "Dockerfile.pacman", "BOT=pacman/runner.cpp", "pacman", "arena/pacman-ghosts"},
		{"cpp", "Dockerfile.pacman", "BOT=pacman/ghosts.cpp", "pacman", "arena/pacman-runner"},
	}
	var otherBuilds []*build
	for i, o := range others {
		dir := filepath.Join(dockertest.Root(), "botkits", o.kit)
		// GAME labels the Go, Python and JavaScript images; the C++
		// Dockerfiles label theirs by themselves.
		args := []string{"-f", filepath.Join(dir, o.dockerfile), "--build-arg", o.arg}
		if o.kit != "cpp" {
			args = append(args, "--build-arg", "GAME="+o.game)
		}
		otherBuilds = append(otherBuilds, &build{tag: fmt.Sprintf("%s/kit-%s-%s-%d", project, o.kit, o.game, i), dir: dir, args: args})
	}
	// A dependency added the way each language's users add one, following
	// the kit's README, where this machine can fetch it: a Go module
	// through the module proxy (go get on a copy of the Go kit, then the
	// kit's Dockerfile downloads it), and a C library from Debian (the C++
	// kit's Dockerfile installs libjansson-dev with apt and links it). pip
	// and npm registries are out of reach here: those are documented only.
	goKit := filepath.Join(t.TempDir(), "go")
	run(t, nil, "cp", "-a", filepath.Join("botkits", "go"), goKit)
	if err := os.MkdirAll(filepath.Join(goKit, "deps"), 0o755); err != nil {
		t.Fatal(err)
	}
	run(t, nil, "cp", filepath.Join("compose", "testdata", "gomodule", "main.go"), filepath.Join(goKit, "deps", "main.go"))
	runIn(t, goKit, []string{"GOWORK=off", "GOFLAGS=-mod=mod"}, "go", "get", "github.com/emirpasic/gods@v1.18.1")
	runIn(t, goKit, []string{"GOWORK=off"}, "go", "mod", "tidy")
	cKit := filepath.Join(t.TempDir(), "cpp")
	run(t, nil, "cp", "-a", filepath.Join("botkits", "cpp"), cKit)
	run(t, nil, "cp", filepath.Join("compose", "testdata", "clib", "bot.cpp"), filepath.Join(cKit, "bot.cpp"))
	deps := []struct {
		name, dir string
		args      []string
	}{
		{"go-module", goKit, []string{"--build-arg", "BOT=deps"}},
		{"c-library", cKit, []string{"--build-arg", "DEB_PACKAGES=libjansson-dev", "--build-arg", "LDLIBS=-ljansson"}},
	}
	var depBuilds []*build
	for _, d := range deps {
		depBuilds = append(depBuilds, &build{tag: project + "/kit-deps-" + d.name, dir: d.dir, args: d.args})
	}
	all := append(append(append([]*build{}, kitBuilds...), otherBuilds...), depBuilds...)
	buildAll(all, 3)
	t.Cleanup(func() {
		for _, b := range all { // none left building when the test ends
			<-b.done
			cli.ImageRemove(ctx, b.tag, image.RemoveOptions{Force: true})
		}
	})
	run(t, env, compose[0], composeArgs("up", "-d", "--build")...)

	a := api{url: fmt.Sprintf("http://127.0.0.1:%d", port)}
	var health map[string]string
	if err := poll.Wait(2*time.Minute, func() error {
		if status := a.get(t, "/healthz", &health); status != 200 {
			return fmt.Errorf("/healthz never answered ok: %d %v", status, health)
		}
		return nil
	}); err != nil {
		t.Fatalf("%v\n%s", err, run(t, env, compose[0], composeArgs("logs", "--tail", "50")...))
	}
	// The bots' stdio takes the FIFO path from inside the container too.
	if health["stdio"] != "fifo" {
		t.Errorf("stdio path in compose: %q", health["stdio"])
	}

	// The command line without Go: the server's own binary, downloaded,
	// runs here; and a command runs in the platform's container.
	res, err := http.Get(a.url + "/download/arena")
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "arena")
	f, err := os.OpenFile(bin, os.O_CREATE|os.O_WRONLY, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	_, err = io.Copy(f, res.Body)
	res.Body.Close()
	f.Close()
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("GET /download/arena: %s %v", res.Status, err)
	}
	if out := run(t, nil, bin, "help"); !strings.Contains(out, "arena submit DIR") {
		t.Errorf("the downloaded arena's help:\n%s", out)
	}
	doctor := exec.Command(compose[0], composeArgs("run", "--rm", "arena", "doctor", "--rounds", "100")...)
	doctor.Dir, doctor.Env = dockertest.Root(), append(os.Environ(), env...)
	if out, err := doctor.CombinedOutput(); !strings.Contains(string(out), "ok  docker") || !strings.Contains(string(out), "One JSON line out and back") {
		t.Errorf("arena doctor in the platform's container: %v\n%s", err, out)
	} else {
		t.Logf("arena doctor in the platform's container: %v", err)
	}

	// The example bots exist right after up, and play each game.
	var games []struct {
		Name        string
		DefaultBots []struct {
			Image   string
			Present *bool
		} `json:"default_bots"`
	}
	a.get(t, "/api/games", &games)
	if len(games) != 3 {
		t.Fatalf("games: %+v", games)
	}
	var tanksBots []string
	for _, g := range games {
		var defaults []string
		for _, b := range g.DefaultBots {
			if b.Present == nil || !*b.Present {
				t.Errorf("%s: example bot %s is not present after up", g.Name, b.Image)
			}
			checkGame(t, cli, b.Image, g.Name)
			defaults = append(defaults, b.Image)
		}
		if len(defaults) != 2 {
			t.Fatalf("%s: default bots %v", g.Name, defaults)
		}
		m := a.play(t, g.Name, defaults...)
		checkResult(t, m)
		t.Logf("%s: %v", g.Name, m["result"].(map[string]any)["winners"])
		if g.Name == "tanks" {
			tanksBots = defaults
		}
	}

	// Each starter kit builds with its own Dockerfile and plays: built
	// while the example bots above play (started before up, below).
	for _, k := range kitBuilds {
		k.wait(t)
		checkGame(t, cli, k.tag, "tanks")
		m := a.play(t, "tanks", k.tag, tanksBots[0])
		checkResult(t, m)
		t.Logf("kit %s: %v", filepath.Base(k.dir), m["result"].(map[string]any)["winners"])
	}
	for i, o := range others {
		b := otherBuilds[i]
		b.wait(t)
		checkGame(t, cli, b.tag, o.game)
		m := a.play(t, o.game, b.tag, o.opponent)
		checkResult(t, m)
		t.Logf("%s %s (%s): %v", o.kit, o.game, o.arg, m["result"].(map[string]any)["winners"])
	}
	for i, d := range deps {
		b := depBuilds[i]
		b.wait(t)
		m := a.play(t, "tanks", b.tag, tanksBots[0])
		checkResult(t, m)
		t.Logf("with a dependency (%s): %v", d.name, m["result"].(map[string]any)["winners"])
	}

	// down -v leaves no Arena containers, networks or volumes.
	run(t, env, compose[0], composeArgs("down", "-v")...)
	downed = true
	// (Other tests' bots may be running: those belong to this host's
	// processes, not to the server in the container.)
	host, _ := os.Hostname()
	for _, c := range dockertest.ArenaContainers(t, cli, "") {
		if o, err := sandbox.ParseOwner(c.Labels[sandbox.LabelOwner]); err != nil || o.Host != host {
			t.Errorf("bot container left behind by the server: %v", c.Names)
		}
	}
	assertGone(t, cli, project)
}

func assertGone(t *testing.T, cli *client.Client, project string) {
	t.Helper()
	ctx := context.Background()
	label := filters.NewArgs(filters.Arg("label", "com.docker.compose.project="+project))
	if list, _ := cli.ContainerList(ctx, container.ListOptions{All: true, Filters: label}); len(list) > 0 {
		t.Errorf("%d containers of the project remain", len(list))
	}
	if nets, _ := cli.NetworkList(ctx, network.ListOptions{Filters: label}); len(nets) > 0 {
		t.Errorf("networks remain: %v", nets[0].Name)
	}
	if vols, _ := cli.VolumeList(ctx, volume.ListOptions{Filters: label}); len(vols.Volumes) > 0 {
		t.Errorf("volumes remain: %v", vols.Volumes[0].Name)
	}
}
