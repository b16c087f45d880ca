package registry

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/distribution/distribution/v3/registry/auth"

	"arena/accounts"
	"arena/internal/errs"
)

func TestParseRoute(t *testing.T) {
	for path, want := range map[string]route{
		"/v2/":                                  {},
		"/v2/_catalog":                          {},
		"/v2/alice/bot/manifests/v1":            {repo: "alice/bot", kind: "manifests", ref: "v1"},
		"/v2/alice/deep/bot/blobs/sha256:ab":    {repo: "alice/deep/bot", kind: "blobs", ref: "sha256:ab"},
		"/v2/alice/bot/blobs/uploads/":          {repo: "alice/bot", kind: "blobs/uploads", ref: ""},
		"/v2/alice/bot/blobs/uploads/1234-abcd": {repo: "alice/bot", kind: "blobs/uploads", ref: "1234-abcd"},
		"/v2/alice/bot/tags/list":               {repo: "alice/bot", kind: "tags", ref: "list"},
		"/v2/alice/manifests/bot/manifests/v2":  {repo: "alice/manifests/bot", kind: "manifests", ref: "v2"},
		"/v2/alice/bot/referrers/sha256:ab":     {repo: "alice/bot", kind: "referrers", ref: "sha256:ab"},
		"/api/matches":                          {},
	} {
		if got := parseRoute(path); got != want {
			t.Errorf("parseRoute(%q) = %+v, want %+v", path, got, want)
		}
	}
}

func TestPermit(t *testing.T) {
	alice := caller{principal: accounts.Principal{Name: "alice", Role: accounts.RolePlayer, Teams: []string{"red"}}}
	admin := caller{principal: accounts.Principal{Name: "admin", Role: accounts.RoleAdmin}}
	platform := caller{platform: true}
	repo := func(name string) auth.Resource { return auth.Resource{Type: "repository", Name: name} }
	catalog := auth.Resource{Type: "registry", Name: "catalog"}
	for _, c := range []struct {
		who    caller
		res    auth.Resource
		action string
		want   error
	}{
		{alice, repo("alice/bot"), "push", nil},
		{alice, repo("alice/bot"), "pull", nil},
		{alice, repo("red/bot"), "delete", nil},
		{alice, repo("bob/bot"), "pull", errs.ErrDenied},
		{alice, repo("bob/bot"), "push", errs.ErrDenied},
		{alice, repo("alice"), "push", errs.ErrDenied}, // no namespace: an official image's name
		{alice, repo("alicebot/x"), "push", errs.ErrDenied},
		{alice, catalog, "*", errs.ErrDenied},
		{admin, repo("bob/bot"), "push", nil},
		{admin, catalog, "*", nil},
		{platform, repo("bob/bot"), "pull", nil},
		{platform, repo("bob/bot"), "push", errs.ErrDenied},
		{platform, catalog, "*", nil},
	} {
		err := permit(c.who, c.res, c.action)
		if c.want == nil && err != nil || c.want != nil && errs.Class(err) != c.want {
			t.Errorf("%s %s %s: %v, want %v", c.who.name(), c.action, c.res.Name, err, c.want)
		}
	}
}

// A request without credentials is refused, unless the registry is open
// (local mode without a token), where it is the admin's.
func TestIdentify(t *testing.T) {
	r := &Registry{platformSecret: "s3cret"}
	req := httptest.NewRequest("GET", "/v2/", nil)
	if _, err := r.identify(req); !errs.IsUnauthenticated(err) {
		t.Errorf("no credentials: %v", err)
	}
	r.deps.Open = true
	if c, err := r.identify(req); err != nil || !c.principal.Admin() {
		t.Errorf("no credentials, open: %+v %v", c, err)
	}
	req.SetBasicAuth(PlatformUser, "guess")
	if _, err := r.identify(req); !errs.IsUnauthenticated(err) {
		t.Errorf("a guessed platform secret: %v", err)
	}
	req.SetBasicAuth(PlatformUser, "s3cret")
	if c, err := r.identify(req); err != nil || !c.platform {
		t.Errorf("the platform: %+v %v", c, err)
	}
}

// A refusal's status and OCI code are its class's (errorStatus).
func TestErrorStatus(t *testing.T) {
	for _, tt := range []struct {
		give   error
		status int
		code   string
	}{
		{errs.Errorf(errs.ErrUnauthenticated, "sign in"), http.StatusUnauthorized, "UNAUTHORIZED"},
		{errs.Errorf(errs.ErrDenied, "not yours"), http.StatusForbidden, "DENIED"},
		{errs.Errorf(errs.ErrNotFound, "no such repository"), http.StatusNotFound, "NAME_UNKNOWN"},
		{errs.Errorf(errs.ErrInvalid, "bad name"), http.StatusBadRequest, "UNSUPPORTED"},
		{errs.Errorf(errs.ErrConflict, "taken"), http.StatusConflict, "UNSUPPORTED"},
		{errs.Errorf(errs.ErrUnavailable, "shutting down"), http.StatusServiceUnavailable, "UNAVAILABLE"},
		{errs.TooMany(errors.New("over the quota"), time.Minute), http.StatusTooManyRequests, "TOOMANYREQUESTS"},
		{fmt.Errorf("push: %w", errs.Errorf(errs.ErrDenied, "not yours")), http.StatusForbidden, "DENIED"},
		{errors.New("the disk broke"), http.StatusInternalServerError, "UNKNOWN"},
	} {
		if status, code := errorStatus(tt.give); status != tt.status || code != tt.code {
			t.Errorf("%v: %d %s, want %d %s", tt.give, status, code, tt.status, tt.code)
		}
	}
}
