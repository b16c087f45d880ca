package web

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"arena/contest"
	"arena/internal/testsupport/poll"
	"arena/orchestrator/fake"
	"arena/platform"
)

// challengeDone waits for every game of a challenge to be over and
// returns the challenge as auth sees it.
func (ms *matrixServer) challengeDone(t *testing.T, id any, auth ...string) map[string]any {
	t.Helper()
	var c map[string]any
	poll.Until(t, 60*time.Second, func() error {
		var status int
		status, c = ms.do(t, "GET", fmt.Sprintf("/api/challenges/%v", id), "", auth...)
		if status != http.StatusOK {
			t.Fatalf("challenge %v: %d %v", id, status, c)
		}
		if c["pending"] != 0.0 {
			return fmt.Errorf("%v games pending", c["pending"])
		}
		return nil
	})
	return c
}

// Bob challenges alice's private bot: the games play with seats swapped
// and each pair on one seed, both see the challenge (carol does not),
// bob still cannot pull alice's image, his daily limit answers 429, and
// an unranked challenge of a ladder entry leaves its rating alone.
// During a contest's freeze only its reference bots may be challenged.
func TestChallenges(t *testing.T) {
	ms := newMatrixServer(t, Config{}, registryAt("127.0.0.1:5006"), func(c *platform.Config, _ *platform.Deps) { c.Challenges.PerDay = 3 })
	tanksImage := fakePulls(t, ms)
	_, aliceTok := ms.token(t, "alice")
	_, bobTok := ms.token(t, "bob")
	_, carolTok := ms.token(t, "carol")
	alice := []string{"Authorization", "Bearer " + aliceTok}
	bob := []string{"Authorization", "Bearer " + bobTok}
	carol := []string{"Authorization", "Bearer " + carolTok}
	if status, body := ms.push(t, "alice", aliceTok, "alice/tank", "v1", tanksImage("alice's tank", fake.Script{})); status != http.StatusCreated {
		t.Fatalf("alice pushes: %d %s", status, body)
	}
	poll.Until(t, 20*time.Second, func() error {
		if got := ms.tagState(t, aliceTok, "alice/tank:v1"); got != "ready" {
			return fmt.Errorf("alice/tank:v1 is %q", got)
		}
		return nil
	})

	// Bob may not play alice's bot, but may challenge it.
	if status, body := ms.do(t, "POST", "/api/matches", `{"game":"tanks","bots":["arena/tanks-random","alice/tank:v1"]}`, bob...); status != http.StatusForbidden {
		t.Fatalf("bob plays alice's bot: %d %v", status, body)
	}
	status, c := ms.do(t, "POST", "/api/challenges", `{"bot":"arena/tanks-random","opponent":{"bot":"alice/tank"},"games":4}`, bob...)
	if status != http.StatusCreated {
		t.Fatalf("bob challenges alice/tank: %d %v", status, c)
	}
	if c["opponent_bot"] != "alice/tank:v1" || c["opponent_owner"] != "alice" || c["created_by"] != "bob" || c["games"] != 4.0 || c["ranked"] != false {
		t.Errorf("the challenge: %v", c)
	}
	games := c["matches"].([]any)
	if len(games) != 4 {
		t.Fatalf("%d games", len(games))
	}
	for i, g := range games {
		g := g.(map[string]any)
		if g["seat"] != float64(i%2) || g["seed"] != games[i/2*2].(map[string]any)["seed"] {
			t.Errorf("game %d: %v", i, g)
		}
		_, m := ms.do(t, "GET", "/api/matches/"+g["id"].(string), "", bob...)
		if want := []any{"arena/tanks-random", "alice/tank:v1"}; i%2 == 1 && fmt.Sprint(m["bots"]) != fmt.Sprint([]any{want[1], want[0]}) || i%2 == 0 && fmt.Sprint(m["bots"]) != fmt.Sprint(want) {
			t.Errorf("game %d plays %v", i, m["bots"])
		}
		if m["kind"] != "challenge" {
			t.Errorf("game %d is of kind %v", i, m["kind"])
		}
	}
	done := ms.challengeDone(t, c["id"], bob...)
	if n := done["wins"].(float64) + done["draws"].(float64) + done["losses"].(float64) + done["void"].(float64); n != 4 || done["void"] != 0.0 {
		t.Errorf("4 games, counted %v: %v", n, done)
	}
	if iv := done["interval"].([]any); iv[0].(float64) > done["points"].(float64) || iv[1].(float64) < done["points"].(float64) {
		t.Errorf("points %v outside the interval %v", done["points"], iv)
	}
	for who, auth := range map[string][]string{"bob": bob, "alice": alice} {
		_, list := ms.do(t, "GET", "/api/challenges?mine=1", "", auth...)
		if l := list["challenges"].([]any); len(l) != 1 || l[0].(map[string]any)["id"] != c["id"] {
			t.Errorf("%s's challenges: %v", who, list)
		}
	}
	if status, _ := ms.do(t, "GET", fmt.Sprintf("/api/challenges/%v", c["id"]), "", carol...); status != http.StatusNotFound {
		t.Errorf("carol sees bob's challenge: %d", status)
	}
	if res, _ := ms.registryCall(t, "bob", bobTok, "GET", "/v2/alice/tank/manifests/v1", "", nil); res.StatusCode != http.StatusUnauthorized && res.StatusCode != http.StatusForbidden {
		t.Errorf("bob pulls alice's image: %d", res.StatusCode)
	}

	// An unranked challenge leaves the ladder's ratings alone.
	status, e := ms.do(t, "POST", "/api/ladders/tanks/entries", `{"name":"alicetank","image":"alice/tank:v1"}`, alice...)
	if status != http.StatusCreated {
		t.Fatalf("alice's entry: %d %v", status, e)
	}
	entry := fmt.Sprint(e["id"])
	rating := func() string {
		_, page := ms.do(t, "GET", "/api/ladders/tanks/entries/"+entry, "", alice...)
		return fmt.Sprint(page["mu"], page["sigma"], len(page["history"].([]any)))
	}
	before := rating()
	status, c2 := ms.do(t, "POST", "/api/challenges", `{"bot":"arena/tanks-hunter","opponent":{"ladder":"tanks","entry":`+entry+`},"games":2,"map":"classic"}`, bob...)
	if status != http.StatusCreated {
		t.Fatalf("bob challenges alice's entry: %d %v", status, c2)
	}
	ms.challengeDone(t, c2["id"], bob...)
	if after := rating(); after != before {
		t.Errorf("an unranked challenge moved the rating: %s → %s", before, after)
	}
	if status, body := ms.do(t, "POST", "/api/challenges", `{"bot":"arena/tanks-hunter","opponent":{"ladder":"tanks","entry":`+entry+`},"games":2,"ranked":true}`, bob...); status != http.StatusBadRequest || !strings.Contains(fmt.Sprint(body["error"]), "ARENA_LADDER_RANKED_CHALLENGES") {
		t.Errorf("a ranked challenge on a server without: %d %v", status, body)
	}

	// Carol challenges alice's entry in an open contest: it plays the
	// entry's version; alice sees it; a withdrawn entry is refused.
	spring, err := ms.svc.Contests.Create(t.Context(), ms.principal(t, "admin"), contest.Spec{Name: "Spring", Game: "tanks", Maps: []string{"classic"}, FreezeAt: ms.clock.Now().Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	status, e = ms.do(t, "POST", fmt.Sprintf("/api/contests/%d/entries", spring.ID), `{"bot":"alice/tank:v1"}`, alice...)
	if status != http.StatusCreated {
		t.Fatalf("alice enters Spring: %d %v", status, e)
	}
	springEntry := fmt.Sprint(e["id"])
	status, c3 := ms.do(t, "POST", "/api/challenges", fmt.Sprintf(`{"bot":"arena/tanks-random","opponent":{"contest":%d,"entry":%s},"games":2}`, spring.ID, springEntry), carol...)
	if status != http.StatusCreated || c3["opponent_bot"] != "alice/tank:v1" || c3["opponent_owner"] != "alice" || c3["opponent"] != fmt.Sprintf("contest %d entry %s", spring.ID, springEntry) {
		t.Fatalf("carol challenges alice's contest entry: %d %v", status, c3)
	}
	if done := ms.challengeDone(t, c3["id"], alice...); done["wins"].(float64)+done["draws"].(float64)+done["losses"].(float64) != 2 {
		t.Errorf("the contest entry's challenge, as alice sees it: %v", done)
	}
	if status, body := ms.do(t, "PATCH", fmt.Sprintf("/api/contests/%d/entries/%s", spring.ID, springEntry), `{"withdraw":true}`, alice...); status != http.StatusOK {
		t.Fatalf("alice withdraws: %d %v", status, body)
	}
	if status, body := ms.do(t, "POST", "/api/challenges", fmt.Sprintf(`{"bot":"arena/tanks-random","opponent":{"contest":%d,"entry":%s},"games":1}`, spring.ID, springEntry), carol...); status != http.StatusConflict || !strings.Contains(fmt.Sprint(body["error"]), "withdrawn") {
		t.Errorf("a challenge of a withdrawn entry: %d %v", status, body)
	}

	// Bad challenges say what is wrong.
	for _, bad := range []struct{ body, want string }{
		{`{"bot":"arena/tanks-random","opponent":{"bot":"alice/tank"},"games":21}`, "games: 21: 1 to 20"},
		{`{"bot":"arena/tanks-random","opponent":{},"games":2}`, "opponent: name one"},
		{`{"bot":"alice/tank:v1","opponent":{"bot":"arena/tanks-hunter"},"games":2}`, "not yours to play"},
		{`{"bot":"arena/tanks-random","opponent":{"bot":"alice/nothing"},"games":2}`, "no pushed bot alice/nothing"},
		{`{"bot":"arena/tanks-random","opponent":{"ladder":"tanks","entry":999},"games":2}`, "opponent"},
		{`{"bot":"arena/tanks-random","opponent":{"bot":"alice/tank"},"map":"nowhere"}`, "map"},
	} {
		status, body := ms.do(t, "POST", "/api/challenges", bad.body, carol...)
		if status < 400 || status >= 500 || !strings.Contains(fmt.Sprint(body["error"]), bad.want) {
			t.Errorf("%s: %d %v, want %q", bad.body, status, body, bad.want)
		}
	}

	// Bob's third challenge of the day is his last.
	if status, body := ms.do(t, "POST", "/api/challenges", `{"bot":"arena/tanks-random","opponent":{"bot":"alice/tank"},"games":1}`, bob...); status != http.StatusCreated {
		t.Fatalf("bob's third: %d %v", status, body)
	}
	status, body := ms.do(t, "POST", "/api/challenges", `{"bot":"arena/tanks-random","opponent":{"bot":"alice/tank"},"games":1}`, bob...)
	if status != http.StatusTooManyRequests || !strings.Contains(fmt.Sprint(body["error"]), "ARENA_CHALLENGES_PER_DAY") {
		t.Errorf("bob's fourth: %d %v", status, body)
	}

	// A contest of tanks in its freeze closes challenges but of its
	// reference bots.
	ct, err := ms.svc.Contests.Create(t.Context(), ms.principal(t, "admin"), contest.Spec{Name: "Cup", Game: "tanks", Maps: []string{"classic"}, FreezeAt: ms.clock.Now().Add(time.Minute), ReferenceBots: []string{"arena/tanks-hunter"}, EntriesPerPerson: 2})
	if err != nil {
		t.Fatal(err)
	}
	// Two entries, one held: the final plays until the test ends.
	for _, img := range []string{"bots/held", "arena/tanks-random"} {
		if _, err := ms.svc.Contests.Enter(t.Context(), ms.principal(t, "admin"), ct.ID, platform.ContestEntryRequest{Image: img}); err != nil {
			t.Fatal(err)
		}
	}
	ms.clock.skip(2 * time.Minute)
	status, body = ms.do(t, "POST", "/api/challenges", `{"bot":"arena/tanks-random","opponent":{"bot":"alice/tank"},"games":1}`, carol...)
	if status != http.StatusConflict || !strings.Contains(fmt.Sprint(body["error"]), fmt.Sprintf("closed during contest %d", ct.ID)) || !strings.Contains(fmt.Sprint(body["error"]), "arena/tanks-hunter") {
		t.Errorf("carol challenges alice during the freeze: %d %v", status, body)
	}
	if status, body := ms.do(t, "POST", "/api/challenges", `{"bot":"arena/tanks-random","opponent":{"bot":"arena/tanks-hunter"},"games":1}`, carol...); status != http.StatusCreated {
		t.Errorf("carol challenges the reference bot during the freeze: %d %v", status, body)
	}
}

// With ARENA_LADDER_RANKED_CHALLENGES on, a challenge between two entries
// of a ladder may be rated by it.
func TestRankedChallenges(t *testing.T) {
	ms := newMatrixServer(t, Config{}, func(c *platform.Config, _ *platform.Deps) { c.Challenges.Ranked = true })
	_, aliceTok := ms.token(t, "alice")
	_, bobTok := ms.token(t, "bob")
	alice := []string{"Authorization", "Bearer " + aliceTok}
	bob := []string{"Authorization", "Bearer " + bobTok}
	var ids []string
	for _, e := range []struct {
		auth      []string
		name, bot string
	}{{alice, "hunter", "arena/tanks-hunter"}, {bob, "random", "arena/tanks-random"}} {
		status, body := ms.do(t, "POST", "/api/ladders/tanks/entries", fmt.Sprintf(`{"name":%q,"image":%q}`, e.name, e.bot), e.auth...)
		if status != http.StatusCreated {
			t.Fatalf("entry %s: %d %v", e.name, status, body)
		}
		ids = append(ids, fmt.Sprint(body["id"]))
	}
	status, c := ms.do(t, "POST", "/api/challenges", `{"bot":"arena/tanks-random","opponent":{"ladder":"tanks","entry":`+ids[0]+`},"games":2,"map":"classic","ranked":true}`, bob...)
	if status != http.StatusCreated || c["ranked"] != true {
		t.Fatalf("a ranked challenge: %d %v", status, c)
	}
	ms.challengeDone(t, c["id"], bob...)
	_, page := ms.do(t, "GET", "/api/ladders/tanks/entries/"+ids[0], "", alice...)
	var rated []string
	for _, m := range page["recent_matches"].([]any) {
		m := m.(map[string]any)
		if m["state"] == "rated" {
			rated = append(rated, fmt.Sprint(m["match_id"]))
		}
	}
	var challenged []string
	for _, g := range c["matches"].([]any) {
		challenged = append(challenged, g.(map[string]any)["id"].(string))
	}
	slices.Sort(rated)
	slices.Sort(challenged)
	if !slices.Equal(rated, challenged) {
		t.Errorf("rated %v, the challenge's games %v (page %v)", rated, challenged, page)
	}
	// Not an entry of bob's: refused.
	if status, body := ms.do(t, "POST", "/api/challenges", `{"bot":"arena/tanks-hunter","opponent":{"ladder":"tanks","entry":`+ids[0]+`},"games":2,"ranked":true}`, bob...); status != http.StatusBadRequest || !strings.Contains(fmt.Sprint(body["error"]), "not one of your active entries") {
		t.Errorf("a ranked challenge of a bot not on the ladder: %d %v", status, body)
	}
}

// A challenge must fit in its maker's line of waiting matches
// (ARENA_USER_QUEUE_MAX): one that does not is refused whole, 429,
// before any of its games is queued.
func TestAChallengeFitsInItsMakersLine(t *testing.T) {
	ms := newMatrixServer(t, Config{}, func(c *platform.Config, _ *platform.Deps) { c.UserQueueMax = 3 })
	_, tok := ms.token(t, "bob")
	bob := []string{"Authorization", "Bearer " + tok}
	// Bob's held match takes the one slot; two more of his wait.
	ms.match(t, "bob", "bots/held", "bots/held")
	ms.match(t, "bob", "bots/held", "bots/held")
	ms.match(t, "bob", "bots/held", "bots/held")
	status, body := ms.do(t, "POST", "/api/challenges", `{"bot":"arena/tanks-random","opponent":{"bot":"arena/tanks-hunter"},"games":2}`, bob...)
	if status != http.StatusTooManyRequests || !strings.Contains(fmt.Sprint(body["error"]), "ARENA_USER_QUEUE_MAX") {
		t.Errorf("a challenge past bob's line: %d %v", status, body)
	}
	if _, list := ms.do(t, "GET", "/api/challenges?mine=1", "", bob...); len(list["challenges"].([]any)) != 0 {
		t.Errorf("a refused challenge was kept: %v", list)
	}
	if status, body := ms.do(t, "POST", "/api/challenges", `{"bot":"arena/tanks-random","opponent":{"bot":"arena/tanks-hunter"},"games":1}`, bob...); status != http.StatusCreated {
		t.Errorf("a challenge that fits: %d %v", status, body)
	}
}
