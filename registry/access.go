package registry

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/distribution/distribution/v3/registry/auth"

	"arena/accounts"
	"arena/internal/errs"
)

// Who may do what in the registry (see SECURITY.md):
//
//   - Everyone authenticates with Basic auth: an account's name and one
//     of its API tokens (docker login HOST -u NAME, the token as the
//     password), or the platform's own credential (the server pulling a
//     bot into its engine). Nobody is anonymous here, even where the page
//     may be read anonymously: a bot image is its owner's secret.
//   - A user pushes to, pulls from and deletes in NAME/… and TEAM/… of
//     their teams; an admin anywhere; the platform pulls anything.
//   - The catalog (every repository's name) is an admin's or the
//     platform's.
//
// The check runs twice: before the registry (authorize: a refusal names
// what is wrong, as a registry error docker shows), and in the registry
// itself, as its access controller (a second line: it refuses whatever
// the first let through wrongly).

// PlatformUser is the name the platform's own credential goes by (no
// account may take it).
const PlatformUser = accounts.PlatformName

// Authenticator knows an account by its name and API token; it returns
// an error of errs.ErrUnauthenticated for credentials that are not good.
type Authenticator func(ctx context.Context, name, token string) (accounts.Principal, error)

// caller is who a registry request comes from.
type caller struct {
	principal accounts.Principal
	platform  bool
}

func (c caller) name() string {
	if c.platform {
		return PlatformUser
	}
	return c.principal.Name
}

// actingKey marks an in-process request made on behalf of an account (a
// bot built from an upload, pushed as its owner): only this process can
// set a context value.
type actingKey struct{}

// identify authenticates a request's Basic credentials.
func (r *Registry) identify(req *http.Request) (caller, error) {
	if p, ok := req.Context().Value(actingKey{}).(accounts.Principal); ok {
		return caller{principal: p}, nil
	}
	name, secret, ok := req.BasicAuth()
	if !ok && r.deps.Open {
		return caller{principal: accounts.Principal{Name: accounts.AdminName, Role: accounts.RoleAdmin, Via: accounts.ViaLocal}}, nil
	}
	if !ok {
		return caller{}, errs.Errorf(errs.ErrUnauthenticated, "authentication required: docker login with your name and an API token (made on your account page)")
	}
	if name == PlatformUser {
		if subtle.ConstantTimeCompare([]byte(secret), []byte(r.platformSecret)) != 1 {
			return caller{}, errs.Errorf(errs.ErrUnauthenticated, "the platform's credential is wrong")
		}
		return caller{platform: true}, nil
	}
	p, err := r.deps.Authenticate(req.Context(), name, secret)
	if err != nil {
		return caller{}, err
	}
	if p.Name != name {
		return caller{}, errs.Errorf(errs.ErrUnauthenticated, "the token is %s's, not %s's", p.Name, name)
	}
	return caller{principal: p}, nil
}

// permit says whether a caller may take an action ("pull", "push",
// "delete", or "*" on the catalog) on a resource.
func permit(c caller, res auth.Resource, action string) error {
	switch {
	case res.Type == "registry":
		if c.platform || c.principal.Admin() {
			return nil
		}
		return errs.Errorf(errs.ErrDenied, "only an admin lists every repository")
	case res.Type != "repository":
		return errs.Errorf(errs.ErrDenied, "unknown resource %s", res.Type)
	case c.platform && action == "pull":
		return nil
	case c.platform:
		return errs.Errorf(errs.ErrDenied, "the platform only pulls")
	case c.principal.Admin():
		return nil
	}
	ns, _, _ := strings.Cut(res.Name, "/")
	if c.principal.Owns(ns) && strings.Contains(res.Name, "/") {
		return nil
	}
	verb := map[string]string{"pull": "pull", "push": "push to", "delete": "delete in"}[action]
	if verb == "" {
		verb = action + " in"
	}
	return errs.Errorf(errs.ErrDenied, "%s may not %s %s: a user's images live under NAME/… and their teams' TEAM/… (yours: %s)",
		c.principal.Name, verb, res.Name, strings.Join(owners(c.principal), ", "))
}

func owners(p accounts.Principal) []string {
	var out []string
	for _, o := range p.Owners() {
		out = append(out, o+"/…")
	}
	return out
}

// ociError writes a registry error as the distribution spec has it.
func ociError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Basic realm="arena"`)
	}
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{"errors": []map[string]string{{"code": code, "message": msg}}})
}

// controller is the registry's access controller: the second check.
type controller struct{ r *Registry }

// challenge asks for Basic credentials.
type challenge struct{ err error }

func (c challenge) Error() string { return c.err.Error() }

func (c challenge) SetHeaders(_ *http.Request, w http.ResponseWriter) {
	w.Header().Set("WWW-Authenticate", `Basic realm="arena"`)
}

func (c controller) Authorized(req *http.Request, access ...auth.Access) (*auth.Grant, error) {
	who, err := c.r.identify(req)
	if err != nil {
		return nil, challenge{err}
	}
	grant := &auth.Grant{User: auth.UserInfo{Name: who.name()}}
	for _, a := range access {
		// The server's own deletes (an owner deleting a repository on the
		// page) come with a mark only an in-process request can carry.
		serverDelete := who.platform && a.Action == "delete" && req.Context().Value(deletingKey{}) != nil
		if err := permit(who, a.Resource, a.Action); err != nil && !serverDelete {
			return nil, challenge{err}
		}
		grant.Resources = append(grant.Resources, a.Resource)
	}
	return grant, nil
}

// controllers are the registries of this process by the name each gave
// its access controller (the library looks access controllers up by name
// in a table of its own).
var (
	controllersOnce sync.Once
	controllersMu   sync.Mutex
	controllers     = map[string]controller{}
)

const controllerType = "arena"

func registerController(id string, c controller) {
	controllersOnce.Do(func() {
		auth.Register(controllerType, func(opts map[string]any) (auth.AccessController, error) {
			id, _ := opts["id"].(string)
			controllersMu.Lock()
			defer controllersMu.Unlock()
			c, ok := controllers[id]
			if !ok {
				return nil, fmt.Errorf("no arena registry %q", id)
			}
			return c, nil
		})
	})
	controllersMu.Lock()
	controllers[id] = c
	controllersMu.Unlock()
}

func forgetController(id string) {
	controllersMu.Lock()
	delete(controllers, id)
	controllersMu.Unlock()
}

// ociCode is the distribution spec's error code of each class (package
// errs); the status is the class's (errs.HTTPStatus). The spec has no
// code for a conflict or for input that is wrong but no manifest's (a
// bad manifest says its own code, badManifest): those are UNSUPPORTED.
var ociCode = map[error]string{
	errs.ErrUnauthenticated: "UNAUTHORIZED",
	errs.ErrDenied:          "DENIED",
	errs.ErrNotFound:        "NAME_UNKNOWN",
	errs.ErrInvalid:         "UNSUPPORTED",
	errs.ErrConflict:        "UNSUPPORTED",
	errs.ErrUnavailable:     "UNAVAILABLE",
	errs.ErrTooMany:         "TOOMANYREQUESTS",
}

// errorStatus is the registry error of err: its class's status and OCI
// error code. An error of no class is the platform's failure (500,
// UNKNOWN).
func errorStatus(err error) (int, string) {
	code, ok := ociCode[errs.Class(err)]
	if !ok {
		code = "UNKNOWN"
	}
	return errs.HTTPStatus(err), code
}

// MayPush says whether an account may push to a repository (its own or
// its teams' namespace), with the reason it may not.
func (r *Registry) MayPush(p accounts.Principal, repo string) error {
	return permit(caller{principal: p}, resourceOf(repo), "push")
}
