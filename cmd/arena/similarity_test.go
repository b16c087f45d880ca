package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"arena/internal/testsupport/dockertest"
	"arena/internal/testsupport/poll"
)

// Staff look for copied bots in Chromium. Alice builds a Python bot from
// its folder with arena submit, bob submits her code under other names,
// carol pushes a bot with docker and dave pushes her very image as his.
// All four enter a contest; after the deadline the admin compares the
// final versions on the contest's page: both copies are listed first,
// "Side by side" shows alice's and bob's regions with their line numbers
// beside each other at 1280 px and one above the other on a phone, the
// image pair the file both add. Alice's bell tells her of her version's
// check and of the deadline, and she sets a webhook on her account page. The Admin page says
// what the disk holds.
func TestCopiedBotsInTheBrowser(t *testing.T) {
	dockertest.Standins(t)
	cli := dockertest.Client(t)
	bin := arenaBinary(t)
	port := freePort(t)
	host := fmt.Sprintf("127.0.0.1:%d", port)
	s := startServer(t, bin, t.TempDir(), port, "--auth", "accounts", "--admin-password", "admin-password", "--ladder", "off")
	t.Cleanup(func() { removeHeld(cli, host) })
	admin := signedIn(t, s.url, "admin", "admin-password")
	users := []string{"alice", "bob", "carol", "dave"}
	for _, u := range users {
		if status, body := admin.call(t, "POST", "/api/users", fmt.Sprintf(`{"name":%q,"password":"%s-password"}`, u, u)); status != 201 {
			t.Fatalf("make %s: %d %v", u, status, body)
		}
	}

	// Alice's bot: the kit's, with a planner of her own; bob's: hers, its
	// names, comments and spacing changed.
	kit := filepath.Join(dockertest.Root(), "botkits", "python")
	alices := `

# Alice's planner: the cells ahead ranked by how far they keep us from
# the zone's edge and the enemies' lines of fire.
def plan_route(state, origin, depth):
    frontier = [(origin, 0)]
    seen = {origin}
    ranked = []
    while frontier:
        cell, steps = frontier.pop(0)
        if steps > depth:
            continue
        margin = state.zone_radius - max(abs(cell[0]), abs(cell[1]))
        exposure = sum(1 for enemy in state.enemies if enemy.pos[0] == cell[0] or enemy.pos[1] == cell[1])
        ranked.append((exposure, -margin, steps, cell))
        for d in DIRECTIONS:
            nxt = step(cell, d)
            if nxt not in seen and state.is_free(nxt):
                seen.add(nxt)
                frontier.append((nxt, steps + 1))
    ranked.sort()
    return [cell for _, _, _, cell in ranked]


def safest_cells(state, limit):
    me = state.me
    if me is None:
        return []
    best = plan_route(state, me.pos, 4)
    return best[:limit]
`
	bobs := strings.NewReplacer("plan_route", "route_plan", "frontier", "queue", "seen", "visited", "ranked", "order",
		"margin", "room", "exposure", "danger", "safest_cells", "good_spots", "limit", "count",
		"# Alice's planner: the cells ahead ranked by how far they keep us from\n# the zone's edge and the enemies' lines of fire.", "# where to go",
		"    ", "  ").Replace(alices)
	folder := func(user, extra string) string {
		dir := filepath.Join(t.TempDir(), user)
		if err := os.CopyFS(dir, os.DirFS(kit)); err != nil {
			t.Fatal(err)
		}
		f, err := os.OpenFile(filepath.Join(dir, "bot.py"), os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteString(extra); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	for _, who := range []struct{ user, extra string }{{"alice", alices}, {"bob", bobs}} {
		config := t.TempDir()
		arena := func(stdin string, args ...string) (string, error) {
			cmd := exec.Command(bin, args...)
			cmd.Env = append(os.Environ(), "ARENA_CONFIG="+config, "ARENA_SERVER=")
			cmd.Stdin = strings.NewReader(stdin)
			out, err := cmd.CombinedOutput()
			return string(out), err
		}
		if out, err := arena(who.user+"-password\n", "login", "--name", who.user, "--password-stdin", host); err != nil {
			t.Fatalf("%s's login: %v\n%s", who.user, err, out)
		}
		if out, err := arena("", "submit", folder(who.user, who.extra), "--game", "tanks", "--name", who.user+"/tank:v1", host); err != nil || !strings.Contains(out, "is ready") {
			t.Fatalf("%s submits: %v\n%s", who.user, err, out)
		}
	}
	// Carol pushes a bot with docker; dave pushes the same image.
	hunter := "arena-test/similar-hunter:labelled"
	dockertest.Build(t, cli, hunter, "FROM "+dockertest.ExampleBots(t, cli)[1]+"\nLABEL io.arena.game=tanks\n", nil)
	for _, u := range []string{"carol", "dave"} {
		dockerPushAs(t, cli, s, host, u, u+"/tank", hunter)
	}

	// A contest all four enter; its deadline passes.
	status, ct := admin.call(t, "POST", "/api/contests", fmt.Sprintf(`{"name":"Spring cup","game":"tanks","maps":["classic"],"freeze_at":%q}`,
		time.Now().Add(time.Hour).UTC().Format(time.RFC3339)))
	if status != 201 {
		t.Fatalf("the contest: %d %v", status, ct)
	}
	path := fmt.Sprintf("/api/contests/%v", ct["id"])
	for _, u := range users {
		c := signedIn(t, s.url, u, u+"-password")
		poll.Until(t, 2*time.Minute, func() error {
			if img := pushedImage(t, c, u+"/tank:v1"); img == nil || img["state"] != "ready" {
				return fmt.Errorf("%s's bot is not ready: %v", u, img)
			}
			return nil
		})
		if status, e := c.call(t, "POST", path+"/entries", fmt.Sprintf(`{"bot":"%s/tank"}`, u)); status != 201 {
			t.Fatalf("%s enters: %d %v", u, status, e)
		}
	}
	if status, body := admin.call(t, "PATCH", path, fmt.Sprintf(`{"freeze_at":%q}`, time.Now().Add(3*time.Second).UTC().Format(time.RFC3339))); status != 200 {
		t.Fatalf("bring the deadline forward: %d %v", status, body)
	}
	poll.Until(t, time.Minute, func() error {
		_, page := admin.call(t, "GET", path, "")
		for _, e := range page["entries"].([]any) {
			if e := e.(map[string]any); e["final"] == nil || e["final"] == "" {
				return fmt.Errorf("entry %v has no final version yet: %v", e["id"], e)
			}
		}
		return nil
	})

	ctx := newBrowser(t, 1280, 900)
	must, eval := browserSteps(t, ctx)
	shot := func(name string) {
		if png, err := chromedp.Run(ctx, chromedp.FullScreenshot(90)); err == nil {
			saveArtefact(t, name, png)
		}
	}
	// signIn signs in on the page's form, the visitor signed out first
	// (out).
	signIn := func(what, name string, out bool, then chromedp.Action[chromedp.Void]) {
		t.Helper()
		var steps []chromedp.Action[chromedp.Void]
		if out {
			steps = append(steps, chromedp.Click(chromedp.CSS("#signout")),
				chromedp.Poll[chromedp.Void](`!!document.querySelector('#account-menu a[href="#/signin"]')`, chromedp.WithPollingTimeout(20*time.Second)))
		}
		steps = append(steps, chromedp.Navigate(s.url+"/#/signin"), chromedp.WaitVisible(chromedp.CSS("#signin-form")),
			chromedp.SetValue(chromedp.CSS("#signin-name"), name), chromedp.SetValue(chromedp.CSS("#signin-password"), name+"-password"),
			chromedp.Click(chromedp.CSS("#signin-submit")), then)
		must(what, steps...)
	}
	adminIn := chromedp.Poll[chromedp.Void](`(document.querySelector("#account-name") || {}).textContent === "admin"`, chromedp.WithPollingTimeout(20*time.Second))
	signIn("sign in as the admin", "admin", false, adminIn)
	must("compare the final versions",
		chromedp.Navigate(fmt.Sprintf("%s/#/contest/%v", s.url, ct["id"])),
		chromedp.WaitVisible(chromedp.CSS("#contest-similarity-run")),
		chromedp.Click(chromedp.CSS("#contest-similarity-run")),
		chromedp.Poll[chromedp.Void](`document.querySelectorAll("#contest-similarity tbody tr").length > 0`, chromedp.WithPollingTimeout(time.Minute)))
	rows := eval(`[...document.querySelectorAll("#contest-similarity tbody tr")].map(r => [...r.cells].slice(0, 4).map(c => c.textContent.trim()).join(" | ")).join("\n")`)
	lines := strings.Split(rows, "\n")
	pairs := map[string]string{}
	for _, l := range lines {
		cells := strings.Split(l, " | ")
		pairs[cells[1]+" "+cells[2]] = l
	}
	source, img := pairs["alice/tank:v1 bob/tank:v1"], pairs["carol/tank:v1 dave/tank:v1"]
	if !regexp.MustCompile(`^(0\.9\d|1\.00) \|.*\| \d+ fingerprints$`).MatchString(source) || !regexp.MustCompile(`^1\.00 \|.*\| \d+ files$`).MatchString(img) {
		t.Fatalf("the pairs:\n%s", rows)
	}
	if len(lines) > 2 && !strings.HasPrefix(lines[2], "0.") {
		t.Errorf("a third pair scores high:\n%s", rows)
	}
	if note := eval(`document.querySelector("#contest-similarity-note").textContent`); !strings.Contains(note, "never a verdict") || strings.Contains(note, "Not compared") {
		t.Errorf("the report's note: %q", note)
	}
	sideBySide := func(a string) {
		t.Helper()
		must("side by side: "+a, chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`[...document.querySelectorAll("#contest-similarity tbody tr")].find(r => r.cells[1].textContent === %q).querySelector("button").click()`, a)),
			chromedp.WaitVisible(chromedp.CSS("#contest-similarity-pair")))
	}
	// The two columns of the source pair: where each starts, and their
	// numbered lines.
	layout := `(() => { const [a, b] = [...document.querySelectorAll("#contest-similarity-pair > div")].map(d => d.getBoundingClientRect());
		const wide = [...document.querySelectorAll("body *")].filter(e => e.getBoundingClientRect().right > window.innerWidth + 1 && e.offsetParent !== null)
			.map(e => e.tagName.toLowerCase() + (e.id ? "#" + e.id : "") + (e.className && typeof e.className === "string" ? "." + e.className.split(" ")[0] : "") + ":" + Math.round(e.getBoundingClientRect().right));
		return JSON.stringify({ beside: Math.abs(a.top - b.top) < 2 && b.left >= a.right, below: b.top >= a.bottom,
			overflow: document.documentElement.scrollWidth > window.innerWidth ? wide.slice(0, 6).join(" ") : false }); })()`
	sideBySide("alice/tank:v1")
	text := eval(`document.querySelector("#contest-similarity-pair").textContent`)
	for _, want := range []string{"alice/tank:v1", "bob/tank:v1", "bot.py, lines", "def plan_route(state, origin, depth):", "def route_plan(state, origin, depth):"} {
		if !strings.Contains(text, want) {
			t.Errorf("the side by side view lacks %q:\n%s", want, text)
		}
	}
	if n := eval(`String(document.querySelectorAll("#contest-similarity-pair pre .ln").length)`); n == "0" {
		t.Error("no numbered lines")
	}
	if got := eval(layout); got != `{"beside":true,"below":false,"overflow":false}` {
		t.Errorf("at 1280 px: %s", got)
	}
	shot("similarity-1280.png")
	// On a phone: one column, the page no wider than the screen.
	must("a phone's width", chromedp.EmulateViewport(390, 844))
	if got := eval(layout); got != `{"beside":false,"below":true,"overflow":false}` {
		t.Errorf("at 390 px: %s", got)
	}
	shot("similarity-390.png")
	sideBySide("carol/tank:v1")
	if got := eval(`[...document.querySelectorAll("#contest-similarity-pair tbody tr")].map(r => r.textContent).join(" ")`); got == "" {
		t.Errorf("the image pair lists no file: %s", eval(`document.querySelector("#contest-similarity-pair").textContent`))
	}

	// Alice's bell: her version's check and the contest's deadline; read
	// on its page, marked read;
	// her webhook set on the account page, its secret shown once.
	must("a wide screen again", chromedp.EmulateViewport(1280, 900))
	signIn("sign in as alice", "alice", true, chromedp.Poll[chromedp.Void](`!document.querySelector("#bell").hidden && document.querySelector("#bell-count").textContent === "2"`, chromedp.WithPollingTimeout(20*time.Second)))
	must("open the notifications", chromedp.Click(chromedp.CSS("#bell")),
		chromedp.Poll[chromedp.Void](`document.querySelectorAll("#notification-list li.unread").length === 2`, chromedp.WithPollingTimeout(10*time.Second)))
	if got := eval(`document.querySelector("#notification-list").textContent`); !strings.Contains(got, "alice/tank:v1 is ready") || !strings.Contains(got, "the deadline has passed; your entry 1 plays the final with alice/tank:v1") {
		t.Errorf("alice's notifications: %q", got)
	}
	must("mark them read", chromedp.Click(chromedp.CSS("#notifications-read")),
		chromedp.Poll[chromedp.Void](`document.querySelector("#bell-count").hidden && document.querySelectorAll("#notification-list li.unread").length === 0`, chromedp.WithPollingTimeout(10*time.Second)))
	must("set a webhook", chromedp.Navigate(s.url+"/#/account"),
		chromedp.WaitVisible(chromedp.CSS("#webhook-form")),
		chromedp.SetValue(chromedp.CSS("#webhook-url"), "https://93.184.216.34/arena"),
		chromedp.Click(chromedp.CSS(`#webhook-form button[type="submit"]`)),
		chromedp.Poll[chromedp.Void](`/^[0-9a-f]{64}$/.test(document.querySelector("#webhook-secret").textContent) && !document.querySelector("#webhook-current").hidden`, chromedp.WithPollingTimeout(10*time.Second)))
	if got := eval(`document.querySelector("#webhook-url-now").textContent`); got != "https://93.184.216.34/arena" {
		t.Errorf("the webhook shown: %q", got)
	}
	must("a webhook on loopback is refused", chromedp.SetValue(chromedp.CSS("#webhook-url"), "http://127.0.0.1:9/hook"),
		chromedp.Click(chromedp.CSS(`#webhook-form button[type="submit"]`)),
		chromedp.Poll[chromedp.Void](`document.querySelector("#webhook-error").textContent.includes("ARENA_WEBHOOK_ALLOW")`, chromedp.WithPollingTimeout(10*time.Second)))
	shot("notifications-account.png")
	signIn("sign in as the admin again", "admin", true, adminIn)

	// The Admin page says what the data folder holds.
	must("the Admin page's disk line", chromedp.EmulateViewport(1280, 900),
		chromedp.Navigate(s.url+"/#/admin"),
		chromedp.Poll[chromedp.Void](`/^Replays [\d.]+ MiB \(\d+ files; .*kept 30 days\) · database [\d.]+ MiB · registry [\d.]+ MiB$/.test(document.querySelector("#disk").textContent)`, chromedp.WithPollingTimeout(20*time.Second)))
	if got := eval(`document.querySelector("#disk").textContent`); strings.Contains(got, "registry 0.0 MiB") {
		t.Errorf("the disk line counts no registry: %q", got)
	}
}
