package web

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"arena/botkits"
	"arena/platform"
	"arena/sourcebuild"
)

// The kits the draft tests start from.
var draftKits = []string{"go", "cpp", "python", "javascript"}

// starterFiles are a kit's starter's files for a game, as a draft holds
// them.
func starterFiles(t *testing.T, kit, game string) (map[string]string, string) {
	t.Helper()
	st, err := botkits.StarterOf(kit, game)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for _, f := range st.Files {
		files[f.Name] = string(f.Data)
	}
	return files, st.Main
}

// asJSON is v as a JSON text.
func asJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// draftFiles are a draft's files as the API gave them.
func draftFiles(body map[string]any) map[string]string {
	out := map[string]string{}
	files, _ := body["files"].(map[string]any)
	for k, v := range files {
		out[k], _ = v.(string)
	}
	return out
}

// draftAt makes a draft as a user, through the API.
func (ms *matrixServer) draftAt(t *testing.T, header []string, name, kit, team string) map[string]any {
	t.Helper()
	req := map[string]string{"name": name, "game": "tanks", "kit": kit}
	if team != "" {
		req["team"] = team
	}
	status, d := ms.do(t, "POST", "/api/drafts", asJSON(req), header...)
	if status != http.StatusCreated {
		t.Fatalf("make draft %s: %d %v", name, status, d)
	}
	return d
}

// A draft starts as its kit's starter for the game, for every kit; the
// kits are listed with their starters' files; the drafts are listed, the
// last saved first; a second draft of a name, a kit or game without a
// starter, and a name that is no plain name are refused.
func TestDraftsStartFromTheKitsStarters(t *testing.T) {
	ms := newMatrixServer(t, Config{})
	alice := ms.signIn(t, "alice")
	res, kits := ms.send(t, "GET", "/api/kits", ""), []platform.KitView{}
	json.NewDecoder(res.Body).Decode(&kits)
	res.Body.Close()
	for _, kit := range draftKits {
		i := slices.IndexFunc(kits, func(k platform.KitView) bool { return k.Name == kit })
		files, main := starterFiles(t, kit, "tanks")
		if i < 0 || kits[i].Games["tanks"].Main != main || !slices.Equal(slices.Sorted(maps.Keys(files)), slices.Sorted(slices.Values(kits[i].Games["tanks"].Files))) {
			t.Errorf("GET /api/kits: %s for tanks is %+v, want main %s and %v", kit, kits, main, slices.Sorted(maps.Keys(files)))
		}
		d := ms.draftAt(t, alice, "tank-"+kit, kit, "")
		if d["kit"] != kit || d["game"] != "tanks" || d["owner"] != "alice" || d["version"] != 1.0 || d["main"] != main || d["updated_by"] != "alice" {
			t.Errorf("the %s draft: %v", kit, d)
		}
		if got := draftFiles(d); !maps.Equal(got, files) {
			t.Errorf("the %s draft's files: %v, want the starter's %v", kit, slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(files)))
		}
		if saves := d["saves"].([]any); len(saves) != 1 || saves[0].(map[string]any)["version"] != 1.0 {
			t.Errorf("the %s draft's saves: %v", kit, saves)
		}
	}
	_, list := ms.do(t, "GET", "/api/drafts", "", alice...)
	var names []string
	for _, d := range list["drafts"].([]any) {
		names = append(names, d.(map[string]any)["name"].(string))
		if _, has := d.(map[string]any)["files"]; has {
			t.Errorf("a draft listed with its files: %v", d)
		}
	}
	if fmt.Sprint(names) != "[tank-javascript tank-python tank-cpp tank-go]" {
		t.Errorf("alice's drafts: %v, want the last made first", names)
	}
	for _, c := range []struct {
		body   string
		status int
		want   string
	}{
		{`{"name":"tank-go","game":"tanks","kit":"go"}`, http.StatusConflict, "alice has a draft named tank-go already"},
		{`{"name":"x","game":"tanks","kit":"cobol"}`, http.StatusBadRequest, `kit "cobol" for tanks`},
		{`{"name":"x","game":"chess","kit":"go"}`, http.StatusBadRequest, "game: "},
		{`{"name":"../x","game":"tanks","kit":"go"}`, http.StatusBadRequest, `name "../x"`},
		{`{"name":"a/b","game":"tanks","kit":"go"}`, http.StatusBadRequest, `name "a/b"`},
		{`{"name":"","game":"tanks","kit":"go"}`, http.StatusBadRequest, `name ""`},
		{`{"name":"x","game":"tanks","kit":"go","team":"blue"}`, http.StatusForbidden, `team "blue"`},
	} {
		if status, body := ms.do(t, "POST", "/api/drafts", c.body, alice...); status != c.status || !strings.Contains(fmt.Sprint(body["error"]), c.want) {
			t.Errorf("POST %s: %d %v, want %d %q", c.body, status, body, c.status, c.want)
		}
	}
}

// Each save is the next version; the last saves are kept (a history of
// 3 here) and listed newest first, each readable whole, and one restored
// is saved as the next version; a save dropped from the history is gone.
// A save may name another main file, one of its files. A rename keeps
// the draft's versions.
func TestDraftSavesAndTheirHistory(t *testing.T) {
	ms := newMatrixServer(t, Config{}, func(c *platform.Config, _ *platform.Deps) { c.Drafts.History = 3 })
	alice := ms.signIn(t, "alice")
	d := ms.draftAt(t, alice, "bot", "python", "")
	path := fmt.Sprintf("/api/drafts/%v", d["id"])
	text := func(v int) map[string]string {
		return map[string]string{"bot.py": fmt.Sprintf("print(%d)\n", v), "tanks.py": "def play(turn): pass\n"}
	}
	for v := 1; v <= 4; v++ {
		status, got := ms.do(t, "PUT", path, asJSON(platform.DraftSaveRequest{Base: int64(v), Files: text(v + 1)}), alice...)
		if status != http.StatusOK || got["version"] != float64(v+1) || got["files"] != nil || got["main"] != "bot.py" {
			t.Fatalf("save on %d: %d %v", v, status, got)
		}
	}
	_, page := ms.do(t, "GET", path, "", alice...)
	var versions []float64
	for _, v := range page["saves"].([]any) {
		versions = append(versions, v.(map[string]any)["version"].(float64))
		if v.(map[string]any)["saved_by"] != "alice" || v.(map[string]any)["size"].(float64) <= 0 {
			t.Errorf("a save listed: %v", v)
		}
	}
	if page["version"] != 5.0 || !maps.Equal(draftFiles(page), text(5)) || fmt.Sprint(versions) != "[5 4 3]" {
		t.Errorf("the draft after 4 saves: version %v, files %v, saves %v (want the last 3)", page["version"], draftFiles(page), versions)
	}
	status, old := ms.do(t, "GET", path+"/saves/3", "", alice...)
	if status != http.StatusOK || old["version"] != 3.0 || !maps.Equal(draftFiles(old), text(3)) || old["main"] != "bot.py" || old["saved_by"] != "alice" {
		t.Errorf("save 3: %d %v", status, old)
	}
	if status, body := ms.do(t, "GET", path+"/saves/2", "", alice...); status != http.StatusNotFound || !strings.Contains(fmt.Sprint(body["error"]), "keeps no version 2") {
		t.Errorf("a save past the history: %d %v", status, body)
	}
	// Restored: version 3's files saved as version 6, with another main
	// file of theirs.
	restore := draftFiles(old)
	restore["main.py"] = "import bot\n"
	if status, got := ms.do(t, "PUT", path, asJSON(platform.DraftSaveRequest{Base: 5, Files: restore, Main: "main.py"}), alice...); status != http.StatusOK || got["version"] != 6.0 || got["main"] != "main.py" {
		t.Errorf("restore version 3: %d %v", status, got)
	}
	if status, body := ms.do(t, "PUT", path, asJSON(platform.DraftSaveRequest{Base: 6, Files: text(7), Main: "gone.py"}), alice...); status != http.StatusBadRequest || !strings.Contains(fmt.Sprint(body["error"]), `main: "gone.py" is not a file`) {
		t.Errorf("a main file that is not there: %d %v", status, body)
	}
	if status, got := ms.do(t, "PATCH", path, `{"name":"tank"}`, alice...); status != http.StatusOK || got["name"] != "tank" || got["version"] != 6.0 {
		t.Errorf("rename: %d %v", status, got)
	}
	if status, body := ms.do(t, "PATCH", path, `{"name":"../tank"}`, alice...); status != http.StatusBadRequest {
		t.Errorf("rename to ../tank: %d %v", status, body)
	}
	if res := ms.request(t, "DELETE", path, "", alice...); res.StatusCode != http.StatusNoContent {
		t.Errorf("delete: %d", res.StatusCode)
	}
	for _, p := range []string{path, path + "/saves/6"} {
		if status, _ := ms.do(t, "GET", p, "", alice...); status != http.StatusNotFound {
			t.Errorf("GET %s once deleted: %d", p, status)
		}
	}
}

// Two tabs save from the same version: the first is saved, the second is
// refused with 409 naming the version saved since, by whom, and that
// version; nothing of the first is lost, and the second tab keeps its own
// work by saving on that version.
func TestAStaleDraftSaveIsRefused(t *testing.T) {
	ms := newMatrixServer(t, Config{})
	alice, carol := ms.signIn(t, "alice"), ms.signIn(t, "carol")
	d := ms.draftAt(t, alice, "bot", "python", "red")
	path := fmt.Sprintf("/api/drafts/%v", d["id"])
	first := map[string]string{"bot.py": "print('first tab')\n"}
	second := map[string]string{"bot.py": "print('second tab')\n"}
	if status, got := ms.do(t, "PUT", path, asJSON(platform.DraftSaveRequest{Base: 1, Files: first}), carol...); status != http.StatusOK || got["version"] != 2.0 {
		t.Fatalf("the first tab: %d %v", status, got)
	}
	status, refused := ms.do(t, "PUT", path, asJSON(platform.DraftSaveRequest{Base: 1, Files: second}), alice...)
	msg := fmt.Sprint(refused["error"])
	if status != http.StatusConflict || refused["version"] != 2.0 || !strings.HasPrefix(msg, "changed elsewhere: version 2 was saved by carol at ") || !strings.HasSuffix(msg, "; reload it or keep yours") {
		t.Errorf("the second tab: %d %v", status, refused)
	}
	if _, page := ms.do(t, "GET", path, "", alice...); page["version"] != 2.0 || !maps.Equal(draftFiles(page), first) || page["updated_by"] != "carol" {
		t.Errorf("after the refused save: %v", page)
	}
	if status, got := ms.do(t, "PUT", path, asJSON(platform.DraftSaveRequest{Base: 2, Files: second}), alice...); status != http.StatusOK || got["version"] != 3.0 {
		t.Errorf("the second tab keeps its own: %d %v", status, got)
	}
	if status, v2 := ms.do(t, "GET", path+"/saves/2", "", alice...); status != http.StatusOK || !maps.Equal(draftFiles(v2), first) {
		t.Errorf("the first tab's save: %d %v", status, v2)
	}
}

// A draft's files are checked as an upload's are: a name that climbs out
// (../x, a/../../x), an absolute path, a backslash, a file that is
// another's folder, more files or bytes than the upload limits (and a
// body past its own bound); a binary file, in JSON's escapes or as bytes
// that are not UTF-8, is refused as not text. Each is refused, naming the
// file, and the draft stays as it was.
func TestDraftFilesAreCheckedAsUploads(t *testing.T) {
	lim := sourcebuild.Limits{Files: 20, Bytes: 64 << 10}
	ms := newMatrixServer(t, Config{}, func(c *platform.Config, _ *platform.Deps) { c.Drafts.Limits = lim })
	alice := ms.signIn(t, "alice")
	d := ms.draftAt(t, alice, "bot", "python", "")
	path := fmt.Sprintf("/api/drafts/%v", d["id"])
	many := map[string]string{}
	for i := range lim.Files + 1 {
		many[fmt.Sprintf("f%d.py", i)] = "x"
	}
	many["bot.py"] = "x"
	save := func(files map[string]string) string {
		return asJSON(platform.DraftSaveRequest{Base: 1, Files: files})
	}
	for name, c := range map[string]struct {
		body   string
		status int
		want   string
	}{
		"../x":            {save(map[string]string{"bot.py": "", "../x": "evil"}), 400, `entry "../x": a path that climbs out of the folder (..)`},
		"a/../../x":       {save(map[string]string{"bot.py": "", "a/../../x": "evil"}), 400, "climbs out"},
		"absolute":        {save(map[string]string{"bot.py": "", "/etc/cron.d/x": "evil"}), 400, `entry "/etc/cron.d/x": an absolute path`},
		"backslash":       {save(map[string]string{"bot.py": "", `..\x`: "evil"}), 400, "not a plain path"},
		"file and folder": {save(map[string]string{"bot.py": "", "bot.py/x": ""}), 400, "bot.py is a file, not a folder"},
		"no file":         {save(map[string]string{}), 400, "there is no file"},
		"too many files":  {save(many), 400, "more than 20 files"},
		"too many bytes":  {save(map[string]string{"bot.py": strings.Repeat("x", int(lim.Bytes)+1)}), 400, fmt.Sprintf("more than %d bytes", lim.Bytes)},
		"a huge body":     {save(map[string]string{"bot.py": strings.Repeat("x", int(2*lim.Bytes)+1<<20)}), 413, "the save is larger than"},
		"binary":          {save(map[string]string{"bot.py": "", "bot.bin": "\x00\x01ELF"}), 400, `file "bot.bin" is not text`},
		"not UTF-8":       {`{"base":1,"files":{"bot.py":"` + "\xff\xfe" + `"}}`, 400, "not UTF-8"},
		"unknown field":   {`{"base":1,"files":{"bot.py":""},"mode":"0755"}`, 400, `unknown field "mode"`},
	} {
		status, body := ms.do(t, "PUT", path, c.body, alice...)
		if status != c.status || !strings.Contains(fmt.Sprint(body["error"]), c.want) {
			t.Errorf("%s: %d %v, want %d %q", name, status, body, c.status, c.want)
		}
	}
	if _, page := ms.do(t, "GET", path, "", alice...); page["version"] != 1.0 || len(page["saves"].([]any)) != 1 {
		t.Errorf("after refused saves: %v", page)
	}
	// The bounds are an upload's unless told.
	plain := newMatrixServer(t, Config{})
	if got := plain.svc.Drafts.FileLimits(); got != sourcebuild.DefaultLimits {
		t.Errorf("a draft's limits: %+v, want an upload's %+v", got, sourcebuild.DefaultLimits)
	}
}

// Another's draft is as absent as one that never was: bob reads, saves,
// renames and deletes none of alice's (404, the same as a draft that is
// not there). A team's draft is its members': carol edits red's draft
// alice made, bob does not. An admin reads any draft, and changes none
// of another's. Each one's list holds their own and their teams'.
func TestDraftsAreTheirOwnersAndTeams(t *testing.T) {
	ms := newMatrixServer(t, Config{})
	alice, bob, carol, admin := ms.signIn(t, "alice"), ms.signIn(t, "bob"), ms.signIn(t, "carol"), ms.signIn(t, "admin")
	own := ms.draftAt(t, alice, "mine", "python", "")
	team := ms.draftAt(t, alice, "ours", "go", "red")
	if team["owner"] != "red" {
		t.Fatalf("red's draft: %v", team)
	}
	ownPath, teamPath := fmt.Sprintf("/api/drafts/%v", own["id"]), fmt.Sprintf("/api/drafts/%v", team["id"])
	files, _ := starterFiles(t, "go", "tanks")
	files["notes.txt"] = "carol was here\n"
	absent := func(who []string, path string) {
		t.Helper()
		_, never := ms.do(t, "GET", "/api/drafts/999999", "", who...)
		for _, r := range [][2]string{{"GET", path}, {"GET", path + "/saves/1"}, {"PUT", path}, {"PATCH", path}, {"DELETE", path}} {
			body := map[string]string{"PUT": asJSON(platform.DraftSaveRequest{Base: 1, Files: files}), "PATCH": `{"name":"taken"}`}[r[0]]
			status, got := ms.do(t, r[0], r[1], body, who...)
			if status != http.StatusNotFound || !strings.HasPrefix(fmt.Sprint(got["error"]), "no draft ") || strings.Contains(fmt.Sprint(got["error"]), "alice") {
				t.Errorf("%s %s: %d %v, want 404 as for a draft never made (%v)", r[0], r[1], status, got, never)
			}
		}
	}
	absent(bob, ownPath)
	absent(bob, teamPath)
	absent(carol, ownPath)
	if status, got := ms.do(t, "PUT", teamPath, asJSON(platform.DraftSaveRequest{Base: 1, Files: files}), carol...); status != http.StatusOK || got["version"] != 2.0 || got["updated_by"] != "carol" {
		t.Errorf("carol saves red's draft: %d %v", status, got)
	}
	if status, got := ms.do(t, "PATCH", teamPath, `{"name":"ours-2"}`, carol...); status != http.StatusOK || got["name"] != "ours-2" {
		t.Errorf("carol renames red's draft: %d %v", status, got)
	}
	if status, got := ms.do(t, "GET", teamPath, "", alice...); status != http.StatusOK || !maps.Equal(draftFiles(got), files) {
		t.Errorf("alice reads carol's save: %d %v", status, got)
	}
	if status, _ := ms.do(t, "GET", ownPath, "", admin...); status != http.StatusOK {
		t.Errorf("the admin reads alice's draft: %d", status)
	}
	if status, got := ms.do(t, "PUT", ownPath, asJSON(platform.DraftSaveRequest{Base: 1, Files: files}), admin...); status != http.StatusForbidden || !strings.Contains(fmt.Sprint(got["error"]), "only its owner") {
		t.Errorf("the admin saves alice's draft: %d %v", status, got)
	}
	lists := map[string][]string{}
	for name, who := range map[string][]string{"alice": alice, "bob": bob, "carol": carol} {
		_, l := ms.do(t, "GET", "/api/drafts", "", who...)
		for _, d := range l["drafts"].([]any) {
			lists[name] = append(lists[name], d.(map[string]any)["name"].(string))
		}
	}
	if fmt.Sprint(lists["alice"]) != "[ours-2 mine]" || fmt.Sprint(lists["carol"]) != "[ours-2]" || len(lists["bob"]) != 0 {
		t.Errorf("the lists: %v", lists)
	}
	if status, _ := ms.do(t, "POST", "/api/drafts", `{"name":"theirs","game":"tanks","kit":"go","team":"red"}`, bob...); status != http.StatusForbidden {
		t.Errorf("bob makes a draft for red: %d", status)
	}
	if status, _ := ms.do(t, "GET", "/api/drafts", ""); status != http.StatusUnauthorized {
		t.Errorf("an anonymous list: %d", status)
	}
}

// The drafts' saves count against their owner's quota with the images:
// a save past it is refused naming the quota, a push of an image that
// the drafts leave no room for is refused, My bots shows what the drafts
// hold; once the draft is deleted, the push goes through.
func TestDraftsCountAgainstTheQuota(t *testing.T) {
	const quota = 256 << 10
	ms := newMatrixServer(t, Config{}, with(platform.Config{Registry: platform.RegistryConfig{Enabled: true, Host: "127.0.0.1:5006", MaxBytes: quota}}))
	_, tok := ms.token(t, "alice")
	auth := []string{"Authorization", "Bearer " + tok}
	d := ms.draftAt(t, auth, "bot", "python", "")
	path := fmt.Sprintf("/api/drafts/%v", d["id"])
	big := func(c string) map[string]string { return map[string]string{"bot.py": strings.Repeat(c, 130<<10)} }
	if status, got := ms.do(t, "PUT", path, asJSON(platform.DraftSaveRequest{Base: 1, Files: big("a")}), auth...); status != http.StatusOK {
		t.Fatalf("a save of 130 KiB: %d %v", status, got)
	}
	// Both saves would be kept: 260 KiB and the starter.
	status, refused := ms.do(t, "PUT", path, asJSON(platform.DraftSaveRequest{Base: 2, Files: big("b")}), auth...)
	if status != http.StatusForbidden || !strings.Contains(fmt.Sprint(refused["error"]), "ARENA_REGISTRY_QUOTA") || !strings.HasPrefix(fmt.Sprint(refused["error"]), "quota: alice holds") {
		t.Errorf("a save past the quota: %d %v", status, refused)
	}
	_, reg := ms.do(t, "GET", "/api/registry", "", auth...)
	usage := reg["usage"].(map[string]any)["alice"].(map[string]any)
	if db := usage["draft_bytes"].(float64); db < 130<<10 || usage["bytes"] != db {
		t.Errorf("alice's usage: %v", usage)
	}
	im := newImage(t, map[string]string{"io.arena.game": "tanks"}, strings.Repeat("y", 130<<10))
	if status, body := ms.push(t, "alice", tok, "alice/bot", "v1", im); status != http.StatusForbidden || !strings.Contains(body, "ARENA_REGISTRY_QUOTA") || !strings.Contains(body, "saves of drafts") {
		t.Errorf("a push the drafts leave no room for: %d %s", status, body)
	}
	if res := ms.request(t, "DELETE", path, "", auth...); res.StatusCode != http.StatusNoContent {
		t.Fatalf("delete the draft: %d", res.StatusCode)
	}
	if status, body := ms.push(t, "alice", tok, "alice/bot", "v1", im); status != http.StatusCreated {
		t.Errorf("the push once the draft is gone: %d %s", status, body)
	}
	// And the other way: the image leaves no room for the draft's save.
	d = ms.draftAt(t, auth, "bot", "python", "")
	if status, got := ms.do(t, "PUT", fmt.Sprintf("/api/drafts/%v", d["id"]), asJSON(platform.DraftSaveRequest{Base: 1, Files: big("c")}), auth...); status != http.StatusForbidden || !strings.HasPrefix(fmt.Sprint(got["error"]), "quota: ") {
		t.Errorf("a save past the quota beside the image: %d %v", status, got)
	}
}

// The bytes of the saves read at once are bounded: with the room taken
// (by saves being read), another save waits before reading a byte of its
// body, and goes on once there is room; a flood of large saves cannot
// take the server's memory.
func TestDraftSavesWaitForRoom(t *testing.T) {
	ms := newMatrixServer(t, Config{})
	alice := ms.signIn(t, "alice")
	d := ms.draftAt(t, alice, "bot", "python", "")
	room := 2 * (2*ms.svc.Drafts.FileLimits().Bytes + 1<<20)
	if err := ms.saving.Acquire(t.Context(), room); err != nil {
		t.Fatal(err)
	}
	body := newWatchedBody([]byte(asJSON(platform.DraftSaveRequest{Base: 1, Files: map[string]string{"bot.py": "print('waited')\n"}})), false)
	done := make(chan int, 1)
	go func() {
		req := httptest.NewRequest("PUT", fmt.Sprintf("%s/api/drafts/%v", ms.url, d["id"]), body)
		for i := 0; i+1 < len(alice); i += 2 {
			req.Header.Set(alice[i], alice[i+1])
		}
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		ms.Handler().ServeHTTP(rec, req)
		done <- rec.Code
	}()
	time.Sleep(200 * time.Millisecond) // Sleeps on purpose: proves the save waits unread meanwhile.
	if n := body.read.Load(); n != 0 {
		t.Errorf("a save read %d bytes with no room", n)
	}
	ms.saving.Release(room)
	if code := <-done; code != http.StatusOK {
		t.Errorf("the save once there was room: %d", code)
	}
}
