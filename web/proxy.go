package web

import (
	"net"
	"net/http"
	"net/netip"
	"strings"

	"github.com/labstack/echo/v4"
)

// Behind a proxy (TLS in front of the page, a lab's NAT): the connection
// comes from the proxy, which names the client in X-Forwarded-For (or
// Forwarded's for=) and the scheme in X-Forwarded-Proto (or proto=).
// Only a connection from one of Config.TrustedProxies (ARENA_TRUSTED_PROXIES)
// may say so; from anyone else those headers are ignored. The client is
// the right-most address of the list that is not a trusted proxy: the
// one the last trusted proxy saw (whatever a client writes to the left
// of it is its own claim). The client's address keys the per-client
// limits (sign-ups, wrong passwords, anonymous reads, local mode's
// starts) and the logs; the scheme decides Secure cookies and the links
// the server gives out.

// trusted says whether an address is one of the trusted proxies.
func (s *Server) trusted(a netip.Addr) bool {
	a = a.Unmap()
	for _, p := range s.cfg.TrustedProxies {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// peer is the address a request's connection comes from.
func peer(r *http.Request) (netip.Addr, string) {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Addr{}, host
	}
	return a.Unmap(), host
}

// clientIP is the address of the client a request comes from (see above).
func (s *Server) clientIP(r *http.Request) string {
	a, host := peer(r)
	if !a.IsValid() || !s.trusted(a) {
		return host
	}
	hops := forwardedFor(r.Header)
	for i := len(hops) - 1; i >= 0; i-- {
		h, ok := hopAddr(hops[i])
		if !ok {
			// Not an address: the proxy's own view is all there is.
			return host
		}
		if !s.trusted(h) {
			return h.String()
		}
		host = h.String()
	}
	return host
}

// overTLS says whether the visitor reached the page over TLS: here, or
// at a trusted proxy that says so.
func (s *Server) overTLS(r *http.Request) bool {
	if r.TLS != nil {
		return true
	}
	if a, _ := peer(r); !a.IsValid() || !s.trusted(a) {
		return false
	}
	if p := r.Header.Get("X-Forwarded-Proto"); p != "" {
		return strings.EqualFold(strings.TrimSpace(lastOf(p)), "https")
	}
	for _, el := range forwarded(r.Header) {
		if p, ok := el["proto"]; ok {
			return strings.EqualFold(p, "https")
		}
	}
	return false
}

// scheme is the scheme of the links the server gives out.
func (s *Server) scheme(r *http.Request) string {
	if s.overTLS(r) {
		return "https"
	}
	return "http"
}

// client is whom the per-client limits count a request for: its client
// address's group (clientGroup).
func (s *Server) client(c echo.Context) string {
	return clientGroup(s.clientIP(c.Request()))
}

// forwardedFor is the list of addresses a request passed through, the
// nearest last: X-Forwarded-For's, else Forwarded's for= (RFC 7239).
func forwardedFor(h http.Header) []string {
	var hops []string
	for _, v := range h.Values("X-Forwarded-For") {
		for _, hop := range strings.Split(v, ",") {
			hops = append(hops, strings.TrimSpace(hop))
		}
	}
	if len(hops) > 0 {
		return hops
	}
	for _, el := range forwarded(h) {
		if f, ok := el["for"]; ok {
			hops = append(hops, f)
		}
	}
	return hops
}

// forwarded parses the Forwarded headers: an element per proxy, each a
// map of its lower-cased parameters (quotes removed).
func forwarded(h http.Header) []map[string]string {
	var out []map[string]string
	for _, v := range h.Values("Forwarded") {
		for _, el := range strings.Split(v, ",") {
			m := map[string]string{}
			for _, pair := range strings.Split(el, ";") {
				k, val, ok := strings.Cut(strings.TrimSpace(pair), "=")
				if ok {
					m[strings.ToLower(k)] = strings.Trim(val, `"`)
				}
			}
			out = append(out, m)
		}
	}
	return out
}

// hopAddr is the address of a hop as a proxy wrote it: an address, with
// a port or not (IPv6 in brackets when with a port).
func hopAddr(hop string) (netip.Addr, bool) {
	if ap, err := netip.ParseAddrPort(hop); err == nil {
		return ap.Addr().Unmap(), true
	}
	a, err := netip.ParseAddr(strings.Trim(hop, "[]"))
	if err != nil {
		return netip.Addr{}, false
	}
	return a.Unmap(), true
}

// lastOf is the last of a comma-separated list.
func lastOf(v string) string {
	if i := strings.LastIndex(v, ","); i >= 0 {
		return v[i+1:]
	}
	return v
}
