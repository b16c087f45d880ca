package trust

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/moby/sys/atomicwriter"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"
	"go.uber.org/zap"

	"arena/internal/errs"
)

// Version is the version of every message Arena's hosts exchange (the
// join messages here, dispatch's jobs and events) and of a worker's
// credentials. A reader refuses a message of any other. (2: events under
// their worker's name, with proofs.)
const Version = 2

// ErrVersion is the kind of error for a message of an unknown version.
var ErrVersion = errs.New(errs.ErrInvalid, "unknown message version")

// JoinUser is the user a joining worker connects as, the join secret its
// password.
const JoinUser = "join"

// joinRequest is a joining worker's: the name it asks for and its public
// nkey (its seed never leaves it).
type joinRequest struct {
	V    int    `json:"v"`
	Name string `json:"name"`
	Nkey string `json:"nkey"`
}

type joinReply struct {
	V     int    `json:"v"`
	Name  string `json:"name,omitempty"`
	Error string `json:"error,omitempty"`
}

func (r joinRequest) Version() int { return r.V }
func (r joinReply) Version() int   { return r.V }

// Versioned is a message that says its version.
type Versioned interface{ Version() int }

// Decode reads a message into v, refusing unknown versions: v is set
// only from a message of this version. A message is parsed once (a
// result carries its replay: a second pass would cost as much again);
// one refused is parsed again for its version alone, to say why.
func Decode[T Versioned](data []byte, v *T) error {
	var m T
	err := json.Unmarshal(data, &m)
	if err == nil && m.Version() == Version {
		*v = m
		return nil
	}
	var head struct {
		V int `json:"v"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return fmt.Errorf("not a message of arena: %w", err)
	}
	if head.V != Version {
		return fmt.Errorf("%w %d (this build reads %d)", ErrVersion, head.V, Version)
	}
	return err
}

// Credentials are what a worker that joined keeps (in its data folder):
// its name, its nkey seed (the private key; never sent anywhere) and the
// server's CA, pinned when it joined.
type Credentials struct {
	V    int    `json:"v"`
	Name string `json:"name"`
	Seed string `json:"seed"`
	CA   string `json:"ca"`
}

// credentialsFile is where a worker keeps its credentials.
const credentialsFile = "worker-credentials.json"

// ErrRefused is the kind of error of a worker that NATS or the server
// will not let in: its token or its key refused, its name taken. Trying
// again does not help.
var ErrRefused = errs.New(errs.ErrDenied, "refused")

// LoadCredentials reads a worker's credentials from dir (nil, nil when
// it has none yet).
func LoadCredentials(dir string) (*Credentials, error) {
	b, err := os.ReadFile(filepath.Join(dir, credentialsFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var c Credentials
	if err := json.Unmarshal(b, &c); err != nil || c.Seed == "" || c.Name == "" {
		return nil, fmt.Errorf("%s: not a worker's credentials", filepath.Join(dir, credentialsFile))
	}
	return &c, nil
}

func (c *Credentials) save(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	return atomicwriter.WriteFile(filepath.Join(dir, credentialsFile), b, 0o600)
}

// pinnedTLS checks the server's certificate against the CA whose hash
// is pinned (from a join token, or the CA kept since), whatever name the
// worker dialled it by: the CA is Arena's own and signs nothing else.
func pinnedTLS(caHash string, caPEM []byte) *tls.Config {
	return &tls.Config{
		MinVersion: tls.VersionTLS12,
		// The standard check wants a host name in the certificate; the
		// pin below replaces it.
		InsecureSkipVerify: true,
		VerifyPeerCertificate: func(raw [][]byte, _ [][]*x509.Certificate) error {
			if len(raw) == 0 {
				return errors.New("the NATS server sent no certificate")
			}
			var ca *x509.Certificate
			if caPEM != nil {
				if b, _ := pem.Decode(caPEM); b != nil {
					ca, _ = x509.ParseCertificate(b.Bytes)
				}
			}
			if ca == nil {
				// The CA the token pins is the last of the chain (the
				// server's own, or the operator's after intermediates).
				for _, der := range raw[1:] {
					if sum := sha256.Sum256(der); hex.EncodeToString(sum[:]) == caHash {
						ca, _ = x509.ParseCertificate(der)
					}
				}
			}
			if ca == nil {
				return fmt.Errorf("%w: the NATS server's CA is not the one the join token names (a token of another server?)", ErrRefused)
			}
			if sum := sha256.Sum256(ca.Raw); hex.EncodeToString(sum[:]) != caHash {
				return fmt.Errorf("%w: the NATS server's CA is not the one pinned", ErrRefused)
			}
			leaf, err := x509.ParseCertificate(raw[0])
			if err != nil {
				return err
			}
			roots := x509.NewCertPool()
			roots.AddCert(ca)
			inter := x509.NewCertPool()
			for _, der := range raw[1:] {
				if c, err := x509.ParseCertificate(der); err == nil && !c.Equal(ca) {
					inter.AddCert(c)
				}
			}
			if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err != nil {
				return fmt.Errorf("%w: the NATS server's certificate: %v", ErrRefused, err)
			}
			return nil
		},
	}
}

// Join joins a worker to the server behind urls with a join token: it
// makes the worker's key (or keeps the one in dir), asks the server to
// admit it under name, and keeps its credentials in dir. It waits for
// the server while it cannot be reached; a token or name refused ends it
// with an ErrRefused.
func Join(ctx context.Context, urls string, token JoinToken, name, dir string) (*Credentials, error) {
	if err := JoinableName(name); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrRefused, err)
	}
	creds, err := LoadCredentials(dir)
	if err != nil {
		return nil, err
	}
	if creds == nil || creds.Name != name {
		kp, err := nkeys.CreateUser()
		if err != nil {
			return nil, err
		}
		seed, _ := kp.Seed()
		creds = &Credentials{V: Version, Name: name, Seed: string(seed)}
	}
	kp, err := nkeys.FromSeed([]byte(creds.Seed))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, credentialsFile), err)
	}
	pub, _ := kp.PublicKey()
	var caPEM []byte
	tc := pinnedTLS(token.CAHash, nil)
	tc.VerifyConnection = func(cs tls.ConnectionState) error {
		for _, c := range cs.PeerCertificates[1:] {
			if sum := sha256.Sum256(c.Raw); hex.EncodeToString(sum[:]) == token.CAHash {
				caPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})
			}
		}
		return nil
	}
	var nc *nats.Conn
	// An error NATS reports on the connection after it was made (the
	// server turning the token away as it reloads a rotation) is kept to
	// say why, not printed.
	var async atomic.Pointer[error]
	keep := nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) { async.Store(&err) })
	for {
		nc, err = nats.Connect(urls, nats.Name("arena worker "+name+" (joining)"), nats.Secure(tc),
			nats.UserInfo(JoinUser, token.Secret), nats.CustomInboxPrefix(joinInbox), nats.NoReconnect(), keep)
		if err == nil {
			break
		}
		if refused(err) {
			if strings.Contains(err.Error(), ErrRefused.Error()+":") {
				return nil, fmt.Errorf("%w: %v", ErrRefused, strings.TrimPrefix(err.Error(), "nats: tls error: "))
			}
			return nil, fmt.Errorf("%w: the join token (rotated, or of another server): %v", ErrRefused, err)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("join through %s: %w", Redact(urls), err)
		case <-time.After(time.Second):
		}
	}
	defer nc.Close()
	data, _ := json.Marshal(joinRequest{V: Version, Name: name, Nkey: pub})
	rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	m, err := nc.RequestWithContext(rctx, joinSubject, data)
	if err != nil {
		if later := async.Load(); later != nil && refused(*later) {
			return nil, fmt.Errorf("%w: the join token (rotated, or of another server): %v", ErrRefused, *later)
		}
		return nil, fmt.Errorf("join: no answer from the server: %w", err)
	}
	var reply joinReply
	if err := Decode(m.Data, &reply); err != nil {
		return nil, fmt.Errorf("join: %w", err)
	}
	if reply.Error != "" {
		return nil, fmt.Errorf("%w: %s", ErrRefused, reply.Error)
	}
	if caPEM == nil {
		return nil, errors.New("join: the server's CA was not seen")
	}
	creds.CA = string(caPEM)
	if err := creds.save(dir); err != nil {
		return nil, fmt.Errorf("keep the worker's credentials: %w", err)
	}
	return creds, nil
}

// ServeJoins answers joining workers on nc: each is admitted under the
// name it asks for (unless another key holds it) with its key, and apply
// (the server reloading its users) runs before it answers, so the worker
// connects at once.
func (t *Trust) ServeJoins(nc *nats.Conn, apply func() error, log *zap.Logger) error {
	_, err := nc.Subscribe(joinSubject, func(m *nats.Msg) {
		var req joinRequest
		reply := joinReply{V: Version}
		switch err := Decode(m.Data, &req); {
		case err != nil:
			reply.Error = err.Error()
		case !nkeys.IsValidPublicUserKey(req.Nkey):
			reply.Error = "not a public user nkey"
		default:
			if err := t.Admit(req.Name, req.Nkey); err != nil {
				reply.Error = err.Error()
			} else if err := apply(); err != nil {
				reply.Error = "the server could not apply the join: " + err.Error()
			} else {
				reply.Name = req.Name
				log.Info("nats: a worker joined", zap.String("worker", req.Name))
			}
		}
		if reply.Error != "" {
			log.Warn("nats: a join refused", zap.String("worker", req.Name), zap.String("reason", reply.Error))
		}
		data, _ := json.Marshal(reply)
		_ = m.Respond(data)
	})
	return err
}

// refused says whether a connect error is NATS or TLS turning the client
// away (as opposed to the server not being reachable).
func refused(err error) bool {
	return errors.Is(err, nats.ErrAuthorization) || errors.Is(err, ErrRefused) || errors.Is(err, nats.ErrNkeysNotSupported) ||
		strings.Contains(strings.ToLower(err.Error()), "authorization violation") ||
		strings.Contains(err.Error(), "secure connection required") || strings.Contains(err.Error(), "x509: ") ||
		strings.Contains(err.Error(), ErrRefused.Error()+":")
}

// Options are the NATS options a worker connects with: its key, its own
// reply subjects, and the pinned CA.
func (c *Credentials) Options() ([]nats.Option, error) {
	kp, err := nkeys.FromSeed([]byte(c.Seed))
	if err != nil {
		return nil, err
	}
	pub, _ := kp.PublicKey()
	h, err := CAHash([]byte(c.CA))
	if err != nil {
		return nil, fmt.Errorf("the pinned CA: %w", err)
	}
	return []nats.Option{
		nats.Secure(pinnedTLS(h, []byte(c.CA))),
		nats.Nkey(pub, kp.Sign),
		nats.CustomInboxPrefix(WorkerInbox(c.Name)),
	}, nil
}

// DialWorker connects a joined worker with its credentials. The first
// connection is made at once (waiting while the server cannot be
// reached): a key refused ends it with an ErrRefused. Later losses
// reconnect forever.
func DialWorker(ctx context.Context, urls string, c *Credentials) (*nats.Conn, error) {
	extra, err := c.Options()
	if err != nil {
		return nil, err
	}
	nc, err := DialChecked(ctx, urls, "arena worker "+c.Name, DialOptions{Extra: extra})
	if errors.Is(err, ErrRefused) {
		return nil, fmt.Errorf("worker %s's key (revoked or quarantined? join it again with a token): %w", c.Name, err)
	}
	return nc, err
}

// DialChecked is Dial whose first connection is made at once, waiting
// while no server can be reached: credentials refused end it with an
// ErrRefused rather than being tried again forever.
func DialChecked(ctx context.Context, urls, name string, o DialOptions) (*nats.Conn, error) {
	for {
		opts := []nats.Option{nats.Name(name), nats.NoReconnect(), nats.Timeout(10 * time.Second)}
		if o.CAFile != "" {
			opts = append(opts, nats.RootCAs(o.CAFile))
		}
		if o.Inbox != "" {
			opts = append(opts, nats.CustomInboxPrefix(o.Inbox))
		}
		probe, err := nats.Connect(urls, append(opts, o.Extra...)...)
		if err == nil {
			probe.Close()
			break
		}
		if refused(err) {
			return nil, fmt.Errorf("%w: %v", ErrRefused, err)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("connect to nats %s: %w", Redact(urls), err)
		case <-time.After(time.Second):
		}
	}
	return Dial(urls, name, o)
}
