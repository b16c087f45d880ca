package webhook

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
)

// The policy: public addresses pass; private, loopback, link-local and
// CGNAT ones only when admitted; the server's own never, an unspecified
// listen address standing for every address of the host on its port.
func TestWhereAWebhookMayGo(t *testing.T) {
	p := Policy{Allow: []netip.Prefix{netip.MustParsePrefix("10.9.0.0/16"), netip.MustParsePrefix("127.0.0.1/32")},
		Own: []netip.AddrPort{netip.MustParseAddrPort("0.0.0.0:5006"), netip.MustParseAddrPort("10.9.1.1:9106")}}
	for addr, ok := range map[string]bool{
		"93.184.216.34:443": true, "10.9.3.4:80": true, "127.0.0.1:8080": true,
		"10.1.2.3:80": false, "192.168.1.1:80": false, "169.254.169.254:80": false, "100.64.0.1:80": false,
		"[::1]:80": false, "[fe80::1]:80": false, "0.0.0.0:80": false,
		"127.0.0.1:5006": false, "10.9.1.1:9106": false, "[::ffff:127.0.0.1]:5006": false,
	} {
		err := p.Check(netip.MustParseAddrPort(addr))
		if (err == nil) != ok {
			t.Errorf("%s: %v, want allowed %v", addr, err, ok)
		}
	}
	if _, err := p.CheckURL(t.Context(), "http://127.0.0.1:5006/hook"); err == nil || !strings.Contains(err.Error(), "own address") {
		t.Errorf("the server's own URL: %v", err)
	}
}

// A call is signed, dials only what the policy allows, and follows no
// redirect.
func TestACall(t *testing.T) {
	var sig string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sig = r.Header.Get("X-Arena-Signature")
		if r.URL.Path == "/away" {
			http.Redirect(w, r, "http://169.254.169.254/", http.StatusFound)
		}
	}))
	defer srv.Close()
	allowed := New(Policy{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}})
	if status, err := allowed.Post(t.Context(), srv.URL+"/hook", "s3cret", []byte(`{"a":1}`), "check", 1); err != nil || status != 200 || sig != Sign("s3cret", []byte(`{"a":1}`)) {
		t.Errorf("a call: %d %v, signature %q", status, err, sig)
	}
	if status, err := allowed.Post(t.Context(), srv.URL+"/away", "s", nil, "check", 2); err == nil || status != http.StatusFound {
		t.Errorf("a redirect: %d %v", status, err)
	}
	var refused *Refused
	if _, err := New(Policy{}).Post(t.Context(), srv.URL+"/hook", "s", nil, "check", 3); !errors.As(err, &refused) {
		t.Errorf("a call to loopback without the policy's leave: %v", err)
	}
	// HMAC-SHA256 of a known pair (the example on Wikipedia).
	if got := Sign("key", []byte("The quick brown fox jumps over the lazy dog")); got != "sha256=f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8" {
		t.Errorf("Sign: %s", got)
	}

}
