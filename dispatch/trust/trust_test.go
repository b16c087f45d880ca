package trust_test

import (
	"context"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"

	"arena/dispatch/natsd"
	"arena/dispatch/trust"
	"arena/internal/testsupport/natstest"
	"arena/internal/testsupport/poll"
)

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	poll.Until(t, 20*time.Second, func() error {
		if !ok() {
			return fmt.Errorf("waiting until %s", what)
		}
		return nil
	})
}

// A wrong token, or a token of another server, joins nothing; a token
// rotated joins no more, while a worker that joined keeps its own key; a
// worker revoked (by another process, as arena join-token does) or
// quarantined is disconnected and refused.
func TestJoinTokensAndKeys(t *testing.T) {
	s := natstest.Secured(t)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	good := s.Token()
	refusedJoin := func(what string, tok trust.JoinToken, name string) error {
		t.Helper()
		_, err := trust.Join(ctx, s.URL, tok, name, t.TempDir())
		if !errors.Is(err, trust.ErrRefused) {
			t.Fatalf("%s: got %v, want refused", what, err)
		}
		return err
	}
	refusedJoin("a wrong secret", trust.JoinToken{CAHash: good.CAHash, Secret: strings.Repeat("0", 64)}, "w9")
	if err := refusedJoin("another server's CA", trust.JoinToken{CAHash: strings.Repeat("0", 64), Secret: good.Secret}, "w9"); !strings.Contains(err.Error(), "CA") {
		t.Errorf("the refusal does not name the CA: %v", err)
	}

	w1 := s.Join("w1")
	if err := refusedJoin("a name taken", good, "w1"); !strings.Contains(err.Error(), "taken") {
		t.Errorf("the refusal does not say the name is taken: %v", err)
	}
	if _, err := s.Trust.Rotate(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the rotated token is refused", func() bool {
		_, err := trust.Join(ctx, s.URL, good, "w2", t.TempDir())
		return errors.Is(err, trust.ErrRefused)
	})
	nc, err := trust.DialWorker(ctx, s.URL, w1)
	if err != nil {
		t.Fatalf("a joined worker after the rotation: %v", err)
	}
	closed := make(chan struct{})
	nc.SetClosedHandler(func(*nats.Conn) { close(closed) })
	nc.SetReconnectHandler(nil)

	// Revoked from another process: disconnected, and refused.
	other, err := trust.OpenTrust(s.Trust.Dir())
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := other.Revoke("w1"); !ok || err != nil {
		t.Fatalf("revoke: %v %v", ok, err)
	}
	waitFor(t, "the revoked worker is refused", func() bool {
		_, err := trust.DialWorker(ctx, s.URL, w1)
		return errors.Is(err, trust.ErrRefused)
	})
	select {
	case <-closed:
	case <-time.After(20 * time.Second):
		t.Error("the revoked worker's connection is still open")
	}

	// Quarantined: the same.
	w3 := s.Join("w3")
	if err := s.NS.Quarantine("w3", "a test"); err != nil {
		t.Fatal(err)
	}
	if _, err := trust.DialWorker(ctx, s.URL, w3); !errors.Is(err, trust.ErrRefused) {
		t.Errorf("the quarantined worker: got %v, want refused", err)
	}
	if err := refusedJoin("a quarantined worker joining again", s.Token(), "w3"); !strings.Contains(err.Error(), "quarantined") {
		t.Errorf("the refusal does not say quarantined: %v", err)
	}
}

// A server may present the operator's certificate instead of its own:
// join tokens then pin the operator's CA, and workers join and play.
func TestTheOperatorsCertificate(t *testing.T) {
	operator, err := trust.OpenTrust(t.TempDir(), "arena.example")
	if err != nil {
		t.Fatal(err)
	}
	tr, err := trust.OpenTrust(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	// A file without its CA is refused, naming what is missing.
	leafOnly := filepath.Join(t.TempDir(), "leaf.crt")
	chain, _ := os.ReadFile(operator.CertFile())
	leaf, _ := pem.Decode(chain)
	os.WriteFile(leafOnly, pem.EncodeToMemory(leaf), 0o644)
	if err := tr.UseCertificate(leafOnly, operator.KeyFile()); err == nil || !strings.Contains(err.Error(), "no CA") {
		t.Errorf("a certificate without its CA: got %v", err)
	}
	if err := tr.UseCertificate(operator.CertFile(), operator.KeyFile()); err != nil {
		t.Fatal(err)
	}
	opCA, _ := operator.CAPEM()
	want, _ := trust.CAHash(opCA)
	tok, err := tr.Token()
	if err != nil {
		t.Fatal(err)
	}
	if jt, _ := trust.ParseToken(tok); jt.CAHash != want {
		t.Fatalf("the token pins %s, want the operator's CA %s", jt.CAHash, want)
	}
	// arena join-token, another process, prints the same.
	again, _ := trust.OpenTrust(tr.Dir())
	if tok2, _ := again.Token(); tok2 != tok {
		t.Errorf("another process's token differs")
	}
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := l.Addr().String()
	l.Close()
	ns, err := natsd.Start(natsd.Node{Name: "operator", Dir: t.TempDir(), Listen: addr, Trust: tr})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ns.Stop)
	jt, _ := trust.ParseToken(tok)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	c, err := trust.Join(ctx, "nats://"+addr, jt, "w1", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	nc, err := trust.DialWorker(ctx, "nats://"+addr, c)
	if err != nil {
		t.Fatal(err)
	}
	nc.Close()
	// Back to Arena's own: tokens pin its CA again.
	if err := tr.UseCertificate("", ""); err != nil {
		t.Fatal(err)
	}
	own, _ := os.ReadFile(tr.CAFile())
	ownHash, _ := trust.CAHash(own)
	if tok, _ := tr.Token(); !strings.Contains(tok, ownHash) {
		t.Errorf("after the operator's certificate is dropped the token still pins it")
	}
}

// No worker joins under the name of a server's own worker (serve_…),
// whose logic games' results the server believes without playing the
// logic again: the server refuses it, whatever the worker's side says.
func TestNoWorkerJoinsAsAServersOwn(t *testing.T) {
	tr, err := trust.OpenTrust(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	kp, err := nkeys.CreateUser()
	if err != nil {
		t.Fatal(err)
	}
	pub, _ := kp.PublicKey()
	if err := tr.Admit(trust.OwnWorkerPrefix+"myhost", pub); err == nil || !strings.Contains(err.Error(), "servers' own workers") {
		t.Errorf("a worker joining as a server's own: %v", err)
	}
	if err := tr.Admit("myhost", pub); err != nil {
		t.Errorf("a worker joining as myhost: %v", err)
	}
}
