package main

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"arena/internal/testsupport/dockertest"
)

// The page for bot authors, in a real browser: the bot fields follow the
// game (what was typed is kept per game) and suggest the local images
// labelled for it first; a finished match shows charts of answer time,
// memory and score per turn with the fault marked, a click on a chart
// jumps to that turn, and the turn panel gives the command that
// reproduces a bot's answer. A ladder's image field suggests its game's
// images as well.
func TestPageForBotAuthors(t *testing.T) {
	cli := dockertest.Client(t)
	hunter := dockertest.ExampleBots(t, cli)[1]
	crasher := dockertest.TestBot(t, cli, "delay=20ms,exit-at=8")
	bin := dockertest.GoBinary(t, filepath.Join(dockertest.Root(), "botkits", "go"), "./snake-greedy")
	labelled := dockertest.Build(t, cli, "arena-test/labelled-snake", dockertest.ScratchDockerfile()+"LABEL io.arena.game=snake\n", map[string]string{"bot": "@" + bin})
	s := startServer(t, arenaBinary(t), t.TempDir(), freePort(t))

	ctx := newBrowser(t, 1400, 1400)
	must, eval := browserSteps(t, ctx)
	fields := `[...document.querySelectorAll("#bot-fields input")].map(i => i.value).join(" ")`
	pick := func(game string) {
		t.Helper()
		must("pick "+game, chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`(() => { const s = document.querySelector("#game"); s.value = %q; s.dispatchEvent(new Event("change")); })()`, game)))
	}

	must("open the page", chromedp.Navigate(s.url), chromedp.WaitVisible(chromedp.CSS(`#bot-fields input[name="bot1"]`)))
	// Type into the first field (as a user does: input events), switch
	// games and back.
	must("type a bot", chromedp.Evaluate[chromedp.Void](`(() => { const i = document.querySelector('input[name="bot0"]'); i.value = "me/my-tank"; i.dispatchEvent(new Event("input")); })()`))
	pick("pacman")
	if got := eval(fields); got != "arena/pacman-runner arena/pacman-ghosts" {
		t.Errorf("after switching to Pac-Man the fields hold %q", got)
	}
	pick("tanks")
	if got := eval(fields); got != "me/my-tank arena/tanks-hunter" {
		t.Errorf("back on Tanks the fields hold %q, want what was typed and the other default", got)
	}
	// Suggestions: Snake's list offers the image labelled for it, with its
	// id and age, before the unlabelled ones (the crasher); Tanks' does not
	// offer it. (Other images labelled for Snake, the example bots, may
	// come first.)
	pick("snake")
	must("snake suggestions", chromedp.Poll[chromedp.Void](`(() => { const o = document.querySelector("#images-snake option"); return o && o.value !== ""; })()`, chromedp.WithPollingTimeout(10*time.Second)))
	snake := strings.Split(eval(`[...document.querySelectorAll("#images-snake option")].map(o => o.value + " | " + o.label).join("\n")`), "\n")
	at := func(image string) int {
		return slices.IndexFunc(snake, func(o string) bool { return strings.HasPrefix(o, image+" | ") })
	}
	if i := at(labelled); i < 0 || !strings.Contains(snake[i], "ago") {
		t.Errorf("the Snake suggestions %q do not offer %s with its id and age", snake, labelled)
	} else if j := at(crasher); j >= 0 && j < i {
		t.Errorf("the Snake suggestions %q offer the unlabelled %s before %s", snake, crasher, labelled)
	}
	if got := eval(`document.querySelector('#bot-fields input').getAttribute("list")`); got != "images-snake" {
		t.Errorf("the Snake field suggests from %q", got)
	}
	pick("tanks")
	must("tanks suggestions", chromedp.Poll[chromedp.Void](`document.querySelectorAll("#images-tanks option").length > 0`, chromedp.WithPollingTimeout(10*time.Second)))
	if got := eval(`[...document.querySelectorAll("#images-tanks option")].map(o => o.value).join(" ")`); strings.Contains(got, labelled) || !strings.Contains(got, hunter) {
		t.Errorf("the Tanks suggestions are %q: want %s, not %s", got, hunter, labelled)
	}

	// A match whose second bot crashes at turn 8.
	must("play a match",
		chromedp.SetValue(chromedp.CSS(`input[name="bot0"]`), hunter),
		chromedp.SetValue(chromedp.CSS(`input[name="bot1"]`), crasher),
		chromedp.Click(chromedp.CSS("#start")),
		chromedp.WaitVisible(chromedp.CSS("#result.visible")),
		chromedp.Poll[chromedp.Void](`document.querySelector("#download") && !document.querySelector("#download").hidden`, chromedp.WithPollingTimeout(10*time.Second)),
		// The charts' turn axis ends at the last turn once all frames are
		// read (while the match plays it runs to 64 turns at least).
		chromedp.Poll[chromedp.Void](viewerAtTheEnd, chromedp.WithPollingTimeout(10*time.Second)))
	for _, c := range []string{"time", "mem", "score"} {
		if got := eval(fmt.Sprintf(`document.querySelector("#chart-%s").dataset.points || "0"`, c)); got == "0" {
			t.Errorf("the %s chart has no points", c)
		}
	}
	if got := eval(`document.querySelector("#chart-time").dataset.faults`); got != "1:crashed@8" {
		t.Errorf("faults marked: %q, want 1:crashed@8", got)
	}
	// The banner says why it crashed.
	if got := eval(`[...document.querySelectorAll("#result .fault-detail")].map(li => li.textContent).join("\n")`); !strings.Contains(got, "crashed at turn 8: exited with code 3") {
		t.Errorf("the banner's reasons: %q, want the crash's exit", got)
	}
	// Click the answer-time chart where turn 5 is.
	must("click turn 5", chromedp.Evaluate[chromedp.Void](`(() => {
		const c = document.querySelector("#chart-time"), r = c.getBoundingClientRect();
		const frames = document.querySelector("#turn").textContent.match(/\/ (\d+)/)[1];
		const x = 52 + (720 - 52 - 10) * 5 / Number(frames);
		c.dispatchEvent(new MouseEvent("click", { clientX: r.left + x * r.width / 720, clientY: r.top + 60, bubbles: true }));
	})()`))
	if got := eval(`document.querySelector("#turn").textContent`); !strings.HasPrefix(got, "Turn 5 /") {
		t.Errorf("after clicking turn 5 the viewer shows %q", got)
	}
	id := eval(`location.hash.split("/").pop()`)
	want := fmt.Sprintf("arena replay rerun arena-tanks-%s.json --seat 0 --turn 5", id)
	if got := eval(`[...document.querySelectorAll("#turn-panel code.rerun")].map(c => c.textContent).join("\n")`); !strings.Contains(got, want) || !strings.Contains(got, "--seat 1 --turn 5") {
		t.Errorf("the turn panel's commands: %q, want %q and seat 1's", got, want)
	}
	if shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)); err == nil {
		saveArtefact(t, "web-charts.png", shot)
	}

	// The largest seed, typed, plays exactly; two bots that crash at the
	// same turn share the win: a draw, said so on the banner and in the
	// History.
	must("open the form", chromedp.Evaluate[chromedp.Void](`location.hash = ""`), chromedp.WaitVisible(chromedp.CSS(`input[name="bot1"]`)))
	must("play a draw with the largest seed",
		chromedp.SetValue(chromedp.CSS(`input[name="bot0"]`), crasher),
		chromedp.SetValue(chromedp.CSS(`input[name="bot1"]`), crasher),
		chromedp.SetValue(chromedp.CSS("#seed"), "18446744073709551615"),
		chromedp.Click(chromedp.CSS("#start")),
		chromedp.Poll[chromedp.Void](`/seed 18446744073709551615/.test(document.querySelector("#match-title").textContent) && document.querySelector("#result.visible strong") !== null`, chromedp.WithPollingTimeout(60*time.Second)))
	if got := eval(`document.querySelector("#result strong").textContent`); got != "Draw" {
		t.Errorf("the banner of two bots crashing together says %q, want Draw", got)
	}
	drawID := eval(`location.hash.split("/").pop()`)
	row := fmt.Sprintf(`(document.querySelector('#history tr[data-id=%q]') || {textContent: "(no row)"}).textContent`, drawID)
	if _, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](row+`.includes("draw")`, chromedp.WithPollingTimeout(20*time.Second))); err != nil {
		t.Errorf("the draw's row in the History: %q (%v)", eval(row), err)
	}
	// A ladder's registration suggests the images of its game too.
	must("open the Snake ladder", chromedp.Evaluate[chromedp.Void](`location.hash = "#/ladder/snake"`),
		chromedp.WaitVisible(chromedp.CSS("#entry-image")))
	if got := eval(`document.querySelector("#entry-image").getAttribute("list")`); got != "images-snake" {
		t.Errorf("the ladder's image field suggests from %q", got)
	}
}
