package trust

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/moby/sys/atomicwriter"

	"arena/internal/errs"
)

// Trust is what the embedded NATS server checks its clients against,
// kept in a folder of its own (under ARENA_DATA): a CA and the server's
// certificate signed by it, the join secret that join tokens carry, and
// the workers that joined, each with its public key. Nothing here is a
// cipher of Arena's own: certificates are the standard library's, keys
// NATS's nkeys (ed25519), and NATS checks the signatures.
type Trust struct {
	dir string
	// names are the server certificate's host names and addresses, past
	// localhost, the loopback addresses and this host's name.
	names []string

	// certFile and keyFile are the operator's certificate and key, when
	// the server uses them instead of its own.
	certFile, keyFile string

	mu      sync.Mutex
	workers []JoinedWorker
}

// JoinedWorker is a worker that joined with a token: its name, given
// when it joined, and the public nkey it authenticates with.
type JoinedWorker struct {
	Name   string    `json:"name"`
	Nkey   string    `json:"nkey"`
	Joined time.Time `json:"joined"`
	// Quarantined says why the server stopped believing the worker (its
	// results were refused again and again); a quarantined worker cannot
	// connect.
	Quarantined string `json:"quarantined,omitempty"`
}

// The trust folder's files.
const (
	caCertFile = "ca.crt"
	// operatorCAFile is the CA of the operator's certificate, when the
	// server uses one (UseCertificate): what join tokens pin then.
	operatorCAFile = "operator-ca.crt"
	caKeyFile      = "ca.key"
	serverCertFile = "server.crt"
	serverKeyFile  = "server.key"
	joinSecretFile = "join-secret"
	workersFile    = "workers.json"
)

// TokenPrefix starts every join token; the version follows.
const TokenPrefix = "ARENA-1-"

// workerName is what a worker may be called: a NATS subject token and a
// bucket name both (no dots, no wildcards, no spaces).
var workerName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// ValidWorkerName says what is wrong with a worker's name, if anything.
func ValidWorkerName(name string) error {
	if !workerName.MatchString(name) {
		return fmt.Errorf("worker name %q: use 1 to 64 letters, digits, - or _", name)
	}
	return nil
}

// OwnWorkerPrefix begins the name of a server's own worker (in its
// process), whose logic games' results the server does not play again:
// no worker that joins may take such a name.
const OwnWorkerPrefix = "serve_"

// JoinableName says what is wrong with the name of a worker that joins,
// if anything: a valid name that is not a server's own worker's.
func JoinableName(name string) error {
	if err := ValidWorkerName(name); err != nil {
		return err
	}
	if strings.HasPrefix(name, OwnWorkerPrefix) {
		return fmt.Errorf("worker name %q: names beginning %s are the servers' own workers'", name, OwnWorkerPrefix)
	}
	return nil
}

// SafeWorkerName turns a host name into a worker name: what is not a
// letter, digit, - or _ becomes -.
func SafeWorkerName(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			b[i] = '-'
		}
	}
	if len(b) > 64 {
		b = b[:64]
	}
	if len(b) == 0 {
		return "worker"
	}
	return string(b)
}

// OpenTrust opens the trust folder, making what is missing: a CA (ten
// years), the server's certificate (one year, renewed when a month is
// left, or when it lacks one of names: host names or addresses clients
// dial it by), a join secret and an empty list of workers.
func OpenTrust(dir string, names ...string) (*Trust, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("trust folder: %w", err)
	}
	t := &Trust{dir: dir, names: names}
	if err := t.ensureCA(); err != nil {
		return nil, err
	}
	if err := t.ensureServerCert(); err != nil {
		return nil, err
	}
	if _, err := os.Stat(t.path(joinSecretFile)); errors.Is(err, os.ErrNotExist) {
		if _, err := t.Rotate(); err != nil {
			return nil, err
		}
	}
	if err := t.Reload(); err != nil {
		return nil, err
	}
	return t, nil
}

func (t *Trust) path(name string) string { return filepath.Join(t.dir, name) }

// Dir is the trust folder.
func (t *Trust) Dir() string { return t.dir }

func (t *Trust) ensureCA() error {
	if _, err := os.Stat(t.path(caCertFile)); err == nil {
		return nil
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(), Subject: pkix.Name{CommonName: "Arena NATS CA", Organization: []string{"Arena"}},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().AddDate(10, 0, 0),
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign, BasicConstraintsValid: true, IsCA: true, MaxPathLenZero: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return err
	}
	if err := writeKey(t.path(caKeyFile), key); err != nil {
		return err
	}
	return atomicwriter.WriteFile(t.path(caCertFile), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644)
}

func (t *Trust) ensureServerCert() error {
	if pair, err := tls.LoadX509KeyPair(t.path(serverCertFile), t.path(serverKeyFile)); err == nil && time.Until(pair.Leaf.NotAfter) > 30*24*time.Hour {
		covered := true
		for _, n := range t.names {
			covered = covered && pair.Leaf.VerifyHostname(n) == nil
		}
		if covered {
			return nil
		}
	}
	ca, caKey, err := t.loadCA()
	if err != nil {
		return err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	host, _ := os.Hostname()
	dns := []string{"localhost"}
	ips := []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}
	if host != "" {
		dns = append(dns, host)
	}
	for _, n := range t.names {
		if ip := net.ParseIP(n); ip != nil {
			ips = append(ips, ip)
		} else if n != "" {
			dns = append(dns, n)
		}
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(), Subject: pkix.Name{CommonName: "Arena NATS server", Organization: []string{"Arena"}},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().AddDate(1, 0, 0),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames: dns, IPAddresses: ips,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return err
	}
	if err := writeKey(t.path(serverKeyFile), key); err != nil {
		return err
	}
	chain := append(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.Raw})...)
	return atomicwriter.WriteFile(t.path(serverCertFile), chain, 0o644)
}

func (t *Trust) loadCA() (*x509.Certificate, *ecdsa.PrivateKey, error) {
	pair, err := tls.LoadX509KeyPair(t.path(caCertFile), t.path(caKeyFile))
	if err != nil {
		return nil, nil, fmt.Errorf("the CA of %s: %w", t.dir, err)
	}
	key, ok := pair.PrivateKey.(*ecdsa.PrivateKey)
	if !ok {
		return nil, nil, fmt.Errorf("the CA key of %s is not an ECDSA key", t.dir)
	}
	return pair.Leaf, key, nil
}

func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	return n
}

func writeKey(path string, key *ecdsa.PrivateKey) error {
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	return atomicwriter.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), 0o600)
}

// TLSConfig is the server side of TLS: the server's certificate, with
// its CA in the chain (a worker pins the CA by its hash).
func (t *Trust) TLSConfig() (*tls.Config, error) {
	cert, key := t.path(serverCertFile), t.path(serverKeyFile)
	if t.certFile != "" {
		cert, key = t.certFile, t.keyFile
	}
	pair, err := tls.LoadX509KeyPair(cert, key)
	if err != nil {
		return nil, fmt.Errorf("the NATS server certificate of %s: %w", t.dir, err)
	}
	return &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}, nil
}

// CAFile, CertFile and KeyFile are the paths of the CA's certificate and
// of the server's certificate (its CA after it) and key: what the tls
// block of a NATS configuration names.
func (t *Trust) CAFile() string   { return t.path(caCertFile) }
func (t *Trust) CertFile() string { return t.path(serverCertFile) }
func (t *Trust) KeyFile() string  { return t.path(serverKeyFile) }

// CAPEM is the CA certificate that join tokens pin, PEM-encoded: the
// operator's (see UseCertificate) or Arena's own.
func (t *Trust) CAPEM() ([]byte, error) {
	if b, err := os.ReadFile(t.path(operatorCAFile)); err == nil {
		return b, nil
	}
	return os.ReadFile(t.path(caCertFile))
}

// UseCertificate makes the server present the operator's certificate
// (empty: Arena's own again). The file must hold the chain up to the CA
// that workers are to pin, the CA last; join tokens pin that CA from then
// on, also those printed by arena join-token.
func (t *Trust) UseCertificate(certFile, keyFile string) error {
	if certFile == "" && keyFile == "" {
		t.certFile, t.keyFile = "", ""
		if err := os.Remove(t.path(operatorCAFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		return nil
	}
	pair, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return fmt.Errorf("the NATS certificate %s and key %s: %w", certFile, keyFile, err)
	}
	if len(pair.Certificate) < 2 {
		return fmt.Errorf("the NATS certificate %s holds no CA after it: put the chain up to the CA workers pin in the file, the CA last", certFile)
	}
	ca, err := x509.ParseCertificate(pair.Certificate[len(pair.Certificate)-1])
	if err != nil {
		return err
	}
	if !ca.IsCA {
		return fmt.Errorf("the last certificate of %s (%s) is not a CA", certFile, ca.Subject)
	}
	roots := x509.NewCertPool()
	roots.AddCert(ca)
	inter := x509.NewCertPool()
	for _, der := range pair.Certificate[1 : len(pair.Certificate)-1] {
		if c, err := x509.ParseCertificate(der); err == nil {
			inter.AddCert(c)
		}
	}
	if _, err := pair.Leaf.Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err != nil {
		return fmt.Errorf("the NATS certificate %s is not signed by the CA after it: %w", certFile, err)
	}
	t.certFile, t.keyFile = certFile, keyFile
	return atomicwriter.WriteFile(t.path(operatorCAFile), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.Raw}), 0o644)
}

// CAHash is the SHA-256 of the CA certificate (DER), in hex: what a join
// token pins.
func CAHash(caPEM []byte) (string, error) {
	b, _ := pem.Decode(caPEM)
	if b == nil || b.Type != "CERTIFICATE" {
		return "", errors.New("no PEM certificate")
	}
	sum := sha256.Sum256(b.Bytes)
	return hex.EncodeToString(sum[:]), nil
}

// Secret is the current join secret.
func (t *Trust) Secret() (string, error) {
	b, err := os.ReadFile(t.path(joinSecretFile))
	if err != nil {
		return "", fmt.Errorf("join secret: %w", err)
	}
	s := strings.TrimSpace(string(b))
	if len(s) != 64 {
		return "", fmt.Errorf("join secret in %s: malformed", t.path(joinSecretFile))
	}
	return s, nil
}

// Token is the join token: ARENA-1-<the CA's hash>-<the join secret>.
func (t *Trust) Token() (string, error) {
	ca, err := t.CAPEM()
	if err != nil {
		return "", err
	}
	h, err := CAHash(ca)
	if err != nil {
		return "", err
	}
	s, err := t.Secret()
	if err != nil {
		return "", err
	}
	return TokenPrefix + h + "-" + s, nil
}

// Rotate makes a new join secret, so tokens printed before no longer
// join; workers that joined keep their own keys. It returns the new token.
func (t *Trust) Rotate() (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	if err := atomicwriter.WriteFile(t.path(joinSecretFile), []byte(hex.EncodeToString(b[:])+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("join secret: %w", err)
	}
	return t.Token()
}

// JoinToken is a parsed join token.
type JoinToken struct {
	CAHash, Secret string
}

// ParseToken reads a join token, naming what is wrong with a bad one.
func ParseToken(s string) (JoinToken, error) {
	s = strings.TrimSpace(s)
	rest, ok := strings.CutPrefix(s, TokenPrefix)
	if !ok {
		return JoinToken{}, fmt.Errorf("not an Arena join token (it starts with %s; print one with arena join-token)", TokenPrefix)
	}
	h, sec, ok := strings.Cut(rest, "-")
	if !ok || len(h) != 64 || len(sec) != 64 || !isHex(h) || !isHex(sec) {
		return JoinToken{}, errors.New("malformed join token (print a new one with arena join-token)")
	}
	return JoinToken{CAHash: h, Secret: sec}, nil
}

func isHex(s string) bool {
	_, err := hex.DecodeString(s)
	return err == nil
}

// Reload reads the list of workers again from the trust folder: another
// process (arena join-token) may have changed it.
func (t *Trust) Reload() error {
	b, err := os.ReadFile(t.path(workersFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var ws []JoinedWorker
	if err := json.Unmarshal(b, &ws); err != nil {
		return fmt.Errorf("%s: %w", t.path(workersFile), err)
	}
	t.mu.Lock()
	t.workers = ws
	t.mu.Unlock()
	return nil
}

func (t *Trust) saveLocked() error {
	b, err := json.MarshalIndent(t.workers, "", "  ")
	if err != nil {
		return err
	}
	return atomicwriter.WriteFile(t.path(workersFile), b, 0o600)
}

// Workers are the workers that joined.
func (t *Trust) Workers() []JoinedWorker {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Clone(t.workers)
}

// ErrNameTaken is the kind of error of a join under a name another key
// holds.
var ErrNameTaken = errs.New(errs.ErrConflict, "the name is taken by another worker")

// Admit records a worker joining under name with its public key. The
// same name with the same key joins again; a name another key holds, or
// a quarantined one, does not.
func (t *Trust) Admit(name, nkey string) error {
	if err := JoinableName(name); err != nil {
		return err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, w := range t.workers {
		if w.Name != name {
			continue
		}
		if w.Quarantined != "" {
			return fmt.Errorf("worker %s is quarantined: %s (arena join-token --revoke %s, then join it again)", name, w.Quarantined, name)
		}
		if w.Nkey != nkey {
			return fmt.Errorf("%w: %s (give the worker another --name, or remove it with arena join-token --revoke %s)", ErrNameTaken, name, name)
		}
		return nil
	}
	t.workers = append(t.workers, JoinedWorker{Name: name, Nkey: nkey, Joined: time.Now().UTC()})
	return t.saveLocked()
}

// Quarantine keeps a worker out from now on, saying why.
func (t *Trust) Quarantine(name, why string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	for i, w := range t.workers {
		if w.Name == name {
			t.workers[i].Quarantined = why
			return t.saveLocked()
		}
	}
	return nil
}

// Revoke forgets a worker: its key no longer connects.
func (t *Trust) Revoke(name string) (bool, error) {
	if err := t.Reload(); err != nil {
		return false, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	n := len(t.workers)
	t.workers = slices.DeleteFunc(t.workers, func(w JoinedWorker) bool { return w.Name == name })
	if len(t.workers) == n {
		return false, nil
	}
	return true, t.saveLocked()
}

// Stamp says when the join secret or the list of workers last changed,
// so a running server notices a rotation or a revocation made by another
// process (arena join-token).
func (t *Trust) Stamp() string {
	var b strings.Builder
	for _, f := range []string{joinSecretFile, workersFile} {
		if st, err := os.Stat(t.path(f)); err == nil {
			fmt.Fprintf(&b, "%d/%d;", st.ModTime().UnixNano(), st.Size())
		}
	}
	return b.String()
}
