package main

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/docker/docker/api/types/image"
	"go.uber.org/zap"

	"arena/dispatch"
	"arena/dispatch/trust"
	"arena/internal/testsupport/dockertest"
	"arena/internal/testsupport/poll"
	"arena/matches"
	"arena/orchestrator"
)

// forgingPlayer plays a match with a real orchestrator, then changes one
// answer in its replay (the result untouched) before its worker reports
// it; after that it takes matches and holds them until stopped.
type forgingPlayer struct {
	matches.Player
	forged atomic.Int32
}

func (f *forgingPlayer) Play(ctx context.Context, req matches.Request) (*matches.Replay, error) {
	if f.forged.Load() > 0 {
		<-ctx.Done()
		return nil, context.Cause(ctx)
	}
	rep, err := f.Player.Play(ctx, req)
	if err != nil {
		return nil, err
	}
	for i, fr := range rep.Frames {
		for j, b := range fr.Bots {
			if b.Answer != "" && i > 1 {
				rep.Frames[i].Bots[j].Answer = "2 2" // said to be another move
				f.forged.Add(1)
				return rep, nil
			}
		}
	}
	return rep, nil
}

// A server that plays nothing itself (ARENA_CONCURRENCY=0) and a worker
// that joined it from a private Docker network: a registered logic
// game's match, its ladder and a contest's final play on the worker, and
// each result counts once the server played the logic again on it. A
// worker that reports a changed replay of a logic game is refused, and
// the match is played again by the honest one. The server's replay of a
// registered game records its logic: arena replay verify and rerun it.
func TestALogicGamePlaysOnAJoinedWorker(t *testing.T) {
	t.Parallel() // see docs/tests.md
	cli := dockertest.Client(t)
	logic, bot := logicKit(t, cli)
	// A bot that loses at once (it crashes): the matches are short.
	loser := dockertest.Build(t, cli, "arena-test/ttt-crasher", "FROM "+bot+"\nENTRYPOINT [\"python3\", \"-c\", \"import sys; sys.stdin.readline(); sys.exit(2)\"]\n", nil)
	bin := arenaBinary(t)

	var rnd [4]byte
	rand.Read(rnd[:])
	p := fmt.Sprintf("arena-lw-%x", rnd)
	network := p + "-net"
	docker(t, "network", "create", "--label", "arena-test="+p, network)
	var made []string
	t.Cleanup(func() {
		if len(made) > 0 {
			exec.Command("docker", append([]string{"rm", "-f", "-v"}, made...)...).Run()
		}
		exec.Command("docker", "network", "rm", network).Run()
	})
	// The server's NATS listens on the network's gateway: the host, as a
	// worker on that network reaches it.
	gateway := docker(t, "network", "inspect", "-f", "{{(index .IPAM.Config 0).Gateway}}", network)
	natsAddr := fmt.Sprintf("%s:%d", gateway, freePort(t))
	data := t.TempDir()
	s := startServer(t, bin, data, freePort(t), "--concurrency", "0", "--nats-listen", natsAddr, "--games", "ttt="+logic)
	out, err := exec.Command(bin, "join-token", "--data", data).Output()
	if err != nil {
		t.Fatal(err)
	}
	token := strings.TrimSpace(string(out))
	url := "nats://" + natsAddr
	worked := func(name string) float64 {
		res, err := http.Get(s.url + "/healthz")
		if err != nil {
			return 0
		}
		defer res.Body.Close()
		var h struct {
			Workers []dispatch.WorkerStanding `json:"workers"`
		}
		json.NewDecoder(res.Body).Decode(&h)
		for _, w := range h.Workers {
			if w.Name == name {
				return float64(w.Refused)
			}
		}
		return -1
	}

	// A forging worker, in this process, joined as any worker joins.
	ctx, stopForger := context.WithCancel(t.Context())
	creds, err := trust.Join(ctx, url, mustToken(t, token), "forger", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	nc, err := trust.DialWorker(ctx, url, creds)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	cfg, err := load(register(flag.NewFlagSet("forger", flag.ContinueOnError), false))
	if err != nil {
		t.Fatal(err)
	}
	log := zap.NewNop()
	dcli, d, _, err := sandboxes(ctx, cfg, log, io.Discard, false)
	if err != nil {
		t.Fatal(err)
	}
	defer dcli.Close()
	defer d.Close(context.Background())
	forger := &forgingPlayer{Player: orchestrator.New(orchestrator.Docker(d), orchestrator.WithLogger(log))}
	fw, err := dispatch.NewWorker(nc, dispatch.WorkerConfig{Name: "forger", Concurrency: 1, Games: games(), Player: forger, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	forgerDone := make(chan struct{})
	go func() { defer close(forgerDone); fw.Run(ctx) }()
	defer func() { stopForger(); <-forgerDone }()

	// The forger takes the match first: its changed replay is refused.
	first := s.post(t, fmt.Sprintf(`{"game":"ttt","bots":[%q,%q]}`, bot, bot))
	poll.Until(t, 2*time.Minute, func() error {
		if n := worked("forger"); n < 1 {
			return fmt.Errorf("the forger's result was not refused (refusals %v)", n)
		}
		return nil
	})
	if !strings.Contains(s.stderr.String(), "does not reproduce it") {
		t.Errorf("the server's log does not say why it refused the forger")
	}
	stopForger()
	<-forgerDone

	// The honest worker: a container on the private network, bots started
	// on the host's engine through its socket (as compose runs one).
	img := dockertest.Build(t, cli, "arena-test/arena-worker:"+fmt.Sprintf("%x", rnd),
		"FROM scratch\nCOPY arena /arena\nCOPY tmp/ /tmp/\nCOPY data/ /data/\nENTRYPOINT [\"/arena\"]\n",
		map[string]string{"arena": "@" + bin, "tmp/.keep": "", "data/.keep": ""})
	t.Cleanup(func() { cli.ImageRemove(context.Background(), img, image.RemoveOptions{Force: true}) })
	stdio := t.TempDir()
	name := p + "-w1"
	made = append(made, name)
	docker(t, "run", "-d", "--name", name, "--label", "arena-test="+p, "--network", network,
		"-v", "/var/run/docker.sock:/var/run/docker.sock", "-v", "/sys/fs/cgroup:/host/sys/fs/cgroup:ro", "-v", stdio+":"+stdio, "--pid", "host",
		"-e", "ARENA_CGROUP_ROOT=/host/sys/fs/cgroup", "-e", "ARENA_STDIO_DIR="+stdio,
		img, "worker", "--nats", url, "--join", token, "--name", "w1", "--data", "/data", "--concurrency", "2", "--log-level", "info")
	t.Cleanup(func() {
		if t.Failed() {
			out, _ := exec.Command("docker", "logs", name).CombinedOutput()
			t.Logf("the worker's log:\n%s", out)
		}
	})
	m := s.waitStatus(t, first, "finished", "failed")
	result, _ := m["result"].(map[string]any)
	if m["status"] != "finished" || result["worker"] != "w1" {
		t.Fatalf("the match the forger changed, played again: %v", m)
	}

	// A contest's final, then a ladder, all on the worker. The ladder
	// comes second: its matches and the final's share the background
	// line, and with workers it keeps up to 65 waiting (one more than
	// the matches handed to NATS at once), which the final would wait
	// behind.
	final := tttCup(t, s, 4*time.Minute, bot, loser)
	if rows := contestRows(final); len(rows) != 2 || !strings.HasPrefix(rows[0], bot+" #1 2 pts 2/0/0") {
		t.Errorf("the final's standings: %q", rows)
	}
	for _, e := range [][2]string{{"first", bot}, {"second", loser}} {
		if status, b := s.call(t, "POST", "/api/ladders/ttt/entries", fmt.Sprintf(`{"name":%q,"image":%q}`, e[0], e[1])); status != 201 {
			t.Fatalf("ttt's ladder, entry %s: %d %v", e[0], status, b)
		}
	}
	var ladder map[string]any
	poll.Until(t, 2*time.Minute, func() error {
		if _, ladder = s.call(t, "GET", "/api/ladders/ttt", ""); ladder["rated"].(float64) < 1 {
			return fmt.Errorf("no ladder match rated: %v", ladder)
		}
		return nil
	})
	// Every match of ttt: played on w1, verified on the server.
	_, list := s.call(t, "GET", "/api/matches?game=ttt&limit=100", "")
	items, _ := list["matches"].([]any)
	verified := strings.Count(s.stderr.String(), "a logic game's result verified")
	if len(items) < 4 || verified < 4 {
		t.Errorf("%d matches of ttt, %d verified on the server", len(items), verified)
	}
	for _, it := range items {
		it := it.(map[string]any)
		if r, _ := it["result"].(map[string]any); it["status"] == "finished" && r["worker"] != "w1" {
			t.Errorf("match %v played by %v", it["id"], r["worker"])
		}
	}
	if n := worked("w1"); n != 0 {
		t.Errorf("the honest worker: %v refusals", n)
	}

	// The server's replay of the registered game names its logic: it
	// verifies and reruns with no more said.
	replay := filepath.Join(data, "replays", first+".json.zst")
	rep, err := matches.ReadReplay(replay)
	if err != nil || rep.Logic == nil || rep.Logic.Image != logic || !strings.HasPrefix(rep.Logic.ImageID, "sha256:") {
		t.Fatalf("the replay's logic: %+v (%v)", rep, err)
	}
	if out, err := exec.Command(bin, "replay", "verify", replay).CombinedOutput(); err != nil || !strings.Contains(string(out), "ok, ") {
		t.Errorf("arena replay verify of a registered game's replay: %v\n%s", err, out)
	}
	if out, err := exec.Command(bin, "replay", "rerun", replay, "--seat", "1").CombinedOutput(); err != nil || !strings.Contains(string(out), "gave the same") {
		t.Errorf("arena replay rerun of a registered game's replay: %v\n%s", err, out)
	}
}

// mustToken parses a join token.
func mustToken(t *testing.T, s string) trust.JoinToken {
	t.Helper()
	tok, err := trust.ParseToken(s)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}
