package web

import (
	"crypto/tls"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
)

// Only a trusted proxy names the client and the scheme: the right-most
// address of its list that is not a trusted proxy; from anyone else the
// headers are ignored.
func TestTheClientBehindATrustedProxy(t *testing.T) {
	s := &Server{cfg: Config{TrustedProxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("2001:db8:a::/48")}}}
	for _, tt := range []struct {
		what, peer string
		header     []string // name, value pairs
		client     string
		tls        bool
	}{
		{"no proxy", "192.0.2.7:4000", nil, "192.0.2.7", false},
		{"an untrusted peer's X-Forwarded-For", "192.0.2.7:4000", []string{"X-Forwarded-For", "198.51.100.1"}, "192.0.2.7", false},
		{"an untrusted peer's X-Forwarded-Proto", "192.0.2.7:4000", []string{"X-Forwarded-Proto", "https"}, "192.0.2.7", false},
		{"an untrusted peer's Forwarded", "192.0.2.7:4000", []string{"Forwarded", "for=198.51.100.1;proto=https"}, "192.0.2.7", false},
		{"a trusted proxy", "10.1.2.3:4000", []string{"X-Forwarded-For", "198.51.100.1", "X-Forwarded-Proto", "https"}, "198.51.100.1", true},
		{"a client's own claim to the left", "10.1.2.3:4000", []string{"X-Forwarded-For", "203.0.113.9, 198.51.100.1"}, "198.51.100.1", false},
		{"two trusted proxies", "10.1.2.3:4000", []string{"X-Forwarded-For", "203.0.113.9, 198.51.100.1, 10.9.9.9"}, "198.51.100.1", false},
		{"two headers", "10.1.2.3:4000", []string{"X-Forwarded-For", "203.0.113.9", "X-Forwarded-For", "198.51.100.1"}, "198.51.100.1", false},
		{"all trusted", "10.1.2.3:4000", []string{"X-Forwarded-For", "10.4.4.4, 10.9.9.9"}, "10.4.4.4", false},
		{"a proxy that names no client", "10.1.2.3:4000", nil, "10.1.2.3", false},
		{"garbage from the proxy", "10.1.2.3:4000", []string{"X-Forwarded-For", "not-an-address"}, "10.1.2.3", false},
		{"Forwarded", "10.1.2.3:4000", []string{"Forwarded", `for=203.0.113.9, for="[2001:db8:cafe::17]:4711";proto=https`}, "2001:db8:cafe::17", true},
		{"Forwarded with a port", "10.1.2.3:4000", []string{"Forwarded", "for=198.51.100.1:5000"}, "198.51.100.1", false},
		{"a trusted IPv6 proxy", "[2001:db8:a::1]:4000", []string{"X-Forwarded-For", "198.51.100.1", "X-Forwarded-Proto", "http"}, "198.51.100.1", false},
		{"a mapped IPv4 proxy", "[::ffff:10.1.2.3]:4000", []string{"X-Forwarded-For", "::ffff:198.51.100.1"}, "198.51.100.1", false},
	} {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = tt.peer
		for i := 0; i+1 < len(tt.header); i += 2 {
			r.Header.Add(tt.header[i], tt.header[i+1])
		}
		if got := s.clientIP(r); got != tt.client {
			t.Errorf("%s: client %s, want %s", tt.what, got, tt.client)
		}
		if got := s.overTLS(r); got != tt.tls {
			t.Errorf("%s: over TLS %v, want %v", tt.what, got, tt.tls)
		}
	}
	r := httptest.NewRequest("GET", "/", nil)
	r.TLS = &tls.ConnectionState{}
	if !s.overTLS(r) {
		t.Error("a request over TLS here is not over TLS")
	}
}

// signUp sends a sign-up as from the client an X-Forwarded-For names.
func signUp(t *testing.T, url, name, invite, forwardedFor string) int {
	t.Helper()
	body := fmt.Sprintf(`{"name":%q,"password":"a-long-password","invite":%q}`, name, invite)
	req, _ := http.NewRequest("POST", url+"/api/users", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if forwardedFor != "" {
		req.Header.Set("X-Forwarded-For", forwardedFor)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}

// A class behind one address signs up at once: each sign-up that brings
// a valid invitation is admitted by it, 100 of them from one address,
// some at the same moment. Without one (or with a guessed one) a client
// makes at most ARENA_SIGNUP_RATE sign-ups an hour.
func TestAClassSignsUpFromOneAddress(t *testing.T) {
	ms := newMatrixServer(t, Config{SignupsPerHour: 10})
	_, admin := ms.token(t, "admin")
	codes := make([]string, 100)
	for i := range codes {
		_, v := ms.do(t, "POST", "/api/invites", "{}", "Authorization", "Bearer "+admin)
		codes[i] = v["code"].(string)
	}
	var wg sync.WaitGroup
	statuses := make([]int, len(codes))
	for i, code := range codes {
		wg.Go(func() { statuses[i] = signUp(t, ms.url, fmt.Sprintf("student%03d", i), code, "") })
		if i%10 == 9 {
			wg.Wait()
		}
	}
	wg.Wait()
	for i, st := range statuses {
		if st != http.StatusCreated {
			t.Errorf("student%03d's sign-up with an invitation: %d", i, st)
		}
	}
	// The invitations are used: each again is no admission.
	limited := 0
	for i := range 11 {
		switch st := signUp(t, ms.url, fmt.Sprintf("again%02d", i), codes[i], ""); st {
		case http.StatusTooManyRequests:
			limited++
		case http.StatusForbidden:
		default:
			t.Errorf("a sign-up with a used invitation: %d", st)
		}
	}
	if limited != 1 {
		t.Errorf("%d of 11 sign-ups with used invitations limited, want 1 (10 an hour)", limited)
	}
	if st := signUp(t, ms.url, "guesser", "invite_"+strings.Repeat("a", 43), ""); st != http.StatusTooManyRequests {
		t.Errorf("a guessed invitation past the limit: %d, want 429", st)
	}
}

// Behind a trusted proxy, two clients have limits of their own; a
// forwarded address from a connection that is not a trusted proxy is
// ignored (its sender is the client).
func TestSignUpLimitsBehindAProxy(t *testing.T) {
	behind := newMatrixServer(t, Config{SignupsPerHour: 2, TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}})
	for i, want := range []int{http.StatusForbidden, http.StatusForbidden, http.StatusTooManyRequests} {
		if st := signUp(t, behind.url, fmt.Sprintf("alpha%d", i), "", "198.51.100.1"); st != want {
			t.Errorf("client 198.51.100.1's sign-up %d: %d, want %d", i+1, st, want)
		}
	}
	if st := signUp(t, behind.url, "beta", "", "198.51.100.2"); st != http.StatusForbidden {
		t.Errorf("client 198.51.100.2's first sign-up: %d, want 403 (not limited: sign-up needs an invitation)", st)
	}
	direct := newMatrixServer(t, Config{SignupsPerHour: 2, TrustedProxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}})
	for i, want := range []int{http.StatusForbidden, http.StatusForbidden, http.StatusTooManyRequests} {
		if st := signUp(t, direct.url, fmt.Sprintf("gamma%d", i), "", fmt.Sprintf("198.51.100.%d", i)); st != want {
			t.Errorf("an untrusted client's sign-up %d naming another client each time: %d, want %d", i+1, st, want)
		}
	}
}

// Behind a trusted proxy that says the page came over HTTPS, the session
// cookie is Secure; over plain HTTP it is not.
func TestSecureCookiesBehindATrustedProxy(t *testing.T) {
	ms := newMatrixServer(t, Config{TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}})
	body := fmt.Sprintf(`{"name":"bob","password":%q}`, password("bob"))
	ck := ms.request(t, "POST", "/api/session", body, "X-Forwarded-Proto", "https").Header.Get("Set-Cookie")
	for _, attr := range []string{"Secure", "HttpOnly", "SameSite=Lax"} {
		if !strings.Contains(ck, attr) {
			t.Errorf("the cookie behind the proxy over HTTPS %q lacks %s", ck, attr)
		}
	}
	if ck := ms.request(t, "POST", "/api/session", body, "X-Forwarded-Proto", "http").Header.Get("Set-Cookie"); strings.Contains(ck, "Secure") {
		t.Errorf("a cookie over plain HTTP is Secure: %q", ck)
	}
}
