package web

import (
	"bufio"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"arena/internal/testsupport/poll"
	"arena/ladder"
	"arena/ladder/skill"
	"arena/orchestrator/fake"
	"arena/platform"
)

func (ts *testServer) register(t *testing.T, name, image string) map[string]any {
	t.Helper()
	status, body := ts.do(t, "POST", "/api/ladders/tanks/entries", fmt.Sprintf(`{"name":%q,"image":%q}`, name, image))
	if status != 201 {
		t.Fatalf("register %s: %d %v", name, status, body)
	}
	return body
}

// waitBoard polls the Tanks leaderboard until ok holds.
func (ts *testServer) waitBoard(t *testing.T, what string, ok func(b map[string]any) bool) map[string]any {
	t.Helper()
	var b map[string]any
	poll.Until(t, 30*time.Second, func() error {
		if _, b = ts.do(t, "GET", "/api/ladders/tanks", ""); !ok(b) {
			return fmt.Errorf("the leaderboard never showed %s: %v", what, b)
		}
		return nil
	})
	return b
}

func TestLadderRejectsBadInput(t *testing.T) {
	ts := newTestServer(t, Config{}, 1, with(platform.Config{Allow: []string{"arena/*", "bots/*"}, Ladder: platform.LadderConfig{MaxEntries: 2}}))
	ts.register(t, "hunter", "arena/tanks-hunter")
	ts.launcher.Add("bots/snaky", fake.Script{Game: "snake"})
	tests := []struct {
		name, path, body string
		status           int
		want             string
	}{
		{"another game's bot", "/api/ladders/tanks/entries", `{"name":"a","image":"bots/snaky"}`, 400, "image: bots/snaky is labelled for snake (io.arena.game=snake), not tanks: it would fault every match here; register it on the snake ladder"},
		{"unknown game", "/api/ladders/chess/entries", `{"name":"a","image":"arena/tanks-random"}`, 404, `unknown game "chess"`},
		{"not JSON", "/api/ladders/tanks/entries", `hello`, 400, "request body is not a JSON ladder entry"},
		{"unknown field", "/api/ladders/tanks/entries", `{"name":"a","image":"arena/tanks-random","seat":1}`, 400, `unknown field "seat"`},
		{"bad name", "/api/ladders/tanks/entries", `{"name":"<b>","image":"arena/tanks-random"}`, 400, `name "<b>": 1 to 40 letters`},
		{"no image", "/api/ladders/tanks/entries", `{"name":"a","image":" "}`, 400, "image: empty image name"},
		{"image absent", "/api/ladders/tanks/entries", `{"name":"a","image":"arena/not-built"}`, 400, "image arena/not-built is not known"},
		{"malformed image", "/api/ladders/tanks/entries", `{"name":"a","image":"arena/Bad Name"}`, 400, `"arena/Bad Name" is not an image name`},
		{"not allowed", "/api/ladders/tanks/entries", `{"name":"a","image":"evil/bot"}`, 403, "image evil/bot is not allowed here"},
		{"name taken by another image", "/api/ladders/tanks/entries", `{"name":"hunter","image":"arena/tanks-random"}`, 409, "hunter is registered with image arena/tanks-hunter"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body := ts.do(t, "POST", tt.path, tt.body)
			if status != tt.status || !strings.Contains(fmt.Sprint(body["error"]), tt.want) {
				t.Errorf("%d %v, want %d and %q", status, body, tt.status, tt.want)
			}
		})
	}
	if status, body := ts.do(t, "POST", "/api/ladders/tanks/entries", `{"name":"hunter","image":"arena/tanks-hunter"}`); status != 200 || body["name"] != "hunter" {
		t.Errorf("the same entry again: %d %v", status, body)
	}
	ts.register(t, "random", "arena/tanks-random")
	if status, body := ts.do(t, "POST", "/api/ladders/tanks/entries", `{"name":"third","image":"bots/slow"}`); status != 409 || !strings.Contains(fmt.Sprint(body["error"]), "ARENA_LADDER_MAX_ENTRIES") {
		t.Errorf("past the most entries: %d %v", status, body)
	}
	for _, path := range []string{"/api/ladders/chess", "/api/ladders/tanks/entries/99", "/api/ladders/tanks/entries/x"} {
		if status, body := ts.do(t, "GET", path, ""); status != 404 {
			t.Errorf("GET %s: %d %v", path, status, body)
		}
	}
	if status, body := ts.do(t, "PATCH", "/api/ladders/tanks/entries/1", `{}`); status != 400 || !strings.Contains(fmt.Sprint(body["error"]), `send {"active": false} to pause the entry`) {
		t.Errorf("PATCH without active: %d %v", status, body)
	}
	// The ladder is off: nothing plays.
	if _, b := ts.do(t, "GET", "/api/ladders/tanks", ""); b["running"] != false || !strings.Contains(fmt.Sprint(b["why"]), "ARENA_LADDER=off") {
		t.Errorf("board of a ladder that is off: %v", b)
	}
	if n := len(ts.launcher.Bots()); n != 0 {
		t.Errorf("%d bots started", n)
	}
}

func TestLadderTokenGuardsChanges(t *testing.T) {
	ts := newTestServer(t, Config{}, 1, with(platform.Config{Token: "s3cret"}))
	for _, r := range []struct{ method, path, body string }{
		{"POST", "/api/ladders/tanks/entries", `{"name":"a","image":"arena/tanks-random"}`},
		{"PATCH", "/api/ladders/tanks/entries/1", `{"active":false}`},
		{"DELETE", "/api/ladders/tanks/entries/1", ``},
	} {
		if status, body := ts.do(t, r.method, r.path, r.body); status != 401 {
			t.Errorf("%s %s without the token: %d %v", r.method, r.path, status, body)
		}
	}
	if status, _ := ts.do(t, "POST", "/api/ladders/tanks/entries", `{"name":"a","image":"arena/tanks-random"}`, "Authorization", "Bearer s3cret"); status != 201 {
		t.Errorf("with the token: %d", status)
	}
	if status, _ := ts.do(t, "GET", "/api/ladders/tanks", ""); status != 200 {
		t.Errorf("reading needs no token: %d", status)
	}
}

// The whole ladder with scripted bots: it plays by itself once two
// entries are active, rates every match, ranks the bot that crashes
// last with its crashes counted and linked, pauses an entry whose image
// is gone, lets a match started by hand go first, shows who plays next
// and why, and its ratings recompute to the same numbers.
func TestLadderPlaysRatesAndRanks(t *testing.T) {
	ts := newTestServer(t, Config{}, 1, with(platform.Config{Ladder: platform.LadderConfig{Enabled: true}}))
	hunter := ts.register(t, "hunter", "arena/tanks-hunter")
	if hunter["image_id"] != "sha256:"+fmt.Sprintf("%x", sha256sum("arena/tanks-hunter")) || hunter["rating"].(float64) != 0 {
		t.Errorf("registered: %v", hunter)
	}
	ts.register(t, "crashy", "bots/crashy")
	ts.register(t, "random", "arena/tanks-random")
	gone := ts.register(t, "gone", "bots/gone")
	ts.launcher.Remove("bots/gone")

	// A match started by hand goes ahead of the ladder's waiting ones.
	ts.waitBoard(t, "a match waiting", func(b map[string]any) bool {
		for _, p := range b["upcoming"].([]any) {
			if p.(map[string]any)["status"] == "queued" {
				return true
			}
		}
		return false
	})
	status, m := ts.do(t, "POST", "/api/matches", `{"game":"tanks","bots":["arena/tanks-random","arena/tanks-hunter"]}`)
	if status != 201 || m["position"].(float64) > 1 {
		t.Errorf("a match started by hand: %d, position %v; want at most 1", status, m["position"])
	}

	b := ts.waitBoard(t, "24 rated matches", func(b map[string]any) bool { return b["rated"].(float64) >= 24 })
	entries := b["entries"].([]any)
	if len(entries) != 4 {
		t.Fatalf("entries: %v", entries)
	}
	byName := map[string]map[string]any{}
	for i, e := range entries {
		e := e.(map[string]any)
		byName[e["name"].(string)] = e
		if e["rank"].(float64) != float64(i+1) && e["rating"] != entries[i-1].(map[string]any)["rating"] {
			t.Errorf("rank %v at row %d", e["rank"], i)
		}
		if r, mu, sigma := e["rating"].(float64), e["mu"].(float64), e["sigma"].(float64); r != mu-3*sigma {
			t.Errorf("%s: rating %v, μ %v, σ %v", e["name"], r, mu, sigma)
		}
	}
	if last := entries[3].(map[string]any); last["name"] != "crashy" || last["rank"].(float64) != 4 {
		t.Errorf("the bot that crashes is not last: %v", entries)
	}
	crashy := byName["crashy"]
	crash := crashy["faults"].(map[string]any)["crash"].(map[string]any)
	if crash["percent"].(float64) != 100 || crash["latest_match"] == "" || crashy["losses"] != crashy["matches"] {
		t.Errorf("crashy: %v", crashy)
	}
	if g := byName["gone"]; g["state"] != "paused" || !strings.Contains(fmt.Sprint(g["note"]), "no longer on the engine") || g["matches"].(float64) != 0 {
		t.Errorf("the entry whose image is gone: %v", g)
	}
	if h, r := byName["hunter"], byName["random"]; h["draws"].(float64) == 0 || r["draws"].(float64) == 0 {
		t.Errorf("two idle bots never drew: %v %v", h, r)
	}
	// Who plays next, and why.
	ups := ts.waitBoard(t, "a match in flight", func(b map[string]any) bool { return len(b["upcoming"].([]any)) > 0 })["upcoming"].([]any)
	if !strings.Contains(ups[0].(map[string]any)["reason"].(string), "least certain") {
		t.Errorf("upcoming: %v", ups)
	}
	if rec := b["recent"].([]any); len(rec) == 0 {
		t.Errorf("no recent matches")
	}

	// An entry's page: its rating after every match, its matches with
	// links to their replays, its record against each opponent.
	id := int(crashy["id"].(float64))
	status, page := ts.do(t, "GET", fmt.Sprintf("/api/ladders/tanks/entries/%d?matches=5", id), "")
	if status != 200 {
		t.Fatalf("entry page: %d %v", status, page)
	}
	if h := page["history"].([]any); len(h) < 2 || h[0].(map[string]any)["match_id"] != nil {
		t.Errorf("history: %v", h)
	}
	if ms := page["recent_matches"].([]any); len(ms) != 5 || len(ms[0].(map[string]any)["seats"].([]any)) < 2 {
		t.Errorf("matches: %v", ms)
	}
	if opp := page["opponents"].([]any); len(opp) != 2 || opp[0].(map[string]any)["wins"].(float64) != 0 {
		t.Errorf("opponents: %v", opp)
	}
	if f := page["fault_breakdown"].([]any); len(f) != 1 || f[0].(map[string]any)["status"] != "crashed" || f[0].(map[string]any)["reason"] == nil {
		t.Errorf("fault breakdown (the latest crash's reason with it): %v", f)
	}
	mid := page["recent_matches"].([]any)[0].(map[string]any)["match_id"].(string)
	// The ladder's bots play under their images' references.
	_, m = ts.do(t, "GET", "/api/matches/"+mid, "")
	if len(m["ladder"].([]any)) != len(m["bots"].([]any)) {
		t.Errorf("the ladder's match: %v", m)
	}
	for _, b := range m["bots"].([]any) {
		if b := b.(string); !slices.Contains([]string{"bots/crashy", "arena/tanks-hunter", "arena/tanks-random"}, b) {
			t.Errorf("a ladder bot named %q", b)
		}
	}

	// Pause everyone; once the matches in flight are settled, the
	// ratings recompute to the same numbers.
	for _, e := range entries {
		eid := int(e.(map[string]any)["id"].(float64))
		if status, body := ts.do(t, "PATCH", fmt.Sprintf("/api/ladders/tanks/entries/%d", eid), `{"active":false}`); status != 200 || body["state"] != "paused" {
			t.Fatalf("pause: %d %v", status, body)
		}
	}
	b = ts.waitBoard(t, "nothing in flight", func(b map[string]any) bool { return len(b["upcoming"].([]any)) == 0 })
	if b["running"] != false {
		t.Errorf("a paused ladder runs: %v", b["why"])
	}
	rc, err := ladder.Recompute(t.Context(), ts.store, skill.Default(), "tanks", false)
	if err != nil || rc.MaxDiff != 0 || rc.Matches < 24 || rc.Changed != 0 {
		t.Errorf("recomputed: %+v %v", rc, err)
	}
	if status, body := ts.do(t, "DELETE", fmt.Sprintf("/api/ladders/tanks/entries/%d", int(gone["id"].(float64))), ""); status != 200 || body["state"] != "removed" {
		t.Errorf("remove: %d %v", status, body)
	}
	status, body := ts.do(t, "GET", "/api/ladders/tanks", "")
	if status != 200 || len(body["entries"].([]any)) != 3 {
		t.Errorf("after removal: %v", body["entries"])
	}
}

func TestLadderList(t *testing.T) {
	ts := newTestServer(t, Config{}, 1, with(platform.Config{Ladder: platform.LadderConfig{Enabled: true}}))
	ts.register(t, "hunter", "arena/tanks-hunter")
	req, _ := http.NewRequest("GET", ts.url+"/api/ladders", nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var list []map[string]any
	if err := json.NewDecoder(res.Body).Decode(&list); err != nil || len(list) != 1 || list[0]["game"] != "tanks" || list[0]["entries"].(float64) != 1 || list[0]["running"] != false {
		t.Errorf("ladders: %v %v", list, err)
	}
}

// The leaderboard's stream sends the board at once and again when it
// changes.
func TestLadderStream(t *testing.T) {
	ts := newTestServer(t, Config{}, 1)
	res, err := http.Get(ts.url + "/api/ladders/tanks/stream")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if ct := res.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("Content-Type %q", ct)
	}
	events := make(chan map[string]any, 8)
	go func() {
		sc := bufio.NewScanner(res.Body)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				var b map[string]any
				json.Unmarshal([]byte(data), &b)
				events <- b
			}
		}
		close(events)
	}()
	next := func() map[string]any {
		select {
		case b := <-events:
			return b
		case <-time.After(10 * time.Second):
			t.Fatal("no board")
			return nil
		}
	}
	if b := next(); len(b["entries"].([]any)) != 0 {
		t.Errorf("first board: %v", b)
	}
	ts.register(t, "hunter", "arena/tanks-hunter")
	if b := next(); len(b["entries"].([]any)) != 1 {
		t.Errorf("board after a registration: %v", b)
	}
}

func sha256sum(s string) [32]byte { return sha256.Sum256([]byte(s)) }
