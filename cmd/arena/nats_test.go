package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/client"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"arena/dispatch/trust"
	"arena/internal/testsupport/dockertest"
	"arena/internal/testsupport/poll"
)

// overlapStop bounds how long a match's containers may outlive its end
// through NATS: a delivery that overlapped the one whose result counted
// (JetStream may deliver a match again while its worker still plays it,
// as when a NATS node is lost) is stopped when its worker reports it.
const overlapStop = 30 * time.Second

// lockedBuffer is a process's stderr, read while it is written.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

type proc struct {
	name   string
	cmd    *exec.Cmd
	stderr *lockedBuffer
}

func startProc(t *testing.T, name, bin string, args ...string) *proc {
	t.Helper()
	return startProcEnv(t, name, nil, bin, args...)
}

// startProcEnv starts a process with more environment variables.
func startProcEnv(t *testing.T, name string, env []string, bin string, args ...string) *proc {
	t.Helper()
	p := &proc{name: name, cmd: exec.Command(bin, args...), stderr: &lockedBuffer{}}
	if env != nil {
		p.cmd.Env = append(os.Environ(), env...)
	}
	p.cmd.Stderr = p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.cmd.Process.Signal(syscall.SIGCONT)
		p.cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { p.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			p.cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("%s's log:\n%s", name, p.stderr.String())
		}
	})
	return p
}

func (p *proc) kill() {
	p.cmd.Process.Kill()
	p.cmd.Wait()
}

// took reports whether the worker took the match, at the delivery.
func (p *proc) took(match string, attempt int) bool {
	return strings.Contains(p.stderr.String(), fmt.Sprintf(`match taken	{"worker": %q, "match": %q, "attempt": %d}`, p.name, match, attempt))
}

// The real thing on this machine: a three-node NATS cluster (streams
// replicated ×3), a server that plays nothing itself and two workers,
// each a process of its own, with bots in Docker. A worker killed with
// kill -9 mid-match, a worker frozen past its lease, and a NATS node
// lost: every match is played once to its end, by a live worker, and the
// dead worker's containers are gone.
func TestWorkersThroughANATSCluster(t *testing.T) {
	cli := dockertest.Client(t)
	slow := ownTag(t, cli, dockertest.TestBot(t, cli, "delay=60ms"))
	bin := arenaBinary(t)

	// Set up as docs/many-hosts.md tells an operator: users with Arena's
	// permissions, a password on the routes, TLS.
	auth := newNATSAuth(t, bin, t.TempDir(), nil, "w1", "w2", "w3", "w4", "wp")
	var hosts, routes []string
	client, cluster := make([]int, 3), make([]int, 3)
	for i := range 3 {
		client[i], cluster[i] = freePort(t), freePort(t)
		hosts = append(hosts, fmt.Sprintf("127.0.0.1:%d", client[i]))
		routes = append(routes, fmt.Sprintf("127.0.0.1:%d", cluster[i]))
	}
	nodes := make([]*proc, 3)
	for i := range 3 {
		nodes[i] = startProc(t, fmt.Sprintf("nats-%d", i), bin, "nats", "--name", fmt.Sprintf("n%d", i), "--config", auth.conf,
			"--listen", hosts[i], "--cluster", routes[i],
			"--routes", auth.routes(routes...), "--data", t.TempDir(),
			// A worker given one address (through the proxy below) keeps to it.
			"--no-advertise")
	}
	for _, h := range hosts {
		awaitJetStream(t, auth.url(natsServerUser, h))
	}
	s := startServer(t, bin, t.TempDir(), freePort(t), "--nats", auth.url(natsServerUser, hosts...), "--nats-ca", auth.ca, "--concurrency", "0",
		"--nats-replicas", "3", "--nats-lease", "2s")
	workers := map[string]*proc{}
	workerAt := func(name string, hosts ...string) {
		workers[name] = startProcEnv(t, name, []string{"ARENA_NATS=" + auth.url(name, hosts...), "ARENA_NATS_CA=" + auth.ca},
			bin, "worker", "--concurrency", "1", "--name", name, "--log-level", "info")
	}
	worker := func(name string) { workerAt(name, hosts...) }
	worker("w1")
	worker("w2")
	holder := func(match string, attempt int) *proc {
		t.Helper()
		var took *proc
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
	body := fmt.Sprintf(`{"game":"tanks","bots":[%q,%q]}`, slow, slow)
	finishedBy := func(id string, not *proc) {
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

	t.Run("a worker killed mid-match", func(t *testing.T) {
		id := s.post(t, body)
		s.waitStatus(t, id, "running")
		dead := holder(id, 1)
		dead.kill()
		delete(workers, dead.name)
		if strings.Contains(dead.stderr.String(), "match played") {
			t.Fatalf("the server said match %s was running only after %s had played it: its events came late", id, dead.name)
		}
		holder(id, 2)
		finishedBy(id, dead)
		worker("w3")
	})

	t.Run("a worker cut off past its lease", func(t *testing.T) {
		id := s.post(t, body)
		s.waitStatus(t, id, "running")
		cut := holder(id, 1)
		cut.cmd.Process.Signal(syscall.SIGSTOP)
		other := holder(id, 2)
		cut.cmd.Process.Signal(syscall.SIGCONT)
		finishedBy(id, cut)
		if other == cut {
			t.Fatal("the cut-off worker took the match again")
		}
		// Back, it learns it lost the lease and stops its own bots.
		poll.Until(t, 30*time.Second, func() error {
			if !strings.Contains(cut.stderr.String(), "match given up") {
				return errors.New("the cut-off worker never gave the match up")
			}
			return nil
		})
	})

	t.Run("a worker whose network to NATS is cut", func(t *testing.T) {
		// The only worker left reaches NATS through a proxy the test cuts.
		px := newProxy(t, hosts[1])
		for name, w := range workers {
			w.cmd.Process.Signal(syscall.SIGTERM)
			w.cmd.Wait()
			delete(workers, name)
		}
		workerAt("wp", px.addr)
		id := s.post(t, body)
		s.waitStatus(t, id, "running")
		cut := holder(id, 1)
		worker("w4")
		px.cut(true)
		holder(id, 2)
		// Cut off, it gives the match up and stops its own bots.
		poll.Until(t, 30*time.Second, func() error {
			if !strings.Contains(cut.stderr.String(), "match given up") {
				return errors.New("the cut-off worker never gave the match up")
			}
			return nil
		})
		px.cut(false)
		finishedBy(id, cut)
	})

	t.Run("a NATS node lost", func(t *testing.T) {
		id := s.post(t, body)
		s.waitStatus(t, id, "running")
		nodes[0].kill()
		waiting := s.post(t, body) // queued while a node is down
		m := s.waitStatus(t, id, "finished", "failed")
		if m["status"] != "finished" {
			t.Fatalf("match %s: %v", id, m)
		}
		if m := s.waitStatus(t, waiting, "finished", "failed"); m["status"] != "finished" {
			t.Fatalf("match %s: %v", waiting, m)
		}
	})

	// The history holds each match once.
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
	}
	for id, n := range seen {
		if n != 1 {
			t.Errorf("match %s is %s times in the history", id, strconv.Itoa(n))
		}
	}
	if len(seen) != 5 {
		t.Errorf("%d matches in the history, want 5", len(seen))
	}
}

// arena bench --nats spreads a tournament's matches over the workers and
// still prints the table and writes the CSV.
func TestBenchThroughNATS(t *testing.T) {
	cli := dockertest.Client(t)
	bots := dockertest.ExampleBots(t, cli)
	bots = []string{ownTag(t, cli, bots[0]), ownTag(t, cli, bots[1])}
	bin := arenaBinary(t)
	auth := newNATSAuth(t, bin, t.TempDir(), nil, "w1")
	host := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	startProc(t, "nats", bin, "nats", "--name", "bench", "--config", auth.conf, "--listen", host, "--data", t.TempDir())
	startProcEnv(t, "w1", []string{"ARENA_NATS=" + auth.url("w1", host), "ARENA_NATS_CA=" + auth.ca}, bin, "worker", "--concurrency", "2", "--name", "w1")
	csv := t.TempDir() + "/out.csv"
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(bin, "bench", "--nats", auth.url(natsServerUser, host), "--bots", bots[0]+","+bots[1], "--repeats", "2", "--jobs", "2", "--out", csv)
	cmd.Env = append(os.Environ(), "ARENA_NATS_CA="+auth.ca)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("arena bench --nats: %v\n%s\n%s", err, stdout.String(), stderr.String())
	}
	if !strings.Contains(stdout.String(), bots[0]) || !strings.Contains(stdout.String(), "2 match(es) written") {
		t.Errorf("bench output:\n%s", stdout.String())
	}
}

// proxy forwards TCP connections to a NATS node until it is cut: then
// it drops every connection and refuses new ones (a network partition).
type proxy struct {
	addr string
	mu   sync.Mutex
	down bool
	open []net.Conn
}

func newProxy(t *testing.T, target string) *proxy {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	p := &proxy{addr: l.Addr().String()}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			p.mu.Lock()
			if p.down {
				p.mu.Unlock()
				c.Close()
				continue
			}
			up, err := net.Dial("tcp", target)
			if err != nil {
				p.mu.Unlock()
				c.Close()
				continue
			}
			p.open = append(p.open, c, up)
			p.mu.Unlock()
			go func() { io.Copy(up, c); up.Close() }()
			go func() { io.Copy(c, up); c.Close() }()
		}
	}()
	return p
}

func (p *proxy) cut(down bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = down
	if down {
		for _, c := range p.open {
			c.Close()
		}
		p.open = nil
	}
}

// ownTag tags an image for this test alone (removed at its end), so the
// matches through NATS, which pin images by id, never lose theirs to
// another test that builds the same tag again meanwhile.
func ownTag(t *testing.T, cli *client.Client, ref string) string {
	t.Helper()
	var b [4]byte
	rand.Read(b[:])
	tag := fmt.Sprintf("arena-nats-test-%x/bot:latest", b)
	if err := cli.ImageTag(t.Context(), ref, tag); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cli.ImageRemove(context.Background(), tag, image.RemoveOptions{})
	})
	return tag
}

// A server that plays nothing itself needs workers a way in.
func TestServeWithoutPlayers(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := runMain(t.Context(), []string{"serve", "--concurrency", "0", "--data", t.TempDir()}, &stdout, &stderr)
	if code != exitUsage || !strings.Contains(stderr.String(), "ARENA_NATS_LISTEN") {
		t.Errorf("exit %d: %s", code, stderr.String())
	}
}

// awaitJetStream waits until JetStream answers through the NATS node at
// url (a cluster is up once it does through every node), failing after a
// minute.
func awaitJetStream(t *testing.T, url string) {
	t.Helper()
	// A probe of the test's: the node's certificate is not checked.
	nc, err := trust.Dial(url, "test", trust.DialOptions{Extra: []nats.Option{nats.Secure(&tls.Config{InsecureSkipVerify: true})}})
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	poll.Until(t, 60*time.Second, func() error {
		ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
		defer cancel()
		if _, err := js.AccountInfo(ctx); err != nil {
			return fmt.Errorf("the NATS cluster did not come up: %v", err)
		}
		return nil
	})
}

// natsServerUser is the server's user in the tests' NATS configurations.
const natsServerUser = "arena"

// natsAuth is a test's NATS configuration, made with the commands the
// docs/many-hosts.md gives an operator: arena nats tls (a CA and the nodes'
// certificate for names, beside localhost and 127.0.0.1) and arena nats
// authorization (a server's user, and a user with a worker's permissions
// for each worker), with a password on the routes.
type natsAuth struct {
	conf, ca  string
	dir       string // the CA's and the certificate's
	text      string // the configuration
	pass      map[string]string
	routePass string
}

func newNATSAuth(t *testing.T, bin, dir string, names []string, workers ...string) *natsAuth {
	t.Helper()
	secret := func() string {
		var b [12]byte
		rand.Read(b[:])
		return fmt.Sprintf("%x", b)
	}
	a := &natsAuth{dir: filepath.Join(dir, "tls"), ca: filepath.Join(dir, "tls", "ca.crt"), conf: filepath.Join(dir, "nats.conf"),
		pass: map[string]string{natsServerUser: secret()}, routePass: secret()}
	args := []string{"nats", "authorization", "--server", natsServerUser + "=" + a.pass[natsServerUser]}
	for _, w := range workers {
		a.pass[w] = secret()
		args = append(args, "--worker", w+"="+a.pass[w])
	}
	out := func(args ...string) string {
		t.Helper()
		b, err := exec.Command(bin, args...).Output()
		if err != nil {
			t.Fatalf("arena %s: %v", strings.Join(args, " "), err)
		}
		return string(b)
	}
	a.text = out(args...) + out("nats", "tls", "--dir", a.dir, "--names", strings.Join(names, ",")) +
		fmt.Sprintf("cluster {\n  authorization {\n    user: route\n    password: %q\n  }\n}\n", a.routePass)
	if err := os.WriteFile(a.conf, []byte(a.text), 0o600); err != nil {
		t.Fatal(err)
	}
	return a
}

// url is the comma-separated URLs of hosts as user.
func (a *natsAuth) url(user string, hosts ...string) string {
	us := make([]string, len(hosts))
	for i, h := range hosts {
		us[i] = fmt.Sprintf("nats://%s:%s@%s", user, a.pass[user], h)
	}
	return strings.Join(us, ",")
}

// routes is the comma-separated route URLs of hosts.
func (a *natsAuth) routes(hosts ...string) string {
	us := make([]string, len(hosts))
	for i, h := range hosts {
		us[i] = fmt.Sprintf("nats-route://route:%s@%s", a.routePass, h)
	}
	return strings.Join(us, ",")
}
