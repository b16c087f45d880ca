package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/client"

	"arena/internal/testsupport/dockertest"
)

// The editor's error links (web/static/errlinks.js) on each language's
// messages, in Node: web/jstest/errlinks.test.mjs, run by node --test.
// No Docker, no browser: it runs under -short too (skipped there when
// node is missing; CI installs it).
func TestErrorLinksInNode(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		if testing.Short() {
			t.Skip("needs node (apt-get install nodejs)")
		}
		t.Fatalf("the editor's error links are tested in node: %v", err)
	}
	cmd := exec.CommandContext(t.Context(), node, "--test", filepath.Join(dockertest.Root(), "web", "jstest", "errlinks.test.mjs"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node --test web/jstest/errlinks.test.mjs: %v\n%s", err, out)
	}
	if !regexp.MustCompile(`(?m)^# pass [1-9]`).Match(out) || !regexp.MustCompile(`(?m)^# fail 0$`).Match(out) {
		t.Fatalf("node --test ran no test, or some failed:\n%s", out)
	}
}

// A student writes, runs and submits a bot in the page (#/editor), in a
// real browser against a real server: she signs in, starts a draft from
// the Python kit's Snake starter, runs it against the example bot (the
// board shows beside the editor), raises an exception in it and runs it
// again (the crash shows with a link that moves the editor to the
// line), fixes it and submits it: the version turns ready. The C++ kit's
// compiler error links to its line; two tabs on one draft lose no save
// (the second's is refused as changed elsewhere, and it offers to reload
// the first's); a file named ../x is refused with the server's words;
// and the page reads at 1280 and at 390 pixels (screenshots in a
// temporary folder named in the log), a Run on the phone included.
func TestTheEditorInTheBrowser(t *testing.T) {
	cli := dockertest.Client(t)
	dockertest.Standins(t) // the kits' base images (python, gcc)
	// The opponents offered as the games' example bots (serve.go's
	// defaultBots), on the engine.
	exampleBot(t, cli, "snake-greedy")
	exampleBot(t, cli, "tanks-hunter")
	s := startServer(t, arenaBinary(t), t.TempDir(), freePort(t), "--auth", "accounts", "--admin-password", "the-admin-password", "--ladder", "off")
	admin := signedIn(t, s.url, "admin", "the-admin-password")
	if status, body := admin.call(t, "POST", "/api/users", `{"name":"student","password":"student-password"}`); status != 201 {
		t.Fatalf("make the student: %d %v", status, body)
	}
	editorFlow(t, s.url, signedIn(t, s.url, "student", "student-password"))
}

// editorFlow is the student's flow in the page of the server at url, as
// TestTheEditorInTheBrowser tells it; api is the student's own client of
// the API, to check what the page did.
func editorFlow(t *testing.T, url string, api *webClient) {
	shots, err := os.MkdirTemp("", "arena-editor-shots-")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("the editor's screenshots: %s", shots)

	ctx := editorBrowser(t, 1280, 900)
	p := &editorPage{t: t, ctx: ctx, shots: shots}

	// The page starts without the editor: neither its module nor
	// CodeMirror is fetched before it is opened.
	p.must("open the page", chromedp.Navigate(url+"/#/signin"), chromedp.WaitVisible(chromedp.CSS("#signin-form")))
	p.must("sign in",
		chromedp.SetValue(chromedp.CSS("#signin-name"), "student"),
		chromedp.SetValue(chromedp.CSS("#signin-password"), "student-password"),
		chromedp.Click(chromedp.CSS("#signin-submit")))
	p.wait("signed in, the Editor in the nav", `!!document.querySelector('#account-menu a[href="#/mybots"]') && !document.querySelector("#nav-editor").hidden`, 20*time.Second)
	if got := p.eval(`performance.getEntriesByType("resource").map(e => e.name).filter(n => /editor\.js|errlinks\.js|codemirror/.test(n)).join(" ")`); got != "" {
		t.Errorf("the page fetched the editor's code before it was opened: %s", got)
	}

	// A draft from the Python kit's Snake starter.
	p.must("open the editor", chromedp.Click(chromedp.CSS("#nav-editor")))
	p.wait("the list of drafts", `!document.querySelector("#editor-list").hidden && [...document.querySelectorAll("#draft-kit option")].length > 0`, 20*time.Second)
	if got := p.eval(`typeof window.CodeMirror + " " + document.querySelectorAll('script[src*="codemirror"]').length`); got != "undefined 0" {
		t.Errorf("CodeMirror before a draft is opened: %s, want none", got)
	}
	snakeID := p.newDraft("snake1", "snake", "python")
	snake := p.draftOf(api, snakeID)
	main := snake.Main
	if got := p.eval(`(document.querySelector("#editor-tabs .tab.current") || {dataset: {}}).dataset.path || ""`); got != main {
		t.Errorf("the draft opened on %q, want its main file %s", got, main)
	}
	if got := p.eval(cmJS + `.getOption("mode")`); got != "python" {
		t.Errorf("%s is edited in CodeMirror's mode %q, want python", main, got)
	}

	// Run against the example bot: the build's log, then the board.
	p.wait("the opponents", `document.querySelector("#editor-opponent").selectedOptions.length > 0`, 20*time.Second)
	if kind := p.eval(`document.querySelector("#editor-opponent").selectedOptions[0].dataset.kind || ""`); kind != "example" {
		t.Errorf("the opponent chosen first is of kind %q (%s), want the example bot", kind, p.eval(`document.querySelector("#editor-opponent").value`))
	}
	p.run()
	p.wait("the run's board", `!document.querySelector("#viewer").hidden && /^Turn [1-9]/.test(document.querySelector("#turn").textContent) && document.querySelector("#match-title").textContent.startsWith("snake")`, time.Minute)
	p.runOver("the first run", "done")
	p.shot("editor-1280-run.png")

	// An exception raised at the module's top, before its first function:
	// the bot crashes, its stderr links to the line.
	p.openFile(main)
	line := p.evalInt(cmJS + `.getValue().split("\n").findIndex((l) => l.startsWith("def ")) + 1`)
	if line < 2 {
		t.Fatalf("%s has no top-level function to raise before", main)
	}
	p.must("raise an exception", chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`%s.replaceRange('raise RuntimeError("boom from the editor test")\n', {line: %d, ch: 0})`, cmJS, line-1)))
	p.run()
	p.runOver("the run that crashes", "done")
	link := fmt.Sprintf(`#editor-stderr a.errlink[data-path=%q][data-line="%d"]`, main, line)
	p.wait("the crash's link to the line", fmt.Sprintf(`!document.querySelector("#editor-stderr").hidden && !!document.querySelector(%q)`, link), 30*time.Second)
	t.Logf("the crashing run: %s", p.eval(`document.querySelector("#editor-run-result").textContent`))
	p.shot("editor-1280-crash.png")
	p.openFile(p.otherFile(snake, main))
	p.must("follow the crash's link", chromedp.Click(chromedp.CSS(link)))
	p.cursorAt(main, line, 0)
	// The viewer's stderr of the crash's turn links to the line too.
	vlink := fmt.Sprintf(`#turn-panel a.errlink[data-path=%q][data-line="%d"]`, main, line)
	p.wait("the viewer's stderr linked", fmt.Sprintf(`!!document.querySelector(%q)`, vlink), 30*time.Second)
	p.openFile(p.otherFile(snake, main))
	p.must("follow the viewer's link", chromedp.Click(chromedp.CSS(vlink)))
	p.cursorAt(main, line, 0)

	// Fixed (the line removed), submitted: built, pushed, checked ready.
	p.must("remove the raise", chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`%s.replaceRange("", {line: %d, ch: 0}, {line: %d, ch: 0})`, cmJS, line-1, line)))
	p.must("submit",
		chromedp.SetValue(chromedp.CSS("#editor-repo"), "student/snake"),
		chromedp.SetValue(chromedp.CSS("#editor-tag"), "v1"),
		chromedp.Click(chromedp.CSS("#editor-submit-start")))
	p.wait("the submitted version's check", `["ready", "rejected", "failed"].includes(document.querySelector("#editor-submit-status").dataset.state)`, 5*time.Minute)
	if st, text := p.eval(`document.querySelector("#editor-submit-status").dataset.state`), p.eval(`document.querySelector("#editor-submit-status").textContent`); st != "ready" || !strings.Contains(text, "student/snake:v1 is ready") {
		t.Fatalf("the submission: %s: %s\n%s", st, text, p.eval(`document.querySelector("#editor-submit-log").textContent`))
	}
	if img := pushedImage(t, api, "student/snake:v1"); img == nil || img["state"] != "ready" {
		t.Errorf("the registry's student/snake:v1: %v", img)
	}
	if got := p.draftOf(api, snakeID).Files[main]; strings.Contains(got, "boom from the editor test") {
		t.Errorf("the fix was not saved: %s still raises", main)
	}
	p.shot("editor-1280-submitted.png")

	// The C++ kit: a syntax error's line in the compiler's message links
	// to it.
	p.must("back to the drafts", chromedp.Evaluate[chromedp.Void](`location.hash = "#/editor"`))
	p.wait("the list of drafts", `!document.querySelector("#editor-list").hidden && [...document.querySelectorAll("#drafts tbody a")].some((a) => a.textContent === "snake1")`, 20*time.Second)
	tankID := p.newDraft("tank1", "tanks", "cpp")
	tank := p.draftOf(api, tankID)
	p.openFile(tank.Main)
	bad := p.evalInt(fmt.Sprintf(`(() => {
		const cm = %s, n = cm.lineCount(), last = cm.getLine(n - 1);
		cm.replaceRange((last === "" ? "" : "\n") + "int broken = ;\n", {line: n - 1, ch: last.length});
		return cm.getValue().split("\n").indexOf("int broken = ;") + 1;
	})()`, cmJS))
	p.run()
	p.runOver("the C++ run with a syntax error", "failed")
	clink := fmt.Sprintf(`#editor-log a.errlink[data-path=%q][data-line="%d"]`, tank.Main, bad)
	p.wait("the compiler's line as a link", fmt.Sprintf(`!!document.querySelector(%q)`, clink), 30*time.Second)
	col := p.evalInt(fmt.Sprintf(`Number(document.querySelector(%q).dataset.col)`, clink))
	p.shot("editor-1280-compiler.png")
	p.openFile(p.otherFile(tank, tank.Main))
	p.must("follow the compiler's link", chromedp.Click(chromedp.CSS(clink)))
	p.cursorAt(tank.Main, bad, col)

	// Two tabs on the snake draft: the second's save, made on the version
	// it read, is refused as changed elsewhere; it offers to reload, and
	// reloading shows the first's.
	p.must("open the snake draft", chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`location.hash = "#/editor/%d"`, snakeID)))
	p.draftShown(snakeID)
	bctx, closeB := chromedp.NewContext(ctx)
	b := &editorPage{t: t, ctx: bctx, shots: shots, name: "second tab"}
	b.must("open the draft in a second tab", chromedp.Navigate(fmt.Sprintf("%s/#/editor/%d", url, snakeID)))
	b.draftShown(snakeID)
	front(t, ctx)
	p.openFile(main)
	p.must("the first tab's change", chromedp.Evaluate[chromedp.Void](cmJS+`.replaceRange("# saved by the first tab\n", {line: 0, ch: 0})`), chromedp.Click(chromedp.CSS("#editor-save")))
	p.wait("the first tab saved", `document.querySelector("#editor-state").dataset.state === "saved"`, 20*time.Second)
	front(t, bctx)
	b.openFile(main)
	b.must("the second tab's change", chromedp.Evaluate[chromedp.Void](cmJS+`.replaceRange("# typed in the second tab\n", {line: 0, ch: 0})`))
	b.wait("the second tab's save refused", `document.querySelector("#editor-state").dataset.state === "conflict" && !document.querySelector("#editor-conflict").hidden && document.querySelector("#editor-reload").offsetParent !== null`, 30*time.Second)
	if got := b.eval(`document.querySelector("#editor-conflict-text").textContent`); !strings.Contains(got, "changed elsewhere") {
		t.Errorf("the second tab says %q, want changed elsewhere", got)
	}
	if got := p.draftOf(api, snakeID).Files[main]; !strings.HasPrefix(got, "# saved by the first tab\n") || strings.Contains(got, "second tab") {
		t.Errorf("after both tabs saved, the server's %s begins %q: the first tab's save was lost or the second's taken", main, firstLine(got))
	}
	b.shot("editor-1280-conflict.png")
	b.must("reload the server's version", chromedp.Click(chromedp.CSS("#editor-reload")))
	b.wait("the second tab shows the first's save", cmJS+`.getValue().startsWith("# saved by the first tab\n") && !`+cmJS+`.getValue().includes("second tab") && document.querySelector("#editor-state").dataset.state === "saved"`, 20*time.Second)
	closeB()
	front(t, ctx)

	// A file named ../x: refused, in the server's words.
	d := p.draftOf(api, snakeID)
	files := map[string]string{"../x": ""}
	for k, v := range d.Files {
		files[k] = v
	}
	body, _ := json.Marshal(map[string]any{"base": d.Version, "files": files, "main": d.Main})
	status, refusal := api.call(t, "PUT", fmt.Sprintf("/api/drafts/%d", snakeID), string(body))
	words, _ := refusal["error"].(string)
	if status != 400 || words == "" {
		t.Fatalf("the server took a file named ../x: %d %v", status, refusal)
	}
	p.must("add a file named ../x",
		chromedp.SetValue(chromedp.CSS("#editor-newfile-name"), "../x"),
		chromedp.Click(chromedp.CSS("#editor-newfile button")))
	p.wait("../x refused", `document.querySelector("#editor-files-error").textContent !== ""`, 20*time.Second)
	if got := p.eval(`document.querySelector("#editor-files-error").textContent`); got != words {
		t.Errorf("the page refused ../x saying %q, the server says %q", got, words)
	}
	if got := p.eval(`[...document.querySelectorAll("#editor-files li[data-path]")].map((li) => li.dataset.path).join(" ")`); strings.Contains(got, "..") {
		t.Errorf("the files shown after ../x was refused: %s", got)
	}
	if v := p.draftOf(api, snakeID).Version; v != d.Version {
		t.Errorf("the refused file made version %d (was %d)", v, d.Version)
	}

	// On a phone: one pane at a time, none wider than the screen; a Run
	// shows its match in the Viewer pane.
	p.must("a phone's screen", chromedp.EmulateViewport(390, 844, func(m *emulation.SetDeviceMetricsOverrideParams, _ *emulation.SetTouchEmulationEnabledParams) {
		m.ScreenWidth, m.ScreenHeight, m.Mobile = 390, 844, true
	}))
	for _, pane := range []string{"files", "code", "log"} {
		p.must("the "+pane+" pane", chromedp.Click(chromedp.CSS(fmt.Sprintf(`#editor-panes button[data-pane=%q]`, pane))))
		p.wait("the "+pane+" pane alone", fmt.Sprintf(`document.querySelector("#editor").dataset.pane === %q && document.querySelector("#editor .editor-%s").offsetParent !== null`, pane, pane), 10*time.Second)
		if w := p.evalInt(`document.documentElement.scrollWidth - window.innerWidth`); w > 0 {
			t.Errorf("at 390 px the %s pane scrolls %d px sideways", pane, w)
		}
		p.shot("editor-390-" + pane + ".png")
	}
	if got := p.evalInt(`[...document.querySelectorAll("#editor .editor-body > *")].filter((e) => e.offsetParent !== null).length`); got != 1 {
		t.Errorf("at 390 px %d panes show at once, want 1", got)
	}
	p.must("open the code", chromedp.Click(chromedp.CSS(`#editor-panes button[data-pane="code"]`)))
	p.run()
	p.wait("the phone's run in the Viewer pane", `document.querySelector("#editor").dataset.pane === "viewer" && document.querySelector("#viewer").offsetParent !== null && /^Turn [1-9]/.test(document.querySelector("#turn").textContent)`, time.Minute)
	p.runOver("the phone's run", "done")
	if w := p.evalInt(`document.documentElement.scrollWidth - window.innerWidth`); w > 0 {
		t.Errorf("at 390 px the Viewer pane scrolls %d px sideways", w)
	}
	p.shot("editor-390-viewer.png")
}

// cmJS is the draft view's CodeMirror editor, in the page.
const cmJS = `document.querySelector("#editor .CodeMirror").CodeMirror`

// exampleBot makes sure the engine has arena/NAME, one of the games'
// example bots the editor offers as opponents: the Go kit's program
// (dockertest.KitBot) under that name, removed after the test when it
// was not there before.
func exampleBot(t *testing.T, cli *client.Client, name string) {
	t.Helper()
	ref := "arena/" + name
	if _, err := cli.ImageInspect(t.Context(), ref); err == nil {
		return
	}
	if err := cli.ImageTag(t.Context(), dockertest.KitBot(t, cli, name), ref); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.ImageRemove(context.Background(), ref, image.RemoveOptions{}) })
}

// editorBrowser is newBrowser with the time the editor's test takes:
// builds of three kits, four runs and a submission's check.
func editorBrowser(t *testing.T, width, height int) context.Context {
	t.Helper()
	browser, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatalf("the browser test needs Debian's chromium (apt-get install chromium): %v", err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(browser), chromedp.NoSandbox, chromedp.NoFirstRun, chromedp.WindowSize(width, height),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("disable-gpu", true),
		// Two tabs of one draft each save as one types: neither is
		// throttled as a tab in the background.
		chromedp.Flag("disable-background-timer-throttling", true), chromedp.Flag("disable-renderer-backgrounding", true),
		chromedp.Flag("disable-backgrounding-occluded-windows", true))
	bctx, cancelTimeout := context.WithTimeout(t.Context(), 15*time.Minute)
	actx, cancelAlloc := chromedp.NewExecAllocator(bctx, opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelAlloc(); cancelTimeout() })
	return ctx
}

// front brings a tab to the front (a tab behind another gets no
// animation frames: the viewer draws in them).
func front(t *testing.T, ctx context.Context) {
	t.Helper()
	if _, err := chromedp.Call(ctx, page.BringToFront, cdp.Empty{}); err != nil {
		t.Fatalf("bring a tab to the front: %v", err)
	}
}

// editorPage is a tab of the page, for the editor's test: its steps fail
// the test with a screenshot and what the editor says.
type editorPage struct {
	t     *testing.T
	ctx   context.Context
	shots string // the screenshots' folder
	name  string // the tab's, in messages ("" for the first)
}

// editorState is what the editor says, for a failure's message.
const editorState = `(() => {
	const text = (sel) => { const e = document.querySelector(sel); return e ? e.textContent.trim() : "(none)"; };
	return "location " + location.hash + "\nstate: " + text("#editor-state") + "\nfiles: " + text("#editor-files-error") +
		"\nrun: " + text("#editor-run-state") + " " + text("#editor-run-result") + "\nlog:\n" + text("#editor-log") +
		"\nstderr:\n" + text("#editor-stderr") + "\nsubmit: " + text("#editor-submit-status") + "\n" + text("#editor-submit-log") +
		"\nerrors: " + text("#draft-error");
})()`

func (p *editorPage) fail(what string, err error) {
	p.t.Helper()
	shot := "editor-failed-" + strings.Trim(regexp.MustCompile(`[^a-z0-9]+`).ReplaceAllString(strings.ToLower(p.name+" "+what), "-"), "-") + ".png"
	if png, e := chromedp.Run(p.ctx, chromedp.FullScreenshot(100)); e == nil {
		os.WriteFile(filepath.Join(p.shots, shot), png, 0o644)
	}
	state, _ := chromedp.Run(p.ctx, chromedp.Evaluate[string](editorState))
	p.t.Fatalf("%s%s: %v\n%s\n(screenshot %s)", p.name, what, err, state, filepath.Join(p.shots, shot))
}

func (p *editorPage) must(what string, steps ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	if err := chromedp.Do(p.ctx, steps...); err != nil {
		p.fail(what, err)
	}
}

// wait waits until js is true, asking every 100 ms (a timer: a tab in the
// background gets no animation frames).
func (p *editorPage) wait(what, js string, timeout time.Duration) {
	p.t.Helper()
	p.must(what, chromedp.Poll[chromedp.Void](js, chromedp.WithPollingInterval(100*time.Millisecond), chromedp.WithPollingTimeout(timeout)))
}

func (p *editorPage) eval(js string) string {
	p.t.Helper()
	v, err := chromedp.Run(p.ctx, chromedp.Evaluate[string](js))
	if err != nil {
		p.fail(js, err)
	}
	return v
}

func (p *editorPage) evalInt(js string) int {
	p.t.Helper()
	v, err := chromedp.Run(p.ctx, chromedp.Evaluate[int](js))
	if err != nil {
		p.fail(js, err)
	}
	return v
}

func (p *editorPage) shot(name string) {
	p.t.Helper()
	png, err := chromedp.Run(p.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		p.t.Errorf("screenshot %s: %v", name, err)
		return
	}
	if err := os.WriteFile(filepath.Join(p.shots, name), png, 0o644); err != nil {
		p.t.Error(err)
	}
}

// newDraft makes a draft with the list's form and waits until it is
// open; it returns its id.
func (p *editorPage) newDraft(name, game, kit string) int64 {
	p.t.Helper()
	p.must("a new draft "+name,
		chromedp.SetValue(chromedp.CSS("#draft-name"), name),
		chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`(() => { const g = document.querySelector("#draft-game"); g.value = %q; g.dispatchEvent(new Event("change")); document.querySelector("#draft-kit").value = %q; })()`, game, kit)),
		chromedp.Click(chromedp.CSS("#draft-create")))
	p.wait("the new draft "+name+" open", `/^#\/editor\/\d+$/.test(location.hash)`, 20*time.Second)
	id, err := strconv.ParseInt(strings.TrimPrefix(p.eval(`location.hash`), "#/editor/"), 10, 64)
	if err != nil {
		p.t.Fatal(err)
	}
	p.draftShown(id)
	return id
}

// draftShown waits until draft id is shown in CodeMirror, saved.
func (p *editorPage) draftShown(id int64) {
	p.t.Helper()
	p.wait(fmt.Sprintf("draft %d shown", id), fmt.Sprintf(`location.hash === "#/editor/%d" && !!document.querySelector("#editor .CodeMirror") && document.querySelector("#editor-state").dataset.state === "saved" && document.querySelectorAll("#editor-files li[data-path]").length > 0`, id), 30*time.Second)
}

// editorDraft is a draft as GET /api/drafts/ID has it.
type editorDraft struct {
	Main    string            `json:"main"`
	Version int64             `json:"version"`
	Files   map[string]string `json:"files"`
}

func (p *editorPage) draftOf(c *webClient, id int64) editorDraft {
	p.t.Helper()
	status, body := c.call(p.t, "GET", fmt.Sprintf("/api/drafts/%d", id), "")
	if status != 200 {
		p.t.Fatalf("draft %d: %d %v", id, status, body)
	}
	raw, _ := json.Marshal(body)
	var d editorDraft
	if err := json.Unmarshal(raw, &d); err != nil {
		p.t.Fatal(err)
	}
	return d
}

// otherFile is a file of the draft other than path: opened before an
// error's link is followed, for the link to have a file to change.
func (p *editorPage) otherFile(d editorDraft, path string) string {
	for f := range d.Files {
		if f != path {
			return f
		}
	}
	p.t.Fatalf("the draft has no file but %s", path)
	return ""
}

// openFile shows a file of the draft, from the file tree, the cursor at
// its start.
func (p *editorPage) openFile(path string) {
	p.t.Helper()
	p.must("open "+path, chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`document.querySelector('#editor-files li[data-path=%q] a.file').click()`, path)))
	p.wait(path+" shown", fmt.Sprintf(`document.querySelector("#editor-tabs .tab.current").dataset.path === %q`, path), 10*time.Second)
	p.must("the cursor at its start", chromedp.Evaluate[chromedp.Void](cmJS+`.setCursor({line: 0, ch: 0})`))
}

// cursorAt checks that the editor shows path with the cursor at line
// (and column, when not 0), both from 1.
func (p *editorPage) cursorAt(path string, line, col int) {
	p.t.Helper()
	p.wait("the file of the link shown", fmt.Sprintf(`document.querySelector("#editor-tabs .tab.current").dataset.path === %q`, path), 10*time.Second)
	got := p.eval(cmJS + `.getCursor().line + 1 + ":" + (` + cmJS + `.getCursor().ch + 1)`)
	want := fmt.Sprintf("%d:%d", line, max(col, 1))
	if got != want {
		p.t.Errorf("%sthe link moved the cursor to %s of %s (line:column), want %s", p.name, got, path, want)
	}
}

// run presses Run (the draft is saved first) and waits until the page
// shows this run (a run of another id than the one it showed).
func (p *editorPage) run() {
	p.t.Helper()
	before := p.eval(`document.querySelector("#editor-run-state").dataset.run || ""`)
	p.must("run", chromedp.Click(chromedp.CSS("#editor-run-start")))
	p.wait("the run started", fmt.Sprintf(`(document.querySelector("#editor-run-state").dataset.run || "") !== %q`, before), 30*time.Second)
}

// runOver waits for the run to be over, and fails the test unless it
// ended as want (done, failed).
func (p *editorPage) runOver(what, want string) {
	p.t.Helper()
	p.wait(what+" over", `["done", "failed", "cancelled"].includes(document.querySelector("#editor-run-state").dataset.state)`, 5*time.Minute)
	if got := p.eval(`document.querySelector("#editor-run-state").dataset.state`); got != want {
		p.fail(what, fmt.Errorf("the run ended %s, want %s", got, want))
	}
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// A server killed (SIGKILL) while a draft is being saved, save after
// save, keeps each save whole or not at all: after the restart the
// draft's newest version holds exactly the files that save sent, and the
// next save on it is taken.
func TestADraftSaveSurvivesKill9(t *testing.T) {
	bin := arenaBinary(t)
	data, port := t.TempDir(), freePort(t)
	flags := []string{"--auth", "accounts", "--admin-password", "the-admin-password", "--ladder", "off"}
	s := startServer(t, bin, data, port, flags...)
	admin := signedIn(t, s.url, "admin", "the-admin-password")
	if status, body := admin.call(t, "POST", "/api/users", `{"name":"alice","password":"alice-password"}`); status != 201 {
		t.Fatalf("make alice: %d %v", status, body)
	}
	alice := signedIn(t, s.url, "alice", "alice-password")
	status, d := alice.call(t, "POST", "/api/drafts", `{"name":"bot","game":"tanks","kit":"python"}`)
	if status != 201 {
		t.Fatalf("a draft: %d %v", status, d)
	}
	path := fmt.Sprintf("/api/drafts/%v", d["id"])
	// Save n's files: 40 of 16 KiB, each saying n.
	files := func(n int) map[string]string {
		out := map[string]string{"bot.py": fmt.Sprintf("# save %d\n", n)}
		for i := range 40 {
			out[fmt.Sprintf("lib/part%02d.py", i)] = fmt.Sprintf("# save %d\n%s", n, strings.Repeat("x = 1\n", 16<<10/6))
		}
		return out
	}
	saved := make(chan int, 1000)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for v := 1; ; v++ {
			select {
			case <-stop:
				return
			default:
			}
			body, _ := json.Marshal(map[string]any{"base": v, "files": files(v + 1), "main": "bot.py"})
			status, _, err := jsonCall(context.Background(), alice.Client, "PUT", s.url+path, string(body))
			if err != nil || status != 200 {
				return // the server is gone
			}
			saved <- v + 1
		}
	}()
	last := 0
	for n := 0; n < 5; n++ {
		select {
		case last = <-saved:
		case <-time.After(30 * time.Second):
			t.Fatalf("the saves do not go through (%d)", n)
		}
	}
	s.cmd.Process.Kill()
	s.cmd.Wait()
	close(stop)
	<-done
	close(saved)
	for v := range saved {
		last = v
	}

	s = startServer(t, bin, data, port, flags...)
	alice = signedIn(t, s.url, "alice", "alice-password")
	status, d = alice.call(t, "GET", path, "")
	if status != 200 {
		t.Fatalf("the draft after the restart: %d %v", status, d)
	}
	v := int(d["version"].(float64))
	if v < last || v > last+1 {
		t.Errorf("after the restart the draft is at version %d; the last save answered made %d", v, last)
	}
	got := map[string]string{}
	for name, text := range d["files"].(map[string]any) {
		got[name] = text.(string)
	}
	if want := files(v); !maps.Equal(got, want) {
		wrong := []string{}
		for name := range want {
			if got[name] != want[name] {
				wrong = append(wrong, name)
			}
		}
		t.Errorf("version %d is not whole: %d files, %d of them not save %d's (%v)", v, len(got), len(wrong), v, wrong)
	}
	body, _ := json.Marshal(map[string]any{"base": v, "files": files(v + 1), "main": "bot.py"})
	if status, r := alice.call(t, "PUT", path, string(body)); status != 200 || int(r["version"].(float64)) != v+1 {
		t.Errorf("the save after the restart: %d %v", status, r)
	}
	t.Logf("killed after save %d; the draft restarted at version %d", last, v)
}
