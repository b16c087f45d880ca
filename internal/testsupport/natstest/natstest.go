// Package natstest starts arena serve's embedded NATS server for tests:
// a listener on loopback, TLS and the trust folder's users, and joins
// workers to it.
package natstest

import (
	"context"
	"net"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"arena/dispatch/natsd"
	"arena/dispatch/trust"
)

// Server is a secured embedded NATS server and its trust folder.
type Server struct {
	t     *testing.T
	Trust *trust.Trust
	NS    *natsd.Embedded
	URL   string
}

// Secured starts a secured embedded server, stopped when the test ends.
func Secured(t *testing.T) *Server {
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
	ns, err := natsd.Start(natsd.Node{Name: "secured", Dir: t.TempDir(), Listen: addr, Trust: tr, Log: zaptest.NewLogger(t).Named("nats")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ns.Stop)
	return &Server{t: t, Trust: tr, NS: ns, URL: "nats://" + addr}
}

// Token is a join token of the server's trust.
func (s *Server) Token() trust.JoinToken {
	s.t.Helper()
	tok, err := s.Trust.Token()
	if err != nil {
		s.t.Fatal(err)
	}
	jt, err := trust.ParseToken(tok)
	if err != nil {
		s.t.Fatal(err)
	}
	return jt
}

// Join joins a worker of that name, its key kept in a folder of its own.
func (s *Server) Join(name string) *trust.Credentials {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(s.t.Context(), 20*time.Second)
	defer cancel()
	c, err := trust.Join(ctx, s.URL, s.Token(), name, s.t.TempDir())
	if err != nil {
		s.t.Fatal(err)
	}
	return c
}
