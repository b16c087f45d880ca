package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/cookiejar"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/docker/docker/api/types/image"

	"arena/internal/testsupport/dockertest"
	"arena/internal/testsupport/poll"
)

// webClient is a signed-in HTTP client of a server (its own cookie jar).
type webClient struct {
	*http.Client
	url string
}

func signedIn(t testing.TB, url, name, password string) *webClient {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &webClient{Client: &http.Client{Jar: jar, Timeout: 30 * time.Second}, url: url}
	if status, body := c.call(t, "POST", "/api/session", fmt.Sprintf(`{"name":%q,"password":%q}`, name, password)); status != 200 {
		t.Fatalf("sign in as %s: %d %v", name, status, body)
	}
	return c
}

func (c *webClient) call(t testing.TB, method, path, body string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(method, c.url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out map[string]any
	json.NewDecoder(res.Body).Decode(&out)
	return res.StatusCode, out
}

// A newcomer in a real browser, on a server with accounts: they sign up
// with an admin's invitation link, sign out and in again, register their
// own image on a ladder and find it under My bots; another player sees
// the entry without its Pause and Remove buttons, and the API refuses
// their removal with 403.
func TestAccountsInTheBrowser(t *testing.T) {
	cli := dockertest.Client(t)
	hunter := dockertest.ExampleBots(t, cli)[1]
	const mine = "alice/tank:v1"
	if err := cli.ImageTag(t.Context(), hunter, mine); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.ImageRemove(t.Context(), mine, image.RemoveOptions{}) })
	s := startServer(t, arenaBinary(t), t.TempDir(), freePort(t), "--auth", "accounts", "--admin-password", "the-admin-password", "--ladder", "off")
	admin := signedIn(t, s.url, "admin", "the-admin-password")
	status, inv := admin.call(t, "POST", "/api/invites", `{}`)
	link, _ := inv["link"].(string)
	if status != 201 || !strings.Contains(link, "#/signup/invite_") {
		t.Fatalf("invitation: %d %v", status, inv)
	}
	if status, body := admin.call(t, "POST", "/api/users", `{"name":"bob","password":"bobs-password"}`); status != 201 {
		t.Fatalf("make bob: %d %v", status, body)
	}

	ctx := newBrowser(t, 1400, 1100)
	must := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, steps...); err != nil {
			if png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)); err == nil {
				saveArtefact(t, "accounts-failed.png", png)
			}
			t.Fatalf("%s: %v", what, err)
		}
	}
	poll := func(what, js string) {
		t.Helper()
		must(what, chromedp.Poll[chromedp.Void](js, chromedp.WithPollingTimeout(20*time.Second)))
	}
	signIn := func(name, password string) {
		t.Helper()
		must("sign in as "+name,
			chromedp.Navigate(s.url+"/#/signin"),
			chromedp.WaitVisible(chromedp.CSS("#signin-form")),
			chromedp.SetValue(chromedp.CSS("#signin-name"), name),
			chromedp.SetValue(chromedp.CSS("#signin-password"), password),
			chromedp.Click(chromedp.CSS("#signin-submit")))
		poll(name+" is signed in", fmt.Sprintf(`(document.querySelector("#account-name") || {}).textContent === %q`, name))
	}
	signOut := func() {
		t.Helper()
		must("sign out", chromedp.Click(chromedp.CSS("#signout")))
		poll("signed out", `!!document.querySelector('#account-menu a[href="#/signin"]')`)
	}

	// The invitation link opens the sign-up form with its code.
	must("open the invitation", chromedp.Navigate(link), chromedp.WaitVisible(chromedp.CSS("#signup-form")))
	poll("the invitation's code is filled in", `document.querySelector("#signup-invite").value.startsWith("invite_")`)
	must("sign up",
		chromedp.SetValue(chromedp.CSS("#signup-name"), "alice"),
		chromedp.SetValue(chromedp.CSS("#signup-password"), "alices-password"),
		chromedp.Click(chromedp.CSS("#signup-submit")))
	poll("alice is signed in", `(document.querySelector("#account-name") || {}).textContent === "alice"`)
	signOut()
	// Signed out, the page still shows the matches and ladders, without
	// the form.
	poll("no form when signed out", `document.querySelector("#match-form").hidden && !document.querySelector("#signin-hint").hidden`)
	signIn("alice", "alices-password")

	must("open the ladder", chromedp.Navigate(s.url+"/#/ladder/tanks"), chromedp.WaitVisible(chromedp.CSS("#entry-form")))
	// The button is pressed in the page: the image field's suggestions
	// (a datalist) may be open over it, and a click at its place would
	// land on them.
	must("register alice's tank",
		chromedp.SetValue(chromedp.CSS("#entry-name"), "alices-tank"),
		chromedp.SetValue(chromedp.CSS("#entry-image"), mine),
		chromedp.Evaluate[chromedp.Void](`document.querySelector("#register").click()`))
	row := `[...document.querySelectorAll("#leaderboard tbody tr")].find(tr => tr.textContent.includes("alices-tank"))`
	poll("alice's entry, hers to remove", fmt.Sprintf(`(() => { const r = %s; return r && r.querySelector("td.owner").textContent === "alice" && !!r.querySelector('button[data-act="remove"]'); })()`, row))
	must("open My bots", chromedp.Navigate(s.url+"/#/mybots"), chromedp.WaitVisible(chromedp.CSS("#mybots-entries")))
	poll("alice's tank under My bots", `[...document.querySelectorAll("#mybots-entries tbody tr")].some(tr => tr.textContent.includes("alices-tank") && tr.textContent.includes("alice/tank:v1"))`)
	poll("alice's image among those she may play", `document.querySelector("#mybots-images").textContent.includes("alice/tank:v1")`)
	poll("the commands that push a bot", fmt.Sprintf(`document.querySelector("#registry-commands").textContent.includes("docker login %s -u alice")`, strings.TrimPrefix(s.url, "http://")))
	if png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)); err == nil {
		saveArtefact(t, "accounts-mybots.png", png)
	}
	signOut()

	signIn("bob", "bobs-password")
	must("bob opens the ladder", chromedp.Navigate(s.url+"/#/ladder/tanks"), chromedp.WaitVisible(chromedp.CSS("#entry-form")))
	poll("bob sees alice's entry without its buttons", fmt.Sprintf(`(() => { const r = %s; return r && !r.querySelector("button"); })()`, row))
	bob := signedIn(t, s.url, "bob", "bobs-password")
	_, board := bob.call(t, "GET", "/api/ladders/tanks", "")
	entries, _ := board["entries"].([]any)
	if len(entries) != 1 {
		t.Fatalf("board %v", board)
	}
	id := entries[0].(map[string]any)["id"]
	if status, body := bob.call(t, "DELETE", fmt.Sprintf("/api/ladders/tanks/entries/%v", id), ""); status != 403 || !strings.Contains(fmt.Sprint(body["error"]), "belongs to alice") {
		t.Errorf("bob removes alice's entry: %d %v", status, body)
	}
	if status, _ := bob.call(t, "GET", fmt.Sprintf("/api/ladders/tanks/entries/%v", id), ""); status != 200 {
		t.Errorf("bob reads alice's entry: %d", status)
	}
}

// A server that shows nothing before signing in (--public none), in a
// browser: every address leads to the sign-in form; signed in, My bots
// and the rest of the page (the match form, the ladders) work without a
// reload; signed out, the page starts again at the sign-in form,
// keeping nothing it showed.
func TestAClosedServerInTheBrowser(t *testing.T) {
	s := startServer(t, arenaBinary(t), t.TempDir(), freePort(t), "--auth", "accounts", "--admin-password", "the-admin-password", "--public", "none", "--ladder", "off")
	ctx := newBrowser(t, 1280, 900)
	must, eval := browserSteps(t, ctx)
	wait := func(what, js string) {
		t.Helper()
		if err := chromedp.Do(ctx, chromedp.Poll[chromedp.Void](js, chromedp.WithPollingTimeout(20*time.Second))); err != nil {
			t.Fatalf("%s: %v; the address: %s", what, err, eval(`location.hash`))
		}
	}
	must("open the page", chromedp.Navigate(s.url+"/#/ladder/tanks"))
	wait("sent to sign in", `location.hash === "#/signin" && !document.querySelector("#signin").hidden`)
	must("go to a ladder", chromedp.Evaluate[chromedp.Void](`window.notReloaded = true; location.hash = "#/ladder/tanks"`))
	wait("sent to sign in again", `location.hash === "#/signin" && document.querySelector("#ladder").hidden`)
	must("sign in",
		chromedp.SetValue(chromedp.CSS("#signin-name"), "admin"),
		chromedp.SetValue(chromedp.CSS("#signin-password"), "the-admin-password"),
		chromedp.Click(chromedp.CSS("#signin-submit")))
	wait("signed in, on My bots", `(document.querySelector("#account-name") || {}).textContent === "admin" && location.hash === "#/mybots" && !document.querySelector("#mybots").hidden`)
	must("open Matches", chromedp.Click(chromedp.CSS("#nav-matches")))
	wait("the match form, its games offered", `!document.querySelector("#match-form").hidden && [...document.querySelector("#game").options].some((o) => o.value === "tanks") && document.querySelectorAll("#bot-fields input").length >= 2`)
	must("open a ladder", chromedp.Evaluate[chromedp.Void](`location.hash = "#/ladder/tanks"`))
	wait("the ladder, open to entries", `!document.querySelector("#ladder").hidden && !document.querySelector("#entry-form").hidden`)
	if got := eval(`String(window.notReloaded === true)`); got != "true" {
		t.Fatalf("the page was reloaded: %s", got)
	}
	must("sign out", chromedp.Click(chromedp.CSS("#signout")))
	// The page reloads: a poll of the old one ends with it, so the
	// question is asked anew until the new one answers yes.
	afresh := `window.notReloaded === undefined && location.hash === "#/signin" && !document.querySelector("#signin").hidden && document.querySelector("#ladder").hidden`
	poll.Until(t, 20*time.Second, func() error {
		yes, err := chromedp.Run(ctx, chromedp.Evaluate[bool](afresh))
		if err == nil && !yes {
			err = errors.New("not sent to sign in on a page loaded afresh once signed out")
		}
		return err
	})
}
