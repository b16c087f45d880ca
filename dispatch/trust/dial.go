package trust

import (
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
)

// DialOptions are how a client of a NATS cluster proves who it is and
// checks the server.
type DialOptions struct {
	// Inbox is the prefix of its reply subjects (a worker's own: see
	// WorkerPermissions); empty: NATS's.
	Inbox string
	// CAFile is a PEM file of the CAs the servers' certificates are
	// checked against (else the system's, for tls:// URLs).
	CAFile string
	// Extra options (a worker's credentials).
	Extra []nats.Option
}

// Dial connects to a NATS cluster (URLs comma-separated, a user's name
// and password in them where the cluster wants them) and keeps
// reconnecting, forever, when it loses it.
func Dial(urls, name string, o ...DialOptions) (*nats.Conn, error) {
	opts := []nats.Option{nats.Name(name), nats.MaxReconnects(-1), nats.ReconnectWait(250 * time.Millisecond),
		nats.RetryOnFailedConnect(true), nats.ReconnectBufSize(64 << 20), nats.PingInterval(2 * time.Second), nats.MaxPingsOutstanding(2),
		// A write that does not complete in 10 s (a network cut without a
		// reset) fails the connection, which then reconnects, rather than
		// holding every publish behind it.
		nats.FlusherTimeout(10 * time.Second)}
	for _, d := range o {
		if d.Inbox != "" {
			opts = append(opts, nats.CustomInboxPrefix(d.Inbox))
		}
		if d.CAFile != "" {
			opts = append(opts, nats.RootCAs(d.CAFile))
		}
		opts = append(opts, d.Extra...)
	}
	nc, err := nats.Connect(urls, opts...)
	if err != nil {
		return nil, fmt.Errorf("connect to nats %s: %w", Redact(urls), err)
	}
	return nc, nil
}

// Redact hides the passwords in NATS URLs, for messages and logs.
func Redact(urls string) string {
	parts := strings.Split(urls, ",")
	for i, u := range parts {
		if at := strings.LastIndex(u, "@"); at >= 0 {
			if scheme := strings.Index(u, "://"); scheme >= 0 && scheme < at {
				user := u[scheme+3 : at]
				if name, _, ok := strings.Cut(user, ":"); ok {
					parts[i] = u[:scheme+3] + name + ":***" + u[at:]
				}
			}
		}
	}
	return strings.Join(parts, ",")
}
