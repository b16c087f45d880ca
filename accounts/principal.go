// Package accounts is who may do what on an Arena server: accounts with
// argon2id passwords, API tokens, sign-up invitations, teams, the person
// behind a request (a Principal) and the rules of ownership.
//
//   - principal.go: a Principal and the ownership rules (pure,
//     table-tested): who may change a thing, which images one may play.
//   - service.go: accounts, passwords, tokens, invitations and teams over
//     the store.
//   - limit.go: the limits on signing in, per account and per client.
//
// Its errors are of the classes of package errs (unauthenticated,
// denied, invalid, conflict, not found, too many), which the edges
// answer by.
//
// Sessions (the cookie) are the web server's, with alexedwards/scs over
// the store's session table.
package accounts

import (
	"path"
	"slices"
	"strings"

	"github.com/distribution/reference"

	"arena/internal/errs"
)

// The roles of an account.
const (
	RoleAdmin  = "admin"  // everything
	RolePlayer = "player" // their own bots, matches and entries; reading others'
)

// AdminName is the account ARENA_ADMIN_PASSWORD makes, and the owner of
// what was made before accounts (or by anyone in local mode).
const AdminName = "admin"

// How a request's principal was known.
const (
	ViaLocal      = "local"       // local mode: every visitor acts as the admin
	ViaSession    = "session"     // the session cookie
	ViaToken      = "token"       // an API token
	ViaAdminToken = "admin token" // ARENA_TOKEN
)

// Principal is who a request acts for: a signed-in user (or the admin of
// local mode), or nobody.
type Principal struct {
	// Name is the user's name; empty for an anonymous visitor.
	Name string
	Role string
	// Teams are the teams the user is a member of.
	Teams []string
	// Via says how the request was known to be theirs.
	Via string
	// TokenID is the API token's id when Via is ViaToken.
	TokenID int64
}

// Anonymous is a visitor nobody knows.
var Anonymous = Principal{}

// SignedIn reports whether the principal is someone.
func (p Principal) SignedIn() bool { return p.Name != "" }

// Admin reports whether the principal may do everything.
func (p Principal) Admin() bool { return p.Name != "" && p.Role == RoleAdmin }

// Owners are the owners whose things are the principal's: the user and
// their teams.
func (p Principal) Owners() []string {
	if p.Name == "" {
		return nil
	}
	return append([]string{p.Name}, p.Teams...)
}

// Owns reports whether a thing of owner is the principal's own (theirs
// or a team's they are in).
func (p Principal) Owns(owner string) bool {
	return p.Name != "" && owner != "" && slices.Contains(p.Owners(), owner)
}

// MayChange says whether the principal may change (pause, remove,
// rename, cancel) a thing of owner, what names the thing in the answer;
// the error says why not.
func (p Principal) MayChange(what, owner string) error {
	switch {
	case !p.SignedIn():
		return errs.Errorf(errs.ErrUnauthenticated, "sign in to change %s", what)
	case p.Admin(), p.Owns(owner):
		return nil
	case owner == "":
		return errs.Errorf(errs.ErrDenied, "%s belongs to the platform: only an admin may change it", what)
	default:
		return errs.Errorf(errs.ErrDenied, "%s belongs to %s: only its owner (or a member of that team) or an admin may change it", what, owner)
	}
}

// Images is the server's policy on which images may play.
type Images struct {
	// Allow are the operator's patterns (ARENA_ALLOW); empty allows any
	// image to the admin, and none beyond their own to players.
	Allow []string
	// Examples are the example bots, which anyone may play.
	Examples []string
	// Own says whether a registry host (HOST[:PORT]) is this server's
	// own registry: an image under it is in its namespace's owner's
	// name, as one with no host is. Nil: no host is.
	Own func(host string) bool
}

// Namespace is the owner an image reference names (see Namespace), when
// it has no registry host or one of this server's own.
func (im Images) Namespace(ref string) string { return Namespace(ref, im.Own) }

// allowed reports whether ref matches one of the operator's patterns.
func (im Images) allowed(ref string) bool {
	for _, p := range im.Allow {
		if ok, _ := path.Match(p, ref); ok {
			return true
		}
	}
	return false
}

// MayPlay says whether the principal may name image ref as a bot; the
// error says why not. The admin may play what ARENA_ALLOW admits (any
// image without it); a player their own images (NAME/… or TEAM/… of
// their teams), the example bots, and what ARENA_ALLOW admits.
func (p Principal) MayPlay(ref string, im Images) error {
	if !p.SignedIn() {
		return errs.Errorf(errs.ErrUnauthenticated, "sign in to play bots")
	}
	if p.Admin() {
		if len(im.Allow) == 0 || im.allowed(ref) {
			return nil
		}
		return errs.Errorf(errs.ErrDenied, "image %s is not allowed here (allowed: %s)", ref, strings.Join(im.Allow, ", "))
	}
	if slices.Contains(im.Examples, ref) || im.allowed(ref) {
		return nil
	}
	if ns := im.Namespace(ref); ns != "" && p.Owns(ns) {
		return nil
	}
	return errs.Errorf(errs.ErrDenied, "image %s is not yours to play: you may play %s, the example bots%s", ref, yours(p), allowHint(im))
}

func yours(p Principal) string {
	var names []string
	for _, o := range p.Owners() {
		names = append(names, o+"/…")
	}
	return strings.Join(names, ", ")
}

func allowHint(im Images) string {
	if len(im.Allow) == 0 {
		return ""
	}
	return " and " + strings.Join(im.Allow, ", ")
}

// Namespace is the owner an image reference names: the first component
// of its repository path (alice in alice/bot:v1), when the reference
// names no registry host (docker.io, the engine's default, counts as
// none) or one that own says is this server's (localhost:5006/alice/bot).
// Empty for another registry's image (127.0.0.1:27999/alice/bot on a
// shared engine is not alice's), an image id, a bare name (an official
// image) or what is not a reference.
func Namespace(ref string, own func(host string) bool) string {
	named, err := reference.ParseNormalizedNamed(ref)
	if err != nil {
		return ""
	}
	if d := reference.Domain(named); d != "docker.io" && (own == nil || !own(d)) {
		return ""
	}
	p := reference.Path(named)
	ns, _, ok := strings.Cut(p, "/")
	if !ok || ns == "library" && reference.Domain(named) == "docker.io" {
		return ""
	}
	return ns
}
