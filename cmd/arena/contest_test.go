package main

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"arena/internal/testsupport/dockertest"
	"arena/internal/testsupport/poll"
)

// contestRows are a contest's standings as the test compares them: each
// row's name, rank, points, W/D/L and faults (match ids differ between
// servers).
func contestRows(b map[string]any) []string {
	var out []string
	for _, r := range b["rows"].([]any) {
		r := r.(map[string]any)
		out = append(out, fmt.Sprintf("%v #%v %v pts %v/%v/%v faults %v", r["name"], r["rank"], r["points"], r["wins"], r["draws"], r["losses"], r["faults"]))
	}
	return out
}

// A contest of four real bots of known strength (the example hunter, a bot
// that never moves, one that crashes, one that stops answering), created
// with arena contest create from a YAML file, the deadline a few seconds
// ahead: the final runs by itself after the freeze. The server is killed
// (SIGKILL) in the middle of it and started again: the final completes,
// every game is played by one finished match, no game's match was played
// twice, and the standings are those of the same contest on another
// server that was never interrupted. The standings rank the bots in
// their known order.
func TestAContestFinalSurvivesKill9(t *testing.T) {
	cli := dockertest.Client(t)
	bin := arenaBinary(t)
	hunter := dockertest.ExampleBots(t, cli)[1]
	idle := ownTag(t, cli, dockertest.TestBot(t, cli, "delay=0s"))
	crash := ownTag(t, cli, dockertest.TestBot(t, cli, "exit-at=2"))
	hang := ownTag(t, cli, dockertest.TestBot(t, cli, "hang-at=2"))
	bots := []string{hunter, idle, crash, hang}

	// start creates the contest on a new server and enters the bots.
	start := func(data string, port int) *server {
		s := startServer(t, bin, data, port, "--concurrency", "1")
		file := filepath.Join(t.TempDir(), "cup.yaml")
		freeze := time.Now().Add(4 * time.Second).UTC().Format(time.RFC3339)
		os.WriteFile(file, []byte(`name: Cup
game: tanks
maps: [classic]
rounds: 2
seed: 20261202
freeze_at: `+freeze+`
answer_timeout_ms: 300
warm_up_ms: 3000
entries_per_person: 4
`), 0o644)
		cmd := exec.Command(bin, "contest", "create", file, s.url)
		cmd.Env = append(os.Environ(), "ARENA_CONFIG="+t.TempDir(), "ARENA_SERVER=", "ARENA_TOKEN=")
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "contest 1 (Cup) created") {
			t.Fatalf("arena contest create: %v\n%s", err, out)
		}
		for _, b := range bots {
			if status, e := s.call(t, "POST", "/api/contests/1/entries", fmt.Sprintf(`{"image":%q}`, b)); status != http.StatusCreated {
				t.Fatalf("enter %s: %d %v", b, status, e)
			}
		}
		return s
	}
	standings := func(s *server) map[string]any {
		t.Helper()
		status, b := s.call(t, "GET", "/api/contests/1/standings", "")
		if status != http.StatusOK {
			t.Fatalf("standings: %d %v", status, b)
		}
		return b
	}
	scored := func(b map[string]any) int {
		n := 0
		for _, g := range b["games"].([]any) {
			if g.(map[string]any)["state"] == "scored" {
				n++
			}
		}
		return n
	}
	waitFinal := func(s *server) map[string]any {
		t.Helper()
		var b map[string]any
		poll.Until(t, 5*time.Minute, func() error {
			if b = standings(s); b["final"] != true {
				return fmt.Errorf("the final did not end: %v", b)
			}
			return nil
		})
		return b
	}

	// The uninterrupted contest.
	whole := start(t.TempDir(), freePort(t))
	want := waitFinal(whole)
	whole.cmd.Process.Kill()
	whole.cmd.Wait()
	if rows := contestRows(want); len(rows) != 4 || !strings.HasPrefix(rows[0], hunter+" #1 ") || !strings.HasPrefix(rows[1], idle+" #2 ") {
		t.Errorf("standings %q: want the hunter, then the idle bot, then the two that fault", rows)
	}
	for _, r := range want["rows"].([]any)[2:] {
		// Both games lost to each of the other two, both drawn between
		// them (both faulted): 1 point, 6 faults.
		if r := r.(map[string]any); r["rank"] != 3.0 || r["faults"] != 6.0 || r["points"] != 1.0 {
			t.Errorf("a faulting bot: %v", r)
		}
	}

	// The same contest, killed in the middle of its final.
	data, port := t.TempDir(), freePort(t)
	cut := start(data, port)
	atKill := 0
	poll.Until(t, 5*time.Minute, func() error {
		b := standings(cut)
		if atKill = scored(b); atKill >= 3 && b["final"] != true {
			return nil
		}
		if b["final"] == true {
			t.Fatalf("no moment mid-final to kill the server: %v", b)
		}
		return fmt.Errorf("no moment mid-final to kill the server: %v", b)
	})
	if err := cut.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cut.cmd.Wait()
	again := startServer(t, bin, data, port, "--concurrency", "1")
	got := waitFinal(again)
	if g, w := contestRows(got), contestRows(want); !slices.Equal(g, w) {
		t.Errorf("standings after the kill\n%q\nuninterrupted\n%q", g, w)
	}
	// Every game by one finished match; no game played by two finished
	// matches.
	games := got["games"].([]any)
	if len(games) != 12 {
		t.Fatalf("%d games, want 12", len(games))
	}
	seen := map[string]bool{}
	for _, g := range games {
		g := g.(map[string]any)
		id := g["match_id"].(string)
		if g["state"] != "scored" || id == "" || seen[id] {
			t.Errorf("game %v", g)
		}
		seen[id] = true
		if m := again.get(t, id); m["status"] != "finished" {
			t.Errorf("game %v's match is %v", g["idx"], m["status"])
		}
	}
	status, list := again.call(t, "GET", "/api/matches?limit=100", "")
	if status != http.StatusOK {
		t.Fatalf("history: %d", status)
	}
	finished := map[string]int{}
	interrupted := 0
	for _, m := range list["matches"].([]any) {
		m := m.(map[string]any)
		switch m["status"] {
		case "finished":
			finished[fmt.Sprint(m["bots"], m["seed"])]++
		case "failed":
			interrupted++
		}
	}
	for k, n := range finished {
		if n > 1 {
			t.Errorf("the game %s was played to its end %d times", k, n)
		}
	}
	if interrupted == 0 {
		t.Error("no match was cut by the kill")
	}
	t.Logf("killed with %d of 12 games scored; %d matches interrupted, and played again", atKill, interrupted)
}

// A contest in a real browser, on a server with accounts: the admin
// creates it on the page with a deadline a minute ahead; alice and bob
// each push a bot with docker push and enter it on the contest's page,
// which counts down to the deadline; the final plays by itself, the
// standings show alice's hunter first; a visitor who is not signed in
// reads the public page and its standings.
func TestAContestInTheBrowser(t *testing.T) {
	t.Parallel() // see docs/tests.md
	cli := dockertest.Client(t)
	labelled := func(tag, from string) string {
		dockertest.Build(t, cli, tag, "FROM "+from+"\nLABEL io.arena.game=tanks\nLABEL org.opencontainers.image.authors=\"the author <author@example.org>\"\n", nil)
		return tag
	}
	hunter := labelled("arena-test/contest-hunter:labelled", dockertest.ExampleBots(t, cli)[1])
	idle := labelled("arena-test/contest-idle:labelled", dockertest.TestBot(t, cli, "delay=0s"))
	port := freePort(t)
	host := fmt.Sprintf("127.0.0.1:%d", port)
	s := startServer(t, arenaBinary(t), t.TempDir(), port, "--auth", "accounts", "--admin-password", "the-admin-password", "--ladder", "off")
	admin := signedIn(t, s.url, "admin", "the-admin-password")
	for _, who := range []struct{ user, image string }{{"alice", hunter}, {"bob", idle}} {
		if status, body := admin.call(t, "POST", "/api/users", fmt.Sprintf(`{"name":%q,"password":"%s-password"}`, who.user, who.user)); status != 201 {
			t.Fatalf("make %s: %d %v", who.user, status, body)
		}
		dockerPushAs(t, cli, s, host, who.user, who.user+"/tank", who.image)
	}

	ctx := newBrowser(t, 1280, 1000)
	must := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, steps...); err != nil {
			if png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)); err == nil {
				saveArtefact(t, "contest-failed.png", png)
			}
			t.Fatalf("%s: %v", what, err)
		}
	}
	pollPage := func(what, js string, timeout time.Duration) {
		t.Helper()
		must(what, chromedp.Poll[chromedp.Void](js, chromedp.WithPollingTimeout(timeout)))
	}
	shot := func(name string) {
		if png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)); err == nil {
			saveArtefact(t, name, png)
		}
	}
	signIn := func(name, password string) {
		t.Helper()
		must("sign in as "+name,
			chromedp.Navigate(s.url+"/#/signin"),
			chromedp.WaitVisible(chromedp.CSS("#signin-form")),
			chromedp.SetValue(chromedp.CSS("#signin-name"), name),
			chromedp.SetValue(chromedp.CSS("#signin-password"), password),
			chromedp.Click(chromedp.CSS("#signin-submit")))
		pollPage(name+" is signed in", fmt.Sprintf(`(document.querySelector("#account-name") || {}).textContent === %q`, name), 20*time.Second)
	}
	signOut := func() {
		t.Helper()
		must("sign out", chromedp.Click(chromedp.CSS("#signout")))
		pollPage("signed out", `!!document.querySelector('#account-menu a[href="#/signin"]')`, 20*time.Second)
	}

	// The pushed bots are checked (ready) before the deadline.
	for _, u := range []string{"alice", "bob"} {
		c := signedIn(t, s.url, u, u+"-password")
		poll.Until(t, 2*time.Minute, func() error {
			_, reg := c.call(t, "GET", "/api/registry", "")
			imgs, _ := reg["images"].([]any)
			if len(imgs) == 1 && imgs[0].(map[string]any)["state"] == "ready" {
				return nil
			}
			return fmt.Errorf("%s's bot is not ready: %v", u, reg)
		})
	}

	signIn("admin", "the-admin-password")
	// By invitation, bob listed; each bot gets 128 MiB.
	deadline := time.Now().Add(100 * time.Second).Truncate(time.Second)
	if deadline.Second() == 0 {
		// A datetime-local input drops ":00" from its value, which
		// SetValue then takes for a value not set.
		deadline = deadline.Add(time.Second)
	}
	must("create the contest",
		chromedp.Navigate(s.url+"/#/contests"),
		chromedp.WaitVisible(chromedp.CSS("#contest-form")),
		chromedp.SetValue(chromedp.CSS("#contest-new-name"), "Winter cup"),
		chromedp.SetValue(chromedp.CSS("#contest-new-maps"), "classic"),
		chromedp.SetValue(chromedp.CSS("#contest-new-freeze"), deadline.Local().Format("2006-01-02T15:04:05")),
		chromedp.SetValue(chromedp.CSS("#contest-new-entrants"), "invite"),
		chromedp.SetValue(chromedp.CSS("#contest-new-allowed"), "bob"),
		chromedp.SetValue(chromedp.CSS("#contest-new-memory"), "128"),
		chromedp.Click(chromedp.CSS("#contest-submit")))
	pollPage("the contest's page", `location.hash === "#/contest/1" && document.querySelector("#contest-title").textContent.includes("Winter cup")`, 20*time.Second)
	pollPage("the countdown", `/deadline in 00:0[0-1]:\d\d/.test(document.querySelector("#contest-countdown").textContent)`, 10*time.Second)
	pollPage("the invitation link", `document.querySelector("#contest-invite-link").value.includes("#/contest/1?invite=")`, 10*time.Second)
	invite, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector("#contest-invite-link").value`))
	if err != nil {
		t.Fatal(err)
	}
	// Staff edit the settings on the page: the form shows them as they are.
	must("edit the rules",
		chromedp.Click(chromedp.CSS("#contest-edit-box summary")),
		chromedp.WaitVisible(chromedp.CSS("#contest-edit-rules")))
	pollPage("the edit form holds the settings", `document.querySelector("#contest-edit-memory").value === "128" && document.querySelector("#contest-edit-entrants").value === "invite"`, 10*time.Second)
	must("save the rules",
		chromedp.SetValue(chromedp.CSS("#contest-edit-rules"), "Be kind to the referee."),
		chromedp.Click(chromedp.CSS("#contest-edit-submit")))
	pollPage("the rules and limits shown", `document.querySelector("#contest-rules").textContent === "Be kind to the referee." && document.querySelector("#contest-limits").textContent.includes("memory: 128 MiB per bot") && document.querySelector("#contest-limits").textContent.includes("by invitation and bob")`, 10*time.Second)
	pollPage("the edit in the audit log", `[...document.querySelectorAll("#contest-audit tbody tr")].some(tr => tr.textContent.includes("rules changed"))`, 10*time.Second)
	shot("contest-created.png")
	signOut()

	for _, u := range []string{"alice", "bob"} {
		signIn(u, u+"-password")
		// alice comes by the invitation link; bob is listed.
		link := s.url + "/#/contest/1"
		if u == "alice" {
			link = s.url + invite[strings.Index(invite, "/#/"):]
		}
		must(u+" opens the contest",
			chromedp.Navigate(link),
			chromedp.WaitVisible(chromedp.CSS("#contest-enter")))
		if u == "alice" {
			pollPage("the code from the link", `!document.querySelector("#contest-invite").hidden && location.hash.includes(document.querySelector("#contest-invite").value) && document.querySelector("#contest-invite").value.length > 20`, 10*time.Second)
		}
		must(u+" enters",
			chromedp.SetValue(chromedp.CSS("#contest-bot"), u+"/tank"),
			chromedp.Click(chromedp.CSS("#contest-enter-submit")))
		pollPage(u+"'s entry, with its versions to choose from", fmt.Sprintf(`[...document.querySelectorAll("#contest-entries tbody tr")].some(tr => tr.textContent.includes(%q) && tr.querySelector("select.version"))`, u+"/tank"), 20*time.Second)
		if u == "alice" {
			shot("contest-entered.png")
		}
		signOut()
	}
	if time.Now().After(deadline) {
		t.Fatal("the entries took past the deadline")
	}

	// A visitor who is not signed in: the public page, the final, the
	// standings.
	must("open the public page", chromedp.Navigate(s.url+"/#/contest/1"), chromedp.WaitVisible(chromedp.CSS("#contest-view")))
	pollPage("the final is done", `document.querySelector("#contest-phase").textContent.startsWith("done")`, time.Until(deadline)+2*time.Minute)
	pollPage("the standings", `document.querySelectorAll("#contest-standings tbody tr").length === 2`, 10*time.Second)
	rows, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("#contest-standings tbody tr")].map(tr => [...tr.children].map(td => td.textContent.trim()).join(" | "))`))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("standings:\n  %s", strings.Join(rows, "\n  "))
	if len(rows) != 2 || !strings.HasPrefix(rows[0], "1 | alice/tank:v1 | alice | 2 | 2 | 2 / 0 / 0") {
		t.Errorf("standings %q: want alice's hunter first with both games", rows)
	}
	if authors := mustText(t, ctx, "#contest-entries"); strings.Contains(authors, "author@example.org") {
		t.Errorf("a visitor sees the authors' contact: %q", authors)
	}
	shot("contest-public.png")
}
