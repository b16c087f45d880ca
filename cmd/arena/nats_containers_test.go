package main

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/image"

	"arena/dispatch"
	"arena/internal/testsupport/dockertest"
	"arena/internal/testsupport/poll"
	"arena/sandbox"
)

// docker runs the docker command and returns its trimmed output; it fails
// the test when the command fails.
func docker(t testing.TB, args ...string) string {
	t.Helper()
	out, err := exec.Command("docker", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("docker %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// box is an Arena container of the test, its log read while it is written.
type box struct {
	name string
	logs *lockedBuffer
}

// took reports whether the worker took the match, at the delivery.
func (b *box) took(match string, attempt int) bool {
	return strings.Contains(b.logs.String(), fmt.Sprintf(`match taken	{"worker": %q, "match": %q, "attempt": %d}`, b.name, match, attempt))
}

// The real thing as containers: a three-node NATS cluster (its routes on
// a network of their own), a server that plays nothing itself and
// workers, each a container on a private network, the workers starting
// bots as siblings on the host's engine through its socket. A worker
// container killed mid-match, one disconnected from the network
// mid-match, and a NATS node container killed: every match is played
// once to its end, by a live worker, and nothing is left behind.
func TestWorkersInContainersThroughANATSCluster(t *testing.T) {
	cli := dockertest.Client(t)
	started := time.Now()
	// A slow bot image of its own for each fault: a worker's warm pool
	// (ARENA_POOL, 2 by default, as in compose) is kept per image, so each
	// match below starts its bots afresh, whichever worker played what
	// before. (Warm containers handed to a lost match's bots are reaped
	// with it too: TestWarmPool.)
	var slow [3]string
	for i := range slow {
		slow[i] = ownTag(t, cli, dockertest.TestBot(t, cli, fmt.Sprintf("delay=%dms", 50+i)))
	}
	bin := arenaBinary(t)

	var rnd [4]byte
	rand.Read(rnd[:])
	p := fmt.Sprintf("arena-natsc-%x", rnd) // every name of the test's begins so
	// The cluster set up as docs/many-hosts.md tells an operator: users with
	// Arena's permissions, a password on the routes, TLS for the names
	// the nodes are dialled by. The files are at the same paths in the
	// containers.
	auth := newNATSAuth(t, bin, t.TempDir(), []string{p + "-n0", p + "-n1", p + "-n2"}, p+"-w1", p+"-w2", p+"-w3")
	files := map[string]string{"arena": "@" + bin, "tmp/.keep": "", "data/.keep": "", "root" + auth.conf: auth.text}
	for _, f := range []string{"ca.crt", "server.crt", "server.key"} {
		files["root"+filepath.Join(auth.dir, f)] = "@" + filepath.Join(auth.dir, f)
	}
	img := dockertest.Build(t, cli, "arena-test/arena-nats:"+fmt.Sprintf("%x", rnd),
		"FROM scratch\nCOPY arena /arena\nCOPY tmp/ /tmp/\nCOPY data/ /data/\nCOPY root/ /\nENTRYPOINT [\"/arena\"]\n", files)
	t.Cleanup(func() {
		cli.ImageRemove(context.Background(), img, image.RemoveOptions{Force: true})
	})
	// The bots' FIFOs: a folder of this run's, at the same path on the host
	// and in the Arena containers.
	stdio := t.TempDir()

	clients, cluster := p+"-clients", p+"-cluster"
	var made []string // containers, removed at the end, also on failure
	var matches []string
	t.Cleanup(func() {
		if len(made) > 0 {
			exec.Command("docker", append([]string{"rm", "-f", "-v"}, made...)...).Run()
		}
		// Bots of this run's workers or matches that some failure left.
		for _, c := range dockertest.ArenaContainers(t, cli, "") {
			o, _ := sandbox.ParseOwner(c.Labels[sandbox.LabelOwner])
			ours := strings.HasPrefix(o.Host, p)
			for _, id := range matches {
				ours = ours || c.Labels[sandbox.LabelMatch] == id
			}
			if ours {
				cli.ContainerRemove(context.Background(), c.ID, container.RemoveOptions{Force: true, RemoveVolumes: true})
			}
		}
		exec.Command("docker", "network", "rm", clients, cluster).Run()
	})
	docker(t, "network", "create", "--label", "arena-test="+p, clients)
	docker(t, "network", "create", "--label", "arena-test="+p, cluster)

	// run starts a container of the platform image on the clients'
	// network, following its log.
	run := func(name string, opts []string, args ...string) *box {
		t.Helper()
		create := append([]string{"create", "--name", name, "--hostname", name, "--label", "arena-test=" + p, "--network", clients}, opts...)
		made = append(made, name)
		docker(t, append(append(create, img), args...)...)
		if strings.HasPrefix(name, p+"-n") {
			// The NATS nodes' routes go through a network of their own.
			docker(t, "network", "connect", "--alias", name+"-route", cluster, name)
		}
		docker(t, "start", name)
		b := &box{name: name, logs: &lockedBuffer{}}
		follow := exec.Command("docker", "logs", "-f", name)
		follow.Stdout, follow.Stderr = b.logs, b.logs
		if err := follow.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			follow.Process.Kill()
			follow.Wait()
			if t.Failed() {
				t.Logf("%s's log:\n%s", name, b.logs.String())
			}
		})
		return b
	}
	ipOf := func(name string) string {
		t.Helper()
		return docker(t, "inspect", "-f", fmt.Sprintf(`{{(index .NetworkSettings.Networks %q).IPAddress}}`, clients), name)
	}
	// What compose gives the arena service: the engine's socket, the host's
	// cgroups and pid namespace, the FIFO folder at the same path.
	arenaOpts := []string{"-v", "/var/run/docker.sock:/var/run/docker.sock",
		"-v", "/sys/fs/cgroup:/host/sys/fs/cgroup:ro", "-v", stdio + ":" + stdio, "--pid", "host",
		"-e", "ARENA_CGROUP_ROOT=/host/sys/fs/cgroup", "-e", "ARENA_STDIO_DIR=" + stdio}

	var hosts, routes []string
	for i := range 3 {
		hosts = append(hosts, fmt.Sprintf("%s-n%d:4222", p, i))
		routes = append(routes, fmt.Sprintf("%s-n%d-route:6222", p, i))
	}
	nodes := make([]*box, 3)
	for i := range 3 {
		nodes[i] = run(fmt.Sprintf("%s-n%d", p, i), nil, "nats", "--name", fmt.Sprintf("n%d", i), "--config", auth.conf,
			"--listen", "0.0.0.0:4222", "--cluster", "0.0.0.0:6222", "--routes", auth.routes(routes...),
			"--data", "/data", "--no-advertise")
	}
	for _, n := range nodes {
		awaitJetStream(t, auth.url(natsServerUser, ipOf(n.name)+":4222"))
	}
	srv := run(p+"-server", arenaOpts, "serve", "--host", "0.0.0.0", "--port", "5006", "--data", "/data",
		// The test reaches it at its address on the private network, as
		// the one user of local mode.
		"--hosts", "*", "--auth", "local",
		"--nats", auth.url(natsServerUser, hosts...), "--nats-ca", auth.ca,
		"--concurrency", "0", "--nats-replicas", "3", "--nats-lease", "2s", "--log-level", "info")
	s := &server{url: "http://" + ipOf(srv.name) + ":5006"}
	poll.Until(t, 30*time.Second, func() error {
		res, err := http.Get(s.url + "/healthz")
		if err != nil {
			return fmt.Errorf("the server did not come up: %v\n%s", err, srv.logs.String())
		}
		res.Body.Close()
		if res.StatusCode != 200 {
			return fmt.Errorf("the server did not come up: %s\n%s", res.Status, srv.logs.String())
		}
		return nil
	})
	workers := map[string]*box{}
	worker := func(n string) {
		name := p + "-" + n
		opts := append([]string{"-e", "ARENA_NATS=" + auth.url(name, hosts...), "-e", "ARENA_NATS_CA=" + auth.ca}, arenaOpts...)
		workers[name] = run(name, opts, "worker", "--concurrency", "1", "--name", name, "--log-level", "info")
	}
	worker("w1")
	worker("w2")
	post := func(bot string) string {
		t.Helper()
		id := s.post(t, fmt.Sprintf(`{"game":"tanks","bots":[%q,%q]}`, bot, bot))
		matches = append(matches, id)
		return id
	}
	holder := func(match string, attempt int) *box {
		t.Helper()
		var took *box
		poll.Until(t, 60*time.Second, func() error {
			for _, w := range workers {
				if w.took(match, attempt) {
					took = w
					return nil
				}
			}
			return fmt.Errorf("no worker took delivery %d of %s", attempt, match)
		})
		return took
	}
	// botsOf lists the match's bot containers started by the worker.
	botsOf := func(match string, w *box) []string {
		var ids []string
		for _, c := range dockertest.ArenaContainers(t, cli, match) {
			if o, err := sandbox.ParseOwner(c.Labels[sandbox.LabelOwner]); err == nil && o.Host == w.name {
				ids = append(ids, c.ID)
			}
		}
		return ids
	}
	waitBots := func(match string, w *box) []string {
		t.Helper()
		var ids []string
		poll.Until(t, 30*time.Second, func() error {
			if ids = botsOf(match, w); len(ids) != 2 {
				return fmt.Errorf("%s started no bots for %s (%d of 2)", w.name, match, len(ids))
			}
			return nil
		})
		return ids
	}
	finishedBy := func(id string, not *box) {
		t.Helper()
		m := s.waitStatus(t, id, "finished", "failed")
		res, _ := m["result"].(map[string]any)
		if m["status"] != "finished" || res == nil {
			t.Fatalf("match %s: %v", id, m)
		}
		if by := res["worker"]; by == not.name || by == nil {
			t.Errorf("match %s was played by %v", id, by)
		}
		dockertest.NoContainersLeftWithin(t, cli, id, overlapStop)
	}
	waitLog := func(b *box, what string) {
		t.Helper()
		poll.Until(t, 30*time.Second, func() error {
			if !strings.Contains(b.logs.String(), what) {
				return fmt.Errorf("%s never logged %q", b.name, what)
			}
			return nil
		})
	}

	t.Run("a worker container killed mid-match", func(t *testing.T) {
		id := post(slow[0])
		s.waitStatus(t, id, "running")
		dead := holder(id, 1)
		bots := waitBots(id, dead)
		docker(t, "kill", dead.name)
		delete(workers, dead.name)
		holder(id, 2)
		finishedBy(id, dead)
		for _, c := range bots {
			if _, err := cli.ContainerInspect(t.Context(), c); err == nil {
				t.Errorf("the dead worker's bot %.12s is still there", c)
			}
		}
		// A worker started on the host (here in the host's pid namespace,
		// as compose runs it) sweeps what the dead one left: its warm bots.
		worker("w3")
		poll.Until(t, 30*time.Second, func() error {
			var left []string
			for _, c := range dockertest.ArenaContainers(t, cli, "") {
				if o, _ := sandbox.ParseOwner(c.Labels[sandbox.LabelOwner]); o.Host == dead.name {
					left = append(left, strings.Join(c.Names, ",")+" ("+c.State+")")
				}
			}
			if len(left) != 0 {
				return fmt.Errorf("the dead worker's containers are still there: %s", strings.Join(left, "; "))
			}
			return nil
		})
	})

	t.Run("a worker container disconnected mid-match", func(t *testing.T) {
		id := post(slow[1])
		s.waitStatus(t, id, "running")
		cut := holder(id, 1)
		waitBots(id, cut)
		docker(t, "network", "disconnect", clients, cut.name)
		other := holder(id, 2)
		if other == cut {
			t.Fatal("the cut-off worker took the match again")
		}
		// Cut off, it gives the match up and stops its own bots.
		waitLog(cut, "match given up")
		poll.Until(t, 20*time.Second, func() error {
			running := 0
			for _, c := range dockertest.ArenaContainers(t, cli, id) {
				if o, _ := sandbox.ParseOwner(c.Labels[sandbox.LabelOwner]); o.Host == cut.name && c.State == "running" {
					running++
				}
			}
			if running != 0 {
				return fmt.Errorf("the cut-off worker's bots still run: %d", running)
			}
			return nil
		})
		// Back on the network while the match replays elsewhere: whatever
		// it still had to say about its delivery is refused.
		docker(t, "network", "connect", clients, cut.name)
		finishedBy(id, cut)
		if late := fmt.Sprintf(`late report refused: a later attempt started	{"match": %q, "attempt": 1, "worker": %q`, id, cut.name); strings.Contains(srv.logs.String(), late) {
			t.Logf("the server refused a late report of %s", cut.name)
		} else {
			t.Logf("%s sent no late report the server saw before the match ended", cut.name)
		}
	})

	t.Run("a NATS node container killed", func(t *testing.T) {
		id := post(slow[2])
		s.waitStatus(t, id, "running")
		docker(t, "kill", nodes[0].name)
		queued := []string{post(slow[2]), post(slow[2])} // queued while a node is down
		for _, id := range append([]string{id}, queued...) {
			if m := s.waitStatus(t, id, "finished", "failed"); m["status"] != "finished" {
				t.Fatalf("match %s: %v", id, m)
			}
			dockertest.NoContainersLeftWithin(t, cli, id, overlapStop)
		}
	})

	// Every worker left, the one cut off too, came back by itself: as
	// many long matches as workers, posted at once, are played one by each
	// (a worker plays one at a time).
	t.Run("every worker plays again", func(t *testing.T) {
		// Back means heard from: each says again how many it takes.
		poll.Until(t, 60*time.Second, func() error {
			res, err := http.Get(s.url + "/healthz")
			if err != nil {
				return err
			}
			defer res.Body.Close()
			var h struct {
				Workers []dispatch.WorkerStanding `json:"workers"`
			}
			if err := json.NewDecoder(res.Body).Decode(&h); err != nil {
				return err
			}
			for name := range workers {
				if !slices.ContainsFunc(h.Workers, func(w dispatch.WorkerStanding) bool { return w.Name == name && w.Slots > 0 }) {
					return fmt.Errorf("%s is not back: %+v", name, h.Workers)
				}
			}
			return nil
		})
		var ids []string
		for range workers {
			ids = append(ids, post(slow[1]))
		}
		by := map[any]bool{}
		for _, id := range ids {
			m := s.waitStatus(t, id, "finished", "failed")
			res, _ := m["result"].(map[string]any)
			if m["status"] != "finished" || res == nil {
				t.Fatalf("match %s: %v", id, m)
			}
			by[res["worker"]] = true
		}
		for name := range workers {
			if !by[name] {
				t.Errorf("%s played none of %d matches (played by %v)", name, len(ids), by)
			}
		}
	})

	// The history holds each match once, with one result.
	res, err := http.Get(s.url + "/api/matches?limit=100")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var list struct {
		Matches []struct{ ID, Status string }
	}
	json.NewDecoder(res.Body).Decode(&list)
	seen := map[string]int{}
	for _, m := range list.Matches {
		seen[m.ID]++
		if m.Status != "finished" {
			t.Errorf("match %s is %s", m.ID, m.Status)
		}
	}
	for _, id := range matches {
		if seen[id] != 1 {
			t.Errorf("match %s is %d times in the history", id, seen[id])
		}
	}
	if len(seen) != len(matches) {
		t.Errorf("%d matches in the history, want %d", len(seen), len(matches))
	}
	t.Logf("took %s", time.Since(started).Round(time.Second))
}
