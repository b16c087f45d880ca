package web

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"arena/accounts"
	"arena/contest"
	"arena/engine"
	"arena/internal/testsupport/poll"
	"arena/judger"
	"arena/orchestrator/fake"
	"arena/platform"
	"arena/store"
)

// The visitors of the authorization matrix, in its columns' order.
var visitors = []string{"anonymous", "alice", "bob", "carol", "admin", "token", "revoked", "expired", "admintoken"}

// matrixServer is a server in accounts mode with alice, bob and carol
// (players; alice and carol in team red) and the admin.
type matrixServer struct {
	*testServer
	seq atomic.Int64
}

const (
	matrixAdminToken = "the-admins-token"
	matrixLifetime   = time.Hour
)

func password(user string) string { return user + "-password" }

func newMatrixServer(t *testing.T, cfg Config, opts ...serverOption) *matrixServer {
	cfg.Auth = AuthAccounts
	cfg.StartsPerMinute, cfg.ReadsPerMinute = -1, -1
	if cfg.SignupsPerHour == 0 {
		cfg.SignupsPerHour = -1
	}
	cfg.SessionLifetime = matrixLifetime
	opts = append(opts, func(c *platform.Config, _ *platform.Deps) {
		c.Token = matrixAdminToken
		c.Allow = []string{"arena/*", "bots/*"}
		if c.Seats.Matches == 0 {
			c.Seats.Matches = 32
		}
	})
	ms := &matrixServer{testServer: newTestServer(t, cfg, 1, opts...)}
	ctx := t.Context()
	if err := ms.accounts.EnsureAdmin(ctx, password("admin")); err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{"alice", "bob", "carol", "dave"} {
		ms.user(t, u)
	}
	alice := ms.principal(t, "alice")
	if err := ms.accounts.CreateTeam(ctx, alice, "red"); err != nil {
		t.Fatal(err)
	}
	ms.joinTeam(t, "red", "alice", "carol")
	return ms
}

func (ms *matrixServer) fresh(prefix string) string {
	return fmt.Sprintf("%s%d", prefix, ms.seq.Add(1))
}

// user makes a player's account (as an admin does).
func (ms *matrixServer) user(t *testing.T, name string) string {
	t.Helper()
	admin := accounts.Principal{Name: "admin", Role: accounts.RoleAdmin}
	if _, err := ms.accounts.SignUp(t.Context(), admin, name, password(name), ""); err != nil {
		t.Fatalf("make %s: %v", name, err)
	}
	return name
}

func (ms *matrixServer) principal(t *testing.T, name string) accounts.Principal {
	t.Helper()
	p, err := ms.accounts.Principal(t.Context(), name, accounts.ViaToken, 0)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// joinTeam invites users into a team as its member by, and they accept.
func (ms *matrixServer) joinTeam(t *testing.T, team, by string, users ...string) {
	t.Helper()
	for _, u := range users {
		if err := ms.accounts.InviteMember(t.Context(), ms.principal(t, by), team, u); err != nil {
			t.Fatal(err)
		}
		if err := ms.accounts.Join(t.Context(), ms.principal(t, u), team); err != nil {
			t.Fatal(err)
		}
	}
}

// signIn signs a user in and returns the session's cookie header.
func (ms *matrixServer) signIn(t *testing.T, user string) []string {
	t.Helper()
	res := ms.request(t, "POST", "/api/session", fmt.Sprintf(`{"name":%q,"password":%q}`, user, password(user)))
	if res.StatusCode != http.StatusOK {
		t.Fatalf("sign in as %s: %d", user, res.StatusCode)
	}
	for _, c := range res.Cookies() {
		if c.Name == sessionCookie {
			return []string{"Cookie", sessionCookie + "=" + c.Value}
		}
	}
	t.Fatalf("sign in as %s: no session cookie", user)
	return nil
}

// token makes an API token of a user.
func (ms *matrixServer) token(t *testing.T, user string) (int64, string) {
	t.Helper()
	tok, code, err := ms.accounts.CreateToken(t.Context(), ms.principal(t, user), "test")
	if err != nil {
		t.Fatal(err)
	}
	return tok.ID, code
}

// credentials are a visitor's headers for one request (fresh each time:
// a session of its own, a token of its own); expire, when set, must
// run just before the request.
func (ms *matrixServer) credentials(t *testing.T, visitor string) (header []string, expire func()) {
	t.Helper()
	switch visitor {
	case "anonymous":
		return nil, nil
	case "alice", "bob", "carol", "admin":
		return ms.signIn(t, visitor), nil
	case "token":
		_, code := ms.token(t, "alice")
		return []string{"Authorization", "Bearer " + code}, nil
	case "revoked":
		id, code := ms.token(t, "alice")
		if err := ms.accounts.RevokeToken(t.Context(), ms.principal(t, "alice"), id); err != nil {
			t.Fatal(err)
		}
		return []string{"Authorization", "Bearer " + code}, nil
	case "expired":
		return ms.signIn(t, "alice"), func() { ms.clock.skip(matrixLifetime + time.Minute) }
	case "admintoken":
		return []string{"Authorization", "Bearer " + matrixAdminToken}, nil
	}
	t.Fatalf("no visitor %s", visitor)
	return nil, nil
}

// account is the account a visitor signs in as (dave for those who
// have none of their own).
func account(visitor string) string {
	switch visitor {
	case "alice", "bob", "carol", "admin":
		return visitor
	case "token", "expired", "revoked":
		return "alice"
	}
	return "dave"
}

// request sends a request and returns once its headers are in (a live
// stream is closed then).
func (ms *matrixServer) request(t *testing.T, method, path, body string, header ...string) *http.Response {
	t.Helper()
	res := ms.send(t, method, path, body, header...)
	if res.Header.Get("Content-Type") == "text/event-stream" {
		res.Body.Close()
	} else {
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
	}
	return res
}

// match starts a match of a user's (held: it waits or plays until
// cancelled) and returns its id.
func (ms *matrixServer) match(t *testing.T, user string, images ...string) string {
	t.Helper()
	_, code := ms.token(t, user)
	status, body := ms.do(t, "POST", "/api/matches", fmt.Sprintf(`{"game":"tanks","bots":[%q,%q]}`, images[0], images[1]), "Authorization", "Bearer "+code)
	if status != http.StatusCreated {
		t.Fatalf("start a match of %s: %d %v", user, status, body)
	}
	return body["id"].(string)
}

// humanMatch starts a match whose first seat user plays, against a held
// bot, and returns its id once the seat is asked for turn 1.
func (ms *matrixServer) humanMatch(t *testing.T, user string) string {
	t.Helper()
	_, code := ms.token(t, user)
	auth := []string{"Authorization", "Bearer " + code}
	status, body := ms.do(t, "POST", "/api/matches", `{"game":"tanks","bots":[{"human":true},"bots/held"]}`, auth...)
	if status != http.StatusCreated {
		t.Fatalf("start a match %s plays: %d %v", user, status, body)
	}
	id := body["id"].(string)
	if status, seat := ms.do(t, "GET", "/api/matches/"+id+"/moves?after=0", "", auth...); status != http.StatusOK || seat["turn"] != 1.0 {
		t.Fatalf("%s's seat: %d %v", user, status, seat)
	}
	return id
}

// entry registers a tanks ladder entry owned by owner.
func (ms *matrixServer) entry(t *testing.T, owner string) string {
	t.Helper()
	e, _, err := ms.store.RegisterEntry(t.Context(), store.Entry{Game: "tanks", Name: ms.fresh("entry"), Image: "arena/tanks-random", ImageID: "sha256:1", Mu: 25, Sigma: 8, CreatedAt: time.Now(), Owner: owner, CreatedBy: "alice"}, store.EntryLimits{})
	if err != nil {
		t.Fatal(err)
	}
	return strconv.FormatInt(e.ID, 10)
}

// route is a row of the matrix: a route, how to make a request of it for
// a visitor (fresh things to act on, made by setup), and the status each
// visitor gets, in the order of visitors.
type route struct {
	method, pattern string
	request         func(t *testing.T, ms *matrixServer, visitor string) (path, body string)
	want            string
}

func static(path, body string) func(*testing.T, *matrixServer, string) (string, string) {
	return func(*testing.T, *matrixServer, string) (string, string) { return path, body }
}

// Every route × {anonymous, a player, another player, a team mate, the
// admin, an API token, a revoked token, an expired session, the admin's
// token} → the status it gets. A route the server has and the matrix
// lacks fails the test.
func TestAuthorizationMatrix(t *testing.T) {
	ms := newMatrixServer(t, Config{}, registryAt("127.0.0.1:5006"), withDeps(func(d *platform.Deps) {
		d.Builder = &fakeBuilder{}
		d.Players = map[string]map[string][]byte{"ttt": {"index.html": []byte("<p>a logic's player</p>")}}
		d.Logic = func(_ context.Context, spec platform.LogicSpec) (engine.Game, map[string][]byte, error) {
			return judger.Named(spec.Name, spec.Image, 2, ""), nil, nil
		}
	}))
	_, aliceTok := ms.token(t, "alice")
	// A finished match of alice's, for the replay and its stream.
	_, code := ms.token(t, "alice")
	_, created := ms.do(t, "POST", "/api/matches", `{"game":"tanks","bots":["arena/tanks-random","arena/tanks-hunter"],"settings":{"zone_radius":0}}`, "Authorization", "Bearer "+code)
	finished := created["id"].(string)
	ms.waitFinal(t, finished)
	running := ms.match(t, "alice", "bots/held", "bots/held")
	aliceEntry := ms.entry(t, "alice")
	aliceChallenge, err := ms.svc.Challenges.Create(t.Context(), ms.principal(t, "alice"), platform.ChallengeRequest{Bot: "arena/tanks-random", Opponent: platform.Opponent{Bot: "arena/tanks-hunter"}, Games: 1})
	if err != nil {
		t.Fatal(err)
	}
	// The server's binary to download, and a build of alice's.
	ms.deps.Binary = filepath.Join(t.TempDir(), "arena")
	os.WriteFile(ms.deps.Binary, []byte("arena"), 0o755)
	ms.useEngine(nil)
	// A logic game registered by the admin, for each visitor to try to
	// remove.
	registered := func(t *testing.T) string {
		_, code := ms.token(t, "admin")
		name := ms.fresh("game")
		if status, body := ms.do(t, "POST", "/api/games", fmt.Sprintf(`{"name":%q,"image":"kit/ttt-logic"}`, name), "Authorization", "Bearer "+code); status != http.StatusCreated {
			t.Fatalf("register %s: %d %v", name, status, body)
		}
		return name
	}
	req, _ := http.NewRequest("POST", ms.url+"/api/builds?repository=alice/built&game=tanks", bytes.NewReader(zipped(t, map[string]string{"bot.py": "x"})))
	req.Header.Set("Authorization", "Bearer "+aliceTok)
	req.Header.Set("Content-Type", "application/zip")
	status, b := doJSON(t, req)
	if status != http.StatusAccepted {
		t.Fatalf("alice's build: %d %v", status, b)
	}
	aliceBuild := b["id"].(string)

	// A contest open for entries, with an entry of alice's pushed bot
	// (and as many more of each visitor's as the matrix makes).
	ct, err := ms.svc.Contests.Create(t.Context(), ms.principal(t, "admin"), contest.Spec{Name: "Cup", Game: "tanks", FreezeAt: ms.clock.Now().Add(24 * time.Hour), EntriesPerPerson: contest.MaxEntriesPerPerson})
	if err != nil {
		t.Fatal(err)
	}
	contestPath := fmt.Sprintf("/api/contests/%d", ct.ID)
	pushed := func() string {
		repo := "alice/" + ms.fresh("bot")
		if status, body := ms.push(t, "alice", aliceTok, repo, "v1", newImage(t, nil, repo)); status != http.StatusCreated {
			t.Fatalf("push %s: %d %s", repo, status, body)
		}
		return repo
	}
	aliceContestEntry, err := ms.svc.Contests.Enter(t.Context(), ms.principal(t, "alice"), ct.ID, platform.ContestEntryRequest{Bot: pushed()})
	if err != nil {
		t.Fatal(err)
	}

	// A draft of alice's, and fresh ones of alice's or red's (made by
	// alice) for each visitor to change.
	draft := func(t *testing.T, team string) string {
		d, err := ms.svc.Drafts.Create(t.Context(), ms.principal(t, "alice"), platform.DraftRequest{Name: ms.fresh("draft"), Game: "tanks", Kit: "python", Team: team})
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf("/api/drafts/%d", d.ID)
	}
	aliceDraft := draft(t, "")
	// A draft of alice's that ran once, its Run over (its build failed:
	// the one match slot is held).
	ranDraft := draft(t, "")
	var ranID int64
	fmt.Sscanf(ranDraft, "/api/drafts/%d", &ranID)
	if _, err := ms.svc.Drafts.Save(t.Context(), ms.principal(t, "alice"), ranID, platform.DraftSaveRequest{Base: 1, Files: map[string]string{"other.py": "print()"}, Main: "other.py"}); err != nil {
		t.Fatal(err)
	}
	if _, err := ms.svc.Drafts.Run(t.Context(), ms.principal(t, "alice"), ranID, platform.RunRequest{Opponent: "arena/tanks-random"}); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, 20*time.Second, func() error {
		if v, _, err := ms.svc.Drafts.RunOf(t.Context(), ms.principal(t, "alice"), ranID); err != nil || v.Finished == nil {
			return fmt.Errorf("the Run: %+v %v", v, err)
		}
		return nil
	})
	// No build of alice's under way: each may submit in turn.
	noBuildOf := func(t *testing.T, user string) {
		poll.Until(t, 20*time.Second, func() error {
			if err := ms.svc.Registry.HoldBuildPlace(user, ""); err != nil {
				return err
			}
			ms.svc.Registry.ReleaseBuildPlace(user)
			return nil
		})
	}

	// visitors:                  anonymous alice bob carol admin token revoked expired admintoken
	const (
		open      = "200 200 200 200 200 200 401 200 200"
		signedIn  = "401 200 200 200 200 200 401 401 200"
		adminRead = "401 403 403 403 200 403 401 401 200"
	)
	rows := []route{
		{"GET", "/healthz", static("/healthz", ""), open},
		{"GET", "/*", static("/", ""), open},
		{"GET", "/api/me", static("/api/me", ""), open},
		{"PUT", "/api/me/password", func(t *testing.T, ms *matrixServer, v string) (string, string) {
			pw := password(account(v))
			return "/api/me/password", fmt.Sprintf(`{"old":%q,"new":%q}`, pw, pw)
		}, "401 204 204 204 204 403 401 401 403"},
		{"GET", "/api/notifications", static("/api/notifications", ""), signedIn},
		{"POST", "/api/notifications/read", static("/api/notifications/read", `{}`), signedIn},
		{"GET", "/api/me/webhook", static("/api/me/webhook", ""), signedIn},
		{"PUT", "/api/me/webhook", static("/api/me/webhook", `{"url":"https://93.184.216.34/hook"}`), signedIn},
		{"DELETE", "/api/me/webhook", func(t *testing.T, ms *matrixServer, v string) (string, string) {
			user := account(v)
			if v == "admintoken" {
				user = "admin" // the admin token acts as the admin
			}
			if err := ms.store.SetWebhook(t.Context(), store.Webhook{User: user, URL: "https://93.184.216.34/hook", Secret: "s"}); err != nil {
				t.Fatal(err)
			}
			return "/api/me/webhook", ""
		}, "401 204 204 204 204 204 401 401 204"},
		{"POST", "/api/users", func(t *testing.T, ms *matrixServer, v string) (string, string) {
			_, code, err := ms.accounts.CreateInvite(t.Context(), ms.principal(t, "admin"))
			if err != nil {
				t.Fatal(err)
			}
			return "/api/users", fmt.Sprintf(`{"name":%q,"password":"a-new-password","invite":%q}`, ms.fresh("user"), code)
		}, "201 201 201 201 201 201 401 201 201"},
		{"POST", "/api/session", func(t *testing.T, ms *matrixServer, v string) (string, string) {
			return "/api/session", fmt.Sprintf(`{"name":%q,"password":%q}`, account(v), password(account(v)))
		}, "200 200 200 200 200 200 401 200 200"},
		{"DELETE", "/api/session", static("/api/session", ""), "204 204 204 204 204 204 401 204 204"},
		{"GET", "/api/tokens", static("/api/tokens", ""), signedIn},
		{"POST", "/api/tokens", static("/api/tokens", `{"name":"ci"}`), "401 201 201 201 201 403 401 401 403"},
		{"DELETE", "/api/tokens/:id", func(t *testing.T, ms *matrixServer, v string) (string, string) {
			id, _ := ms.token(t, "alice")
			return fmt.Sprintf("/api/tokens/%d", id), ""
		}, "401 204 404 404 404 204 401 401 404"},
		{"GET", "/api/teams", static("/api/teams", ""), signedIn},
		{"POST", "/api/teams", func(t *testing.T, ms *matrixServer, v string) (string, string) {
			return "/api/teams", fmt.Sprintf(`{"name":%q}`, ms.fresh("team"))
		}, "401 201 201 201 201 201 401 401 201"},
		{"GET", "/api/teams/:name", static("/api/teams/red", ""), "401 200 404 200 200 200 401 401 200"},
		{"POST", "/api/teams/:name/members", func(t *testing.T, ms *matrixServer, v string) (string, string) {
			return "/api/teams/red/members", fmt.Sprintf(`{"user":%q}`, ms.user(t, ms.fresh("guest")))
		}, "401 201 403 201 201 201 401 401 201"},
		{"POST", "/api/teams/:name/join", func(t *testing.T, ms *matrixServer, v string) (string, string) {
			// A team of someone else's that invited bob (each made by a
			// user of its own: a user makes few teams).
			team, owner := ms.fresh("team"), ms.user(t, ms.fresh("owner"))
			if err := ms.accounts.CreateTeam(t.Context(), ms.principal(t, owner), team); err != nil {
				t.Fatal(err)
			}
			if err := ms.accounts.InviteMember(t.Context(), ms.principal(t, owner), team, "bob"); err != nil {
				t.Fatal(err)
			}
			return "/api/teams/" + team + "/join", "{}"
		}, "401 404 200 404 404 404 401 401 404"},
		{"DELETE", "/api/teams/:name/members/:user", func(t *testing.T, ms *matrixServer, v string) (string, string) {
			// A team of alice and carol; carol is taken out.
			team, owner := ms.fresh("team"), ms.user(t, ms.fresh("owner"))
			if err := ms.accounts.CreateTeam(t.Context(), ms.principal(t, owner), team); err != nil {
				t.Fatal(err)
			}
			ms.joinTeam(t, team, owner, "alice")
			ms.joinTeam(t, team, "alice", "carol")
			return "/api/teams/" + team + "/members/carol", ""
		}, "401 204 403 204 204 204 401 401 204"},
		{"GET", "/api/users", static("/api/users", ""), adminRead},
		{"PATCH", "/api/users/:name", func(t *testing.T, ms *matrixServer, v string) (string, string) {
			return "/api/users/" + ms.user(t, ms.fresh("user")), `{"disabled":true}`
		}, "401 403 403 403 200 403 401 401 200"},
		{"POST", "/api/users/import", static("/api/users/import", "{}"), "401 403 403 403 415 403 401 401 415"},
		{"POST", "/api/users/:name/password-link", func(t *testing.T, ms *matrixServer, v string) (string, string) {
			return "/api/users/" + ms.user(t, ms.fresh("user")) + "/password-link", "{}"
		}, "401 403 403 403 201 403 401 401 201"},
		{"POST", "/api/users/password", static("/api/users/password", `{"link":"password_nope","password":"a-long-password"}`), "403 403 403 403 403 403 401 403 403"},
		{"GET", "/api/invites", static("/api/invites", ""), adminRead},
		{"POST", "/api/invites", static("/api/invites", "{}"), "401 403 403 403 201 403 401 401 201"},
		{"DELETE", "/api/invites/:id", func(t *testing.T, ms *matrixServer, v string) (string, string) {
			in, _, err := ms.accounts.CreateInvite(t.Context(), ms.principal(t, "admin"))
			if err != nil {
				t.Fatal(err)
			}
			return fmt.Sprintf("/api/invites/%d", in.ID), ""
		}, "401 403 403 403 204 403 401 401 204"},
		{"GET", "/api/games", static("/api/games", ""), open},
		{"POST", "/api/games", func(t *testing.T, ms *matrixServer, v string) (string, string) {
			return "/api/games", fmt.Sprintf(`{"name":%q,"image":"kit/ttt-logic"}`, ms.fresh("game"))
		}, "401 403 403 403 201 403 401 401 201"},
		{"GET", "/api/games/registered", static("/api/games/registered", ""), adminRead},
		{"GET", "/api/disk", static("/api/disk", ""), adminRead},
		{"GET", "/metrics", static("/metrics", ""), adminRead},
		{"DELETE", "/api/games/:name", func(t *testing.T, ms *matrixServer, v string) (string, string) {
			return "/api/games/" + registered(t), ""
		}, "401 403 403 403 204 403 401 401 204"},
		{"GET", "/api/images", static("/api/images?game=tanks", ""), signedIn},
		{"GET", "/api/matches", static("/api/matches?mine=1&ladder=0", ""), signedIn},
		{"POST", "/api/matches", static("/api/matches", `{"game":"tanks","bots":["bots/held","arena/tanks-hunter"]}`), "401 201 201 201 201 201 401 401 201"},
		{"GET", "/api/matches/:id", static("/api/matches/"+running, ""), open},
		{"DELETE", "/api/matches/:id", func(t *testing.T, ms *matrixServer, v string) (string, string) {
			return "/api/matches/" + ms.match(t, "alice", "bots/held", "bots/held"), ""
		}, "401 202 403 403 202 202 401 401 202"},
		{"GET", "/api/matches/:id/replay", static("/api/matches/"+finished+"/replay", ""), open},
		{"GET", "/api/matches/:id/stream", static("/api/matches/"+finished+"/stream", ""), open},
		// Only the person who plays a seat sees its question and moves.
		{"GET", "/api/matches/:id/moves", static("/api/matches/"+ms.humanMatch(t, "alice")+"/moves", ""), "401 200 403 403 403 200 401 401 403"},
		{"POST", "/api/matches/:id/moves", func(t *testing.T, ms *matrixServer, v string) (string, string) {
			return "/api/matches/" + ms.humanMatch(t, "alice") + "/moves", `{"turn":1,"answer":"[]"}`
		}, "401 202 403 403 403 202 401 401 403"},
		{"GET", "/api/challenges", static("/api/challenges?mine=1", ""), signedIn},
		{"POST", "/api/challenges", static("/api/challenges", `{"bot":"arena/tanks-random","opponent":{"bot":"arena/tanks-hunter"},"games":2}`), "401 201 201 201 201 201 401 401 201"},
		{"GET", "/api/challenges/:id", static(fmt.Sprintf("/api/challenges/%d", aliceChallenge.ID), ""), "401 200 404 404 200 200 401 401 200"},
		{"GET", "/api/ladders", static("/api/ladders", ""), open},
		{"GET", "/api/ladders/:game", static("/api/ladders/tanks", ""), open},
		{"GET", "/api/ladders/:game/stream", static("/api/ladders/tanks/stream", ""), open},
		{"POST", "/api/ladders/:game/entries", func(t *testing.T, ms *matrixServer, v string) (string, string) {
			return "/api/ladders/tanks/entries", fmt.Sprintf(`{"name":%q,"image":"arena/tanks-random"}`, ms.fresh("bot"))
		}, "401 201 201 201 201 201 401 401 201"},
		{"GET", "/api/ladders/:game/entries/:id", static("/api/ladders/tanks/entries/"+aliceEntry, ""), open},
		{"PATCH", "/api/ladders/:game/entries/:id", func(t *testing.T, ms *matrixServer, v string) (string, string) {
			return "/api/ladders/tanks/entries/" + ms.entry(t, "alice"), `{"active":false}`
		}, "401 200 403 403 200 200 401 401 200"},
		{"DELETE", "/api/ladders/:game/entries/:id", func(t *testing.T, ms *matrixServer, v string) (string, string) {
			return "/api/ladders/tanks/entries/" + ms.entry(t, "red"), ""
		}, "401 200 403 200 200 200 401 401 200"},
		{"GET", "/api/registry", static("/api/registry", ""), signedIn},
		{"DELETE", "/api/registry/repositories/*", func(t *testing.T, ms *matrixServer, v string) (string, string) {
			repo := "alice/" + ms.fresh("bot")
			if status, body := ms.push(t, "alice", aliceTok, repo, "v1", newImage(t, nil, repo)); status != http.StatusCreated {
				t.Fatalf("push %s: %d %s", repo, status, body)
			}
			return "/api/registry/repositories/" + repo, ""
		}, "401 204 403 403 204 204 401 401 204"},
		{"POST", "/api/registry/gc", static("/api/registry/gc", "{}"), "401 403 403 403 200 403 401 401 200"},
		{"GET", "/download/arena", static("/download/arena", ""), open},
		{"GET", "/games/:game/player/*", static("/games/ttt/player/index.html", ""), open},
		{"GET", "/api/contests", static("/api/contests", ""), open},
		{"POST", "/api/contests", func(t *testing.T, ms *matrixServer, v string) (string, string) {
			return "/api/contests", fmt.Sprintf(`{"name":%q,"game":"tanks","freeze_at":"2099-01-01T00:00:00Z"}`, ms.fresh("cup"))
		}, "401 403 403 403 201 403 401 401 201"},
		{"GET", "/api/contests/:id", static(contestPath, ""), open},
		{"PATCH", "/api/contests/:id", static(contestPath, `{"rules":"be kind"}`), "401 403 403 403 200 403 401 401 200"},
		// Staff may ask, but the final has not started.
		{"POST", "/api/contests/:id/rerun", static(contestPath+"/rerun", `{"entries":[1,2]}`), "401 403 403 403 400 403 401 401 400"},
		{"POST", "/api/contests/:id/clone", func(t *testing.T, ms *matrixServer, v string) (string, string) {
			return contestPath + "/clone", fmt.Sprintf(`{"name":%q,"freeze_at":"2099-01-01T00:00:00Z"}`, ms.fresh("cup"))
		}, "401 403 403 403 201 403 401 401 201"},
		// Alice's pushed bot: hers, or staff's to enter.
		{"POST", "/api/contests/:id/entries", func(t *testing.T, ms *matrixServer, v string) (string, string) {
			return contestPath + "/entries", fmt.Sprintf(`{"bot":%q}`, pushed())
		}, "401 201 403 403 201 201 401 401 201"},
		{"PATCH", "/api/contests/:id/entries/:eid", static(fmt.Sprintf("%s/entries/%d", contestPath, aliceContestEntry.ID), `{"withdraw":true}`), "401 200 403 403 200 200 401 401 200"},
		{"GET", "/api/contests/:id/standings", static(contestPath+"/standings", ""), open},
		{"GET", "/api/contests/:id/export", static(contestPath+"/export?format=csv", ""), open},
		{"GET", "/api/contests/:id/class", static(contestPath+"/class?format=csv", ""), adminRead},
		{"GET", "/api/contests/:id/grades", static(contestPath+"/grades?format=csv", ""), adminRead},
		{"GET", "/api/contests/:id/similarity", static(contestPath+"/similarity?format=csv", ""), adminRead},
		// No version of these is pushed: an admin is told so (404).
		{"GET", "/api/similarity", static("/api/similarity?versions=a/b:c,d/e:f", ""), "401 403 403 403 404 403 401 401 404"},
		{"POST", "/api/contests/:id/gates/run", static(contestPath+"/gates/run", "{}"), "401 400 400 400 400 400 401 401 400"},
		// Past who may push to alice/, the body (JSON here) is refused.
		{"POST", "/api/builds", static("/api/builds?repository=alice/built&game=tanks", "{}"), "401 415 403 403 415 415 401 401 415"},
		{"GET", "/api/builds/:id", static("/api/builds/"+aliceBuild, ""), "401 200 404 404 200 200 401 401 200"},
		// Drafts: another's is absent (404, carol's too for alice's own);
		// a team's is its members'; an admin reads any, changes none of
		// another's (403).
		{"GET", "/api/kits", static("/api/kits", ""), open},
		{"GET", "/api/drafts", static("/api/drafts", ""), signedIn},
		{"POST", "/api/drafts", func(t *testing.T, ms *matrixServer, v string) (string, string) {
			return "/api/drafts", fmt.Sprintf(`{"name":%q,"game":"tanks","kit":"python"}`, ms.fresh("draft"))
		}, "401 201 201 201 201 201 401 401 201"},
		{"GET", "/api/drafts/:id", static(aliceDraft, ""), "401 200 404 404 200 200 401 401 200"},
		{"GET", "/api/drafts/:id/saves/:version", static(aliceDraft+"/saves/1", ""), "401 200 404 404 200 200 401 401 200"},
		{"PUT", "/api/drafts/:id", func(t *testing.T, ms *matrixServer, v string) (string, string) {
			return draft(t, "red"), `{"base":1,"files":{"bot.py":"print()"},"main":"bot.py"}`
		}, "401 200 404 200 403 200 401 401 403"},
		{"PATCH", "/api/drafts/:id", func(t *testing.T, ms *matrixServer, v string) (string, string) {
			return draft(t, ""), fmt.Sprintf(`{"name":%q}`, ms.fresh("renamed"))
		}, "401 200 404 404 403 200 401 401 403"},
		{"DELETE", "/api/drafts/:id", func(t *testing.T, ms *matrixServer, v string) (string, string) {
			return draft(t, "red"), ""
		}, "401 204 404 204 403 204 401 401 403"},
		// A draft's Runs and its submission: its owner's and their team
		// mates' alone (an admin's too would run another's code as them).
		{"GET", "/api/drafts/:id/opponents", static(aliceDraft+"/opponents", ""), "401 200 404 404 403 200 401 401 403"},
		{"POST", "/api/drafts/:id/run", func(t *testing.T, ms *matrixServer, v string) (string, string) {
			return draft(t, "red") + "/run", `{"opponent":"arena/tanks-random"}`
		}, "401 202 404 202 403 202 401 401 403"},
		{"GET", "/api/drafts/:id/run", static(ranDraft+"/run", ""), "401 200 404 404 403 200 401 401 403"},
		{"GET", "/api/drafts/:id/run/stream", static(ranDraft+"/run/stream", ""), "401 200 404 404 403 200 401 401 403"},
		{"POST", "/api/drafts/:id/submit", func(t *testing.T, ms *matrixServer, v string) (string, string) {
			noBuildOf(t, "alice")
			return aliceDraft + "/submit", fmt.Sprintf(`{"repository":"alice/%s","tag":"v1"}`, ms.fresh("sub"))
		}, "401 202 404 404 403 202 401 401 403"},
	}

	// Every route of the server is in the matrix.
	covered := map[string]bool{}
	for _, r := range rows {
		covered[r.method+" "+r.pattern] = true
	}
	for _, r := range ms.echo.Routes() {
		if r.Method == echo.RouteNotFound {
			continue // echo's own, for a group's middleware
		}
		if !covered[r.Method+" "+r.Path] {
			t.Errorf("route %s %s is not in the authorization matrix", r.Method, r.Path)
		}
	}

	for _, r := range rows {
		want := strings.Fields(r.want)
		if len(want) != len(visitors) {
			t.Fatalf("%s %s: %d statuses for %d visitors", r.method, r.pattern, len(want), len(visitors))
		}
		for i, v := range visitors {
			path, body := r.request(t, ms, v)
			header, expire := ms.credentials(t, v)
			if expire != nil {
				expire()
			}
			res := ms.request(t, r.method, path, body, header...)
			if expire != nil {
				ms.clock.skip(-(matrixLifetime + time.Minute))
			}
			if got := strconv.Itoa(res.StatusCode); got != want[i] {
				t.Errorf("%s %s as %s: %s, want %s", r.method, path, v, got, want[i])
			}
		}
	}
	ms.release()
}

// With ARENA_PUBLIC=none an anonymous visitor sees the page and the way
// in, nothing else.
func TestPublicNone(t *testing.T) {
	ms := newMatrixServer(t, Config{Public: PublicNone})
	for _, path := range []string{"/api/games", "/api/matches", "/api/ladders", "/api/ladders/tanks", "/api/ladders/tanks/stream"} {
		if res := ms.request(t, "GET", path, ""); res.StatusCode != http.StatusUnauthorized {
			t.Errorf("anonymous GET %s: %d, want 401", path, res.StatusCode)
		}
		if res := ms.request(t, "GET", path, "", ms.signIn(t, "bob")...); res.StatusCode != http.StatusOK {
			t.Errorf("bob's GET %s: %d, want 200", path, res.StatusCode)
		}
	}
	for _, path := range []string{"/", "/healthz", "/api/me"} {
		if res := ms.request(t, "GET", path, ""); res.StatusCode != http.StatusOK {
			t.Errorf("anonymous GET %s: %d, want 200", path, res.StatusCode)
		}
	}
}

// Local mode has no accounts: every visitor is the admin, the way in
// answers 404, and ARENA_TOKEN still guards changes.
func TestLocalMode(t *testing.T) {
	ts := newTestServer(t, Config{}, 1, with(platform.Config{Token: "secret"}))
	status, me := ts.do(t, "GET", "/api/me", "")
	if status != 200 || me["mode"] != "local" || me["token_required"] != true || me["user"].(map[string]any)["name"] != "admin" {
		t.Errorf("me in local mode: %d %v", status, me)
	}
	for _, r := range [][2]string{{"POST", "/api/session"}, {"POST", "/api/users"}, {"GET", "/api/tokens"}, {"GET", "/api/users"}} {
		if status, body := ts.do(t, r[0], r[1], `{}`); status != 404 || !strings.Contains(fmt.Sprint(body["error"]), "local mode") {
			t.Errorf("%s %s in local mode: %d %v", r[0], r[1], status, body)
		}
	}
	if status, _ := ts.do(t, "POST", "/api/matches", `{"game":"tanks","bots":["arena/tanks-random","arena/tanks-hunter"]}`); status != 401 {
		t.Errorf("a start without the token: %d", status)
	}
	status, m := ts.do(t, "POST", "/api/matches", `{"game":"tanks","bots":["arena/tanks-random","arena/tanks-hunter"]}`, "Authorization", "Bearer secret")
	if status != 201 || m["owner"] != "admin" {
		t.Errorf("a start with the token: %d %v", status, m)
	}
}

// A player plays their own images, their teams', the examples and what
// ARENA_ALLOW admits; nobody else's. An image named under this server's
// registry is its namespace's owner's; under another registry (another
// port of the same host, on a shared engine) it is nobody's. The
// suggestions show the same.
func TestPlayersPlayOnlyTheirImages(t *testing.T) {
	ms := newMatrixServer(t, Config{}, registryAt("127.0.0.1:5006"))
	for _, ref := range []string{"alice/bot", "red/bot", "bob/bot", "localhost:5006/alice/pushed:v1", "127.0.0.1:27999/alice/secretbot:v1"} {
		ms.launcher.Add(ref, fake.Script{Game: "tanks"})
	}
	alice := ms.signIn(t, "alice")
	for _, c := range []struct {
		image string
		want  int
	}{
		{"alice/bot", 201}, {"red/bot", 201}, {"arena/tanks-random", 201}, {"bots/slow", 201}, {"localhost:5006/alice/pushed:v1", 201},
		{"bob/bot", 403}, {"sha256:" + strings.Repeat("a", 64), 403}, {"127.0.0.1:27999/alice/secretbot:v1", 403},
	} {
		status, body := ms.do(t, "POST", "/api/matches", fmt.Sprintf(`{"game":"tanks","bots":[%q,"arena/tanks-hunter"]}`, c.image), alice...)
		if status != c.want {
			t.Errorf("alice plays %s: %d %v, want %d", c.image, status, body, c.want)
		}
		if c.want == 403 && !strings.Contains(fmt.Sprint(body["error"]), "bots[0]: image "+c.image+" is not yours to play") {
			t.Errorf("alice plays %s: %v", c.image, body["error"])
		}
	}
	_, body := ms.do(t, "GET", "/api/images?game=tanks", "", alice...)
	var shown []string
	for _, img := range body["images"].([]any) {
		shown = append(shown, img.(map[string]any)["image"].(string))
	}
	if slices.Contains(shown, "bob/bot") || slices.Contains(shown, "127.0.0.1:27999/alice/secretbot:v1") || !slices.Contains(shown, "alice/bot") || !slices.Contains(shown, "red/bot") {
		t.Errorf("alice is shown %v", shown)
	}
	ms.release()
}

// 20 wrong passwords in a row: the account is refused with 429 and
// Retry-After before its password is compared, the right one too, until
// the window passes; then the right one works. A client trying many
// accounts is refused likewise. No password shows in a log, an answer
// or the data folder.
func TestSignInLimits(t *testing.T) {
	ms := newMatrixServer(t, Config{})
	var answers []string
	try := func(name, pw string) *http.Response {
		req, _ := http.NewRequest("POST", ms.url+"/api/session", strings.NewReader(fmt.Sprintf(`{"name":%q,"password":%q}`, name, pw)))
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		answers = append(answers, string(b))
		return res
	}
	const wrong = "not-alices-password"
	refused := 0
	for i := range 20 {
		res := try("alice", wrong)
		switch res.StatusCode {
		case http.StatusUnauthorized:
			if refused > 0 {
				t.Fatalf("attempt %d: 401 after a 429", i+1)
			}
		case http.StatusTooManyRequests:
			refused++
			if ra, err := strconv.Atoi(res.Header.Get("Retry-After")); err != nil || ra < 1 || ra > 60 {
				t.Errorf("attempt %d: Retry-After %q", i+1, res.Header.Get("Retry-After"))
			}
		default:
			t.Fatalf("attempt %d: %d", i+1, res.StatusCode)
		}
	}
	if refused != 10 {
		t.Errorf("%d of 20 wrong passwords refused with 429, want the last 10", refused)
	}
	if res := try("alice", password("alice")); res.StatusCode != http.StatusTooManyRequests {
		t.Errorf("the right password within the window: %d, want 429", res.StatusCode)
	}
	// Bob's account is not alice's: it is not locked (the client has
	// room left for 10 more failures).
	if res := try("bob", password("bob")); res.StatusCode != http.StatusOK {
		t.Errorf("bob, from the same client: %d", res.StatusCode)
	}
	ms.clock.skip(time.Minute)
	if res := try("alice", password("alice")); res.StatusCode != http.StatusOK {
		t.Errorf("the right password after the window: %d, want 200", res.StatusCode)
	}
	// One client trying many names is stopped by its own limit.
	got429 := false
	for i := range 25 {
		if res := try(fmt.Sprintf("nobody%d", i), wrong); res.StatusCode == http.StatusTooManyRequests {
			got429 = true
			break
		}
	}
	if !got429 {
		t.Error("25 wrong names from one client were all compared")
	}
	for _, pw := range []string{wrong, password("alice"), password("bob")} {
		for _, a := range answers {
			if strings.Contains(a, pw) {
				t.Errorf("an answer holds a password: %s", a)
			}
		}
		for _, e := range ms.logs.All() {
			if line := fmt.Sprint(e.Message, e.ContextMap()); strings.Contains(line, pw) {
				t.Errorf("a log line holds a password: %s", line)
			}
		}
		if ms.dataHolds(t, pw) {
			t.Error("the data folder holds a password")
		}
	}
}

// A session ends when its user signs out (the cookie is then worth
// nothing), and every other session of the account when its password
// changes; a disabled account's sessions and tokens stop at once.
func TestSessionsEnd(t *testing.T) {
	ms := newMatrixServer(t, Config{})
	me := func(header []string) any {
		_, body := ms.do(t, "GET", "/api/me", "", header...)
		return body["user"]
	}
	a1, a2 := ms.signIn(t, "alice"), ms.signIn(t, "alice")
	if me(a1) == nil || me(a2) == nil {
		t.Fatal("signed-in sessions are anonymous")
	}
	res := ms.request(t, "DELETE", "/api/session", "", a1...)
	if res.StatusCode != http.StatusNoContent || !strings.Contains(res.Header.Get("Set-Cookie"), "Max-Age=0") {
		t.Errorf("sign out: %d, Set-Cookie %q", res.StatusCode, res.Header.Get("Set-Cookie"))
	}
	if me(a1) != nil {
		t.Error("a signed-out session's cookie still works")
	}
	// A request of the ended session, answered after the browser signed
	// in again, leaves the browser's cookie alone.
	if res := ms.request(t, "GET", "/api/registry", "", a1...); res.Header.Get("Set-Cookie") != "" {
		t.Errorf("a request of an ended session sets the cookie: %q", res.Header.Get("Set-Cookie"))
	}
	// A password change ends a2, not the session that made it, which
	// goes on under a new cookie: a copy of the old one is worth nothing.
	a3 := ms.signIn(t, "alice")
	res = ms.request(t, "PUT", "/api/me/password", fmt.Sprintf(`{"old":%q,"new":"alices-new-password"}`, password("alice")), a3...)
	if res.StatusCode != http.StatusNoContent {
		t.Fatalf("password change: %d", res.StatusCode)
	}
	if me(a2) != nil {
		t.Error("another session outlived the password change")
	}
	var renewed []string
	for _, c := range res.Cookies() {
		if c.Name == sessionCookie && c.Value != "" {
			renewed = []string{"Cookie", sessionCookie + "=" + c.Value}
		}
	}
	if renewed == nil || renewed[1] == a3[1] {
		t.Fatalf("the password change's cookie: %q (was %q)", renewed, a3)
	}
	if me(renewed) == nil {
		t.Error("the session that changed the password ended")
	}
	if me(a3) != nil {
		t.Error("the old cookie of the session that changed the password still works")
	}
	a3 = renewed
	if res := ms.request(t, "POST", "/api/session", fmt.Sprintf(`{"name":"alice","password":%q}`, password("alice"))); res.StatusCode != http.StatusUnauthorized {
		t.Errorf("the old password: %d", res.StatusCode)
	}
	if res := ms.request(t, "PUT", "/api/me/password", `{"old":"wrong-password","new":"another-password"}`, a3...); res.StatusCode != http.StatusForbidden {
		t.Errorf("a password change with a wrong old one: %d", res.StatusCode)
	}
	// The cookie: HttpOnly, SameSite=Lax; Secure behind TLS, which only
	// a trusted proxy may vouch for (TestSecureCookiesBehindATrustedProxy).
	res = ms.request(t, "POST", "/api/session", `{"name":"bob","password":"bob-password"}`, "X-Forwarded-Proto", "https")
	ck := res.Header.Get("Set-Cookie")
	for _, attr := range []string{"HttpOnly", "SameSite=Lax", "Path=/"} {
		if !strings.Contains(ck, attr) {
			t.Errorf("session cookie %q lacks %s", ck, attr)
		}
	}
	if strings.Contains(ck, "Secure") {
		t.Errorf("a client's own X-Forwarded-Proto made the cookie Secure: %q", ck)
	}
	if res := ms.request(t, "POST", "/api/session", `{"name":"bob","password":"bob-password"}`); strings.Contains(res.Header.Get("Set-Cookie"), "Secure") {
		t.Error("a cookie over plain HTTP is Secure: the browser would never send it back")
	}
	// Disabled: sessions and tokens stop.
	b := ms.signIn(t, "bob")
	_, tok := ms.token(t, "bob")
	admin := ms.signIn(t, "admin")
	if res := ms.request(t, "PATCH", "/api/users/bob", `{"disabled":true}`, admin...); res.StatusCode != http.StatusOK {
		t.Fatalf("disable bob: %d", res.StatusCode)
	}
	if me(b) != nil {
		t.Error("a disabled account's session still works")
	}
	if res := ms.request(t, "GET", "/api/me", "", "Authorization", "Bearer "+tok); res.StatusCode != http.StatusUnauthorized {
		t.Errorf("a disabled account's token: %d", res.StatusCode)
	}
	if res := ms.request(t, "POST", "/api/session", `{"name":"bob","password":"bob-password"}`); res.StatusCode != http.StatusUnauthorized {
		t.Errorf("a disabled account signs in: %d", res.StatusCode)
	}
}

// dataHolds reports whether any file of the data folder (the database
// and its write-ahead log, the replays) holds s.
func (ms *matrixServer) dataHolds(t *testing.T, s string) bool {
	t.Helper()
	found := false
	err := filepath.WalkDir(ms.store.Dir(), func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		found = found || strings.Contains(string(b), s)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

// Tokens are shown once and kept only hashed; sign-up follows the mode;
// ownership: a team's entry is its members', a user's their own.
func TestTokensSignUpAndOwnership(t *testing.T) {
	ms := newMatrixServer(t, Config{})
	alice := ms.signIn(t, "alice")
	status, tok := ms.do(t, "POST", "/api/tokens", `{"name":"laptop"}`, alice...)
	code, _ := tok["token"].(string)
	if status != 201 || !strings.HasPrefix(code, accounts.TokenPrefix) {
		t.Fatalf("make a token: %d %v", status, tok)
	}
	_, list := ms.do(t, "GET", "/api/tokens", "", alice...)
	if strings.Contains(fmt.Sprint(list), code) || len(list["tokens"].([]any)) != 1 {
		t.Errorf("the token list shows the token, or not one: %v", list)
	}
	if ms.dataHolds(t, code) {
		t.Error("the data folder holds the token itself")
	}
	if !ms.dataHolds(t, "$argon2id$") {
		t.Error("no password hash is in the data folder: the checks of passwords there cannot fail")
	}
	if !ms.dataHolds(t, accounts.Digest(code)) {
		t.Error("the token's digest is not in the data folder: the check above cannot fail")
	}
	if _, me := ms.do(t, "GET", "/api/me", "", "Authorization", "Bearer "+code); me["user"].(map[string]any)["name"] != "alice" {
		t.Errorf("the token is not alice's: %v", me)
	}
	// Sign-up needs an invitation (the default), used once.
	if status, body := ms.do(t, "POST", "/api/users", `{"name":"erin","password":"erins-password"}`); status != 403 || !strings.Contains(fmt.Sprint(body["error"]), "invitation") {
		t.Errorf("sign-up without an invitation: %d %v", status, body)
	}
	admin := ms.signIn(t, "admin")
	_, inv := ms.do(t, "POST", "/api/invites", `{}`, admin...)
	link, _ := inv["link"].(string)
	invite := inv["code"].(string)
	if !strings.HasSuffix(link, "/#/signup/"+invite) {
		t.Errorf("invitation link %q", link)
	}
	res := ms.request(t, "POST", "/api/users", fmt.Sprintf(`{"name":"erin","password":"erins-password","invite":%q}`, invite))
	if res.StatusCode != 201 {
		t.Errorf("sign-up with the invitation: %d", res.StatusCode)
	}
	// Signed up is signed in.
	var erin []string
	for _, c := range res.Cookies() {
		if c.Name == sessionCookie {
			erin = []string{"Cookie", sessionCookie + "=" + c.Value}
		}
	}
	if _, me := ms.do(t, "GET", "/api/me", "", erin...); me["user"] == nil || me["user"].(map[string]any)["name"] != "erin" {
		t.Errorf("after signing up: %v", me)
	}
	if status, _ := ms.do(t, "POST", "/api/users", fmt.Sprintf(`{"name":"frank","password":"franks-password","invite":%q}`, invite)); status != 403 {
		t.Errorf("an invitation used twice: %d", status)
	}
	for _, bad := range []string{`{"name":"Admin!","password":"long-enough"}`, `{"name":"gina","password":"short"}`, `{"name":"admin","password":"long-enough"}`} {
		if status, body := ms.do(t, "POST", "/api/users", bad, admin...); status != 400 {
			t.Errorf("sign-up %s: %d %v", bad, status, body)
		}
	}
	if status, _ := ms.do(t, "POST", "/api/users", `{"name":"red","password":"long-enough"}`, admin...); status != 409 {
		t.Errorf("a user named as a team: %d", status)
	}
	// A team's entry: registered by alice for red, changed by carol (in
	// red), not by bob.
	status, e := ms.do(t, "POST", "/api/ladders/tanks/entries", `{"name":"reds","image":"arena/tanks-random","team":"red"}`, alice...)
	if status != 201 || e["owner"] != "red" {
		t.Fatalf("register for red: %d %v", status, e)
	}
	path := fmt.Sprintf("/api/ladders/tanks/entries/%v", e["id"])
	if status, body := ms.do(t, "PATCH", path, `{"active":false}`, ms.signIn(t, "bob")...); status != 403 || !strings.Contains(fmt.Sprint(body["error"]), "belongs to red") {
		t.Errorf("bob pauses red's entry: %d %v", status, body)
	}
	if status, _ := ms.do(t, "PATCH", path, `{"name":"reds2"}`, ms.signIn(t, "carol")...); status != 200 {
		t.Errorf("carol renames red's entry: %d", status)
	}
	if status, body := ms.do(t, "POST", "/api/ladders/tanks/entries", `{"name":"blues","image":"arena/tanks-random","team":"blue"}`, alice...); status != 403 {
		t.Errorf("register for a team one is not in: %d %v", status, body)
	}
	// The name is red's: bob cannot take it.
	if status, body := ms.do(t, "POST", "/api/ladders/tanks/entries", `{"name":"reds2","image":"arena/tanks-random"}`, ms.signIn(t, "bob")...); status != 409 || !strings.Contains(fmt.Sprint(body["error"]), "belongs to red") {
		t.Errorf("bob registers red's name: %d %v", status, body)
	}
}

// Fair share: alice has 200 matches waiting; bob starts one, and it is
// the next to start.
func TestFairShareOfTheQueue(t *testing.T) {
	ms := newMatrixServer(t, Config{}, with(platform.Config{QueueMax: 1000, UserQueueMax: 300}))
	alice, bob := ms.signIn(t, "alice"), ms.signIn(t, "bob")
	start := func(who []string, bot string) string {
		status, m := ms.do(t, "POST", "/api/matches", fmt.Sprintf(`{"game":"tanks","bots":[%q,%q],"settings":{"zone_radius":0}}`, bot, bot), who...)
		if status != 201 {
			t.Fatalf("start: %d %v", status, m)
		}
		return m["id"].(string)
	}
	start(alice, "bots/held") // holds the one slot
	var waiting []string
	for range 200 {
		waiting = append(waiting, start(alice, "bots/slow"))
	}
	b := start(bob, "bots/slow")
	if _, m := ms.do(t, "GET", "/api/matches/"+b, ""); m["position"] != float64(1) {
		t.Errorf("bob's match is at %v, want 1", m["position"])
	}
	if _, m := ms.do(t, "GET", "/api/matches/"+waiting[199], ""); m["position"] != float64(201) {
		t.Errorf("alice's last match is at %v, want 201", m["position"])
	}
	ms.release()
	m := ms.waitFinal(t, b)
	if m["status"] != "finished" {
		t.Fatalf("bob's match: %v", m["status"])
	}
	// Judged by the matches' start times, not by what a poll catches
	// running: alice's next matches may start and end meanwhile.
	bobStarted, _ := time.Parse(time.RFC3339Nano, fmt.Sprint(m["started_at"]))
	if bobStarted.IsZero() {
		t.Fatalf("bob's match has no start time: %v", m)
	}
	before := 0
	for _, id := range waiting {
		_, m := ms.do(t, "GET", "/api/matches/"+id, "")
		if at, err := time.Parse(time.RFC3339Nano, fmt.Sprint(m["started_at"])); err == nil && !at.After(bobStarted) {
			before++
		}
	}
	if before > 0 {
		t.Errorf("%d of alice's waiting matches started before bob's, want none", before)
	}
	for _, id := range waiting {
		ms.do(t, "DELETE", "/api/matches/"+id, "", alice...)
	}
}

// Nobody takes the namespace of the operator's images (ARENA_ALLOW's,
// the example bots'): its owner could push images of those names, which
// the engine would then hold in their place.
func TestOperatorNamespacesAreReserved(t *testing.T) {
	ms := newMatrixServer(t, Config{})
	admin := []string{"Authorization", "Bearer " + matrixAdminToken}
	if status, body := ms.do(t, "POST", "/api/users", `{"name":"bots","password":"a-long-password"}`, admin...); status != http.StatusBadRequest || !strings.Contains(fmt.Sprint(body["error"]), "reserved") {
		t.Errorf("an account named after ARENA_ALLOW's bots/*: %d %v", status, body)
	}
	alice := ms.signIn(t, "alice")
	if status, body := ms.do(t, "POST", "/api/teams", `{"name":"bots"}`, alice...); status != http.StatusBadRequest || !strings.Contains(fmt.Sprint(body["error"]), "reserved") {
		t.Errorf("a team named after ARENA_ALLOW's bots/*: %d %v", status, body)
	}
	if status, body := ms.do(t, "POST", "/api/users", `{"name":"botsy","password":"a-long-password"}`, admin...); status != http.StatusCreated {
		t.Errorf("another name: %d %v", status, body)
	}
}
