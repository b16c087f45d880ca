package natsd

import (
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"go.uber.org/zap"

	"arena/dispatch/trust"
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
	// Trust is what clients other than this process are checked against
	// (arena serve): TLS with its certificate, and only the workers that
	// joined, or are joining with the current secret. A listener needs
	// Trust or Config.
	Trust *trust.Trust
	// Config is a NATS server configuration file (arena nats): its
	// authorization and TLS are kept, the fields above override its
	// addresses. It must give users: no client connects without one.
	Config string
	// Cluster is HOST:PORT for the other nodes' routes, and Routes their
	// nats-route://HOST:PORT addresses; empty: a single server.
	Cluster string
	Routes  []string
	// NoAdvertise keeps the other nodes' client addresses from clients,
	// which then reconnect only to the addresses they were given (nodes
	// behind NAT or a proxy).
	NoAdvertise bool
	Log         *zap.Logger
}

// Embedded is a NATS server running in this process.
type Embedded struct {
	*server.Server
	trust *trust.Trust
	log   *zap.Logger
	// base are the options before authorization; serverPass is this
	// process's own (in-process only) password.
	base       *server.Options
	serverPass string

	mu     sync.Mutex // orders reloads
	stamp  string
	joins  *nats.Conn
	stopCh chan struct{}
	wg     sync.WaitGroup
}

// serverUser is the in-process user of arena serve: every permission,
// and no way in but from this process.
const serverUser = "arena-server"

// Start runs a NATS server with JetStream in this process.
func Start(n Node) (*Embedded, error) {
	opts, err := configOptions(n.Config)
	if err != nil {
		return nil, err
	}
	opts.ServerName, opts.JetStream, opts.StoreDir, opts.NoSigs, opts.NoLog = n.Name, true, n.Dir, true, true
	opts.MaxPayload = 8 << 20
	if err := listen(opts, n); err != nil {
		return nil, err
	}
	e := &Embedded{trust: n.Trust, log: n.Log, stopCh: make(chan struct{})}
	if e.log == nil {
		e.log = zap.NewNop()
	}
	if n.Trust != nil {
		if err := e.secure(opts); err != nil {
			return nil, err
		}
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
	e.Server = ns
	if n.Trust != nil {
		if err := e.serveJoins(); err != nil {
			ns.Shutdown()
			return nil, err
		}
		e.wg.Go(e.watch)
	}
	return e, nil
}

// configOptions reads a NATS config file ("": none, the defaults),
// refusing one that lets anyone connect.
func configOptions(path string) (*server.Options, error) {
	if path == "" {
		return &server.Options{}, nil
	}
	opts, err := server.ProcessConfigFile(path)
	if err != nil {
		return nil, fmt.Errorf("nats config %s: %w", path, err)
	}
	if len(opts.Users) == 0 && len(opts.Nkeys) == 0 && len(opts.TrustedOperators) == 0 && opts.Username == "" && opts.Authorization == "" && opts.CustomClientAuthentication == nil && len(opts.Accounts) == 0 {
		return nil, fmt.Errorf("nats config %s gives no users: anyone could connect (see docs/many-hosts.md)", path)
	}
	if opts.NoAuthUser != "" {
		return nil, fmt.Errorf("nats config %s sets no_auth_user: anyone could connect as %s", path, opts.NoAuthUser)
	}
	return opts, nil
}

// listen sets where the node listens for clients and for its cluster's
// routes, and the routes it dials, refusing a listener anyone could use.
func listen(opts *server.Options, n Node) error {
	if n.Listen == "" {
		opts.DontListen = true
	} else {
		if n.Trust == nil && n.Config == "" {
			return errors.New("nats: a listener needs authentication (a trust folder or a config file)")
		}
		host, port, err := splitHostPort(n.Listen)
		if err != nil {
			return fmt.Errorf("nats listen address: %w", err)
		}
		opts.Host, opts.Port = host, port
	}
	if n.Cluster != "" {
		host, port, err := splitHostPort(n.Cluster)
		if err != nil {
			return fmt.Errorf("nats cluster address: %w", err)
		}
		if opts.Cluster.Name == "" {
			opts.Cluster.Name = "arena"
		}
		opts.Cluster.Host, opts.Cluster.Port, opts.Cluster.NoAdvertise = host, port, n.NoAdvertise
	}
	if len(n.Routes) > 0 {
		opts.Routes = server.RoutesFromStr(strings.Join(n.Routes, ","))
	}
	if opts.Cluster.Port != 0 && opts.Cluster.Username == "" && (opts.Cluster.TLSConfig == nil || opts.Cluster.TLSConfig.ClientAuth == tls.NoClientCert) {
		return errors.New("nats: the cluster listener needs authorization (a user and password in the config's cluster block, or TLS with verify): anyone could join as a route")
	}
	return nil
}

// secure serves clients over the trust folder's TLS, with this process's
// password made afresh, and takes the users from the folder (authorize).
func (e *Embedded) secure(opts *server.Options) error {
	tc, err := e.trust.TLSConfig()
	if err != nil {
		return err
	}
	// A nonce always, so that a worker key unknown (or no longer known)
	// is refused as such, even when no worker has joined.
	opts.TLSConfig, opts.TLSTimeout, opts.AuthTimeout, opts.AlwaysEnableNonce = tc, 5, 10, true
	var b [24]byte
	if _, err := rand.Read(b[:]); err != nil {
		return err
	}
	e.serverPass = hex.EncodeToString(b[:])
	e.base = opts.Clone()
	return e.authorize(opts)
}

// authorize sets the users of opts from the trust folder: this process,
// a joining worker (the join secret) and each worker that joined and is
// not quarantined.
func (e *Embedded) authorize(opts *server.Options) error {
	secret, err := e.trust.Secret()
	if err != nil {
		return err
	}
	e.stamp = e.trust.Stamp()
	standard := map[string]struct{}{jwt.ConnectionTypeStandard: {}}
	opts.Users = []*server.User{
		{Username: serverUser, Password: e.serverPass, AllowedConnectionTypes: map[string]struct{}{jwt.ConnectionTypeInProcess: {}}},
		{Username: trust.JoinUser, Password: secret, Permissions: trust.JoinPermissions(), AllowedConnectionTypes: standard},
	}
	opts.Nkeys = nil
	for _, w := range e.trust.Workers() {
		if w.Quarantined == "" {
			opts.Nkeys = append(opts.Nkeys, &server.NkeyUser{Nkey: w.Nkey, Permissions: trust.WorkerPermissions(w.Name), AllowedConnectionTypes: standard})
		}
	}
	return nil
}

// reload applies the trust folder's users to the running server: a
// rotated secret, a worker joined, revoked or quarantined. Clients that
// no longer authenticate are disconnected.
func (e *Embedded) reload() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	opts := e.base.Clone()
	if err := e.authorize(opts); err != nil {
		return err
	}
	return e.ReloadOptions(opts)
}

// watch reloads the users when another process (arena join-token)
// rotates the secret or revokes a worker.
func (e *Embedded) watch() {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-e.stopCh:
			return
		case <-t.C:
		}
		e.mu.Lock()
		changed := e.trust.Stamp() != e.stamp
		e.mu.Unlock()
		if !changed {
			continue
		}
		if err := e.trust.Reload(); err != nil {
			e.log.Error("read the joined workers", zap.Error(err))
			continue
		}
		if err := e.reload(); err != nil {
			e.log.Error("apply a change of the join secret or the workers", zap.Error(err))
			continue
		}
		e.log.Info("nats: the join secret or the workers changed; applied")
	}
}

// serveJoins answers joining workers (see Trust.ServeJoins).
func (e *Embedded) serveJoins() error {
	nc, err := e.Connect("arena serve: joins")
	if err != nil {
		return err
	}
	if err := e.trust.ServeJoins(nc, e.reload, e.log); err != nil {
		nc.Close()
		return err
	}
	e.joins = nc
	return nil
}

// Quarantine keeps a worker out from now on: its key no longer connects,
// and it is disconnected.
func (e *Embedded) Quarantine(name, why string) error {
	if e.trust == nil {
		return nil
	}
	if err := e.trust.Quarantine(name, why); err != nil {
		return err
	}
	return e.reload()
}

// Connect connects a client to the embedded server, in-process.
func (e *Embedded) Connect(name string) (*nats.Conn, error) {
	opts := []nats.Option{nats.InProcessServer(e.Server), nats.Name(name), nats.MaxReconnects(-1)}
	if e.serverPass != "" {
		opts = append(opts, nats.UserInfo(serverUser, e.serverPass))
	}
	return nats.Connect("", opts...)
}

// Stop shuts the server down and waits until it is.
func (e *Embedded) Stop() {
	select {
	case <-e.stopCh:
	default:
		close(e.stopCh)
	}
	e.wg.Wait()
	if e.joins != nil {
		e.joins.Close()
	}
	e.Shutdown()
	e.WaitForShutdown()
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
