package web

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

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
	read := func(name string) string {
		data, err := os.ReadFile(filepath.Join("..", "botkits", "python", name))
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	kit := read("tanks.py")
	alices := read("snake_greedy.py")
	bobs := strings.NewReplacer("Board", "Grid", "free_at", "opens", "mine", "ours", "theirs", "foe", "near", "close_by",
		"# ", "# note: ", "    ", "  ").Replace(alices)
	carols := read("pacman_runner.py")
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
		for start := time.Now(); ; time.Sleep(20 * time.Millisecond) {
			_, got := ms.do(t, "GET", "/api/builds/"+v["id"].(string), "", "Authorization", "Bearer "+tok)
			if got["state"] == "pushed" {
				return
			}
			if got["state"] == "failed" || time.Since(start) > 20*time.Second {
				t.Fatalf("%s's build: %v", user, got)
			}
		}
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
	first := pairs[0].(map[string]any)
	if first["a"] != "alice/bot:v1" || first["b"] != "bob/bot:v1" || first["score"].(float64) < 0.9 {
		t.Errorf("the first pair: %v", first)
	}
	regions := first["regions_b"].([]any)
	if len(regions) == 0 || regions[0].(map[string]any)["file"] != "bot.py" || len(regions[0].(map[string]any)["lines"].([]any)) < 10 {
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
}
