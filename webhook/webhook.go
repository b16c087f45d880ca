// Package webhook makes the calls of people's webhooks: one signed JSON
// POST at a time, to an address the policy lets a webhook reach. A
// webhook may not reach the server's own addresses, nor private,
// loopback, link-local or CGNAT ones unless the policy admits their
// network; an IPv6 address carrying an IPv4 one (IPv4-mapped, NAT64,
// IPv4-compatible, 6to4) is judged by that IPv4 address. The address is
// checked when a URL is set (CheckURL) and again on the address each
// call dials, so a name that resolves anew (DNS rebinding) gains
// nothing. Redirects are answers, never followed; no proxy is used. The
// platform (notify.go) decides what is sent and when to try again.
package webhook

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"syscall"
	"time"
)

// Timeout bounds one call.
const Timeout = 10 * time.Second

// Policy is where webhooks may go.
type Policy struct {
	// Allow are the private, loopback and link-local networks a webhook
	// may reach (ARENA_WEBHOOK_ALLOW).
	Allow []netip.Prefix
	// Own are the server's own addresses, never a webhook's: an
	// unspecified address stands for each of the host's on its port.
	Own []netip.AddrPort
}

// Refused is an address a webhook may not reach.
type Refused struct {
	Addr netip.AddrPort
	Why  string
}

func (e *Refused) Error() string {
	return fmt.Sprintf("a webhook may not reach %s: %s", e.Addr, e.Why)
}

// Check says whether a webhook may reach ap (nil) or not (*Refused).
// An IPv6 address that carries an IPv4 one a gateway or the host would
// reach (IPv4-mapped, NAT64, IPv4-compatible, 6to4) is judged by that
// IPv4 address, as if it were the one named.
func (p Policy) Check(ap netip.AddrPort) error {
	addr, inside := judged(ap.Addr()), ""
	if a := ap.Addr(); a.Is6() && !a.Is4In6() && addr.Is4() {
		inside = fmt.Sprintf(" (the IPv4 address %s inside)", addr)
	}
	for _, own := range p.Own {
		if own.Port() == ap.Port() && (judged(own.Addr()) == addr || own.Addr().IsUnspecified() && hostAddress(addr)) {
			return &Refused{ap, "it is this server's own address" + inside}
		}
	}
	if !special(addr) {
		return nil
	}
	for _, n := range p.Allow {
		if n.Contains(addr) {
			return nil
		}
	}
	return &Refused{ap, "a private, loopback or link-local address" + inside + " (ARENA_WEBHOOK_ALLOW admits such networks)"}
}

// judged is the address a webhook's address is judged as: the IPv4
// address inside an IPv6 one that carries it, so that neither a NAT64
// gateway nor the host's own stack takes a call somewhere the IPv4
// address itself may not go; a itself otherwise (without its zone).
//
//   - ::ffff:a.b.c.d, IPv4-mapped: the host dials a.b.c.d;
//   - 64:ff9b::a.b.c.d, NAT64's well-known prefix (RFC 6052): a
//     gateway translates it to a.b.c.d;
//   - ::a.b.c.d, IPv4-compatible (deprecated, RFC 4291), :: and ::1
//     aside;
//   - 2002:AABB:CCDD::/48, 6to4 (RFC 3056): a relay sends it to the
//     IPv4 address AA.BB.CC.DD.
//
// 64:ff9b:1::/48, NAT64's local-use prefix (RFC 8215), and Teredo's
// 2001::/32 hide their IPv4 address where only their operator knows:
// they are judged as special whole (special).
func judged(a netip.Addr) netip.Addr {
	a = a.WithZone("")
	if a.Is4In6() {
		return a.Unmap()
	}
	if !a.Is6() {
		return a
	}
	b := a.As16()
	switch {
	case nat64.Contains(a), compatible.Contains(a) && a != compatible.Addr() && !a.IsLoopback():
		return netip.AddrFrom4([4]byte(b[12:16]))
	case sixToFour.Contains(a):
		return netip.AddrFrom4([4]byte(b[2:6]))
	}
	return a
}

var (
	nat64       = netip.MustParsePrefix("64:ff9b::/96")
	nat64Local  = netip.MustParsePrefix("64:ff9b:1::/48")
	compatible  = netip.MustParsePrefix("::/96")
	sixToFour   = netip.MustParsePrefix("2002::/16")
	teredo      = netip.MustParsePrefix("2001::/32")
	cgnat       = netip.MustParsePrefix("100.64.0.0/10")
	thisNetwork = netip.MustParsePrefix("0.0.0.0/8")
)

// CheckURL reads a webhook's URL and checks every address its host
// resolves to.
func (p Policy) CheckURL(ctx context.Context, raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	switch {
	case err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https"):
		return nil, fmt.Errorf("%q is not an http(s) address, e.g. https://hooks.slack.com/services/…", raw)
	case u.User != nil:
		return nil, errors.New("put no name or password in it: the signature (X-Arena-Signature) proves the call is Arena's")
	case len(raw) > 2048:
		return nil, errors.New("2048 characters at most")
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	n, err := strconv.ParseUint(port, 10, 16)
	if err != nil {
		return nil, fmt.Errorf("port %q: %w", port, err)
	}
	addrs, err := Lookup(ctx, u.Hostname())
	if err != nil || len(addrs) == 0 {
		return nil, fmt.Errorf("%s does not resolve: %v", u.Hostname(), err)
	}
	for _, a := range addrs {
		if err := p.Check(netip.AddrPortFrom(a, uint16(n))); err != nil {
			return nil, err
		}
	}
	return u, nil
}

// Lookup resolves a host name within 5 s: neither a URL being set nor
// a server starting waits on a DNS that does not answer.
func Lookup(ctx context.Context, host string) ([]netip.Addr, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
}

// special addresses are not the public internet's (a judged one, with
// no IPv4 address inside but where only its operator knows).
func special(a netip.Addr) bool {
	return !a.IsGlobalUnicast() || a.IsPrivate() || cgnat.Contains(a) || thisNetwork.Contains(a) || a.IsLoopback() || a.IsLinkLocalUnicast() ||
		nat64Local.Contains(a) || teredo.Contains(a)
}

// hostAddress says whether a is one of this host's addresses.
func hostAddress(a netip.Addr) bool {
	if a.IsLoopback() || a.IsUnspecified() {
		return true
	}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return true // unknown: take it for one
	}
	for _, ia := range addrs {
		if p, err := netip.ParsePrefix(ia.String()); err == nil && p.Addr().Unmap() == a {
			return true
		}
	}
	return false
}

// Sign is the signature of body under secret, as X-Arena-Signature
// carries it: sha256= and the HMAC-SHA256 in hex.
func Sign(secret string, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

// Client makes calls within a policy.
type Client struct {
	http *http.Client
}

// New returns a client that dials only what p allows.
func New(p Policy) *Client {
	dialer := &net.Dialer{Timeout: Timeout, Control: func(_, address string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			return err
		}
		return p.Check(ap)
	}}
	return &Client{http: &http.Client{
		Timeout: Timeout,
		Transport: &http.Transport{Proxy: nil, DialContext: dialer.DialContext, MaxIdleConns: 16, IdleConnTimeout: time.Minute,
			TLSHandshakeTimeout: Timeout, ResponseHeaderTimeout: Timeout},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// Post makes one call: body to url, signed under secret, with the event's
// kind and the delivery's id in headers. It returns the answer's status
// (an error too when it is not 2xx); errors.As(err, **Refused) when the
// address may not be reached.
func (c *Client) Post(ctx context.Context, url, secret string, body []byte, kind string, delivery int64) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "Arena-Webhook")
	req.Header.Set("X-Arena-Event", kind)
	req.Header.Set("X-Arena-Delivery", strconv.FormatInt(delivery, 10))
	req.Header.Set("X-Arena-Signature", Sign(secret, body))
	res, err := c.http.Do(req)
	if err != nil {
		return 0, err
	}
	res.Body.Close()
	if res.StatusCode/100 != 2 {
		return res.StatusCode, fmt.Errorf("answered %s", res.Status)
	}
	return res.StatusCode, nil
}
