package natsd

import (
	"bufio"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"go.uber.org/zap/zaptest"

	"arena/dispatch/trust"
)

// secured starts arena serve's embedded NATS server: a listener on
// loopback, TLS and the trust folder's users. It returns the server and
// its URL.
func secured(t *testing.T) (*Embedded, string) {
	t.Helper()
	tr, err := trust.OpenTrust(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	ns, err := Start(Node{Name: "secured", Dir: t.TempDir(), Listen: addr, Trust: tr, Log: zaptest.NewLogger(t).Named("nats")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ns.Stop)
	return ns, "nats://" + addr
}

// An outsider is refused at connect: in plain text (TLS is required),
// over TLS without credentials or with guessed ones, and even with the
// server's own password (it is good in-process only).
func TestAnOutsiderIsRefusedAtConnect(t *testing.T) {
	ns, url := secured(t)
	t.Run("plain", func(t *testing.T) {
		// A client that speaks NATS without TLS (nats.go would upgrade).
		c, err := net.DialTimeout("tcp", strings.TrimPrefix(url, "nats://"), 5*time.Second)
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
		"tls, a guessed join secret":     {insecure, nats.UserInfo(trust.JoinUser, strings.Repeat("a", 64))},
		"tls, the server's own password": {insecure, nats.UserInfo(serverUser, ns.serverPass)},
	} {
		t.Run(name, func(t *testing.T) {
			nc, err := nats.Connect(url, append(opts, nats.NoReconnect(), nats.Timeout(5*time.Second))...)
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
