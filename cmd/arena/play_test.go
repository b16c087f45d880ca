package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"arena/internal/dockertest"
	"arena/matches"
)

// A person plays in Chromium: a whole Tanks match against the hunter
// from the match form's "Play it yourself", with the keyboard; a Pac-Man
// match as the ghosts, three moves at once, with keys and the pad; an
// idle person faulted after the people's turn time. Each replay
// verifies, and a match of two bots started by hand while the person
// thinks plays at once (one match slot, and the person's takes none).
func TestAPersonPlaysInTheBrowser(t *testing.T) {
	cli := dockertest.Client(t)
	bots := dockertest.ExampleBots(t, cli)
	random, hunter := bots[0], bots[1]
	runner := dockertest.KitBot(t, cli, "pacman-runner")
	bin := arenaBinary(t)
	s := startServer(t, bin, t.TempDir(), freePort(t), "--concurrency", "1", "--human-turn", "10s")

	ctx := newBrowser(t, 1300, 1300)
	must, eval := browserSteps(t, ctx)
	status := `document.querySelector("#play-status").textContent`
	// askedTurn waits for the seat to be asked for a turn after last, or
	// for the match to end (0).
	askedTurn := func(last int) int {
		t.Helper()
		js := fmt.Sprintf(`(() => { const m = %s.match(/^Your move: turn (\d+)/); return document.querySelector("#result.visible") !== null || (m !== null && Number(m[1]) > %d); })()`, status, last)
		must(fmt.Sprintf("the question after turn %d", last), chromedp.Poll[chromedp.Void](js, chromedp.WithPollingTimeout(30*time.Second)))
		if m := regexp.MustCompile(`^Your move: turn (\d+)`).FindStringSubmatch(eval(status)); m != nil && eval(`String(document.querySelector("#result.visible") === null)`) == "true" {
			var n int
			fmt.Sscan(m[1], &n)
			return n
		}
		return 0
	}

	// Tanks, from the form: the visitor plays seat 1, the hunter seat 2.
	must("open the form", chromedp.Navigate(s.url), chromedp.WaitVisible(chromedp.CSS(`#bot-fields input[name="bot1"]`)))
	must("play it myself",
		chromedp.SetValue(chromedp.CSS(`input[name="bot1"]`), hunter),
		chromedp.Click(chromedp.CSS("#play-myself")),
		chromedp.Click(chromedp.CSS("#start")),
		chromedp.WaitVisible(chromedp.CSS("#play-panel")))
	turn := askedTurn(0)
	if turn != 1 {
		t.Fatalf("the first question: %q", eval(status))
	}
	tanksID := eval(`location.hash.split("/").pop()`)
	if m := s.get(t, tanksID); fmt.Sprint(m["bots"]) != fmt.Sprintf("[human:admin %s]", hunter) {
		t.Errorf("the match's seats: %v", m["bots"])
	}
	// While the person thinks, two bots play a match started by hand, in
	// the server's one slot.
	other := s.post(t, fmt.Sprintf(`{"game":"tanks","bots":[%q,%q],"settings":{"zone_radius":0}}`, random, hunter))
	if m := s.waitStatus(t, other, "finished", "failed"); m["status"] != "finished" {
		t.Errorf("the bots' match: %v", m)
	}
	if m := s.get(t, tanksID); m["status"] != "running" {
		t.Errorf("the person's match is %v, want running still", m["status"])
	}
	// Every turn a key: moves, and a shot (Shift) every third.
	keys := []string{kb.ArrowLeft, kb.ArrowUp, kb.ArrowRight, kb.ArrowDown}
	played := 0
	for ; turn > 0; turn = askedTurn(turn) {
		if turn%3 == 0 {
			must("shoot", chromedp.KeyEvent(kb.ArrowUp, chromedp.KeyModifiers(chromedp.ModifierShift)))
		} else {
			must("move", chromedp.KeyEvent(keys[turn%len(keys)]))
		}
		played++
		if played > 500 {
			t.Fatalf("the Tanks match did not end in 500 turns: %q", eval(status))
		}
	}
	must("the result", chromedp.WaitVisible(chromedp.CSS("#result.visible")))
	tanks := s.waitStatus(t, tanksID, "finished")
	me := tanks["result"].(map[string]any)["bots"].([]any)[0].(map[string]any)
	if me["status"] != "ok" || me["id"] != "human:admin" || played < 3 {
		t.Errorf("the person's seat after %d moves: %v", played, me)
	}
	rep := replayOf(t, s, tanksID)
	if n := answersLike(rep, 0, `^\[\{"Type":[01],"Direction":[0-3]\}\]$`); n < played/2 {
		t.Errorf("%d of the person's %d answers are Tanks actions", n, played)
	}
	if shots := answersLike(rep, 0, `"Type":1`); shots == 0 {
		t.Error("no shot was recorded")
	}
	verify(t, bin, s, tanksID)
	if shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(80)); err == nil {
		saveArtefact(t, "play-tanks.png", shot)
	}

	// Pac-Man as the ghosts: three moves a turn, by keys (arrows, the
	// third sends) and now and then by the pad (pointer).
	pacID := s.post(t, fmt.Sprintf(`{"game":"pacman","bots":[%q,{"human":true}]}`, runner))
	must("watch the Pac-Man match", chromedp.Navigate(s.url+"/#/match/"+pacID), chromedp.WaitVisible(chromedp.CSS("#play-panel")))
	if got := eval(`document.querySelectorAll(".ghosts button").length + " " + document.querySelectorAll(".pad button").length`); got != "4 5" {
		t.Errorf("the ghosts' pad has %s buttons (ghosts + send, directions)", got)
	}
	// The page plays on its own from here, as fast as it is asked: keys
	// on most turns, the pad's buttons on every fifth.
	must("play the ghosts", chromedp.Evaluate[chromedp.Void](`(() => {
		let last = 0;
		const arrows = ["ArrowUp", "ArrowLeft", "ArrowDown", "ArrowRight"];
		window.__ghosts = setInterval(() => {
			const m = document.querySelector("#play-status").textContent.match(/^Your move: turn (\d+)/);
			if (!m || Number(m[1]) === last) return;
			last = Number(m[1]);
			for (let g = 0; g < 3; g++) {
				const dir = arrows[(last + g) % 4];
				if (last % 5 === 0) document.querySelector(".pad-" + dir.slice(5).toLowerCase()).click();
				else document.dispatchEvent(new KeyboardEvent("keydown", { key: dir, bubbles: true }));
			}
		}, 5);
	})()`))
	must("the Pac-Man match ends", chromedp.Poll[chromedp.Void](`document.querySelector("#result.visible") !== null`, chromedp.WithPollingTimeout(8*time.Minute)))
	pac := s.waitStatus(t, pacID, "finished")
	ghosts := pac["result"].(map[string]any)["bots"].([]any)[1].(map[string]any)
	if ghosts["status"] != "ok" {
		t.Errorf("the ghosts' seat: %v", ghosts)
	}
	rep = replayOf(t, s, pacID)
	if n, all := answersLike(rep, 1, `^\{"role":1,"action":"[0-4] [0-4] [0-4]"\}$`), answersLike(rep, 1, ``); n == 0 || n != all {
		t.Errorf("%d of the ghosts' %d answers move three ghosts", n, all)
	}
	verify(t, bin, s, pacID)

	// An idle person is faulted after the people's turn (10 s here).
	must("stop playing the ghosts", chromedp.Evaluate[chromedp.Void](`clearInterval(window.__ghosts)`))
	idleID := s.post(t, fmt.Sprintf(`{"game":"tanks","bots":[{"human":true},%q]}`, hunter))
	must("watch the idle match", chromedp.Navigate(s.url+"/#/match/"+idleID), chromedp.WaitVisible(chromedp.CSS("#play-panel")))
	must("the idle match ends", chromedp.Poll[chromedp.Void](`document.querySelector("#result.visible") !== null`, chromedp.WithPollingTimeout(60*time.Second)))
	if got := eval(`document.querySelector("#result").textContent`); !strings.Contains(got, "timeout at turn 1") || !strings.Contains(got, "no answer within 10s") {
		t.Errorf("the idle person's banner: %q", got)
	}
	if got := eval(status); got != "The match is over." {
		t.Errorf("the idle person's panel says %q", got)
	}
	verify(t, bin, s, idleID)
}

// replayOf downloads a match's replay.
func replayOf(t *testing.T, s *server, id string) *matches.Replay {
	t.Helper()
	res, err := http.Get(s.url + "/api/matches/" + id + "/replay")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	data, _ := io.ReadAll(res.Body)
	var rep matches.Replay
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatalf("replay of %s: %v", id, err)
	}
	return &rep
}

// answersLike counts a seat's answers that match a pattern.
func answersLike(rep *matches.Replay, seat int, pattern string) int {
	re := regexp.MustCompile(pattern)
	n := 0
	for _, f := range rep.Frames {
		for _, b := range f.Bots {
			if b.Seat == seat && b.Asked && b.Answer != "" && re.MatchString(b.Answer) {
				n++
			}
		}
	}
	return n
}

// verify checks a match's replay with arena replay verify.
func verify(t *testing.T, bin string, s *server, id string) {
	t.Helper()
	res, err := http.Get(s.url + "/api/matches/" + id + "/replay")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	file := filepath.Join(t.TempDir(), id+".json")
	data, _ := io.ReadAll(res.Body)
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "replay", "verify", file).CombinedOutput()
	if err != nil || !strings.Contains(string(out), ": ok,") {
		t.Errorf("arena replay verify %s: %v\n%s", id, err, out)
	}
}
