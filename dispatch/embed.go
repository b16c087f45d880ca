package dispatch

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// Node is the configuration of an embedded NATS server.
type Node struct {
	// Name names the server (unique in a cluster).
	Name string
	// Dir holds JetStream's files.
	Dir string
	// Listen is HOST:PORT for clients (workers on other hosts); empty:
	// no listener, in-process clients only.
	Listen string
	// Cluster is HOST:PORT for the other nodes' routes, and Routes their
	// nats-route://HOST:PORT addresses; empty: a single server.
	Cluster string
	Routes  []string
	// NoAdvertise keeps the other nodes' client addresses from clients,
	// which then reconnect only to the addresses they were given (nodes
	// behind NAT or a proxy).
	NoAdvertise bool
}

// Embedded is a NATS server running in this process.
type Embedded struct {
	*server.Server
}

// Start runs a NATS server with JetStream in this process.
func Start(n Node) (*Embedded, error) {
	opts := &server.Options{
		ServerName: n.Name, JetStream: true, StoreDir: n.Dir, NoSigs: true, NoLog: true,
		MaxPayload: 8 << 20,
	}
	if n.Listen == "" {
		opts.DontListen = true
	} else {
		host, port, err := splitHostPort(n.Listen)
		if err != nil {
			return nil, fmt.Errorf("nats listen address: %w", err)
		}
		opts.Host, opts.Port = host, port
	}
	if n.Cluster != "" {
		host, port, err := splitHostPort(n.Cluster)
		if err != nil {
			return nil, fmt.Errorf("nats cluster address: %w", err)
		}
		opts.Cluster = server.ClusterOpts{Name: "arena", Host: host, Port: port, NoAdvertise: n.NoAdvertise}
		opts.Routes = server.RoutesFromStr(strings.Join(n.Routes, ","))
	}
	ns, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("nats server: %w", err)
	}
	ns.Start()
	if !ns.ReadyForConnections(30 * time.Second) {
		ns.Shutdown()
		return nil, fmt.Errorf("nats server %s did not start within 30 s", n.Name)
	}
	return &Embedded{ns}, nil
}

// Connect connects a client to the embedded server, in-process.
func (e *Embedded) Connect(name string) (*nats.Conn, error) {
	return nats.Connect("", nats.InProcessServer(e.Server), nats.Name(name), nats.MaxReconnects(-1))
}

// Stop shuts the server down and waits until it is.
func (e *Embedded) Stop() {
	e.Shutdown()
	e.WaitForShutdown()
}

// Dial connects to a NATS cluster (URLs comma-separated) and keeps
// reconnecting, forever, when it loses it.
func Dial(urls, name string) (*nats.Conn, error) {
	nc, err := nats.Connect(urls, nats.Name(name), nats.MaxReconnects(-1), nats.ReconnectWait(250*time.Millisecond),
		nats.RetryOnFailedConnect(true), nats.ReconnectBufSize(64<<20), nats.PingInterval(2*time.Second), nats.MaxPingsOutstanding(2))
	if err != nil {
		return nil, fmt.Errorf("connect to nats %s: %w", urls, err)
	}
	return nc, nil
}

func splitHostPort(addr string) (string, int, error) {
	host, p, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, err
	}
	port, err := strconv.Atoi(p)
	if err != nil || port < 0 || port > 65535 {
		return "", 0, fmt.Errorf("%q: bad port", addr)
	}
	return host, port, nil
}
