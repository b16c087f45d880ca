package dispatch

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap/zaptest"

	"arena/engine"
	"arena/engine/snake"
	"arena/orchestrator"
	"arena/orchestrator/fake"
)

// secured is arena serve's embedded NATS server: a listener on loopback,
// TLS and the trust folder's users, with the work queue set up and a
// dispatcher on it (in-process).
type secured struct {
	*rig
	trust *Trust
	url   string
}

func newSecured(t *testing.T, opts ...func(*DispatcherConfig)) *secured {
	t.Helper()
	trust, err := OpenTrust(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	ns, err := Start(Node{Name: "secured", Dir: t.TempDir(), Listen: addr, Trust: trust, Log: zaptest.NewLogger(t).Named("nats")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ns.Stop)
	nc := connect(t, ns)
	js, _ := jetstream.New(nc)
	if err := Setup(t.Context(), js, Config{}); err != nil {
		t.Fatal(err)
	}
	cfg := DispatcherConfig{Name: "server", Log: zaptest.NewLogger(t).Named("dispatcher")}
	for _, o := range opts {
		o(&cfg)
	}
	d, err := NewDispatcherWith(t.Context(), nc, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	return &secured{rig: &rig{t: t, ns: ns, d: d, js: js, sent: map[string][2]string{}}, trust: trust, url: "nats://" + addr}
}

func (s *secured) token() JoinToken {
	s.t.Helper()
	tok, err := s.trust.Token()
	if err != nil {
		s.t.Fatal(err)
	}
	jt, err := ParseToken(tok)
	if err != nil {
		s.t.Fatal(err)
	}
	return jt
}

// join joins a worker of that name, its key kept in a folder of its own.
func (s *secured) join(name string) *Credentials {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(s.t.Context(), 20*time.Second)
	defer cancel()
	c, err := Join(ctx, s.url, s.token(), name, s.t.TempDir())
	if err != nil {
		s.t.Fatal(err)
	}
	return c
}

// remoteWorker runs a worker over the network with its credentials.
func (s *secured) remoteWorker(c *Credentials, cfg WorkerConfig) {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(s.t.Context(), 20*time.Second)
	defer cancel()
	nc, err := DialWorker(ctx, s.url, c)
	if err != nil {
		s.t.Fatal(err)
	}
	s.t.Cleanup(nc.Close)
	// What a worker does, NATS lets it do.
	nc.SetErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
		s.t.Errorf("worker %s: NATS: %v", c.Name, err)
	})
	cfg.Name, cfg.Games = c.Name, []engine.Game{snake.New()}
	if cfg.Player == nil {
		cfg.Player = orchestrator.New(fake.NewLauncher(bots(nil)))
	}
	cfg.Log = zaptest.NewLogger(s.t).Named(c.Name)
	w, err := NewWorker(nc, cfg)
	if err != nil {
		s.t.Fatal(err)
	}
	wctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := w.Run(wctx); err != nil {
			s.t.Error(err)
		}
	}()
	s.t.Cleanup(func() { stop(); <-done })
}

// An outsider is refused at connect: in plain text (TLS is required),
// over TLS without credentials or with guessed ones, and even with the
// server's own password (it is good in-process only).
func TestAnOutsiderIsRefusedAtConnect(t *testing.T) {
	s := newSecured(t)
	t.Run("plain", func(t *testing.T) {
		// A client that speaks NATS without TLS (nats.go would upgrade).
		c, err := net.DialTimeout("tcp", strings.TrimPrefix(s.url, "nats://"), 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(10 * time.Second))
		r := bufio.NewReader(c)
		info, err := r.ReadString('\n')
		if err != nil || !strings.Contains(info, `"tls_required":true`) {
			t.Fatalf("INFO %q: %v", info, err)
		}
		fmt.Fprint(c, "CONNECT {\"verbose\":false,\"pedantic\":false}\r\nPING\r\n")
		for {
			line, err := r.ReadString('\n')
			if strings.HasPrefix(line, "PONG") {
				t.Fatal("a plain client was let in")
			}
			if err != nil {
				return // the server hung up
			}
		}
	})
	insecure := nats.Secure(&tls.Config{InsecureSkipVerify: true})
	for name, opts := range map[string][]nats.Option{
		"tls, no credentials":            {insecure},
		"tls, a guessed join secret":     {insecure, nats.UserInfo(joinUser, strings.Repeat("a", 64))},
		"tls, the server's own password": {insecure, nats.UserInfo(serverUser, s.ns.serverPass)},
	} {
		t.Run(name, func(t *testing.T) {
			nc, err := nats.Connect(s.url, append(opts, nats.NoReconnect(), nats.Timeout(5*time.Second))...)
			if err == nil {
				nc.Close()
				t.Fatal("connected")
			}
			if !errors.Is(err, nats.ErrAuthorization) {
				t.Errorf("got %v, want an authorization violation", err)
			}
		})
	}
}

// A joined worker plays matches (a big replay through its own bucket
// too), and NATS denies it everything a worker does not do; the matches
// play on.
func TestAWorkerMayDoOnlyWhatAWorkerDoes(t *testing.T) {
	s := newSecured(t)
	w1 := s.join("w1")
	s.remoteWorker(w1, WorkerConfig{InlineMax: 1})
	play := func(id string) {
		t.Helper()
		rep, err := s.d.Play(t.Context(), request(t, id, nil))
		if err != nil {
			t.Fatal(err)
		}
		if rep.Result.Worker != "w1" {
			t.Fatalf("played by %q", rep.Result.Worker)
		}
	}
	play("ggggggggggg1")
	// It says how many matches it takes, under its own name.
	waitFor(t, "the worker's slots count", func() bool { return s.d.Slots() == 1 })

	// The worker's credentials in another's hands.
	var mu sync.Mutex
	var denied []string
	extra, err := w1.Options()
	if err != nil {
		t.Fatal(err)
	}
	nc, err := nats.Connect(s.url, append(extra, nats.NoReconnect(), nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
		mu.Lock()
		denied = append(denied, err.Error())
		mu.Unlock()
	}))...)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	wasDenied := func(what, subject string) {
		t.Helper()
		want := fmt.Sprintf("permissions violation for %s", what)
		for start := time.Now(); time.Since(start) < 5*time.Second; time.Sleep(20 * time.Millisecond) {
			mu.Lock()
			for _, d := range denied {
				if strings.Contains(strings.ToLower(d), want) && strings.Contains(d, subject) {
					mu.Unlock()
					return
				}
			}
			mu.Unlock()
		}
		t.Errorf("NATS did not deny %s %s (denied: %q)", what, subject, denied)
	}
	js, _ := jetstream.New(nc)
	short := func() context.Context {
		ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
		t.Cleanup(cancel)
		return ctx
	}

	// Publish a job.
	nc.Publish(jobSubject("hhhhhhhhhhh1"), []byte(`{"v":2,"match":"hhhhhhhhhhh1","game":"snake"}`))
	wasDenied("publish", jobSubject("hhhhhhhhhhh1"))
	// Report as another worker.
	nc.Publish(eventSubject("w2", kindResult, "ggggggggggg1"), []byte(`{}`))
	wasDenied("publish", eventSubject("w2", kindResult, "ggggggggggg1"))
	// Show live frames as another worker.
	nc.Publish(liveSubject("w2", "ggggggggggg1"), []byte(`{}`))
	wasDenied("publish", liveSubject("w2", "ggggggggggg1"))
	// Say how many matches another worker takes.
	nc.Publish(slotsSubject("w2"), []byte(`{"v":2,"worker":"w2","slots":1000}`))
	wasDenied("publish", slotsSubject("w2"))
	// Hear the other workers' live frames.
	nc.Subscribe(livePrefix+">", func(*nats.Msg) {})
	wasDenied("subscription", livePrefix+">")
	// Ask for images as another worker (they would go to its bucket).
	nc.Publish(imageSubject("w2"), []byte(`{"v":2,"id":"sha256:`+strings.Repeat("a", 64)+`"}`))
	wasDenied("publish", imageSubject("w2"))
	// Listen to everything, or to the other workers' events.
	nc.Subscribe("arena.>", func(*nats.Msg) {})
	wasDenied("subscription", "arena.>")
	nc.Subscribe(eventsPrefix+">", func(*nats.Msg) {})
	wasDenied("subscription", eventsPrefix+">")
	nc.Subscribe("_INBOX.>", func(*nats.Msg) {})
	wasDenied("subscription", "_INBOX.>")
	// Delete or purge a stream, make a consumer, read another's bucket.
	if err := js.DeleteStream(short(), MatchesStream); err == nil {
		t.Error("the worker deleted the work queue")
	}
	wasDenied("publish", "$JS.API.STREAM.DELETE."+MatchesStream)
	if _, err := js.CreateOrUpdateConsumer(short(), EventsStream, jetstream.ConsumerConfig{Durable: "spy"}); err == nil {
		t.Error("the worker made a consumer of the events")
	}
	wasDenied("publish", "$JS.API.CONSUMER.CREATE."+EventsStream)
	if _, err := js.CreateOrUpdateConsumer(short(), MatchesStream, jetstream.ConsumerConfig{Durable: "thief"}); err == nil {
		t.Error("the worker made a consumer of the work queue")
	}
	wasDenied("publish", "$JS.API.CONSUMER.CREATE."+MatchesStream)
	if err := js.DeleteConsumer(short(), MatchesStream, ConsumerName); err == nil {
		t.Error("the worker deleted the workers' consumer")
	}
	wasDenied("publish", "$JS.API.CONSUMER.DELETE."+MatchesStream)
	if _, err := js.ObjectStore(short(), bucketOf("w2")); err == nil {
		t.Error("the worker opened another worker's bucket")
	}
	wasDenied("publish", "$JS.API.STREAM.INFO.OBJ_"+bucketOf("w2"))
	if _, err := js.CreateObjectStore(short(), jetstream.ObjectStoreConfig{Bucket: bucketOf("w1") + "x"}); err == nil {
		t.Error("the worker made a stream")
	}
	wasDenied("publish", "$JS.API.STREAM.CREATE.")

	// Nothing of it took effect, and matches play on.
	if st, err := s.js.Stream(t.Context(), MatchesStream); err != nil {
		t.Errorf("the work queue: %v", err)
	} else if n := st.CachedInfo().State.Msgs; n != 0 {
		t.Errorf("%d jobs in the work queue", n)
	}
	play("ggggggggggg2")
}

// A wrong token, or a token of another server, joins nothing; a token
// rotated joins no more, while a worker that joined keeps its own key; a
// worker revoked (by another process, as arena join-token does) or
// quarantined is disconnected and refused.
func TestJoinTokensAndKeys(t *testing.T) {
	s := newSecured(t)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	good := s.token()
	refusedJoin := func(what string, tok JoinToken, name string) error {
		t.Helper()
		_, err := Join(ctx, s.url, tok, name, t.TempDir())
		if !errors.Is(err, ErrRefused) {
			t.Fatalf("%s: got %v, want refused", what, err)
		}
		return err
	}
	refusedJoin("a wrong secret", JoinToken{CAHash: good.CAHash, Secret: strings.Repeat("0", 64)}, "w9")
	if err := refusedJoin("another server's CA", JoinToken{CAHash: strings.Repeat("0", 64), Secret: good.Secret}, "w9"); !strings.Contains(err.Error(), "CA") {
		t.Errorf("the refusal does not name the CA: %v", err)
	}

	w1 := s.join("w1")
	if err := refusedJoin("a name taken", good, "w1"); !strings.Contains(err.Error(), "taken") {
		t.Errorf("the refusal does not say the name is taken: %v", err)
	}
	if _, err := s.trust.Rotate(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the rotated token is refused", func() bool {
		_, err := Join(ctx, s.url, good, "w2", t.TempDir())
		return errors.Is(err, ErrRefused)
	})
	nc, err := DialWorker(ctx, s.url, w1)
	if err != nil {
		t.Fatalf("a joined worker after the rotation: %v", err)
	}
	closed := make(chan struct{})
	nc.SetClosedHandler(func(*nats.Conn) { close(closed) })
	nc.SetReconnectHandler(nil)

	// Revoked from another process: disconnected, and refused.
	other, err := OpenTrust(s.trust.Dir())
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := other.Revoke("w1"); !ok || err != nil {
		t.Fatalf("revoke: %v %v", ok, err)
	}
	waitFor(t, "the revoked worker is refused", func() bool {
		_, err := DialWorker(ctx, s.url, w1)
		return errors.Is(err, ErrRefused)
	})
	select {
	case <-closed:
	case <-time.After(20 * time.Second):
		t.Error("the revoked worker's connection is still open")
	}

	// Quarantined: the same.
	w3 := s.join("w3")
	if err := s.ns.Quarantine("w3", "a test"); err != nil {
		t.Fatal(err)
	}
	if _, err := DialWorker(ctx, s.url, w3); !errors.Is(err, ErrRefused) {
		t.Errorf("the quarantined worker: got %v, want refused", err)
	}
	if err := refusedJoin("a quarantined worker joining again", s.token(), "w3"); !strings.Contains(err.Error(), "quarantined") {
		t.Errorf("the refusal does not say quarantined: %v", err)
	}
}

// A server may present the operator's certificate instead of its own:
// join tokens then pin the operator's CA, and workers join and play.
func TestTheOperatorsCertificate(t *testing.T) {
	operator, err := OpenTrust(t.TempDir(), "arena.example")
	if err != nil {
		t.Fatal(err)
	}
	trust, err := OpenTrust(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	// A file without its CA is refused, naming what is missing.
	leafOnly := filepath.Join(t.TempDir(), "leaf.crt")
	chain, _ := os.ReadFile(operator.CertFile())
	leaf, _ := pem.Decode(chain)
	os.WriteFile(leafOnly, pem.EncodeToMemory(leaf), 0o644)
	if err := trust.UseCertificate(leafOnly, operator.KeyFile()); err == nil || !strings.Contains(err.Error(), "no CA") {
		t.Errorf("a certificate without its CA: got %v", err)
	}
	if err := trust.UseCertificate(operator.CertFile(), operator.KeyFile()); err != nil {
		t.Fatal(err)
	}
	opCA, _ := operator.CAPEM()
	want, _ := CAHash(opCA)
	tok, err := trust.Token()
	if err != nil {
		t.Fatal(err)
	}
	if jt, _ := ParseToken(tok); jt.CAHash != want {
		t.Fatalf("the token pins %s, want the operator's CA %s", jt.CAHash, want)
	}
	// arena join-token, another process, prints the same.
	again, _ := OpenTrust(trust.Dir())
	if tok2, _ := again.Token(); tok2 != tok {
		t.Errorf("another process's token differs")
	}
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := l.Addr().String()
	l.Close()
	ns, err := Start(Node{Name: "operator", Dir: t.TempDir(), Listen: addr, Trust: trust})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ns.Stop)
	jt, _ := ParseToken(tok)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	c, err := Join(ctx, "nats://"+addr, jt, "w1", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	nc, err := DialWorker(ctx, "nats://"+addr, c)
	if err != nil {
		t.Fatal(err)
	}
	nc.Close()
	// Back to Arena's own: tokens pin its CA again.
	if err := trust.UseCertificate("", ""); err != nil {
		t.Fatal(err)
	}
	own, _ := os.ReadFile(trust.CAFile())
	ownHash, _ := CAHash(own)
	if tok, _ := trust.Token(); !strings.Contains(tok, ownHash) {
		t.Errorf("after the operator's certificate is dropped the token still pins it")
	}
}
