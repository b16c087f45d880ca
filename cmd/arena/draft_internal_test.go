package main

import (
	"bytes"
	"encoding/json"
	"maps"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"arena/accounts"
	"arena/engine"
	"arena/engine/tanks"
	"arena/orchestrator"
	"arena/orchestrator/fake"
	"arena/platform"
	"arena/store"
	"arena/web"
)

// draftServer is a server with accounts, in this process and without an
// engine (its matches' bots are the fake launcher's), with alice, a
// member of team red, logged in for the client commands (ARENA_CONFIG).
func draftServer(t *testing.T) string {
	t.Helper()
	saved := *accounts.Params
	accounts.Params.Memory, accounts.Params.Iterations = 64, 1
	t.Cleanup(func() { *accounts.Params = saved })
	ctx := t.Context()
	st, err := store.Open(t.TempDir(), "test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	accts, err := accounts.New(st, accounts.SignupInvite)
	if err != nil {
		t.Fatal(err)
	}
	pf, err := platform.New(ctx, platform.Config{}, platform.Deps{Games: engine.NewCatalog(tanks.New()), Orchestrator: orchestrator.New(fake.NewLauncher(nil)),
		Store: st, Accounts: accts, Concurrency: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pf.Close)
	srv := web.New(web.Config{Auth: web.AuthAccounts}, web.Deps{Services: pf.Services(), Lifecycle: pf, Metrics: pf.Metrics()})
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	admin := accounts.Principal{Name: accounts.AdminName, Role: accounts.RoleAdmin}
	if _, err := accts.SignUp(ctx, admin, "alice", "alice-password", ""); err != nil {
		t.Fatal(err)
	}
	alice, err := accts.Principal(ctx, "alice", accounts.ViaToken, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := accts.CreateTeam(ctx, alice, "red"); err != nil {
		t.Fatal(err)
	}
	_, code, err := accts.CreateToken(ctx, alice, "cli")
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("ARENA_CONFIG", t.TempDir())
	t.Setenv("ARENA_SERVER", ts.URL)
	t.Setenv("ARENA_TOKEN", "")
	creds, path, err := loadCredentials()
	if err != nil {
		t.Fatal(err)
	}
	creds.Servers[ts.URL] = credential{Name: "alice", Token: code}
	if err := creds.save(path); err != nil {
		t.Fatal(err)
	}
	return ts.URL
}

// folderOf writes files into a new folder.
func folderOf(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, text := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// filesIn reads a folder's files, its .arena-draft.json aside.
func filesIn(t *testing.T, dir string) map[string]string {
	t.Helper()
	read, err := folderFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, f := range read {
		if f.Name != draftMetaFile {
			out[f.Name] = string(f.Data)
		}
	}
	return out
}

func metaIn(t *testing.T, dir string) draftMeta {
	t.Helper()
	var m draftMeta
	data, err := os.ReadFile(filepath.Join(dir, draftMetaFile))
	if err == nil {
		err = json.Unmarshal(data, &m)
	}
	if err != nil {
		t.Fatalf("%s: %v", draftMetaFile, err)
	}
	return m
}

// runArena runs a command as the arena binary would, and returns its
// exit code, standard output and error.
func runArena(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := runMain(t.Context(), args, &out, &errOut)
	return code, out.String(), errOut.String()
}

// arena draft push makes a draft from a folder (the kit's starter its
// version 1, the folder's files version 2), pull writes it into another
// folder whole, with .arena-draft.json, and a push from there is the
// next version; a push from the first folder, now stale, is refused with
// the server's "changed elsewhere" message, the server's draft unchanged,
// until it names the newest version with --base. A name that is both
// alice's and her team's must be told as OWNER/NAME. Bad usage exits 2,
// the platform's refusals 1.
func TestDraftPullAndPush(t *testing.T) {
	server := draftServer(t)
	mine := map[string]string{"bot.py": "import lib.helper\nprint('v2')\n", "lib/helper.py": "x = 1\n"}
	dir := folderOf(t, mine)
	if code, out, errOut := runArena(t, "draft", "push", dir, "bot", "--game", "tanks", "--kit", "python"); code != exitOK || !strings.Contains(out, "saved alice/bot version 2 (2 files") {
		t.Fatalf("push a new draft: %d %q %q", code, out, errOut)
	}
	if m := metaIn(t, dir); m.Owner != "alice" || m.Name != "bot" || m.Version != 2 || m.Server != server || m.ID == 0 {
		t.Errorf("the pushed folder's %s: %+v", draftMetaFile, m)
	}
	if code, out, _ := runArena(t, "draft", "list"); code != exitOK || !strings.Contains(out, "alice/bot") || !strings.Contains(out, "python") {
		t.Errorf("draft list: %d %q", code, out)
	}
	other := filepath.Join(t.TempDir(), "other")
	if code, out, errOut := runArena(t, "draft", "pull", "bot", other); code != exitOK || !strings.Contains(out, "pulled alice/bot version 2 (2 files)") {
		t.Fatalf("pull: %d %q %q", code, out, errOut)
	}
	if got := filesIn(t, other); !maps.Equal(got, mine) {
		t.Errorf("pulled files: %v, want %v", got, mine)
	}
	if m := metaIn(t, other); m.Version != 2 || m.ID != metaIn(t, dir).ID {
		t.Errorf("the pulled folder's %s: %+v", draftMetaFile, m)
	}
	// Saved from the second folder: version 3.
	os.WriteFile(filepath.Join(other, "bot.py"), []byte("print('v3')\n"), 0o644)
	if code, out, errOut := runArena(t, "draft", "push", other, "bot"); code != exitOK || !strings.Contains(out, "version 3") || metaIn(t, other).Version != 3 {
		t.Fatalf("push from the pull: %d %q %q", code, out, errOut)
	}
	// The first folder is stale now.
	os.WriteFile(filepath.Join(dir, "bot.py"), []byte("print('stale')\n"), 0o644)
	code, _, errOut := runArena(t, "draft", "push", dir, "bot")
	if code != exitPlatform || !strings.Contains(errOut, "changed elsewhere: version 3 was saved by alice at ") || !strings.Contains(errOut, "reload it or keep yours") || metaIn(t, dir).Version != 2 {
		t.Errorf("a stale push: %d %q", code, errOut)
	}
	check := filepath.Join(t.TempDir(), "check")
	runArena(t, "draft", "pull", "alice/bot", check)
	if got := filesIn(t, check); got["bot.py"] != "print('v3')\n" {
		t.Errorf("after a stale push the draft holds %v", got)
	}
	// Pulled again over the pull: the newest version.
	if code, _, errOut := runArena(t, "draft", "pull", "bot", other); code != exitOK || metaIn(t, other).Version != 3 {
		t.Errorf("pull again: %d %q", code, errOut)
	}
	// Kept over it on purpose.
	if code, out, errOut := runArena(t, "draft", "push", dir, "bot", "--base", "3"); code != exitOK || !strings.Contains(out, "version 4") {
		t.Errorf("push --base 3: %d %q %q", code, out, errOut)
	}
	// Team red's draft of the same name.
	if code, out, errOut := runArena(t, "draft", "push", folderOf(t, map[string]string{"main.py": "print()\n"}), "red/bot", "--game", "tanks", "--kit", "python", "--main", "main.py"); code != exitOK || !strings.Contains(out, "saved red/bot version 2") {
		t.Errorf("push red/bot: %d %q %q", code, out, errOut)
	}
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"draft", "pull", "bot", t.TempDir() + "/x"}, exitUsage, "2 drafts are named bot: name one as OWNER/bot (red/bot, alice/bot)"},
		{[]string{"draft", "pull", "alice/bot", folderOf(t, map[string]string{"notes.txt": ""})}, exitUsage, "is not empty, and holds no pull of alice/bot"},
		{[]string{"draft", "pull", "alice/nothing", t.TempDir()}, exitPlatform, "no draft alice/nothing"},
		{[]string{"draft", "push", folderOf(t, map[string]string{"a.py": ""}), "new"}, exitUsage, "name its --game and --kit"},
		{[]string{"draft", "push", folderOf(t, map[string]string{"a.py": ""}), "alice/bot"}, exitUsage, "holds no pull of alice/bot"},
		{[]string{"draft", "push", folderOf(t, map[string]string{"bot.py": "", "logo.png": "\x89PNG\x00\x01"}), "alice/bot", "--base", "4"}, exitUsage, "logo.png is not text"},
		{[]string{"draft", "push", folderOf(t, map[string]string{"a.py": ""}), "a..b", "--game", "tanks", "--kit", "python"}, exitPlatform, `name "a..b"`},
		{[]string{"draft", "fetch"}, exitUsage, "unknown draft command"},
		{[]string{"draft"}, exitUsage, "list|pull|push"},
	} {
		code, _, errOut := runArena(t, c.args...)
		if code != c.code || !strings.Contains(errOut, c.want) {
			t.Errorf("arena %s: %d %q, want %d %q", strings.Join(c.args, " "), code, errOut, c.code, c.want)
		}
	}
	if code, out, _ := runArena(t, "help", "draft"); code != exitOK || !strings.Contains(out, "arena draft pull NAME DIR") {
		t.Errorf("help draft: %d %q", code, out)
	}
}
