package main

import (
	"fmt"
	"net/http"
	"net/http/cookiejar"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"arena/internal/testsupport/dockertest"
	"arena/internal/testsupport/poll"
)

// A class as staff run it, in Chromium: the admin imports the roster on
// the Admin page; a student opens the link that sets her password; the
// students push (one a bot that crashes, whose every version is
// rejected; one a bot that plays; one nothing) and enter the contest or
// not. Staff's class view shows the student with no ready version and the
// one not entered, and its filters keep each; the student whose versions
// were all rejected reads it on the contest page before the deadline.
func TestAClassInTheBrowser(t *testing.T) {
	cli := dockertest.Client(t)
	labelled := func(tag, from string) string {
		dockertest.Build(t, cli, tag, "FROM "+from+"\nLABEL io.arena.game=tanks\n", nil)
		return tag
	}
	good := labelled("arena-test/class-good:labelled", dockertest.ExampleBots(t, cli)[1])
	crash := labelled("arena-test/class-crash:labelled", dockertest.TestBot(t, cli, "exit-at=2"))
	idle := dockertest.TestBot(t, cli, "delay=0s")
	port := freePort(t)
	host := fmt.Sprintf("127.0.0.1:%d", port)
	s := startServer(t, arenaBinary(t), t.TempDir(), port, "--auth", "accounts", "--admin-password", "the-admin-password", "--ladder", "off")
	admin := signedIn(t, s.url, "admin", "the-admin-password")

	ctx := newBrowser(t, 1400, 1100)
	must := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, steps...); err != nil {
			if png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)); err == nil {
				saveArtefact(t, "class-failed.png", png)
			}
			t.Fatalf("%s: %v", what, err)
		}
	}
	pollPage := func(what, js string) {
		t.Helper()
		must(what, chromedp.Poll[chromedp.Void](js, chromedp.WithPollingTimeout(30*time.Second)))
	}
	signIn := func(name, password string) {
		t.Helper()
		must("sign in as "+name,
			chromedp.Navigate(s.url+"/#/signin"),
			chromedp.WaitVisible(chromedp.CSS("#signin-form")),
			chromedp.SetValue(chromedp.CSS("#signin-name"), name),
			chromedp.SetValue(chromedp.CSS("#signin-password"), password),
			chromedp.Click(chromedp.CSS("#signin-submit")))
		pollPage(name+" is signed in", fmt.Sprintf(`(document.querySelector("#account-name") || {}).textContent === %q`, name))
	}

	// The roster, imported on the Admin page.
	roster := filepath.Join(t.TempDir(), "class.csv")
	os.WriteFile(roster, []byte("name,email,team\nann,ann@uni.example,\nben,ben@uni.example,lab1\ncat,cat@uni.example,lab1\n"), 0o644)
	signIn("admin", "the-admin-password")
	must("import the roster",
		chromedp.Navigate(s.url+"/#/admin"),
		chromedp.WaitVisible(chromedp.CSS("#roster-form")),
		chromedp.SetUploadFiles(chromedp.CSS("#roster-file"), []string{roster}),
		chromedp.Click(chromedp.CSS("#roster-import")))
	pollPage("three accounts made, their links offered", `document.querySelector("#roster-result").textContent.startsWith("3 accounts made") && document.querySelector("#roster-links").href.startsWith("blob:")`)
	pollPage("the accounts listed with their emails", `[...document.querySelectorAll("#users tbody tr")].some(tr => tr.textContent.includes("ben@uni.example"))`)

	// Ann sets her password with a link; the others get theirs by the API.
	link := func(user string) string {
		status, body := admin.call(t, "POST", "/api/users/"+user+"/password-link", `{}`)
		if status != 201 {
			t.Fatalf("a link for %s: %d %v", user, status, body)
		}
		return body["link"].(string)
	}
	must("open ann's link", chromedp.Navigate(link("ann")), chromedp.WaitVisible(chromedp.CSS("#setpw-form")))
	must("set ann's password",
		chromedp.SetValue(chromedp.CSS("#setpw-password"), "ann-password"),
		chromedp.Click(chromedp.CSS("#setpw-submit")))
	pollPage("ann is signed in", `(document.querySelector("#account-name") || {}).textContent === "ann"`)
	for _, u := range []string{"ben", "cat"} {
		jar, _ := cookiejar.New(nil)
		student := &webClient{Client: &http.Client{Jar: jar, Timeout: 30 * time.Second}, url: s.url}
		if status, body := student.call(t, "POST", "/api/users/password", fmt.Sprintf(`{"link":%q,"password":"%s-password"}`, link(u), u)); status != 200 {
			t.Fatalf("%s sets a password: %d %v", u, status, body)
		}
	}

	// Ann pushes the crashing bot, cat the good one (for team lab1); ben
	// pushes nothing.
	push := func(user, repo, local string) { dockerPushAs(t, cli, s, host, user, repo, local) }
	push("ann", "ann/tank", crash)
	push("cat", "lab1/tank", good)
	for _, want := range []struct{ user, state string }{{"ann", "rejected"}, {"cat", "ready"}} {
		c := signedIn(t, s.url, want.user, want.user+"-password")
		poll.Until(t, 2*time.Minute, func() error {
			_, reg := c.call(t, "GET", "/api/registry", "")
			imgs, _ := reg["images"].([]any)
			if len(imgs) == 1 && imgs[0].(map[string]any)["state"] == want.state {
				return nil
			}
			return fmt.Errorf("%s's bot is not %s: %v", want.user, want.state, reg)
		})
	}
	freeze := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	status, ct := admin.call(t, "POST", "/api/contests", `{"name":"Lab cup","game":"tanks","maps":["classic"],"rounds":2,"freeze_at":"`+freeze+`",
		"gates":[{"name":"beats idle","against":"`+idle+`","games":2,"wins":1}]}`)
	if status != 201 {
		t.Fatalf("create the contest: %d %v", status, ct)
	}
	path := fmt.Sprintf("/api/contests/%v", ct["id"])
	for _, e := range []struct{ user, bot string }{{"ann", "ann/tank"}, {"cat", "lab1/tank"}} {
		c := signedIn(t, s.url, e.user, e.user+"-password")
		if status, body := c.call(t, "POST", path+"/entries", fmt.Sprintf(`{"bot":%q}`, e.bot)); status != 201 {
			t.Fatalf("%s enters %s: %d %v", e.user, e.bot, status, body)
		}
	}

	// Ann reads, before the deadline, that nothing of hers can play.
	page := fmt.Sprintf("%s/#/contest/%v", s.url, ct["id"])
	must("ann opens the contest", chromedp.Navigate(page), chromedp.WaitVisible(chromedp.CSS("#contest-entries")))
	pollPage("ann's warning", `[...document.querySelectorAll("#contest-entries .entry-warning")].some(w => w.textContent.includes("every version of ann/tank was rejected by its check"))`)

	// Staff see the class.
	signIn("admin", "the-admin-password")
	must("staff open the contest", chromedp.Navigate(page), chromedp.WaitVisible(chromedp.CSS("#contest-class")))
	row := func(name string) string {
		return fmt.Sprintf(`[...document.querySelectorAll("#contest-class tbody tr")].find(tr => tr.dataset.name === %q)`, name)
	}
	pollPage("the class: ann with no ready version, ben's team entered, cat ready", fmt.Sprintf(`(() => {
		const ann = %s, ben = %s, cat = %s;
		return document.querySelectorAll("#contest-class tbody tr").length === 3 && ann && ann.textContent.includes("no ready version") && ann.textContent.includes("ann@uni.example")
			&& ben && ben.textContent.includes("lab1's") && cat && cat.querySelector(".class-check").textContent.startsWith("ready");
	})()`, row("ann"), row("ben"), row("cat")))
	must("only those with no ready version", chromedp.SetValue(chromedp.CSS("#contest-class-filter"), "no-ready"),
		chromedp.Evaluate[chromedp.Void](`document.querySelector("#contest-class-filter").dispatchEvent(new Event("change"))`))
	pollPage("ann alone", fmt.Sprintf(`document.querySelectorAll("#contest-class tbody tr").length === 1 && !!%s`, row("ann")))
	if png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)); err == nil {
		saveArtefact(t, "class-no-ready.png", png)
	}
	// Ben is entered through his team: no one is left out, but a student
	// of no team who did not enter is.
	if status, body := admin.call(t, "POST", "/api/users", `{"name":"dan","password":"dan-password"}`); status != 201 {
		t.Fatalf("make dan: %d %v", status, body)
	}
	must("only those not entered", chromedp.SetValue(chromedp.CSS("#contest-class-filter"), "not-entered"),
		chromedp.Evaluate[chromedp.Void](`document.querySelector("#contest-class-filter").dispatchEvent(new Event("change"))`))
	pollPage("dan alone, not entered", fmt.Sprintf(`document.querySelectorAll("#contest-class tbody tr").length === 1 && (%s || {textContent: ""}).textContent.includes("not entered")`, row("dan")))
	pollPage("the CSV keeps the filter", `document.querySelector("#contest-class-csv").href.endsWith("/class?filter=not-entered&format=csv")`)

	// Cat plays the gates on her team's version before the deadline, on
	// the page; ann has no ready version to play them on.
	ann := signedIn(t, s.url, "ann", "ann-password")
	if status, body := ann.call(t, "POST", path+"/gates/run", `{}`); status != 409 || !strings.Contains(fmt.Sprint(body["error"]), "no ready version") {
		t.Errorf("ann asks for the gates: %d %v", status, body)
	}
	signIn("cat", "cat-password")
	must("cat opens the contest", chromedp.Navigate(page), chromedp.WaitVisible(chromedp.CSS("#contest-gates-run")))
	must("cat plays the gates", chromedp.Click(chromedp.CSS("#contest-gates-run")))
	must("cat's gate passed", chromedp.Poll[chromedp.Void](`[...document.querySelectorAll("#contest-gates tbody tr")].some(tr => tr.textContent.includes("beats idle") && tr.textContent.includes("a request") && tr.textContent.includes("passed"))`,
		chromedp.WithPollingTimeout(2*time.Minute)))
	if png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)); err == nil {
		saveArtefact(t, "class-gates.png", png)
	}
	if status, body := signedIn(t, s.url, "cat", "cat-password").call(t, "POST", path+"/gates/run", `{}`); status != 429 {
		t.Errorf("cat asks again at once: %d %v", status, body)
	}

	_, csv := admin.call(t, "GET", path+"/class?format=json", "")
	if rows, _ := csv["rows"].([]any); len(rows) != 4 {
		t.Errorf("the class has %d rows, want 4: %v", len(rows), csv)
	}
	if strings.Contains(fmt.Sprint(csv), "admin") {
		t.Errorf("the admin is in the class: %v", csv)
	}
}
