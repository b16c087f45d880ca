package web

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"arena/accounts"
	"arena/engine"
	"arena/internal/testsupport/poll"
	"arena/judger"
	"arena/orchestrator/fake"
	"arena/platform"
	"arena/store"
)

// A player cannot replace an image of the engine by a push: a pushed bot
// is pulled by its digest, held by a tag of the registry's host and
// played by its id, so the
// engine's svcco/webapp:latest (a user's namespace, svcco) and red/app
// (a team's) stay the operator's images after svcco and red push and
// play images of those names. The namespaces of the logic games are
// reserved for users and teams alike, and an admin cannot register a
// game whose image is in a user's or a team's namespace.
func TestAPushReplacesNoImageOnTheEngine(t *testing.T) {
	ms := newMatrixServer(t, Config{}, registryAt("127.0.0.1:5006"), withDeps(func(d *platform.Deps) {
		d.Logic = func(_ context.Context, spec platform.LogicSpec) (engine.Game, map[string][]byte, error) {
			return judger.Named(spec.Name, spec.Image, 2, ""), nil, nil
		}
	}))
	admin := []string{"Authorization", "Bearer " + matrixAdminToken}
	tanksImage := fakePulls(t, ms)

	// The operator's logic game reserves its namespace.
	if status, body := ms.do(t, "POST", "/api/games", `{"name":"ttt","image":"gamesco/ttt-logic"}`, admin...); status != http.StatusCreated {
		t.Fatalf("register ttt: %d %v", status, body)
	}
	if status, body := ms.do(t, "POST", "/api/users", `{"name":"gamesco","password":"a-long-password"}`, admin...); status != http.StatusBadRequest || !strings.Contains(fmt.Sprint(body["error"]), "reserved") {
		t.Errorf("an account named gamesco: %d %v", status, body)
	}
	if status, body := ms.do(t, "POST", "/api/teams", `{"name":"gamesco"}`, ms.signIn(t, "alice")...); status != http.StatusBadRequest || !strings.Contains(fmt.Sprint(body["error"]), "reserved") {
		t.Errorf("a team named gamesco: %d %v", status, body)
	}
	if status, body := ms.do(t, "POST", "/api/users", `{"name":"arena-platform","password":"a-long-password"}`, admin...); status != http.StatusBadRequest || !strings.Contains(fmt.Sprint(body["error"]), "reserved") {
		t.Errorf("an account named arena-platform: %d %v", status, body)
	}
	// A game in a namespace someone owns is refused: a user's, a team's.
	ms.user(t, "svcco")
	for _, image := range []string{"svcco/webapp", "red/app", "127.0.0.1:5006/red/app"} {
		if status, body := ms.do(t, "POST", "/api/games", `{"name":"web","image":"`+image+`"}`, admin...); status != http.StatusConflict || !strings.Contains(fmt.Sprint(body["error"]), "namespace") {
			t.Errorf("register a game of %s: %d %v", image, status, body)
		}
	}

	// The engine's own images of those names.
	operators := fake.Script{Game: "tanks", Labels: map[string]string{"who": "the operator"}}
	for _, ref := range []string{"svcco/webapp:latest", "red/app:latest"} {
		ms.launcher.Add(ref, operators)
	}
	_, svccoTok := ms.token(t, "svcco")
	_, carolTok := ms.token(t, "carol")
	for _, p := range []struct{ user, tok, repo, layer string }{{"svcco", svccoTok, "svcco/webapp", "svcco's"}, {"carol", carolTok, "red/app", "red's"}} {
		im := tanksImage(p.layer, fake.Script{Labels: map[string]string{"who": p.user}})
		if status, body := ms.push(t, p.user, p.tok, p.repo, "latest", im); status != http.StatusCreated {
			t.Fatalf("%s pushes %s: %d %s", p.user, p.repo, status, body)
		}
		ref := p.repo + ":latest"
		pulled := "127.0.0.1:5006/" + p.repo + ":" + strings.Replace(digestOf(im.manifest), ":", "-", 1)
		// Its check, then a match of it: both play the pushed image.
		poll.Until(t, 20*time.Second, func() error {
			if got := ms.tagState(t, p.tok, ref); got != "ready" {
				return fmt.Errorf("%s is %q", ref, got)
			}
			return nil
		})
		status, created := ms.do(t, "POST", "/api/matches", `{"game":"tanks","bots":["`+ref+`","arena/tanks-random"],"settings":{"zone_radius":0}}`, "Authorization", "Bearer "+p.tok)
		if status != http.StatusCreated {
			t.Fatalf("%s plays %s: %d %v", p.user, ref, status, created)
		}
		m := ms.waitFinal(t, created["id"].(string))
		bots := m["result"].(map[string]any)["bots"].([]any)
		if b := bots[0].(map[string]any); b["image"] != ref || b["image_id"] != fake.ImageID(pulled) {
			t.Errorf("%s's match played %v (%v), want %s (%s)", ref, b["image"], b["image_id"], ref, fake.ImageID(pulled))
		}
		// The engine's image of that name is the operator's still.
		img, err := ms.launcher.Image(t.Context(), ref)
		if err != nil || img.ID != fake.ImageID(ref) || img.Labels["who"] != "the operator" {
			t.Errorf("the engine's %s after %s's push: %s %v, %v", ref, p.user, img.ID, img.Labels, err)
		}
	}
}

// tagState is a pushed tag's check state, as its owner's My bots shows it.
func (ms *matrixServer) tagState(t *testing.T, tok, ref string) string {
	t.Helper()
	_, reg := ms.do(t, "GET", "/api/registry", "", "Authorization", "Bearer "+tok)
	images, _ := reg["images"].([]any)
	for _, v := range images {
		if img := v.(map[string]any); img["reference"] == ref {
			return fmt.Sprint(img["state"])
		}
	}
	return ""
}

// Old pushed versions leave the engine once nothing pins them: three
// versions pushed under one tag, each checked, leave only the last on the
// engine; a version a ladder entry plays stays while the entry is listed,
// and goes once it is removed; a version a match plays stays until the
// match is over.
func TestOldPushedVersionsLeaveTheEngine(t *testing.T) {
	ms := newMatrixServer(t, Config{}, with(platform.Config{Registry: platform.RegistryConfig{Enabled: true, Host: "127.0.0.1:5006", PulledGrace: time.Nanosecond}}))
	tanksImage := fakePulls(t, ms)
	eng := ms.engine
	_, tok := ms.token(t, "alice")
	auth := []string{"Authorization", "Bearer " + tok}
	ref := func(im image) string {
		return "127.0.0.1:5006/alice/churn:" + strings.Replace(digestOf(im.manifest), ":", "-", 1)
	}
	pushOnly := func(layer string) image {
		t.Helper()
		im := tanksImage(layer, fake.Script{})
		if status, body := ms.push(t, "alice", tok, "alice/churn", "v1", im); status != http.StatusCreated {
			t.Fatalf("push %s: %d %s", layer, status, body)
		}
		return im
	}
	checked := func(im image) {
		t.Helper()
		poll.Until(t, 20*time.Second, func() error {
			if _, err := ms.launcher.Image(t.Context(), ref(im)); err != nil {
				return fmt.Errorf("not checked yet: %v", err)
			}
			if got := ms.tagState(t, tok, "alice/churn:v1"); got != "ready" {
				return fmt.Errorf("alice/churn:v1 is %q", got)
			}
			return nil
		})
	}
	push := func(layer string) image {
		t.Helper()
		im := pushOnly(layer)
		checked(im)
		return im
	}
	prune := func() []string {
		t.Helper()
		if _, err := ms.pf.PruneEngine(t.Context()); err != nil {
			t.Fatal(err)
		}
		return eng.held()
	}
	first := push("one")
	second := push("two")
	third := push("three")
	if held := prune(); !slices.Equal(held, []string{ref(third)}) {
		t.Errorf("after three pushes the engine holds %v, want the last alone (%s)", held, ref(third))
	}

	// A ladder entry pins its version: pushed over, it stays while listed.
	status, entry := ms.do(t, "POST", "/api/ladders/tanks/entries", `{"name":"churner","image":"alice/churn:v1"}`, auth...)
	if status != http.StatusCreated {
		t.Fatalf("register: %d %v", status, entry)
	}
	id := fmt.Sprint(entry["id"])
	// A paused entry follows no tag: it keeps its version.
	if status, body := ms.do(t, "PATCH", "/api/ladders/tanks/entries/"+id, `{"active":false}`, auth...); status != http.StatusOK {
		t.Fatalf("pause: %d %v", status, body)
	}
	fourth := push("four")
	if held := prune(); !slices.Contains(held, ref(third)) || !slices.Contains(held, ref(fourth)) {
		t.Errorf("the entry's version left the engine: %v", held)
	}
	if status, body := ms.do(t, "DELETE", "/api/ladders/tanks/entries/"+id, "", auth...); status != http.StatusOK {
		t.Fatalf("remove the entry: %d %v", status, body)
	}
	if held := prune(); !slices.Equal(held, []string{ref(fourth)}) {
		t.Errorf("after the entry went the engine holds %v, want %s", held, ref(fourth))
	}

	// A match pins its version until it is over.
	status, created := ms.do(t, "POST", "/api/matches", `{"game":"tanks","bots":["alice/churn:v1","bots/held"],"settings":{"zone_radius":0}}`, auth...)
	if status != http.StatusCreated {
		t.Fatalf("a match: %d %v", status, created)
	}
	// (Its check waits for the match: the server plays one at a time.)
	fifth := pushOnly("five")
	if held := prune(); !slices.Contains(held, ref(fourth)) {
		t.Errorf("the playing match's version left the engine: %v", held)
	}
	ms.release()
	ms.waitFinal(t, created["id"].(string))
	checked(fifth)
	poll.Until(t, 10*time.Second, func() error {
		if held := prune(); !slices.Equal(held, []string{ref(fifth)}) {
			return fmt.Errorf("after the match the engine holds %v, want %s", held, ref(fifth))
		}
		return nil
	})
	for _, im := range []image{first, second} {
		if _, err := ms.launcher.Image(t.Context(), ref(im)); err == nil {
			t.Errorf("%s is still on the engine", ref(im))
		}
	}
}

// A user makes at most ARENA_TEAMS_PER_USER teams (5), each of which would
// have quotas of its own; leaving a team does not give one back; an
// admin makes any number.
func TestTeamsAUserMakesAreBounded(t *testing.T) {
	ms := newMatrixServer(t, Config{})
	bob := ms.signIn(t, "bob")
	for i := range accounts.DefaultTeamsPerUser {
		if status, body := ms.do(t, "POST", "/api/teams", fmt.Sprintf(`{"name":"bobs-%d"}`, i), bob...); status != http.StatusCreated {
			t.Fatalf("bob's team %d: %d %v", i, status, body)
		}
	}
	status, body := ms.do(t, "POST", "/api/teams", `{"name":"bobs-more"}`, bob...)
	if status != http.StatusForbidden || !strings.Contains(fmt.Sprint(body["error"]), "ARENA_TEAMS_PER_USER") {
		t.Errorf("bob's sixth team: %d %v", status, body)
	}
	// Many at once: still no more.
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() { ms.do(t, "POST", "/api/teams", fmt.Sprintf(`{"name":"race-%d"}`, i), bob...) })
	}
	wg.Wait()
	if n, err := ms.store.TeamsOf(t.Context(), "bob", store.MemberIn); err != nil || len(n) != accounts.DefaultTeamsPerUser {
		t.Errorf("bob is in %d teams (%v), want %d", len(n), err, accounts.DefaultTeamsPerUser)
	}
	admin := []string{"Authorization", "Bearer " + matrixAdminToken}
	for i := range accounts.DefaultTeamsPerUser + 1 {
		if status, body := ms.do(t, "POST", "/api/teams", fmt.Sprintf(`{"name":"staff-%d"}`, i), admin...); status != http.StatusCreated {
			t.Fatalf("the admin's team %d: %d %v", i, status, body)
		}
	}
}

// One owner takes at most ARENA_LADDER_ENTRIES_PER_OWNER of a ladder's
// places (here 3), however many names they register one image under: the
// fourth is refused, a new version of a name of theirs is not, a place
// freed takes another; a team's entries count for each of its members
// too (five teams are not fifteen more places); an admin is not bounded.
func TestOneOwnerTakesFewLadderPlaces(t *testing.T) {
	ms := newMatrixServer(t, Config{}, with(platform.Config{Ladder: platform.LadderConfig{MaxEntries: 50, MaxPerOwner: 3}}))
	alice := ms.signIn(t, "alice")
	register := func(who []string, body string) (int, map[string]any) {
		t.Helper()
		return ms.do(t, "POST", "/api/ladders/tanks/entries", body, who...)
	}
	var first string
	for i := range 3 {
		status, body := register(alice, fmt.Sprintf(`{"name":"a%d","image":"arena/tanks-random"}`, i))
		if status != http.StatusCreated {
			t.Fatalf("alice's entry %d: %d %v", i, status, body)
		}
		if i == 0 {
			first = fmt.Sprint(body["id"])
		}
	}
	status, body := register(alice, `{"name":"a3","image":"arena/tanks-random"}`)
	if status != http.StatusConflict || !strings.Contains(fmt.Sprint(body["error"]), "ARENA_LADDER_ENTRIES_PER_OWNER") {
		t.Errorf("alice's fourth entry: %d %v", status, body)
	}
	// Her team's entries count for her: no room for one.
	if status, body := register(alice, `{"name":"r0","image":"arena/tanks-random","team":"red"}`); status != http.StatusConflict || !strings.Contains(fmt.Sprint(body["error"]), "alice counts 3 entries on the tanks ladder with their teams'") {
		t.Errorf("red's entry: %d %v", status, body)
	}
	// A place freed takes another: red's, which then counts for carol,
	// red's other member, too.
	if status, body := ms.do(t, "DELETE", "/api/ladders/tanks/entries/"+first, "", alice...); status != http.StatusOK {
		t.Fatalf("remove a0: %d %v", status, body)
	}
	if status, body := register(alice, `{"name":"r0","image":"arena/tanks-random","team":"red"}`); status != http.StatusCreated {
		t.Errorf("red's entry in the freed place: %d %v", status, body)
	}
	if status, body := register(alice, `{"name":"a3","image":"arena/tanks-random"}`); status != http.StatusConflict {
		t.Errorf("alice's fourth entry, red's counted: %d %v", status, body)
	}
	carol := ms.signIn(t, "carol")
	for i := range 3 {
		status, body := register(carol, fmt.Sprintf(`{"name":"c%d","image":"arena/tanks-random"}`, i))
		if want := map[bool]int{true: http.StatusCreated, false: http.StatusConflict}[i < 2]; status != want {
			t.Errorf("carol's entry %d: %d %v, want %d", i, status, body, want)
		}
	}
	admin := []string{"Authorization", "Bearer " + matrixAdminToken}
	for i := range 4 {
		if status, body := register(admin, fmt.Sprintf(`{"name":"staff%d","image":"arena/tanks-hunter"}`, i)); status != http.StatusCreated {
			t.Errorf("the admin's entry %d: %d %v", i, status, body)
		}
	}
}

// Entries a person counts past ARENA_LADDER_ENTRIES_PER_OWNER once a
// team's count for its members (the person joined a team, or they were
// made before) are paused with a note, not removed: the newest first,
// still listed; resuming one is refused until a place is freed.
func TestJoiningATeamPausesEntriesOverTheCount(t *testing.T) {
	ms := newMatrixServer(t, Config{}, with(platform.Config{Ladder: platform.LadderConfig{MaxEntries: 50, MaxPerOwner: 3}}))
	bob, dave := ms.signIn(t, "bob"), ms.signIn(t, "dave")
	register := func(who []string, body string) string {
		t.Helper()
		status, e := ms.do(t, "POST", "/api/ladders/tanks/entries", body, who...)
		if status != http.StatusCreated {
			t.Fatalf("register %s: %d %v", body, status, e)
		}
		return fmt.Sprint(e["id"])
	}
	b0 := register(bob, `{"name":"b0","image":"arena/tanks-random"}`)
	register(bob, `{"name":"b1","image":"arena/tanks-random"}`)
	if status, body := ms.do(t, "POST", "/api/teams", `{"name":"blue"}`, dave...); status != http.StatusCreated {
		t.Fatalf("dave makes blue: %d %v", status, body)
	}
	register(dave, `{"name":"blue0","image":"arena/tanks-random","team":"blue"}`)
	newest := register(dave, `{"name":"blue1","image":"arena/tanks-random","team":"blue"}`)
	if status, body := ms.do(t, "POST", "/api/teams/blue/members", `{"user":"bob"}`, dave...); status != http.StatusCreated {
		t.Fatalf("dave invites bob: %d %v", status, body)
	}
	if status, body := ms.do(t, "POST", "/api/teams/blue/join", `{}`, bob...); status != http.StatusOK {
		t.Fatalf("bob joins blue: %d %v", status, body)
	}
	entry := func(id string) map[string]any {
		t.Helper()
		_, e := ms.do(t, "GET", "/api/ladders/tanks/entries/"+id, "", bob...)
		return e
	}
	if e := entry(newest); e["state"] != "paused" || !strings.Contains(fmt.Sprint(e["note"]), "bob counts 4 entries on the tanks ladder with their teams', the most one may is 3") {
		t.Errorf("blue's newest entry once bob joined: %v", e)
	}
	status, body := ms.do(t, "PATCH", "/api/ladders/tanks/entries/"+newest, `{"active":true}`, dave...)
	if status != http.StatusConflict || !strings.Contains(fmt.Sprint(body["error"]), "bob counts 4 entries") {
		t.Errorf("resume it: %d %v", status, body)
	}
	if status, body := ms.do(t, "DELETE", "/api/ladders/tanks/entries/"+b0, "", bob...); status != http.StatusOK {
		t.Fatalf("bob removes b0: %d %v", status, body)
	}
	if status, body := ms.do(t, "PATCH", "/api/ladders/tanks/entries/"+newest, `{"active":true}`, dave...); status != http.StatusOK {
		t.Errorf("resume it once a place is free: %d %v", status, body)
	}
}
