package orchestrator_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/client"
	"go.uber.org/zap/zaptest"

	"arena/engine"
	"arena/engine/tanks"
	"arena/internal/testsupport/dockertest"
	"arena/matches"
	"arena/orchestrator"
	"arena/sandbox"
)

// newOrchestrator plays bots in Docker, their stdio on the attach stream
// or, with "fifo", on FIFOs; "runsc" plays them on FIFOs under gVisor.
func newOrchestrator(t testing.TB, cli *client.Client, stdio ...string) *orchestrator.Orchestrator {
	t.Helper()
	owner, err := sandbox.Self()
	if err != nil {
		t.Fatal(err)
	}
	log := zaptest.NewLogger(t)
	opts := []sandbox.Option{sandbox.WithLogger(log)}
	policy := sandbox.DefaultPolicy()
	path := ""
	if len(stdio) > 0 {
		path = stdio[0]
	}
	if path == "runsc" {
		policy.Runtime = "runsc"
		opts = append(opts, sandbox.WithRuntime(dockertest.Runtime(t, cli, "runsc")))
		path = "fifo"
	}
	if path == "fifo" {
		opts = append(opts, sandbox.WithFIFO(dockertest.FIFO(t)))
	}
	d, err := sandbox.NewDocker(cli, policy, owner, opts...)
	if err != nil {
		t.Fatal(err)
	}
	if path != "" && d.StdioPath() != path {
		t.Fatalf("stdio path %q, want %q", d.StdioPath(), path)
	}
	return orchestrator.New(orchestrator.Docker(d), orchestrator.WithLogger(log))
}

func classic(t testing.TB) engine.Map {
	t.Helper()
	m, err := tanks.New().Map("classic")
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func play(t *testing.T, cli *client.Client, req matches.Request, stdio ...string) *matches.Replay {
	t.Helper()
	if req.Game == nil {
		req.Game = tanks.New()
	}
	if req.Map == nil {
		req.Map = classic(t)
	}
	req.MatchID = matches.NewMatchID()
	t.Cleanup(func() { dockertest.NoContainersLeft(t, cli, req.MatchID) })
	rep, err := newOrchestrator(t, cli, stdio...).Play(t.Context(), req)
	if err != nil {
		t.Fatalf("play: %v", err)
	}
	dockertest.NoContainersLeft(t, cli, req.MatchID)
	return rep
}

func TestExampleBotsPlayAWholeMatch(t *testing.T) {
	cli := dockertest.Client(t)
	bots := dockertest.ExampleBots(t, cli)
	rep := play(t, cli, matches.Request{Seed: 7, Images: bots})
	res := rep.Result
	if len(res.Winners) == 0 {
		t.Error("no winner")
	}
	if res.Turns < 1 || len(rep.Frames) != res.Turns+1 {
		t.Errorf("%d turns, %d frames", res.Turns, len(rep.Frames))
	}
	for _, b := range res.Bots {
		if b.Status != engine.StatusOK {
			t.Errorf("%s: status %s (%s), want ok", b.ID, b.Status, b.FaultDetail)
		}
		if b.ImageID == "" || !strings.HasPrefix(b.ImageID, "sha256:") {
			t.Errorf("%s: image id %q", b.ID, b.ImageID)
		}
		if b.Answers == 0 || b.AnswerMSMax <= 0 || b.AnswerMSP50 > b.AnswerMSMax {
			t.Errorf("%s: %d answers, p50 %v ms, max %v ms", b.ID, b.Answers, b.AnswerMSP50, b.AnswerMSMax)
		}
		if b.CPUMS == nil || *b.CPUMS <= 0 || b.MemPeakBytes == nil || *b.MemPeakBytes <= 0 {
			t.Errorf("%s: no cgroup figures: %s", b.ID, b.Accounting)
		}
	}
	if err := matches.Verify([]engine.Game{tanks.New()}, rep); err != nil {
		t.Errorf("the replay does not verify: %v", err)
	}
	// Per-turn figures are in the replay.
	f := rep.Frames[1]
	if len(f.Bots) != 2 || !f.Bots[0].Asked || f.Bots[0].Answer == "" || f.Bots[0].CPUUS == nil {
		t.Errorf("frame 1 bots: %+v", f.Bots)
	}

	// A replay written to disk reads back and verifies.
	path := filepath.Join(t.TempDir(), "m.json")
	if err := matches.WriteReplay(path, rep); err != nil {
		t.Fatal(err)
	}
	back, err := matches.ReadReplay(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := matches.Verify([]engine.Game{tanks.New()}, back); err != nil {
		t.Errorf("the replay read back does not verify: %v", err)
	}
	// Tampering with an answer is caught, at the right turn.
	for i := 1; i < len(back.Frames); i++ {
		if b := &back.Frames[i].Bots[0]; b.Asked && b.Answer != `[{"Type":1,"Direction":2}]` {
			b.Answer = `[{"Type":1,"Direction":2}]`
			var mm *matches.Mismatch
			if err := matches.Verify([]engine.Game{tanks.New()}, back); !errors.As(err, &mm) || mm.Turn != i {
				t.Errorf("tampered turn %d: verify says %v", i, err)
			}
			break
		}
	}
}

func TestBotIDsAreUniqueAndInTheEnvironment(t *testing.T) {
	cli := dockertest.Client(t)
	probe := dockertest.TestBot(t, cli, "probe")
	rep := play(t, cli, matches.Request{Seed: 1, Images: []string{probe, probe}, Settings: json.RawMessage(`{"zone_radius":2}`)})
	ids := []string{rep.Result.Bots[0].ID, rep.Result.Bots[1].ID}
	if ids[0] != probe || ids[1] != probe+"#2" {
		t.Fatalf("ids = %v", ids)
	}
	seen := map[int]string{}
	for _, f := range rep.Frames {
		for _, b := range f.Bots {
			if _, after, ok := strings.Cut(b.Stderr, "PROBE "); ok {
				var p struct{ BotID string }
				if err := json.Unmarshal([]byte(strings.TrimSpace(after)), &p); err != nil {
					t.Fatal(err)
				}
				seen[b.Seat] = p.BotID
			}
		}
	}
	if seen[0] != ids[0] || seen[1] != ids[1] {
		t.Errorf("ARENA_BOT_ID seen from inside: %v, want %v", seen, ids)
	}
}

func TestMissingImageStartsNothing(t *testing.T) {
	cli := dockertest.Client(t)
	hunter := dockertest.ExampleBots(t, cli)[1]
	id := matches.NewMatchID()
	_, err := newOrchestrator(t, cli).Play(t.Context(), matches.Request{
		Game: tanks.New(), Map: classic(t), Images: []string{hunter, "arena-test/no-such-image:latest"}, MatchID: id,
	})
	if !errors.Is(err, matches.ErrImageNotFound) || !strings.Contains(err.Error(), "arena-test/no-such-image:latest") {
		t.Fatalf("err = %v, want image not found naming it", err)
	}
	dockertest.NoContainersLeft(t, cli, id)
}

func TestCancelRemovesContainers(t *testing.T) {
	cli := dockertest.Client(t)
	slow := dockertest.TestBot(t, cli, "delay=50ms")
	ctx, cancel := context.WithCancel(t.Context())
	id := matches.NewMatchID()
	frames := 0
	o := orchestrator.New(launcherOf(t, cli))
	start := time.Now()
	_, err := o.Play(ctx, matches.Request{Game: tanks.New(), Map: classic(t), Images: []string{slow, slow}, MatchID: id,
		OnFrame: func(matches.Frame) {
			if frames++; frames == 5 {
				cancel()
			}
		}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if took := time.Since(start); took > 15*time.Second {
		t.Errorf("cancelling took %v", took)
	}
	dockertest.NoContainersLeft(t, cli, id)
}

func launcherOf(t *testing.T, cli *client.Client) orchestrator.Launcher {
	owner, err := sandbox.Self()
	if err != nil {
		t.Fatal(err)
	}
	d, err := sandbox.NewDocker(cli, sandbox.DefaultPolicy(), owner)
	if err != nil {
		t.Fatal(err)
	}
	return orchestrator.Docker(d)
}

func TestLocalBotsAreRefusedUnlessEnabled(t *testing.T) {
	cli := dockertest.Client(t)
	_, err := launcherOf(t, cli).Image(t.Context(), "exec:./mybot")
	if !errors.Is(err, sandbox.ErrBadReference) || !strings.Contains(err.Error(), "not enabled") {
		t.Errorf("err = %v, want local bots refused", err)
	}
}
