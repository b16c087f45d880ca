package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"arena/internal/testsupport/dockertest"
	"arena/matches"
)

// A kit bot that draws what it thinks (the Go kit's bot: a ring around
// its tank, a line to the nearest enemy) shows it on the board, as the
// kit's Snake and Pac-Man bots do on theirs; a bot
// writing annotations that do not read breaks nothing, its lines counted
// and drawn as nothing (but the one sane cell, in its own colour); a
// seat's number key and its box hide and show its bot's; the replay
// keeps them and verifies.
func TestAnnotationsOnTheBoard(t *testing.T) {
	cli := dockertest.Client(t)
	kit := dockertest.KitBot(t, cli, "bot")
	garbage := dockertest.TestBot(t, cli, "bad-annotations")
	bin := arenaBinary(t)
	s := startServer(t, bin, t.TempDir(), freePort(t), "--ladder", "off")
	id := s.post(t, fmt.Sprintf(`{"game":"tanks","bots":[%q,%q],"settings":{"zone_radius":4}}`, kit, garbage))
	if m := s.waitStatus(t, id, "finished", "failed"); m["status"] != "finished" {
		t.Fatalf("the match: %v", m)
	}
	rep := replayOf(t, bin, s, id)
	if n := stderrLike(rep, 0, `#arena {"draw":[{"circle":[`); n == 0 {
		t.Fatal("the kit bot drew nothing in the replay")
	}

	ctx := newBrowser(t, 1280, 1000)
	must, eval := browserSteps(t, ctx)
	must("catch the page's errors", chromedp.Navigate(s.url), chromedp.Evaluate[chromedp.Void](`window.__errors = []; window.addEventListener("error", (e) => window.__errors.push(String(e.message)))`))
	must("open the match at turn 2", chromedp.Evaluate[chromedp.Void](`location.hash = "#/match/`+id+`?turn=2"`),
		chromedp.Poll[chromedp.Void](`document.querySelector("#board").dataset.annotations !== undefined && /^Turn 2 \//.test(document.querySelector("#turn").textContent)`, chromedp.WithPollingTimeout(30*time.Second)))
	count := func() string {
		return eval(`document.querySelector("#board").dataset.annotations + " " + document.querySelector("#board").dataset.annotationsBad`)
	}
	// The kit bot: a ring and a line (the enemy is there at turn 2); the
	// other: one cell, and three lines that do not read.
	if got := count(); got != "3 3" {
		t.Errorf("annotations drawn and lines not read at turn 2: %q, want \"3 3\"", got)
	}
	if got := eval(`[...document.querySelectorAll("#annotations input")].map(i => i.dataset.seat + ":" + i.checked).join(" ")`); got != "0:true 1:true" {
		t.Errorf("the annotations' boxes: %q", got)
	}
	if shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(90)); err == nil {
		saveArtefact(t, "annotations.png", shot)
	}
	must("key 1 hides the kit bot's", chromedp.KeyEvent("1"))
	if got := count(); got != "1 3" || eval(`String(document.querySelector('#annotations input[data-seat="0"]').checked)`) != "false" {
		t.Errorf("after key 1: %q", got)
	}
	must("its box shows them again", chromedp.Click(chromedp.CSS(`#annotations input[data-seat="0"]`)))
	must("the other's box hides its own", chromedp.Click(chromedp.CSS(`#annotations input[data-seat="1"]`)))
	if got := count(); got != "2 3" {
		t.Errorf("after the boxes: %q", got)
	}
	// Through the whole match, nothing broke.
	must("to the last turn", chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`location.hash = "#/match/%s?turn=%d"`, id, rep.Frames[len(rep.Frames)-1].Turn)),
		chromedp.Poll[chromedp.Void](`/^Turn (\d+) \/ \1$/.test(document.querySelector("#turn").textContent)`, chromedp.WithPollingTimeout(20*time.Second)))
	if errs := eval(`window.__errors.join("; ")`); errs != "" {
		t.Errorf("the page's errors: %s", errs)
	}
	// The panel shows the turn's stderr as text, the lines that did not
	// read among it.
	if got := eval(`document.querySelector("#turn-panel").textContent`); !strings.Contains(got, "#arena {not json") {
		t.Errorf("the turn's panel lacks the line that did not read: %.300s", got)
	}

	// The other boards: the Go kit's greedy snake lines up its next cell,
	// its Pac-Man rings itself and shades where a ghost may go.
	for _, g := range []struct{ game, a, b string }{
		{"snake", dockertest.KitBot(t, cli, "snake-greedy"), dockertest.KitBot(t, cli, "snake-greedy")},
		{"pacman", dockertest.KitBot(t, cli, "pacman-runner"), dockertest.KitBot(t, cli, "pacman-ghosts")},
	} {
		id := s.post(t, fmt.Sprintf(`{"game":%q,"bots":[%q,%q]}`, g.game, g.a, g.b))
		if m := s.waitStatus(t, id, "finished", "failed"); m["status"] != "finished" {
			t.Fatalf("the %s match: %v", g.game, m)
		}
		must("open the "+g.game+" match at turn 3", chromedp.Evaluate[chromedp.Void](`location.hash = "#/match/`+id+`?turn=3"`),
			chromedp.Poll[chromedp.Void](`/^Turn 3 \//.test(document.querySelector("#turn").textContent) && Number(document.querySelector("#board").dataset.annotations) > 0`, chromedp.WithPollingTimeout(30*time.Second)))
		if shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(90)); err == nil {
			saveArtefact(t, "annotations-"+g.game+".png", shot)
		}
	}
	if errs := eval(`window.__errors.join("; ")`); errs != "" {
		t.Errorf("the page's errors: %s", errs)
	}
}

// stderrLike counts a seat's turns whose stderr holds text.
func stderrLike(rep *matches.Replay, seat int, text string) int {
	n := 0
	for _, f := range rep.Frames {
		for _, b := range f.Bots {
			if b.Seat == seat && strings.Contains(b.Stderr, text) {
				n++
			}
		}
	}
	return n
}
