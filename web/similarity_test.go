package web

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"arena/internal/testsupport/poll"
	"arena/orchestrator/fake"
	"arena/platform"
)

// Staff's similarity report over uploads built here: bob's copy of
// alice's bot, its names, comments and spacing changed, scores as
// near-identical and comes first, with the regions side by side; carol's
// own bot scores low; the kit file all three carry counts for no one; a
// player gets 403; the pairs come as CSV too.
func TestTheSimilarityReport(t *testing.T) {
	b := &fakeBuilder{}
	ms := newMatrixServer(t, Config{}, registryAt("127.0.0.1:5006"), withDeps(func(d *platform.Deps) { d.Builder = b }))
	ms.useEngine(nil)
	ms.pulledByConfig()
	read := func(name string) string {
		data, err := os.ReadFile(filepath.Join("..", "botkits", "python", name))
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	kit := read("tanks.py")
	// Alice's own strategy; bob's copy of it, disguised; carol's own.
	alices := `import tanks

# Alice's plan: keep away from the zone's edge, fire along rows.
class Planner:
    def __init__(self, state):
        self.state = state
        self.history = []

    def danger(self, cell):
        x, y = cell
        edge = min(x, y, self.state.width - 1 - x, self.state.height - 1 - y)
        return max(0, self.state.zone_radius - edge)

    def targets(self, me):
        found = []
        for enemy in self.state.enemies():
            if enemy.x == me.x or enemy.y == me.y:
                found.append((abs(enemy.x - me.x) + abs(enemy.y - me.y), enemy))
        found.sort(key=lambda pair: pair[0])
        return [enemy for _, enemy in found]

    def step(self, me):
        shots = self.targets(me)
        if shots:
            self.history.append(("fire", shots[0].x, shots[0].y))
            return tanks.fire_at(me, shots[0])
        options = sorted(tanks.moves(me), key=lambda move: self.danger(move.cell))
        best = options[0]
        for move in options[1:]:
            if self.danger(move.cell) == self.danger(best.cell) and move.cell not in self.history:
                best = move
        self.history.append(best.cell)
        return best

def play(state):
    me = state.me()
    return Planner(state).step(me)
`
	bobs := strings.NewReplacer("Planner", "Brain", "history", "seen", "danger", "risk", "targets", "aims", "found", "hits",
		"options", "choices", "best", "pick", "# Alice's plan: keep away from the zone's edge, fire along rows.", "# my own bot",
		"    ", "  ").Replace(alices)
	carols := `import tanks

def score(state, cell, depth):
    if depth == 0:
        return len(state.free_around(cell))
    total = 0
    for nxt in state.free_around(cell):
        total += score(state, nxt, depth - 1) / 4
    return total + state.bonus(cell)

def play(state):
    me = state.me()
    ranked = []
    for move in tanks.moves(me):
        ranked.append((score(state, move.cell, 3), move))
    ranked.sort(key=lambda item: -item[0])
    if state.can_fire(me) and state.enemy_in_line(me):
        return tanks.fire(me)
    return ranked[0][1] if ranked else tanks.stay(me)
`
	build := func(user, bot string) {
		t.Helper()
		_, tok := ms.token(t, user)
		req, _ := http.NewRequest("POST", ms.url+"/api/builds?repository="+user+"/bot&tag=v1&game=tanks", bytes.NewReader(zipped(t, map[string]string{"bot/bot.py": bot, "bot/tanks.py": kit})))
		req.Header.Set("Authorization", "Bearer "+tok)
		req.Header.Set("Content-Type", "application/zip")
		status, v := doJSON(t, req)
		if status != http.StatusAccepted {
			t.Fatalf("%s's upload: %d %v", user, status, v)
		}
		poll.Until(t, 20*time.Second, func() error {
			_, got := ms.do(t, "GET", "/api/builds/"+v["id"].(string), "", "Authorization", "Bearer "+tok)
			switch got["state"] {
			case "pushed":
				return nil
			case "failed":
				t.Fatalf("%s's build: %v", user, got)
			}
			return fmt.Errorf("%s's build: %v", user, got)
		})
	}
	build("alice", alices)
	build("bob", bobs)
	build("carol", carols)
	_, adminTok := ms.token(t, "admin")
	admin := []string{"Authorization", "Bearer " + adminTok}

	status, rep := ms.do(t, "GET", "/api/similarity?versions=alice/bot:v1,bob/bot:v1,carol/bot:v1", "", admin...)
	if status != 200 || !strings.Contains(fmt.Sprint(rep["note"]), "never a verdict") {
		t.Fatalf("the report: %d %v", status, rep)
	}
	pairs := rep["pairs"].([]any)
	if len(pairs) == 0 {
		t.Fatalf("no pairs: %v", rep)
	}
	first := pairs[0].(map[string]any)
	if first["a"] != "alice/bot:v1" || first["b"] != "bob/bot:v1" || first["score"].(float64) < 0.9 {
		t.Errorf("the first pair: %v", first)
	}
	regions := first["regions_b"].([]any)
	if len(regions) == 0 || regions[0].(map[string]any)["file"] != "bot.py" || len(regions[0].(map[string]any)["lines"].([]any)) < 20 {
		t.Errorf("bob's regions: %v", regions)
	}
	for _, p := range pairs[1:] {
		if p := p.(map[string]any); p["score"].(float64) > 0.25 {
			t.Errorf("%v ~ %v scores %v", p["a"], p["b"], p["score"])
		}
	}
	for _, v := range rep["versions"].([]any) {
		if v := v.(map[string]any); v["compared"] != true {
			t.Errorf("not compared: %v", v)
		}
	}
	// Two versions alone: the kit file both carry counts for no one.
	if _, two := ms.do(t, "GET", "/api/similarity?versions=alice/bot:v1,carol/bot:v1", "", admin...); len(two["pairs"].([]any)) > 0 {
		if p := two["pairs"].([]any)[0].(map[string]any); p["score"].(float64) > 0.25 {
			t.Errorf("alice and carol alone score %v: the kit counted", p["score"])
		}
	}
	// As CSV.
	res := ms.send(t, "GET", "/api/similarity?versions=alice/bot:v1,bob/bot:v1&format=csv", "", admin...)
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if lines := strings.Split(strings.TrimSpace(string(body)), "\n"); res.StatusCode != 200 || len(lines) != 2 || lines[0] != "a,b,score,shared" || !strings.HasPrefix(lines[1], "alice/bot:v1,bob/bot:v1,") {
		t.Errorf("the CSV: %d %q", res.StatusCode, body)
	}
	// Players may not; bad names are named.
	_, bobTok := ms.token(t, "bob")
	if status, _ := ms.do(t, "GET", "/api/similarity?versions=alice/bot:v1,bob/bot:v1", "", "Authorization", "Bearer "+bobTok); status != http.StatusForbidden {
		t.Errorf("bob reads the report: %d", status)
	}
	for q, want := range map[string]string{"versions=alice/bot:v1": "two or more", "versions=alice/bot:v1,nobody/x:y": "no pushed version nobody/x:y", "versions=alice/bot,bob/bot:v1": "REPOSITORY:TAG"} {
		if status, body := ms.do(t, "GET", "/api/similarity?"+q, "", admin...); status/100 != 4 || !strings.Contains(fmt.Sprint(body["error"]), want) {
			t.Errorf("%s: %d %v, want %q", q, status, body, want)
		}
	}

	// A contest's report compares the versions its entries pinned at the
	// deadline: bob pushes v1 again after it, and the report still reads
	// the version his entry plays.
	freeze := ms.clock.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	status, ct := ms.do(t, "POST", "/api/contests", `{"name":"Cup","game":"tanks","maps":["classic"],"freeze_at":"`+freeze+`"}`, admin...)
	if status != http.StatusCreated {
		t.Fatalf("the contest: %d %v", status, ct)
	}
	path := fmt.Sprintf("/api/contests/%v", ct["id"])
	for _, user := range []string{"alice", "bob", "carol"} {
		_, tok := ms.token(t, user)
		if status, e := ms.do(t, "POST", path+"/entries", `{"bot":"`+user+`/bot"}`, "Authorization", "Bearer "+tok); status != http.StatusCreated {
			t.Fatalf("%s enters: %d %v", user, status, e)
		}
	}
	if status, _ := ms.do(t, "GET", path+"/similarity", "", "Authorization", "Bearer "+bobTok); status != http.StatusForbidden {
		t.Errorf("bob reads the contest's report: %d", status)
	}
	ms.clock.skip(time.Hour + time.Second)
	poll.Until(t, 30*time.Second, func() error {
		if _, p := ms.do(t, "GET", path, ""); p["phase"] == "practice" || p["phase"] == "freeze" {
			return fmt.Errorf("the contest is in %v", p["phase"])
		}
		return nil
	})
	build("bob", carols) // bob/bot:v1 again, after the deadline
	status, rep = ms.do(t, "GET", path+"/similarity", "", admin...)
	if status != 200 || len(rep["versions"].([]any)) != 3 {
		_, page := ms.do(t, "GET", path, "", admin...)
		t.Fatalf("the contest's report: %d %v\nthe contest: %v", status, rep, page)
	}
	if first := rep["pairs"].([]any)[0].(map[string]any); first["a"] != "alice/bot:v1" || first["b"] != "bob/bot:v1" || first["score"].(float64) < 0.9 {
		t.Errorf("the contest's first pair: %v", first)
	}
	res = ms.send(t, "GET", path+"/similarity?format=csv", "", admin...)
	body, _ = io.ReadAll(res.Body)
	res.Body.Close()
	if !strings.HasPrefix(string(body), "a,b,score,shared\nalice/bot:v1,bob/bot:v1,") {
		t.Errorf("the contest's CSV: %q", body)
	}
}

// Versions pushed with docker are compared by the files their images
// add: bob's push of alice's very image, under his name, is flagged with
// the file both carry; carol's own program is not.
func TestTheSimilarityReportComparesPushedImages(t *testing.T) {
	ms := newMatrixServer(t, Config{}, registryAt("127.0.0.1:5006"))
	playable := fakePulls(t, ms)
	tarOf := func(files map[string]string) string {
		var buf bytes.Buffer
		tw := tar.NewWriter(&buf)
		for name, content := range files {
			tw.WriteHeader(&tar.Header{Name: name, Mode: 0o755, Size: int64(len(content)), Typeflag: tar.TypeReg})
			tw.Write([]byte(content))
		}
		tw.Close()
		return buf.String()
	}
	alices := playable(tarOf(map[string]string{"bot": "ELF alice's program, which plays tanks her way"}), fake.Script{})
	carols := playable(tarOf(map[string]string{"bot": "ELF carol's program, another way to play tanks"}), fake.Script{})
	for _, p := range []struct {
		user, repo string
		im         image
	}{{"alice", "alice/bot", alices}, {"bob", "bob/copy", alices}, {"carol", "carol/bot", carols}} {
		_, tok := ms.token(t, p.user)
		if status, body := ms.push(t, p.user, tok, p.repo, "v1", p.im); status != http.StatusCreated {
			t.Fatalf("%s pushes: %d %s", p.user, status, body)
		}
	}
	_, adminTok := ms.token(t, "admin")
	status, rep := ms.do(t, "GET", "/api/similarity?versions=alice/bot:v1,bob/copy:v1,carol/bot:v1", "", "Authorization", "Bearer "+adminTok)
	if status != 200 {
		t.Fatalf("the report: %d %v", status, rep)
	}
	for _, v := range rep["versions"].([]any) {
		if v := v.(map[string]any); v["compared"] != true || v["by"] != "image" {
			t.Errorf("a pushed version: %v", v)
		}
	}
	pairs := rep["pairs"].([]any)
	if len(pairs) != 1 {
		t.Fatalf("pairs: %v", pairs)
	}
	p := pairs[0].(map[string]any)
	if p["a"] != "alice/bot:v1" || p["b"] != "bob/copy:v1" || p["by"] != "image" || p["score"] != 1.0 || fmt.Sprint(p["files"]) != "[[/bot /bot]]" {
		t.Errorf("the pair: %v", p)
	}
}
