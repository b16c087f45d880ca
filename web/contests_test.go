package web

import (
	"encoding/csv"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"arena/internal/testsupport/poll"
)

// A contest through the API, with the server's queue and its runner: staff
// create it and enter three engine images (three per person), not a
// fourth; an entrant cannot enter an image, another's bot, or after the
// deadline; past the deadline the final plays by itself, every pair with
// the seats swapped; the standings rank the crashing bot last with its
// faults; the export matches; a version cannot be chosen after the
// freeze; only staff disqualify and rerun, and each staff action is in
// the audit log.
func TestAContestThroughTheAPI(t *testing.T) {
	ms := newMatrixServer(t, Config{}, registryAt("127.0.0.1:5006"))
	staff := []string{"Authorization", "Bearer " + matrixAdminToken}
	_, aliceTok := ms.token(t, "alice")
	alice := []string{"Authorization", "Bearer " + aliceTok}
	_, bobTok := ms.token(t, "bob")
	bob := []string{"Authorization", "Bearer " + bobTok}

	freeze := ms.clock.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	if status, body := ms.do(t, "POST", "/api/contests", `{"name":"Cup","game":"tanks","maps":["classic"],"rounds":3,"freeze_at":"`+freeze+`"}`, staff...); status != http.StatusBadRequest || !strings.Contains(fmt.Sprint(body["error"]), "rounds: 3") {
		t.Errorf("odd rounds: %d %v", status, body)
	}
	if status, body := ms.do(t, "POST", "/api/contests", `{"name":"Cup","game":"tanks","freeze_at":"`+freeze+`"}`, alice...); status != http.StatusForbidden {
		t.Errorf("alice creates a contest: %d %v", status, body)
	}
	// Staff's three images are theirs: three entries per person.
	status, c := ms.do(t, "POST", "/api/contests", `{"name":"Cup","game":"tanks","maps":["classic"],"rounds":2,"freeze_at":"`+freeze+`","answer_timeout_ms":500,"rules":"be kind","entries_per_person":3}`, staff...)
	if status != http.StatusCreated {
		t.Fatalf("create: %d %v", status, c)
	}
	path := fmt.Sprintf("/api/contests/%v", c["id"])
	if spec := c["spec"].(map[string]any); spec["seed"] == nil || spec["answer_timeout_ms"] != 500.0 {
		t.Errorf("staff's view of the spec: %v", spec)
	}
	// The seed is not shown before the end, but to staff.
	if _, page := ms.do(t, "GET", path, ""); page["spec"].(map[string]any)["seed"] != nil {
		t.Errorf("the seed is shown to anyone before the end: %v", page["spec"])
	}
	if status, body := ms.do(t, "POST", path+"/entries", `{"image":"arena/tanks-random"}`, alice...); status != http.StatusForbidden {
		t.Errorf("alice enters an image: %d %v", status, body)
	}
	if status, body := ms.do(t, "POST", path+"/entries", `{"bot":"bob/bot"}`, alice...); status != http.StatusForbidden {
		t.Errorf("alice enters bob's bot: %d %v", status, body)
	}
	if status, body := ms.do(t, "POST", path+"/entries", `{"bot":"alice/none"}`, alice...); status != http.StatusBadRequest || !strings.Contains(fmt.Sprint(body["error"]), "no pushed version") {
		t.Errorf("alice enters a bot never pushed: %d %v", status, body)
	}
	var ids []any
	for _, img := range []string{"arena/tanks-hunter", "arena/tanks-random", "bots/crashy"} {
		status, e := ms.do(t, "POST", path+"/entries", fmt.Sprintf(`{"image":%q}`, img), staff...)
		if status != http.StatusCreated {
			t.Fatalf("enter %s: %d %v", img, status, e)
		}
		ids = append(ids, e["id"])
	}
	if status, body := ms.do(t, "POST", path+"/entries", `{"image":"bots/crashy"}`, staff...); status != http.StatusBadRequest {
		t.Errorf("the same image twice: %d %v", status, body)
	}
	if status, body := ms.do(t, "POST", path+"/entries", `{"image":"bots/slow"}`, staff...); status != http.StatusConflict || !strings.Contains(fmt.Sprint(body["error"]), "it takes 3 entries per person") {
		t.Errorf("a fourth of staff's: %d %v", status, body)
	}
	// Before the deadline: practice matches, rated on the practice board.
	poll.Until(t, 30*time.Second, func() error {
		_, b := ms.do(t, "GET", path+"/standings", "")
		if p, _ := b["practice"].([]any); len(p) < 2 {
			return fmt.Errorf("no practice board: %v", b)
		}
		if len(b["rows"].([]any)) != 0 {
			t.Errorf("final standings before the deadline: %v", b["rows"])
		}
		return nil
	})
	// The deadline passes: the final runs by itself.
	ms.clock.skip(time.Hour + time.Second)
	var board map[string]any
	poll.Until(t, 60*time.Second, func() error {
		if _, board = ms.do(t, "GET", path+"/standings", ""); board["final"] != true {
			return fmt.Errorf("the final did not end: %v", board)
		}
		return nil
	})
	rows := board["rows"].([]any)
	games := board["games"].([]any)
	if len(rows) != 3 || len(games) != 6 {
		t.Fatalf("%d rows, %d games (want 3 and 6): %v", len(rows), len(games), board)
	}
	seats := map[string]int{}
	for _, g := range games {
		g := g.(map[string]any)
		seats[fmt.Sprint(g["first"], g["second"])]++
		if g["state"] != "scored" || g["match_id"] == "" {
			t.Errorf("game %v", g)
		}
	}
	if len(seats) != 6 {
		t.Errorf("seat orders %v, want each of the 6 once", seats)
	}
	last := rows[2].(map[string]any)
	if last["name"] != "bots/crashy" || last["faults"] != 4.0 || last["points"] != 0.0 {
		t.Errorf("the crashing bot: %v", last)
	}
	res := ms.send(t, "GET", path+"/export?format=csv", "")
	data, _ := io.ReadAll(res.Body)
	res.Body.Close()
	recs, err := csv.NewReader(strings.NewReader(string(data))).ReadAll()
	if err != nil || len(recs) != 4 || res.Header.Get("Content-Type") != "text/csv; charset=utf-8" {
		t.Fatalf("csv: %v %q %s", err, res.Header.Get("Content-Type"), data)
	}
	for i, r := range rows {
		r := r.(map[string]any)
		if recs[i+1][2] != r["name"] || recs[i+1][4] != fmt.Sprint(r["points"]) {
			t.Errorf("csv row %v, standings %v", recs[i+1], r)
		}
	}
	// Past the deadline.
	if status, body := ms.do(t, "POST", path+"/entries", `{"image":"arena/snake-greedy"}`, staff...); status != http.StatusConflict {
		t.Errorf("an entry after the deadline: %d %v", status, body)
	}
	if status, body := ms.do(t, "PATCH", fmt.Sprintf("%s/entries/%v", path, ids[0]), `{"withdraw":true}`, staff...); status != http.StatusConflict {
		t.Errorf("a withdrawal after the deadline: %d %v", status, body)
	}
	if status, body := ms.do(t, "PATCH", fmt.Sprintf("%s/entries/%v", path, ids[2]), `{"disqualify":"it crashes on purpose"}`, bob...); status != http.StatusForbidden {
		t.Errorf("bob disqualifies: %d %v", status, body)
	}
	if status, body := ms.do(t, "PATCH", fmt.Sprintf("%s/entries/%v", path, ids[2]), `{"disqualify":"it crashes on purpose"}`, staff...); status != http.StatusOK {
		t.Errorf("staff disqualify: %d %v", status, body)
	}
	if status, body := ms.do(t, "POST", path+"/rerun", fmt.Sprintf(`{"entries":[%v,%v]}`, ids[0], ids[1]), bob...); status != http.StatusForbidden {
		t.Errorf("bob reruns: %d %v", status, body)
	}
	if status, body := ms.do(t, "POST", path+"/rerun", fmt.Sprintf(`{"entries":[%v,%v]}`, ids[0], ids[1]), staff...); status != http.StatusAccepted || body["games"] != 2.0 {
		t.Errorf("staff rerun: %d %v", status, body)
	}
	poll.Until(t, 60*time.Second, func() error {
		if _, board = ms.do(t, "GET", path+"/standings", ""); board["final"] != true {
			return fmt.Errorf("the rerun did not end: %v", board)
		}
		return nil
	})
	last = board["rows"].([]any)[2].(map[string]any)
	if last["rank"] != 0.0 || last["disqualified"] != true {
		t.Errorf("the disqualified entry: %v", last)
	}
	_, page := ms.do(t, "GET", path, "", staff...)
	var actions []string
	for _, a := range page["audit"].([]any) {
		actions = append(actions, a.(map[string]any)["action"].(string))
	}
	if got := strings.Join(actions, " "); got != "create freeze disqualify rerun" {
		t.Errorf("audit log: %s", got)
	}
	if _, page := ms.do(t, "GET", path, "", alice...); page["audit"] != nil || page["spec"].(map[string]any)["seed"] == nil {
		t.Errorf("alice's view once done: audit %v, seed %v", page["audit"], page["spec"].(map[string]any)["seed"])
	}
}

// A contest by invitation and its settings through the API: the code is
// staff's to see (in the contest's page, never in the list or another
// user's page); an entry without it, or with a wrong or replaced one, is
// 403 and the entry with it is made; a user cannot replace the code or
// change the settings; staff change them with a merge patch, refused with
// a 400 naming the field, or 409 after the deadline.
func TestAContestByInvitation(t *testing.T) {
	ms := newMatrixServer(t, Config{}, registryAt("127.0.0.1:5006"))
	staff := []string{"Authorization", "Bearer " + matrixAdminToken}
	_, aliceTok := ms.token(t, "alice")
	alice := []string{"Authorization", "Bearer " + aliceTok}
	freeze := ms.clock.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	status, c := ms.do(t, "POST", "/api/contests", `{"name":"Club cup","game":"tanks","freeze_at":"`+freeze+`","entrants":"invite"}`, staff...)
	if status != http.StatusCreated {
		t.Fatalf("create: %d %v", status, c)
	}
	path := fmt.Sprintf("/api/contests/%v", c["id"])
	code, _ := c["spec"].(map[string]any)["invite"].(string)
	if len(code) < 20 {
		t.Fatalf("staff's view has no invitation code: %v", c["spec"])
	}
	raw := func(path string, who ...string) string {
		res := ms.send(t, "GET", path, "", who...)
		defer res.Body.Close()
		data, _ := io.ReadAll(res.Body)
		if res.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d %s", path, res.StatusCode, data)
		}
		return string(data)
	}
	for _, who := range [][]string{alice, nil, staff} {
		if strings.Contains(raw("/api/contests", who...), code) {
			t.Errorf("the code is in the list of contests, for %v", who)
		}
	}
	for _, who := range [][]string{alice, nil} {
		if page := raw(path, who...); strings.Contains(page, code) || strings.Contains(page, `"invite":`) {
			t.Errorf("the code is shown to a non-staff visitor: %s", page)
		}
	}
	repo := "alice/clubbot"
	if status, body := ms.push(t, "alice", aliceTok, repo, "v1", newImage(t, nil, repo)); status != http.StatusCreated {
		t.Fatalf("push: %d %s", status, body)
	}
	for _, bad := range []string{``, `,"invite":"not-the-code"`} {
		if status, body := ms.do(t, "POST", path+"/entries", `{"bot":"alice/clubbot"`+bad+`}`, alice...); status != http.StatusForbidden || !strings.Contains(fmt.Sprint(body["error"]), "invitation code") {
			t.Errorf("an entry with %q: %d %v", bad, status, body)
		}
	}
	if status, body := ms.do(t, "PATCH", path, `{"new_invite":true}`, alice...); status != http.StatusForbidden {
		t.Errorf("alice replaces the code: %d %v", status, body)
	}
	if status, body := ms.do(t, "PATCH", path, `{"entrants":"everyone"}`, alice...); status != http.StatusForbidden {
		t.Errorf("alice opens the contest: %d %v", status, body)
	}
	if status, body := ms.do(t, "POST", path+"/entries", `{"bot":"alice/clubbot","invite":"`+code+`"}`, alice...); status != http.StatusCreated {
		t.Errorf("an entry with the code: %d %v", status, body)
	}
	// A new code: the old one no longer admits.
	status, page := ms.do(t, "PATCH", path, `{"new_invite":true}`, staff...)
	if status != http.StatusOK || page["spec"].(map[string]any)["invite"] == code {
		t.Fatalf("a new code: %d %v", status, page)
	}
	_, bobTok := ms.token(t, "bob")
	if status, body := ms.push(t, "bob", bobTok, "bob/clubbot", "v1", newImage(t, nil, "bob/clubbot")); status != http.StatusCreated {
		t.Fatalf("push: %d %s", status, body)
	}
	if status, body := ms.do(t, "POST", path+"/entries", `{"bot":"bob/clubbot","invite":"`+code+`"}`, "Authorization", "Bearer "+bobTok); status != http.StatusForbidden {
		t.Errorf("an entry with the replaced code: %d %v", status, body)
	}
	// Staff edit the settings.
	if status, body := ms.do(t, "PATCH", path, `{"rounds":4,"memory_mb":128,"maps":["classic"],"warm_up_ms":2000}`, staff...); status != http.StatusOK {
		t.Errorf("an edit: %d %v", status, body)
	} else if s := body["spec"].(map[string]any); s["rounds"] != 4.0 || s["memory_mb"] != 128.0 || s["warm_up_ms"] != 2000.0 {
		t.Errorf("the settings after the edit: %v", s)
	}
	for body, want := range map[string]string{`{"rounds":5}`: "rounds: 5", `{"memory_mb":1}`: "memory_mb: 1", `{"game":"snake"}`: "game:", `not json`: "not a JSON object"} {
		if status, b := ms.do(t, "PATCH", path, body, staff...); status != http.StatusBadRequest || !strings.Contains(fmt.Sprint(b["error"]), want) {
			t.Errorf("PATCH %s: %d %v, want 400 naming %q", body, status, b, want)
		}
	}
	ms.clock.skip(time.Hour + time.Second)
	poll.Until(t, 30*time.Second, func() error {
		if _, p := ms.do(t, "GET", path, ""); p["phase"] == "practice" || p["phase"] == "freeze" {
			return fmt.Errorf("the contest did not freeze: its phase is %v", p["phase"])
		}
		return nil
	})
	if status, body := ms.do(t, "PATCH", path, `{"rules":"late"}`, staff...); status != http.StatusConflict {
		t.Errorf("an edit after the freeze: %d %v", status, body)
	}
}
