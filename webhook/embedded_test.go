package webhook

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"testing"
	"time"
)

// An IPv6 address that carries an IPv4 one (NAT64's prefixes,
// IPv4-compatible, IPv4-mapped, 6to4) is judged by that IPv4 address:
// refused where the IPv4 address is, admitted where the policy admits
// its network; NAT64's local-use prefix and Teredo, whose IPv4 address
// only their operator can find, are refused whole.
func TestAddressesCarryingIPv4(t *testing.T) {
	closed := Policy{}
	open := Policy{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32"), netip.MustParsePrefix("10.0.0.0/8"),
		netip.MustParsePrefix("::1/128"), netip.MustParsePrefix("fe80::/10")}}
	for _, c := range []struct {
		addr         string
		closed, open bool // allowed by each policy
	}{
		// NAT64, the well-known prefix (RFC 6052).
		{"[64:ff9b::7f00:1]:80", false, true},            // 127.0.0.1
		{"[64:ff9b::127.0.0.1]:80", false, true},         // the same, written so
		{"[64:ff9b::a00:1]:80", false, true},             // 10.0.0.1
		{"[64:ff9b::c0a8:101]:80", false, false},         // 192.168.1.1
		{"[64:ff9b::a9fe:a9fe]:80", false, false},        // 169.254.169.254, the cloud's metadata
		{"[64:ff9b::6440:1]:80", false, false},           // 100.64.0.1, CGNAT
		{"[64:ff9b::]:80", false, false},                 // 0.0.0.0
		{"[64:ff9b::5db8:d822]:443", true, true},         // 93.184.216.34, public
		{"[64:ff9b::93.184.216.34]:443", true, true},     // the same
		{"[64:ff9b:1::a00:1]:80", false, false},          // NAT64's local-use prefix (RFC 8215)
		{"[64:ff9b:1:ffff::5db8:d822]:80", false, false}, // even of a public address
		// IPv4-compatible (::a.b.c.d).
		{"[::127.0.0.1]:80", false, true},
		{"[::10.0.0.1]:80", false, true},
		{"[::169.254.169.254]:80", false, false},
		{"[::192.168.1.1]:80", false, false},
		{"[::0.0.0.2]:80", false, false},
		{"[::93.184.216.34]:443", true, true},
		// IPv4-mapped (::ffff:a.b.c.d).
		{"[::ffff:127.0.0.1]:80", false, true},
		{"[::ffff:10.0.0.1]:80", false, true},
		{"[::ffff:169.254.169.254]:80", false, false},
		{"[::ffff:93.184.216.34]:443", true, true},
		// 6to4 (2002:AABB:CCDD::/48).
		{"[2002:a00:1::1]:80", false, true},
		{"[2002:a9fe:a9fe::1]:80", false, false},
		{"[2002:5db8:d822::1]:443", true, true},
		// Teredo.
		{"[2001:0:4136:e378:8000:63bf:3fff:fdd2]:80", false, false},
		// IPv6's own, unchanged.
		{"[::1]:80", false, true},
		{"[::]:80", false, false},
		{"[fe80::1%eth0]:80", false, true},
		{"[fd00::1]:80", false, false},
		{"[2606:4700::1111]:443", true, true},
		// IPv4, unchanged.
		{"127.0.0.1:80", false, true},
		{"169.254.169.254:80", false, false},
		{"93.184.216.34:443", true, true},
	} {
		ap := netip.MustParseAddrPort(c.addr)
		if err := closed.Check(ap); (err == nil) != c.closed {
			t.Errorf("%s, no network admitted: %v, want allowed %v", c.addr, err, c.closed)
		}
		if err := open.Check(ap); (err == nil) != c.open {
			t.Errorf("%s, 127.0.0.1/32, 10.0.0.0/8, ::1/128 and fe80::/10 admitted: %v, want allowed %v", c.addr, err, c.open)
		}
	}
	// The server's own address, inside an IPv6 one, is never a webhook's.
	own := Policy{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}, Own: []netip.AddrPort{netip.MustParseAddrPort("0.0.0.0:5006"), netip.MustParseAddrPort("10.9.1.1:9106")}}
	for _, addr := range []string{"[64:ff9b::7f00:1]:5006", "[::127.0.0.1]:5006", "[::ffff:127.0.0.1]:5006", "[2002:7f00:1::]:5006", "[64:ff9b::a09:101]:9106"} {
		if err := own.Check(netip.MustParseAddrPort(addr)); err == nil || !strings.Contains(err.Error(), "own address") {
			t.Errorf("%s, the server's own: %v", addr, err)
		}
	}
}

// CheckURL refuses such an address when a webhook is set, saying which
// IPv4 address it carries.
func TestCheckURLJudgesTheIPv4Inside(t *testing.T) {
	p := Policy{}
	for raw, inside := range map[string]string{
		"http://[64:ff9b::7f00:1]/hook":        "127.0.0.1",
		"http://[64:ff9b::a9fe:a9fe]/latest":   "169.254.169.254",
		"https://[::10.0.0.1]:8443/hook":       "10.0.0.1",
		"http://[2002:c0a8:101::1]/hook":       "192.168.1.1",
		"http://[::ffff:127.0.0.1]:8080/hook":  "",
		"http://[64:ff9b:1::7f00:1]:8080/hook": "",
	} {
		_, err := p.CheckURL(t.Context(), raw)
		var refused *Refused
		if !errors.As(err, &refused) || inside != "" && !strings.Contains(err.Error(), "the IPv4 address "+inside+" inside") {
			t.Errorf("%s: %v, want refused (the IPv4 address %s inside)", raw, err, inside)
		}
	}
	if _, err := p.CheckURL(t.Context(), "https://[64:ff9b::5db8:d822]/hook"); err != nil {
		t.Errorf("NAT64 of a public address: %v", err)
	}
}

// The address a call dials is judged the same way: a call to NAT64's
// loopback or an IPv4-compatible private address is refused before it
// connects; one admitted by the policy is dialled.
func TestACallDialsOnlyWhatTheIPv4InsideMayReach(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	port := u.Port()
	closed := New(Policy{})
	for _, host := range []string{"[64:ff9b::7f00:1]", "[::127.0.0.1]", "[::10.0.0.1]", "[64:ff9b::a9fe:a9fe]", "[::ffff:127.0.0.1]"} {
		var refused *Refused
		if _, err := closed.Post(t.Context(), "http://"+host+":"+port+"/hook", "s", nil, "check", 1); !errors.As(err, &refused) {
			t.Errorf("a call to %s: %v, want refused", host, err)
		}
	}
	// Admitted: the mapped loopback reaches the server; NAT64's is
	// dialled (and goes nowhere here, there being no gateway).
	loop := New(Policy{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}})
	if status, err := loop.Post(t.Context(), "http://[::ffff:127.0.0.1]:"+port+"/hook", "s", nil, "check", 2); err != nil || status != 200 {
		t.Errorf("a call to the mapped loopback, admitted: %d %v", status, err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 500*time.Millisecond)
	defer cancel()
	var refused *Refused
	if _, err := loop.Post(ctx, "http://[64:ff9b::7f00:1]:"+port+"/hook", "s", nil, "check", 3); err == nil || errors.As(err, &refused) {
		t.Errorf("a call to NAT64's loopback, admitted: %v, want dialled (and failing here)", err)
	}
}
