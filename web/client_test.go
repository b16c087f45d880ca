package web

import (
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
)

// The per-client limits count a client by its address's group: a client
// that moves through the addresses of its group (127.x, its IPv6 /64)
// is one client still.
func TestClientGroups(t *testing.T) {
	tests := []struct{ give, want string }{
		{"192.0.2.7", "192.0.2.7"},
		{"192.0.2.8", "192.0.2.8"},
		{"::ffff:192.0.2.7", "192.0.2.7"},
		{"127.0.0.1", "loopback"},
		{"127.45.3.2", "loopback"},
		{"::1", "loopback"},
		{"2001:db8:1:2:aaaa::1", "2001:db8:1:2::/64"},
		{"2001:db8:1:2:ffff:ffff:ffff:ffff", "2001:db8:1:2::/64"},
		{"2001:db8:1:3::1", "2001:db8:1:3::/64"},
		{"fe80::1%eth0", "fe80::/64"},
		{"not an address", "not an address"},
	}
	for _, tt := range tests {
		if got := clientGroup(tt.give); got != tt.want {
			t.Errorf("clientGroup(%q) = %q, want %q", tt.give, got, tt.want)
		}
	}
}

// A client that signs up from one loopback address after another (as an
// attacker on the host may: every 127.x is its own) is one client: past
// the sign-up limit (10 an hour) it is refused.
func TestALoopbackClientIsOneClientWhateverItsAddress(t *testing.T) {
	ms := newTestServer(t, Config{Auth: AuthAccounts, SignupsPerHour: 10}, 1)
	refused := 0
	for i := range 13 {
		from := &net.TCPAddr{IP: net.IPv4(127, 0, 0, byte(2+i))}
		c := &http.Client{Transport: &http.Transport{DialContext: (&net.Dialer{LocalAddr: from}).DialContext}}
		req, _ := http.NewRequest("POST", ms.url+"/api/users", strings.NewReader(fmt.Sprintf(`{"name":"newcomer%d","password":"a-long-password"}`, i)))
		req.Header.Set("Content-Type", "application/json")
		res, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode == http.StatusTooManyRequests {
			refused++
		}
	}
	if refused != 3 {
		t.Errorf("%d of 13 sign-ups from 127.0.0.2–14 refused, want 3 (10 an hour)", refused)
	}
}
