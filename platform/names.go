package platform

import (
	"context"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"

	"github.com/distribution/reference"

	"arena/accounts"
	"arena/engine"
	"arena/internal/errs"
)

// mayPlayAll checks every bot image of a request against the
// principal's rights (and ARENA_ALLOW), naming the first it may not
// play by its place.
func (s *Platform) mayPlayAll(p accounts.Principal, field string, refs ...string) error {
	for i, ref := range refs {
		if err := p.MayPlay(ref, s.images); err != nil {
			name := field
			if len(refs) > 1 {
				name = fmt.Sprintf("%s[%d]", field, i)
			}
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return nil
}

// examples are the example bots of every game.
func examples(defaults map[string][]string) []string {
	var out []string
	for _, refs := range defaults {
		out = append(out, refs...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// operatorNamespace refuses a user or team name that is the namespace of
// an image the server runs by name: ARENA_ALLOW's patterns, the example
// bots, the logic games (ARENA_GAMES and those admins registered). Its
// owner could push images of those names to the registry, which the
// server would then play in their place.
func (s *Platform) operatorNamespace(ctx context.Context, name string) error {
	refs := append([]string{}, s.cfg.Allow...)
	for _, bots := range s.cfg.DefaultBots {
		refs = append(refs, bots...)
	}
	for _, g := range s.deps.Games.List() {
		if h, ok := g.(engine.Hosted); ok {
			ref, _ := h.HostImage()
			refs = append(refs, ref)
		}
	}
	registered, err := s.deps.Store.LogicGames(ctx)
	if err != nil {
		return err
	}
	for _, g := range registered {
		refs = append(refs, g.Image)
	}
	for _, ref := range refs {
		if ns := s.namespaceOf(ref); ns == name {
			return errs.Errorf(errs.ErrInvalid, "name %q is reserved: this server's own images are %s/…", name, ns)
		}
	}
	return nil
}

// namespaceOf is the owner a name of an image (or an ARENA_ALLOW pattern)
// would have in this server's registry: its first path component, for a
// name of Docker Hub's (the default) or of this registry; "" for another
// registry's, or a name of one component.
func (s *Platform) namespaceOf(ref string) string {
	if named, err := reference.ParseNormalizedNamed(ref); err == nil {
		if d := reference.Domain(named); d != "docker.io" && !s.ownRegistry(d) {
			return ""
		}
		ref = reference.Path(named)
	}
	ns, _, ok := strings.Cut(ref, "/")
	if !ok || ns == "library" {
		return ""
	}
	return ns
}

// ownRegistry says whether a registry host (an image's domain, HOST or
// HOST:PORT) is this server's registry: the address its engine pulls from
// (RegistryConfig.Host), or a name the server answers to (Config.Hosts,
// not "*") with no port or that address's port (localhost:5006,
// 127.0.0.1:5006, the public name behind a proxy). Another port of
// those names is another registry (a second one on a shared engine):
// nobody's namespace here.
func (s *Platform) ownRegistry(host string) bool {
	if host == s.cfg.Registry.Host {
		return true
	}
	if slices.Contains(s.cfg.Hosts, "*") || !s.servesHost(host) {
		return false
	}
	_, port, err := net.SplitHostPort(host)
	if err != nil {
		return true // no port
	}
	_, own, err := net.SplitHostPort(s.cfg.Registry.Host)
	return err == nil && port == own
}

// hostName is a Host header's name, lower case, without port or brackets.
func hostName(host string) string {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	return strings.ToLower(strings.Trim(host, "[]"))
}

// ServesHost reports whether a host name (a Host header, or the domain
// of a bot's image) names this server.
func (st *Site) ServesHost(host string) bool { return st.p.servesHost(host) }

// servesHost reports whether a host name names this server (see
// Site.ServesHost).
func (s *Platform) servesHost(host string) bool {
	name := hostName(host)
	for _, h := range s.cfg.Hosts {
		if h == "*" || hostName(h) == name {
			return true
		}
	}
	return false
}

// ImportRoster imports a course's roster (accounts.ParseRoster: a CSV of
// name, email, team, role) as by, an admin: the accounts and teams made,
// the accounts' links' codes. A name that is the namespace of the
// server's own images is a bad row.
func (pp *People) ImportRoster(ctx context.Context, by accounts.Principal, r io.Reader) ([]accounts.NewAccount, error) {
	s := pp.p
	if s.deps.Accounts == nil {
		return nil, errs.New(errs.ErrNotFound, "this server has no accounts (local mode)")
	}
	if !by.Admin() {
		return nil, errs.New(errs.ErrDenied, "only admins import rosters")
	}
	rows, err := accounts.ParseRoster(r)
	if err != nil {
		return nil, err
	}
	for _, row := range rows {
		for _, name := range []string{row.Name, row.Team} {
			if name == "" {
				continue
			}
			if err := s.operatorNamespace(ctx, name); err != nil {
				return nil, errs.Errorf(errs.ErrInvalid, "line %d: %v", row.Line, err)
			}
		}
	}
	return s.deps.Accounts.ImportRoster(ctx, by, rows)
}
