// Package dockertest builds bot images from source and checks the Docker
// engine for leftovers, for tests that run against the real engine.
//
// The gating scheme is -short: `go test -short ./...` skips every test
// that needs Docker (and the other slow ones); `go test ./...` runs them
// all and fails — never skips — when the engine cannot be reached.
package dockertest

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/docker/docker/api/types/build"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/client"

	"arena/sandbox"
)

// Client returns a client for the local engine. It skips the test under
// -short and fails it when the engine cannot be reached.
func Client(t testing.TB) *client.Client {
	t.Helper()
	if testing.Short() {
		t.Skip("needs the Docker engine (skipped with -short)")
	}
	cli, err := sandbox.Connect()
	if err != nil {
		t.Fatalf("docker client: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := cli.Ping(ctx); err != nil {
		t.Fatalf("the Docker engine is not reachable (run with -short to skip Docker tests): %v", err)
	}
	t.Cleanup(func() { cli.Close() })
	return cli
}

// Root is the repository's root directory.
func Root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..")
}

var (
	binMu    sync.Mutex
	binCache = map[string]string{}
	binDir   string
)

// binDirPrefix names the folder of a test process's binaries, followed
// by its pid.
const binDirPrefix = "arena-testbin-"

// sweepBinDirs removes the binaries' folders under root of test
// processes that are gone (a process cannot remove its own when it
// ends: tens of MB a package, every run).
func sweepBinDirs(root string) {
	dirs, _ := filepath.Glob(filepath.Join(root, binDirPrefix+"*"))
	for _, d := range dirs {
		pid, err := strconv.Atoi(strings.TrimPrefix(filepath.Base(d), binDirPrefix))
		if err != nil || pid <= 0 || syscall.Kill(pid, 0) == syscall.ESRCH {
			os.RemoveAll(d)
		}
	}
}

// GoBinary compiles a static binary of pkg in the module at modDir, once
// per test process, into a folder of the process's own (removed by a
// later test process once this one is gone).
func GoBinary(t testing.TB, modDir, pkg string) string {
	t.Helper()
	binMu.Lock()
	defer binMu.Unlock()
	key := modDir + "|" + pkg
	if p, ok := binCache[key]; ok {
		return p
	}
	if binDir == "" {
		sweepBinDirs(os.TempDir())
		d := filepath.Join(os.TempDir(), fmt.Sprintf("%s%d", binDirPrefix, os.Getpid()))
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		binDir = d
	}
	out := filepath.Join(binDir, fmt.Sprintf("bin%d", len(binCache)))
	cmd := exec.Command("go", "build", "-trimpath", "-o", out, pkg)
	cmd.Dir = modDir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, b)
	}
	binCache[key] = out
	return out
}

// Build builds an image tagged tag from a Dockerfile and files (name →
// content or, for a binary, a path on disk given as "@/path").
func Build(t testing.TB, cli *client.Client, tag, dockerfile string, files map[string]string) string {
	t.Helper()
	var ctxTar bytes.Buffer
	tw := tar.NewWriter(&ctxTar)
	add := func(name string, data []byte, mode int64) {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: mode, Size: int64(len(data))}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(data); err != nil {
			t.Fatal(err)
		}
	}
	add("Dockerfile", []byte(dockerfile), 0o644)
	for name, content := range files {
		if path, ok := strings.CutPrefix(content, "@"); ok {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			add(name, data, 0o755)
			continue
		}
		add(name, []byte(content), 0o644)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	resp, err := cli.ImageBuild(ctx, &ctxTar, build.ImageBuildOptions{Tags: []string{tag}, Remove: true, ForceRemove: true})
	if err != nil {
		t.Fatalf("build %s: %v", tag, err)
	}
	defer resp.Body.Close()
	// The build's errors arrive in the JSON message stream.
	dec := json.NewDecoder(resp.Body)
	var log strings.Builder
	for {
		var msg struct {
			Stream string `json:"stream"`
			Error  string `json:"error"`
		}
		if err := dec.Decode(&msg); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("build %s: %v", tag, err)
		}
		log.WriteString(msg.Stream)
		if msg.Error != "" {
			t.Fatalf("build %s: %s\n%s", tag, msg.Error, log.String())
		}
	}
	return tag
}

// ScratchDockerfile runs /bot with the given arguments on an empty base
// as an unprivileged user.
func ScratchDockerfile(args ...string) string {
	cmd, _ := json.Marshal(args)
	if len(args) == 0 {
		cmd = []byte("[]")
	}
	return "FROM scratch\nCOPY bot /bot\nUSER 65534:65534\nENTRYPOINT [\"/bot\"]\nCMD " + string(cmd) + "\n"
}

// RelayImages builds the judger's measuring pair: relaylogic, the
// smallest Saiblo logic (internal/testsupport/testbots/relaylogic), as
// arena-test/relaylogic, and relaybot, a bot that answers each line at
// once, as arena-test/relaybot.
func RelayImages(t testing.TB, cli *client.Client) (logic, bot string) {
	t.Helper()
	logicBin := GoBinary(t, Root(), "./internal/testsupport/testbots/relaylogic")
	logic = Build(t, cli, "arena-test/relaylogic", ScratchDockerfile()+"LABEL io.arena.logic=saiblo io.arena.players=2\n", map[string]string{"bot": "@" + logicBin})
	botBin := GoBinary(t, Root(), "./internal/testsupport/testbots/relaybot")
	bot = Build(t, cli, "arena-test/relaybot", ScratchDockerfile(), map[string]string{"bot": "@" + botBin})
	return logic, bot
}

// ExampleBots builds the Go kit's example bots as arena-test/tanks-random
// and arena-test/tanks-hunter: the same programs as the kit's Dockerfile
// builds (as arena/…), compiled here and put on an empty base image, so the
// tests need no Go base image and leave the arena/… names alone.
func ExampleBots(t testing.TB, cli *client.Client) []string {
	t.Helper()
	kit := filepath.Join(Root(), "botkits", "go")
	var tags []string
	for _, name := range []string{"tanks-random", "tanks-hunter"} {
		bin := GoBinary(t, kit, "./"+name)
		tags = append(tags, Build(t, cli, "arena-test/"+name, ScratchDockerfile(), map[string]string{"bot": "@" + bin}))
	}
	return tags
}

// KitBot builds one of the Go kit's example programs (e.g. "snake-greedy")
// as arena-test/<name>, compiled here on an empty base image.
func KitBot(t testing.TB, cli *client.Client, name string) string {
	t.Helper()
	bin := GoBinary(t, filepath.Join(Root(), "botkits", "go"), "./"+name)
	return Build(t, cli, "arena-test/"+name, ScratchDockerfile(), map[string]string{"bot": "@" + bin})
}

var (
	standinsOnce sync.Once
	standinsErr  error
)

// Standins makes sure the base images the kits' Dockerfiles name
// (python:3.14-slim-trixie, golang:1.26-trixie, …) are on the engine: it
// runs compose/standins.sh once per test process, which builds those it
// lacks from Debian's packages (no registry is reachable here) and leaves
// alone those already there. Every test that builds a kit from source
// calls it, so that it does not depend on another package's test having
// built them first.
func Standins(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("needs the Docker engine (skipped with -short)")
	}
	standinsOnce.Do(func() {
		cmd := exec.Command("bash", filepath.Join(Root(), "compose", "standins.sh"))
		cmd.Dir = Root()
		out, err := cmd.CombinedOutput()
		if err != nil {
			standinsErr = fmt.Errorf("compose/standins.sh: %v\n%s", err, out)
		}
	})
	if standinsErr != nil {
		t.Fatal(standinsErr)
	}
}

var testBotOnce sync.Map // tag → struct{}

// TestBot builds the Tanks test bot (internal/testsupport/testbots/tankbot) in the
// given mode, e.g. "delay=150ms", as arena-test/tankbot:<mode>.
func TestBot(t testing.TB, cli *client.Client, mode string) string {
	return testBot(t, cli, "tankbot", mode)
}

// PacBot builds the Pac-Man test bot (internal/testsupport/testbots/pacbot) in the
// given mode, as arena-test/pacbot:<mode>.
func PacBot(t testing.TB, cli *client.Client, mode string) string {
	return testBot(t, cli, "pacbot", mode)
}

// SnakeBot builds the Snake test bot that circles a loop
// (internal/testsupport/testbots/snakebot) as arena-test/snakebot.
func SnakeBot(t testing.TB, cli *client.Client) string {
	return testBot(t, cli, "snakebot", "")
}

// testBot builds a test bot run with mode as its argument; with no mode,
// with no argument and the tag latest.
func testBot(t testing.TB, cli *client.Client, program, mode string) string {
	t.Helper()
	tag, args := "arena-test/"+program+":latest", []string{}
	if mode != "" {
		tag, args = "arena-test/"+program+":"+tagSafe(mode), []string{mode}
	}
	if _, done := testBotOnce.Load(tag); done {
		return tag
	}
	bin := GoBinary(t, Root(), "./internal/testsupport/testbots/"+program)
	Build(t, cli, tag, ScratchDockerfile(args...), map[string]string{"bot": "@" + bin})
	testBotOnce.Store(tag, struct{}{})
	return tag
}

func tagSafe(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '.', r == '-', r == '_':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}

// ArenaContainers lists the Arena containers of a match (all of them when
// match is empty).
func ArenaContainers(t testing.TB, cli *client.Client, match string) []container.Summary {
	t.Helper()
	args := filters.NewArgs(filters.Arg("label", sandbox.LabelPlatform+"=arena"))
	list, err := cli.ContainerList(context.Background(), container.ListOptions{All: true, Filters: args})
	if err != nil {
		t.Fatal(err)
	}
	if match == "" {
		return list
	}
	// The match's, and the warm containers handed to its bots (labelled
	// as the pool's, named after the bot).
	var out []container.Summary
	for _, c := range list {
		if c.Labels[sandbox.LabelMatch] == match || (c.Labels[sandbox.LabelMatch] == "pool" &&
			slices.ContainsFunc(c.Names, func(n string) bool { return strings.HasPrefix(n, "/arena-"+match+"-") })) {
			out = append(out, c)
		}
	}
	return out
}

// NoContainersLeft fails the test if the match left a container behind.
func NoContainersLeft(t testing.TB, cli *client.Client, match string) {
	t.Helper()
	NoContainersLeftWithin(t, cli, match, 0)
}

// NoContainersLeftWithin fails the test if the match still has containers
// after d: through NATS, a delivery that overlapped the one whose result
// counted is stopped when its worker reports it, just after the match ends.
func NoContainersLeftWithin(t testing.TB, cli *client.Client, match string, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		left := ArenaContainers(t, cli, match)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			names := make([]string, len(left))
			for i, c := range left {
				names[i] = strings.Join(c.Names, ",") + " (" + c.State + ")"
			}
			t.Errorf("containers left behind: %s", strings.Join(names, "; "))
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// FIFO prepares the FIFO stdio path for a test: the arena binary built
// static as the launcher, and a folder of the test's.
func FIFO(t testing.TB) sandbox.FIFO {
	t.Helper()
	launcher := GoBinary(t, Root(), "./cmd/arena")
	f, err := sandbox.PrepareFIFO(t.TempDir(), launcher)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// Runtime describes a runtime the engine must have registered (gVisor's
// runsc, say); the test fails, naming how to register it, when it has not.
func Runtime(t testing.TB, cli *client.Client, name string) sandbox.Runtime {
	t.Helper()
	info, err := cli.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	rt, err := sandbox.DescribeRuntime(info, name)
	if err != nil {
		t.Fatalf("%v: register it with the engine first (.ci/install-runsc.sh does, for runsc)", err)
	}
	return rt
}
