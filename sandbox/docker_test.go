package sandbox_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/client"

	"arena/internal/testsupport/dockertest"
	"arena/internal/testsupport/poll"
	"arena/sandbox"
)

func newDocker(t *testing.T, cli *client.Client) *sandbox.Docker {
	t.Helper()
	owner, err := sandbox.Self()
	if err != nil {
		t.Fatal(err)
	}
	d, err := sandbox.NewDocker(cli, sandbox.DefaultPolicy(), owner)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func start(t *testing.T, cli *client.Client, d *sandbox.Docker, tag string) *sandbox.Container {
	t.Helper()
	img, err := d.Image(t.Context(), tag)
	if err != nil {
		t.Fatal(err)
	}
	match := "sandbox-test-" + strings.ReplaceAll(t.Name(), "/", "-")
	c, err := d.Start(t.Context(), sandbox.Spec{Image: img, MatchID: match, BotID: "b", MaxMessageBytes: 1 << 20})
	t.Cleanup(func() {
		if c == nil {
			return
		}
		if err := c.Close(context.Background()); err != nil {
			t.Error(err)
		}
		if _, err := cli.ContainerInspect(context.Background(), c.ID()); err == nil {
			t.Errorf("container %s left behind", c.ID())
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

const stateLine = `{"ContentsInfo":[],"BulletsInfo":[],"ZoneRadius":1}` + "\n"

func TestOneTurnThroughAContainer(t *testing.T) {
	cli := dockertest.Client(t)
	d := newDocker(t, cli)
	c := start(t, cli, d, dockertest.TestBot(t, cli, "ok"))
	deadline := time.Now().Add(10 * time.Second)
	if err := c.Send([]byte(stateLine), deadline); err != nil {
		t.Fatal(err)
	}
	got, err := c.Receive(t.Context(), deadline)
	if err != nil || string(got) != "[]" {
		t.Fatalf("Receive = %q, %v", got, err)
	}
	if cpu, ok := c.CPUTime(); !ok || cpu <= 0 {
		t.Errorf("cpu = %v, %v", cpu, ok)
	}
	if u := c.Usage(); u.Source == "" || u.MemPeakBytes <= 0 {
		t.Errorf("usage = %+v", u)
	}
	// The container carries the labels and the policy.
	info, err := cli.ContainerInspect(t.Context(), c.ID())
	if err != nil {
		t.Fatal(err)
	}
	if info.Config.Labels[sandbox.LabelPlatform] != "arena" || info.Config.Labels[sandbox.LabelBot] != "b" || info.Config.Labels[sandbox.LabelOwner] == "" {
		t.Errorf("labels = %v", info.Config.Labels)
	}
	h := info.HostConfig
	if !h.ReadonlyRootfs || h.NetworkMode != "none" || h.Memory != 256<<20 || h.MemorySwap != 256<<20 || h.LogConfig.Type != "none" || h.Init == nil || !*h.Init {
		t.Errorf("host config does not carry the policy: %+v", h)
	}
	if !contains(info.Config.Env, "ARENA_BOT_ID=b") {
		t.Errorf("env = %v", info.Config.Env)
	}
	exit := c.Stop(t.Context())
	if exit.OOMKilled || exit.Err != nil {
		t.Errorf("stop: %+v", exit)
	}
}

func contains(list []string, want string) bool {
	for _, s := range list {
		if s == want {
			return true
		}
	}
	return false
}

func TestOversizedLineKeepsPlatformMemoryBounded(t *testing.T) {
	cli := dockertest.Client(t)
	d := newDocker(t, cli)
	c := start(t, cli, d, dockertest.TestBot(t, cli, "huge-line-at=1"))
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	deadline := time.Now().Add(10 * time.Second)
	if err := c.Send([]byte(stateLine), deadline); err != nil {
		t.Fatal(err)
	}
	_, err := c.Receive(t.Context(), deadline)
	if !errors.Is(err, sandbox.ErrOutputLimit) {
		t.Fatalf("err = %v, want ErrOutputLimit", err)
	}
	c.Stop(t.Context())
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 32<<20 {
		t.Errorf("reading an oversized line allocated %d MiB", grew>>20)
	}
}

func TestOOMKillIsReported(t *testing.T) {
	cli := dockertest.Client(t)
	d := newDocker(t, cli)
	c := start(t, cli, d, dockertest.TestBot(t, cli, "oom-at=1"))
	deadline := time.Now().Add(20 * time.Second)
	if err := c.Send([]byte(stateLine), deadline); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Receive(t.Context(), deadline); !errors.Is(err, sandbox.ErrClosed) {
		t.Fatalf("err = %v, want ErrClosed", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	exit := c.Exit(ctx)
	if !exit.OOMKilled || exit.Code != 137 {
		t.Errorf("exit = %+v, want OOM killed with 137", exit)
	}
	if u := c.Usage(); u.OOMKills < 1 {
		t.Errorf("the cgroup counter was not seen: %+v", u)
	}
}

// A spec's own memory limit applies in place of the policy's, in the
// container and in its accounting: a bot holding 96 MiB answers under the
// policy's 256 MiB and is OOM killed (and counted) under a spec's 48 MiB,
// also when the pool keeps warm containers; a limit below the engine's
// minimum is refused.
func TestTheMemoryLimitOfASpec(t *testing.T) {
	cli := dockertest.Client(t)
	owner, err := sandbox.Self()
	if err != nil {
		t.Fatal(err)
	}
	d, err := sandbox.NewDocker(cli, sandbox.DefaultPolicy(), owner, sandbox.WithPool(1, time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close(context.Background()) })
	img, err := d.Image(t.Context(), dockertest.TestBot(t, cli, "hold-mib=96"))
	if err != nil {
		t.Fatal(err)
	}
	for i, tc := range []struct {
		memory int64
		killed bool
	}{{0, false}, {48 << 20, true}, {0, false}, {48 << 20, true}} {
		c, err := d.Start(t.Context(), sandbox.Spec{Image: img, MatchID: "sandbox-test-memory", BotID: fmt.Sprint("b", i), MaxMessageBytes: 1 << 20, MemoryBytes: tc.memory})
		if err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(20 * time.Second)
		c.Send([]byte(stateLine), deadline)
		_, err = c.Receive(t.Context(), deadline)
		if !tc.killed {
			if err != nil {
				t.Errorf("bot %d under the policy's memory: %v", i, err)
			}
		} else {
			if !errors.Is(err, sandbox.ErrClosed) {
				t.Errorf("bot %d under 48 MiB: err = %v, want ErrClosed", i, err)
			}
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			exit := c.Exit(ctx)
			cancel()
			if !exit.OOMKilled {
				t.Errorf("bot %d under 48 MiB: exit %+v, want OOM killed", i, exit)
			}
			if u := c.Usage(); u.OOMKills < 1 {
				t.Errorf("bot %d: the cgroup counter was not seen: %+v", i, u)
			}
		}
		if err := c.Close(context.Background()); err != nil {
			t.Error(err)
		}
	}
	if _, err := d.Start(t.Context(), sandbox.Spec{Image: img, MatchID: "sandbox-test-memory", BotID: "tiny", MemoryBytes: 1 << 20}); !errors.Is(err, sandbox.ErrBadSpec) || !strings.Contains(err.Error(), "1048576") {
		t.Errorf("a 1 MiB limit: %v, want ErrBadSpec naming it", err)
	}
}

// A bot image that would run as root gets an unprivileged uid, distinct for
// each bot.
func TestRootImagesGetDistinctUnprivilegedUIDs(t *testing.T) {
	cli := dockertest.Client(t)
	d := newDocker(t, cli)
	bin := dockertest.GoBinary(t, dockertest.Root(), "./internal/testsupport/testbots/tankbot")
	tag := dockertest.Build(t, cli, "arena-test/tankbot-root:probe", "FROM scratch\nCOPY bot /bot\nENTRYPOINT [\"/bot\", \"probe\"]\n", map[string]string{"bot": "@" + bin})
	uids := map[int]bool{}
	for i := 0; i < 2; i++ {
		c := start(t, cli, d, tag)
		deadline := time.Now().Add(10 * time.Second)
		if err := c.Send([]byte(stateLine), deadline); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Receive(t.Context(), deadline); err != nil {
			t.Fatal(err)
		}
		// stderr travels apart from stdout: wait for the whole report.
		var stderr string
		poll.Until(t, 5*time.Second, func() error {
			if stderr += string(c.TakeStderr().Text); !strings.HasSuffix(stderr, "\n") {
				return fmt.Errorf("bot %d's report is not whole on stderr: %q", i, stderr)
			}
			return nil
		})
		_, report, _ := strings.Cut(stderr, "PROBE ")
		var p struct{ UID int }
		if err := json.Unmarshal([]byte(strings.TrimSpace(report)), &p); err != nil {
			t.Fatalf("probe: %v in %q", err, stderr)
		}
		if p.UID < 1000 {
			t.Errorf("bot %d runs as uid %d", i, p.UID)
		}
		uids[p.UID] = true
	}
	if len(uids) != 2 {
		t.Errorf("two bots share a uid: %v", uids)
	}
}

func TestImageErrors(t *testing.T) {
	cli := dockertest.Client(t)
	d := newDocker(t, cli)
	_, err := d.Image(t.Context(), "arena-test/absent:latest")
	var nf *sandbox.ImageNotFoundError
	if !errors.As(err, &nf) || !errors.Is(err, sandbox.ErrImageNotFound) {
		t.Errorf("absent image: %v", err)
	}
	for _, bad := range []string{"", "Upper", "a b", "bad::tag", "-rm"} {
		if _, err := d.Image(t.Context(), bad); !errors.Is(err, sandbox.ErrBadReference) {
			t.Errorf("%q: %v, want ErrBadReference", bad, err)
		}
	}
}

// Containers whose owner process died are swept; those of a live owner
// are kept unless their match is removed.
func TestJanitor(t *testing.T) {
	cli := dockertest.Client(t)
	self, err := sandbox.Self()
	if err != nil {
		t.Fatal(err)
	}
	tag := dockertest.TestBot(t, cli, "sleep")
	match := "janitor-test"
	create := func(owner string) string {
		r, err := cli.ContainerCreate(t.Context(), &container.Config{Image: tag, Labels: map[string]string{
			sandbox.LabelPlatform: "arena", sandbox.LabelMatch: match, sandbox.LabelOwner: owner,
		}}, &container.HostConfig{NetworkMode: "none"}, nil, nil, "")
		if err != nil {
			t.Fatal(err)
		}
		if err := cli.ContainerStart(t.Context(), r.ID, container.StartOptions{}); err != nil {
			t.Fatal(err)
		}
		return r.ID
	}
	janitor := sandbox.NewJanitor(cli, sandbox.Liveness{Self: self, ProcRoot: "/proc"}.Alive)
	t.Cleanup(func() { janitor.RemoveAll(context.Background()) })
	dead := sandbox.Owner{Host: self.Host, PID: self.PID, Start: self.Start + 1} // same pid, other start: a past process
	create(dead.String())
	create("garbage")
	create(self.String())
	rep, err := janitor.Sweep(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	left := dockertest.ArenaContainers(t, cli, match)
	if len(left) != 1 || rep.Kept < 1 {
		t.Fatalf("after the sweep: %d left (want the live owner's only), report %+v", len(left), rep)
	}
	// The live owner's container is no leftover of the match.
	rep, err = janitor.RemoveMatch(t.Context(), match)
	if err != nil || len(rep.Removed) != 0 || rep.Kept != 1 {
		t.Fatalf("removing the match: %+v, %v", rep, err)
	}
}

// A bot that never reads its input cannot block the platform: once the
// pipes are full, Send gives up at its deadline.
func TestSendToABotThatNeverReads(t *testing.T) {
	cli := dockertest.Client(t)
	d := newDocker(t, cli)
	c := start(t, cli, d, dockertest.TestBot(t, cli, "no-read"))
	chunk := []byte(strings.Repeat("x", 64<<10) + "\n")
	deadline := time.Now().Add(500 * time.Millisecond)
	var err error
	for i := 0; i < 1000 && err == nil; i++ { // at most 64 MiB
		err = c.Send(chunk, deadline)
	}
	if !errors.Is(err, sandbox.ErrTimeout) {
		t.Fatalf("err = %v, want ErrTimeout", err)
	}
	if late := time.Since(deadline); late > time.Second {
		t.Errorf("Send returned %v after its deadline", late)
	}
}

// When the engine cannot mount the FIFOs (here: the launcher is missing),
// the bot starts on the attach stream and the path says why.
func TestFIFOFallsBackToAttach(t *testing.T) {
	cli := dockertest.Client(t)
	owner, _ := sandbox.Self()
	fifo := dockertest.FIFO(t)
	fifo.Launcher += ".missing"
	d, err := sandbox.NewDocker(cli, sandbox.DefaultPolicy(), owner, sandbox.WithFIFO(fifo))
	if err != nil {
		t.Fatal(err)
	}
	if d.StdioPath() != "fifo" {
		t.Fatalf("stdio path %q before the first bot", d.StdioPath())
	}
	c := start(t, cli, d, dockertest.TestBot(t, cli, "ok"))
	deadline := time.Now().Add(10 * time.Second)
	if err := c.Send([]byte(stateLine), deadline); err != nil {
		t.Fatal(err)
	}
	if got, err := c.Receive(t.Context(), deadline); err != nil || string(got) != "[]" {
		t.Fatalf("Receive = %q, %v", got, err)
	}
	if p := d.StdioPath(); !strings.HasPrefix(p, "attach (the FIFO path failed: ") {
		t.Errorf("stdio path %q", p)
	}
}

// Over FIFOs, what a bot writes to stderr before its answer is filed with
// that answer.
func TestFIFOStderrBelongsToItsTurn(t *testing.T) {
	cli := dockertest.Client(t)
	owner, _ := sandbox.Self()
	d, err := sandbox.NewDocker(cli, sandbox.DefaultPolicy(), owner, sandbox.WithFIFO(dockertest.FIFO(t)))
	if err != nil {
		t.Fatal(err)
	}
	c := start(t, cli, d, dockertest.TestBot(t, cli, "stderr-flood"))
	for turn := 0; turn < 20; turn++ {
		deadline := time.Now().Add(10 * time.Second)
		if err := c.Send([]byte(stateLine), deadline); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Receive(t.Context(), deadline); err != nil {
			t.Fatal(err)
		}
		// The bot wrote 1 MiB to stderr before answering: 4 KiB kept, the
		// rest counted, all of it in this turn.
		if got := c.TakeStderr(); len(got.Text) != sandbox.DefaultStderrCaps.PerTake || got.Dropped != 1<<20-int64(sandbox.DefaultStderrCaps.PerTake) {
			t.Fatalf("turn %d: %d bytes kept, %d dropped", turn, len(got.Text), got.Dropped)
		}
	}
}

// With pulling allowed, an absent image is pulled; when that fails (no
// registry here) the error says so and names the image.
func TestPullMissing(t *testing.T) {
	cli := dockertest.Client(t)
	owner, _ := sandbox.Self()
	d, err := sandbox.NewDocker(cli, sandbox.DefaultPolicy(), owner, sandbox.WithPullMissing())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	_, err = d.Image(ctx, "arena-test/never-built-anywhere:1")
	if err == nil || !strings.Contains(err.Error(), "arena-test/never-built-anywhere:1 not found locally and the pull failed") {
		t.Errorf("err = %v", err)
	}
	// Present images are not pulled.
	if _, err := d.Image(ctx, dockertest.TestBot(t, cli, "ok")); err != nil {
		t.Errorf("a local image: %v", err)
	}
}

// Warm containers: started ahead for an image in use, each handed to one
// bot, which then plays with its own id; the pool is refilled, and its
// containers go with the runner.
func TestWarmPool(t *testing.T) {
	cli := dockertest.Client(t)
	owner, err := sandbox.Self()
	if err != nil {
		t.Fatal(err)
	}
	fifo := dockertest.FIFO(t)
	d, err := sandbox.NewDocker(cli, sandbox.DefaultPolicy(), owner, sandbox.WithFIFO(fifo), sandbox.WithPool(2, time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	// This process's warm containers (other Arena processes may have
	// theirs).
	mine := func() []string {
		var ids []string
		for _, c := range dockertest.ArenaContainers(t, cli, "pool") {
			if c.Labels[sandbox.LabelOwner] == owner.String() && c.State == "running" {
				ids = append(ids, c.ID)
			}
		}
		return ids
	}
	pooled := func() int { return len(mine()) }
	t.Cleanup(func() {
		d.Close(context.Background())
		if n := pooled(); n != 0 {
			t.Errorf("%d warm containers left", n)
		}
	})
	tag := dockertest.TestBot(t, cli, "probe")
	img, err := d.Image(t.Context(), tag)
	if err != nil {
		t.Fatal(err)
	}
	match := fmt.Sprintf("pooltest%d", time.Now().UnixNano())
	name := func(bot string) string { return "arena-" + match + "-" + bot }
	play := func(bot string) (*sandbox.Container, time.Duration) {
		t0 := time.Now()
		c, err := d.Start(t.Context(), sandbox.Spec{Image: img, Name: name(bot), MatchID: match, BotID: bot, MaxMessageBytes: 1 << 20})
		if err != nil {
			t.Fatal(err)
		}
		took := time.Since(t0)
		t.Cleanup(func() { c.Close(context.Background()) })
		deadline := time.Now().Add(10 * time.Second)
		if err := c.Send([]byte(stateLine), deadline); err != nil {
			t.Fatal(err)
		}
		if got, err := c.Receive(t.Context(), deadline); err != nil || string(got) != "[]" {
			t.Fatalf("%s answered %q, %v", bot, got, err)
		}
		var stderr string
		poll.Until(t, 5*time.Second, func() error {
			if stderr += string(c.TakeStderr().Text); !strings.HasSuffix(stderr, "\n") {
				return fmt.Errorf("%s's report is not whole on stderr: %q", bot, stderr)
			}
			return nil
		})
		if !strings.Contains(stderr, `"BotID":"`+bot+`"`) {
			t.Errorf("%s sees another id: %q", bot, stderr)
		}
		return c, took
	}
	first, cold := play("first") // no warm container yet: started anew
	if first.ID() == "" {
		t.Fatal("no container")
	}
	poll.Until(t, 30*time.Second, func() error {
		if n := pooled(); n < 2 {
			return fmt.Errorf("the pool holds %d warm containers, want 2", n)
		}
		return nil
	})
	warm := map[string]bool{}
	for _, id := range mine() {
		warm[id] = true
	}
	second, hot := play("second")
	if !warm[second.ID()] {
		t.Errorf("the second bot did not get a warm container")
	}
	t.Logf("start: %v cold, %v from the pool", cold, hot)
	// Taken, it is the bot's: the pool boots another.
	poll.Until(t, 30*time.Second, func() error {
		if n := pooled(); n < 3 {
			return fmt.Errorf("the pool was not refilled: %d", n)
		}
		return nil
	})
	// Handed over, it takes the bot's name (its labels still say pool):
	// should this runner die mid-match, the match's clean-up finds it by
	// that name, and its FIFO folder by its mount.
	poll.Until(t, 10*time.Second, func() error {
		info, err := cli.ContainerInspect(t.Context(), second.ID())
		if err != nil {
			t.Fatal(err)
		}
		if info.Name != "/"+name("second") {
			return fmt.Errorf("the warm container is still named %s", info.Name)
		}
		return nil
	})
	janitor := sandbox.NewJanitor(cli, func(sandbox.Owner) bool { return true }, sandbox.WithStdioFolder(fifo.Dir, fifo.Launcher))
	rep, err := janitor.RemoveLostMatch(t.Context(), match)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(rep.Removed, name("second")) || !slices.Contains(rep.Removed, name("first")) || len(rep.Swept) != 2 {
		t.Errorf("the match's clean-up removed %v and swept %v, want both bots and their two FIFO folders", rep.Removed, rep.Swept)
	}
	dockertest.NoContainersLeft(t, cli, match)
}

// A bounded pool (WithPoolMax): never more warm containers in all than
// the bound; the image that plays most lately keeps its own, and a
// newcomer takes the place of the one that played least recently.
func TestABoundedWarmPool(t *testing.T) {
	cli := dockertest.Client(t)
	owner, err := sandbox.Self()
	if err != nil {
		t.Fatal(err)
	}
	d, err := sandbox.NewDocker(cli, sandbox.DefaultPolicy(), owner, sandbox.WithFIFO(dockertest.FIFO(t)), sandbox.WithPool(2, time.Minute), sandbox.WithPoolMax(3))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close(context.Background()) })
	var imgs []sandbox.Image
	for _, args := range []string{"probe", "delay=1ms", "delay=2ms"} {
		img, err := d.Image(t.Context(), dockertest.TestBot(t, cli, args))
		if err != nil {
			t.Fatal(err)
		}
		imgs = append(imgs, img)
	}
	match := fmt.Sprintf("poolmax%d", time.Now().UnixNano())
	t.Cleanup(func() { dockertest.NoContainersLeft(t, cli, match) })
	n := 0
	start := func(img sandbox.Image) {
		n++
		c, err := d.Start(t.Context(), sandbox.Spec{Image: img, Name: fmt.Sprintf("arena-%s-b%d", match, n), MatchID: match, BotID: fmt.Sprintf("b%d", n), MaxMessageBytes: 1 << 20})
		if err != nil {
			t.Fatal(err)
		}
		c.Close(context.Background())
	}
	// Wait until the pool holds what is wanted, never more than 3 meanwhile.
	holds := func(want ...int) {
		t.Helper()
		poll.Until(t, 30*time.Second, func() error {
			got := []int{d.Warm(imgs[0]), d.Warm(imgs[1]), d.Warm(imgs[2])}
			if total := d.WarmTotal(); total > 3 {
				t.Fatalf("%d warm containers, over the bound of 3 (%v)", total, got)
			}
			if !slices.Equal(got, want) {
				return fmt.Errorf("warm by image %v, want %v", got, want)
			}
			return nil
		})
	}
	start(imgs[0])
	start(imgs[0])
	holds(2, 0, 0)
	start(imgs[1]) // one place left: it gets one
	holds(2, 1, 0)
	start(imgs[2]) // it has played as much as the second, more recently
	holds(2, 0, 1)
	start(imgs[1])
	start(imgs[1])
	start(imgs[1]) // now it plays most: it takes the others' places
	holds(1, 2, 0)
}
