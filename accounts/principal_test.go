package accounts

import (
	"testing"

	"arena/internal/errs"
)

var (
	alice = Principal{Name: "alice", Role: RolePlayer, Teams: []string{"red"}, Via: ViaSession}
	bob   = Principal{Name: "bob", Role: RolePlayer, Via: ViaSession}
	admin = Principal{Name: AdminName, Role: RoleAdmin, Via: ViaSession}
)

func TestMayChange(t *testing.T) {
	tests := []struct {
		who   Principal
		owner string
		want  error
	}{
		{alice, "alice", nil},
		{alice, "red", nil},
		{bob, "alice", errs.ErrDenied},
		{bob, "red", errs.ErrDenied},
		{admin, "alice", nil},
		{admin, "", nil},
		{alice, "", errs.ErrDenied}, // the platform's (a ladder's match)
		{Anonymous, "alice", errs.ErrUnauthenticated},
		{Principal{Name: "eve", Role: "nobody"}, "eve", nil},
	}
	for _, tt := range tests {
		err := tt.who.MayChange("entry 1", tt.owner)
		if tt.want == nil && err != nil || tt.want != nil && errs.Class(err) != tt.want {
			t.Errorf("%q changes a thing of %q: %v, want %v", tt.who.Name, tt.owner, err, tt.want)
		}
	}
	if err := bob.MayChange("entry 1 (x)", "red"); err.Error() != "entry 1 (x) belongs to red: only its owner (or a member of that team) or an admin may change it" {
		t.Errorf("the reason: %q", err)
	}
}

func TestMayPlay(t *testing.T) {
	examples := []string{"arena/tanks-random"}
	tests := []struct {
		who   Principal
		ref   string
		allow []string
		want  error
	}{
		{alice, "alice/bot", nil, nil},
		{alice, "alice/bot:v3", nil, nil},
		{alice, "red/bot@sha256:" + sha, nil, nil},
		{alice, "localhost:5006/alice/bot", nil, nil},
		{alice, "127.0.0.1:27999/alice/bot", nil, errs.ErrDenied}, // another registry's
		{alice, "arena/tanks-random", nil, nil},
		{alice, "arena/tanks-hunter", nil, errs.ErrDenied}, // not an example
		{alice, "bob/bot", nil, errs.ErrDenied},
		{alice, "alicebot", nil, errs.ErrDenied},         // docker.io/library/alicebot
		{alice, "sha256:" + sha, nil, errs.ErrDenied},    // an id names no owner
		{alice, "Alice/Bot", nil, errs.ErrDenied},        // not a reference
		{alice, "team_x/bot", []string{"team_*/*"}, nil}, // ARENA_ALLOW
		{admin, "anything/at-all", nil, nil},
		{admin, "anything/at-all", []string{"team_*/*"}, errs.ErrDenied},
		{Anonymous, "arena/tanks-random", nil, errs.ErrUnauthenticated},
	}
	for _, tt := range tests {
		err := tt.who.MayPlay(tt.ref, Images{Allow: tt.allow, Examples: examples, Own: func(h string) bool { return h == "localhost:5006" }})
		if tt.want == nil && err != nil || tt.want != nil && errs.Class(err) != tt.want {
			t.Errorf("%q plays %s (allow %v): %v, want %v", tt.who.Name, tt.ref, tt.allow, err, tt.want)
		}
	}
}

const sha = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

// A reference is in its namespace's owner's name when it names no
// registry host, or one of the server's own; another registry's never is.
func TestNamespace(t *testing.T) {
	own := func(host string) bool {
		return host == "localhost:5006" || host == "127.0.0.1:5006" || host == "arena.school.edu"
	}
	for ref, want := range map[string]string{
		"alice/bot":                          "alice",
		"alice/bot:v1":                       "alice",
		"localhost:5006/alice/bot":           "alice",
		"127.0.0.1:5006/alice/bot:v1":        "alice",
		"arena.school.edu/alice/bot":         "alice",
		"docker.io/alice/bot":                "alice",
		"127.0.0.1:27999/alice/secretbot:v1": "",
		"localhost:5007/alice/bot":           "",
		"registry.example/team/x/y":          "",
		"ghcr.io/alice/bot":                  "",
		"ubuntu":                             "",
		"library/ubuntu":                     "",
		"sha256:" + sha:                      "",
		"NotAReference":                      "",
		"arena.school.edu/library/bot":       "library",
	} {
		if got := Namespace(ref, own); got != want {
			t.Errorf("Namespace(%q) = %q, want %q", ref, got, want)
		}
	}
	if got := Namespace("localhost:5006/alice/bot", nil); got != "" {
		t.Errorf("with no host of its own, localhost:5006/alice/bot is %q's", got)
	}
}

func TestCheckName(t *testing.T) {
	for name, ok := range map[string]bool{
		"alice": true, "team-a": true, "team_b2": true, "ab": true,
		"a": false, "Alice": false, "-alice": false, "alice-": false, "al--ice": false, "al ice": false,
		"admin": false, "arena": false, "library": false,
		"abcdefghijabcdefghijabcdefghijabc": false, // 33
	} {
		if err := CheckName(name); (err == nil) != ok {
			t.Errorf("CheckName(%q) = %v", name, err)
		}
	}
}
