package main

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"arena/internal/testsupport/dockertest"
)

// Joining a worker is one command on each side: arena join-token on the
// server's host, arena worker --join TOKEN on the worker's. The worker
// keeps its own key: it comes back without the token, and after the
// token is rotated. A wrong token, a rotated one and a revoked worker end
// with one line saying why (exit 1).
func TestAWorkerJoinsWithOneCommand(t *testing.T) {
	cli := dockertest.Client(t)
	bot := ownTag(t, cli, dockertest.TestBot(t, cli, "delay=1ms"))
	bin := arenaBinary(t)
	data := t.TempDir()
	natsAddr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	metricsAddr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	s := startServer(t, bin, data, freePort(t), "--concurrency", "0", "--nats-listen", natsAddr, "--metrics-listen", metricsAddr)
	url := "nats://" + natsAddr
	joinToken := func(args ...string) string {
		t.Helper()
		out, err := exec.Command(bin, append([]string{"join-token", "--data", data}, args...)...).Output()
		if err != nil {
			t.Fatalf("arena join-token %v: %v", args, err)
		}
		return strings.TrimSpace(string(out))
	}
	tok := joinToken()
	if !strings.HasPrefix(tok, "ARENA-1-") {
		t.Fatalf("token %q", tok)
	}
	// The metrics, on their own address, without sign-in: no worker yet.
	if v, ok := scrapedMetric(t, metricsAddr, `arena_workers{state="joined"}`); !ok || v != 0 {
		t.Errorf("workers joined before any: %v %v", v, ok)
	}
	wdata := t.TempDir()
	w := startProc(t, "w1", bin, "worker", "--nats", url, "--join", tok, "--data", wdata, "--name", "w1", "--concurrency", "1", "--log-level", "info")
	id := s.post(t, fmt.Sprintf(`{"game":"tanks","bots":[%q,%q]}`, bot, bot))
	if m := s.waitStatus(t, id, "finished", "failed"); m["status"] != "finished" {
		t.Fatalf("match %s: %v", id, m)
	}
	// The worker joined and played it: the metrics moved.
	for series, want := range map[string]float64{`arena_workers{state="joined"}`: 1, `arena_matches_ended_total{game="tanks",kind="hand",status="finished"}`: 1,
		`arena_matches_started_total{game="tanks",kind="hand"}`: 1, `arena_containers{state="playing"}`: 0} {
		if v, ok := scrapedMetric(t, metricsAddr, series); !ok || v != want {
			t.Errorf("%s = %v (%v), want %v", series, v, ok, want)
		}
	}
	if v, _ := scrapedMetric(t, metricsAddr, `arena_answer_seconds_count{game="tanks"}`); v < 2 {
		t.Errorf("%v answers counted", v)
	}
	w.cmd.Process.Signal(syscall.SIGTERM)
	w.cmd.Wait()

	// It comes back without the token, after a rotation too.
	joinToken("--rotate")
	w = startProc(t, "w1", bin, "worker", "--nats", url, "--data", wdata, "--concurrency", "1", "--log-level", "info")
	id = s.post(t, fmt.Sprintf(`{"game":"tanks","bots":[%q,%q]}`, bot, bot))
	if m := s.waitStatus(t, id, "finished", "failed"); m["status"] != "finished" {
		t.Fatalf("match %s after the rotation: %v", id, m)
	}
	if list := joinToken("--workers"); !strings.Contains(list, "w1") {
		t.Errorf("arena join-token --workers:\n%s", list)
	}

	// Refused: one line, exit 1.
	refused := func(what, want string, code int, args ...string) {
		t.Helper()
		cmd := exec.Command(bin, append([]string{"worker", "--nats", url, "--data", t.TempDir(), "--concurrency", "1"}, args...)...)
		done := make(chan struct{})
		var out []byte
		var err error
		go func() { out, err = cmd.CombinedOutput(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			<-done
			t.Fatalf("%s: the worker did not end: %s", what, out)
		}
		var ee *exec.ExitError
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		if !errors.As(err, &ee) || ee.ExitCode() != code || len(lines) != 1 || !strings.Contains(lines[0], want) {
			t.Errorf("%s: %v, output:\n%s", what, err, out)
		}
	}
	refused("the rotated token", "could not join", 1, "--join", tok, "--name", "w2")
	refused("a token of another server", "CA", 1, "--join", "ARENA-1-"+strings.Repeat("ab", 32)+"-"+strings.Repeat("cd", 32), "--name", "w2")
	refused("a malformed token", "not an Arena join token", 2, "--join", "nonsense", "--name", "w2")

	// Revoked while it runs: it ends, saying why.
	joinToken("--revoke", "w1")
	if err := waitExit(w, 20*time.Second); err == nil || !strings.Contains(w.stderr.String(), "NATS closed the connection") {
		t.Errorf("the revoked worker: %v\n%s", err, w.stderr.String())
	}
	// And stays out.
	cmd := exec.Command(bin, "worker", "--nats", url, "--data", wdata, "--concurrency", "1")
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "revoked") {
		t.Errorf("the revoked worker came back: %v\n%s", err, out)
	}

	// No one else gets in over TLS without a key.
	if nc, err := nats.Connect(url, nats.NoReconnect(), nats.Secure(&tls.Config{InsecureSkipVerify: true})); err == nil {
		nc.Close()
		t.Error("an outsider connected")
	}
}

// scrapedMetric scrapes the metrics served on addr without sign-in
// (ARENA_METRICS_LISTEN) and returns one series' value.
func scrapedMetric(t testing.TB, addr, series string) (float64, bool) {
	t.Helper()
	res, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return seriesValue(string(body), series)
}

// seriesValue finds one series (its labels in name order, as the format
// writes them) in a scrape of Prometheus's text format.
func seriesValue(scrape, series string) (float64, bool) {
	for _, line := range strings.Split(scrape, "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			return f, err == nil
		}
	}
	return 0, false
}

func waitExit(p *proc, within time.Duration) error {
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(within):
		return errors.New("still running")
	}
}

// arena nats will not run without users, and an arena nats set up as
// docs/many-hosts.md says lets no outsider in, in plain text or over TLS, and
// denies a worker's user what a worker does not do.
func TestAnArenaNATSAsDocumentedLetsNoOutsiderIn(t *testing.T) {
	bin := arenaBinary(t)
	out, err := exec.Command(bin, "nats", "--listen", "127.0.0.1:0", "--data", t.TempDir()).CombinedOutput()
	if ee := (*exec.ExitError)(nil); !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(string(out), "--config") {
		t.Errorf("arena nats without a config: %v\n%s", err, out)
	}
	open := writeFile(t, "open.conf", "port: 4222\n")
	out, err = exec.Command(bin, "nats", "--config", open, "--listen", "127.0.0.1:0", "--data", t.TempDir()).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "no users") {
		t.Errorf("arena nats with a config without users: %v\n%s", err, out)
	}

	auth := newNATSAuth(t, bin, t.TempDir(), nil, "w1")
	host := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	startProc(t, "nats", bin, "nats", "--name", "doc", "--config", auth.conf, "--listen", host, "--data", t.TempDir())
	awaitJetStream(t, auth.url(natsServerUser, host))
	for name, opts := range map[string][]nats.Option{
		"plain":               {nats.Secure(&tls.Config{InsecureSkipVerify: true})},
		"tls, no credentials": {nats.RootCAs(auth.ca)},
	} {
		u := "nats://" + host
		if nc, err := nats.Connect(u, append(opts, nats.NoReconnect())...); err == nil || !errors.Is(err, nats.ErrAuthorization) {
			if nc != nil {
				nc.Close()
			}
			t.Errorf("%s: got %v, want an authorization violation", name, err)
		}
	}
	// A plain client (nats.go would upgrade to TLS): the server wants TLS.
	nc, err := nats.Connect("nats://"+host, nats.NoReconnect())
	if err == nil {
		nc.Close()
		t.Error("a client that does not trust the CA connected")
	}
	// A worker's user may not publish a job.
	denied := make(chan error, 4)
	nc, err = nats.Connect(auth.url("w1", host), nats.RootCAs(auth.ca), nats.NoReconnect(), nats.CustomInboxPrefix("_INBOX_w1"),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) { denied <- err }))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.Publish("arena.matches.hhhhhhhhhhh2", []byte("{}"))
	select {
	case err := <-denied:
		if !strings.Contains(strings.ToLower(err.Error()), "permissions violation") {
			t.Errorf("got %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Error("a worker's user published a job")
	}
}
