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

	"arena/internal/testsupport/dockertest"
	"arena/internal/testsupport/poll"
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
	greedy := dockertest.KitBot(t, cli, "snake-greedy")
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
	rep := replayOf(t, bin, s, tanksID)
	if n := answersLike(rep, 0, `^\[\{"Type":[01],"Direction":[0-3]\}\]$`); n < played/2 {
		t.Errorf("%d of the person's %d answers are Tanks actions", n, played)
	}
	if shots := answersLike(rep, 0, `"Type":1`); shots == 0 {
		t.Error("no shot was recorded")
	}
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
	rep = replayOf(t, bin, s, pacID)
	if n, all := answersLike(rep, 1, `^\{"role":1,"action":"[0-4] [0-4] [0-4]"\}$`), answersLike(rep, 1, ``); n == 0 || n != all {
		t.Errorf("%d of the ghosts' %d answers move three ghosts", n, all)
	}

	must("stop playing the ghosts", chromedp.Evaluate[chromedp.Void](`clearInterval(window.__ghosts)`))

	// Snake: the arrows turn the head, each answer the cell ahead of it
	// (never an invalid move), until the person's snake is out.
	snakeID := s.post(t, fmt.Sprintf(`{"game":"snake","bots":[{"human":true},%q]}`, greedy))
	must("watch the Snake match", chromedp.Navigate(s.url+"/#/match/"+snakeID), chromedp.WaitVisible(chromedp.CSS("#play-panel")))
	moves := 0
	for turn := askedTurn(0); turn > 0; turn = askedTurn(turn) {
		must("turn", chromedp.KeyEvent([]string{kb.ArrowUp, kb.ArrowLeft, kb.ArrowDown, kb.ArrowRight}[(turn/3)%4]))
		if moves++; moves > 300 {
			t.Fatal("the Snake match did not end in 300 moves")
		}
	}
	snake := s.waitStatus(t, snakeID, "finished")
	mine := snake["result"].(map[string]any)["bots"].([]any)[0].(map[string]any)
	if mine["status"] != "ok" || mine["death_reason"] == "invalid" {
		t.Errorf("the person's snake: %v", mine)
	}
	rep = replayOf(t, bin, s, snakeID)
	if n := answersLike(rep, 0, `^\{"X":-?\d+,"Y":-?\d+\}$`); n != moves {
		t.Errorf("%d of the person's %d Snake answers are cells", n, moves)
	}

	// A challenge, from the ladder's Challenge link: the form names the
	// entry, and the challenge's view counts its games as they end.
	if status, e := s.call(t, "POST", "/api/ladders/tanks/entries", fmt.Sprintf(`{"name":"hunter","image":%q}`, hunter)); status != http.StatusCreated {
		t.Fatalf("the hunter's entry: %d %v", status, e)
	}
	must("challenge the hunter from the ladder",
		chromedp.Navigate(s.url+"/#/ladder/tanks"),
		chromedp.WaitVisible(chromedp.CSS("#leaderboard a.challenge")),
		chromedp.Click(chromedp.CSS("#leaderboard a.challenge")),
		chromedp.WaitVisible(chromedp.CSS("#challenge-form")),
		chromedp.Poll[chromedp.Void](`document.querySelector("#challenge-opponent").value.startsWith("hunter")`, chromedp.WithPollingTimeout(10*time.Second)),
		chromedp.SetValue(chromedp.CSS("#challenge-bot"), random),
		chromedp.SetValue(chromedp.CSS("#challenge-games"), "2"),
		chromedp.Click(chromedp.CSS("#challenge-submit")),
		chromedp.Poll[chromedp.Void](`/^#\/challenges\/\d+$/.test(location.hash) && document.querySelectorAll("#challenge-games tbody tr").length === 2`, chromedp.WithPollingTimeout(20*time.Second)),
		chromedp.Poll[chromedp.Void](`!document.querySelector("#challenge-summary").textContent.includes("to play")`, chromedp.WithPollingTimeout(3*time.Minute)))
	if got := eval(`document.querySelector("#challenge-summary").textContent`); !regexp.MustCompile(`: \d won, \d drawn, \d lost`).MatchString(got) || !strings.Contains(got, "2 games") {
		t.Errorf("the challenge's summary: %q", got)
	}
	if got := eval(`[...document.querySelectorAll("#challenge-games tbody tr")].map(r => r.cells[3].textContent).join(" ")`); got != "1 2" {
		t.Errorf("the challenger's seats: %q, want 1 2", got)
	}

	// An idle person is faulted after the people's turn (10 s here).
	idleID := s.post(t, fmt.Sprintf(`{"game":"tanks","bots":[{"human":true},%q]}`, hunter))
	must("watch the idle match", chromedp.Navigate(s.url+"/#/match/"+idleID), chromedp.WaitVisible(chromedp.CSS("#play-panel")))
	must("the idle match ends", chromedp.Poll[chromedp.Void](`document.querySelector("#result.visible") !== null`, chromedp.WithPollingTimeout(60*time.Second)))
	if got := eval(`document.querySelector("#result").textContent`); !strings.Contains(got, "timeout at turn 1") || !strings.Contains(got, "no answer within 10s") {
		t.Errorf("the idle person's banner: %q", got)
	}
	// The panel learns it from its own request, which may come in after
	// the banner's.
	poll.Until(t, 10*time.Second, func() error {
		if got := eval(status); got != "The match is over." {
			return fmt.Errorf("the idle person's panel says %q", got)
		}
		return nil
	})
	replayOf(t, bin, s, idleID)
}

// replayOf downloads a match's replay and checks it with arena replay
// verify.
func replayOf(t *testing.T, bin string, s *server, id string) *matches.Replay {
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
	file := filepath.Join(t.TempDir(), id+".json")
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "replay", "verify", file).CombinedOutput()
	if err != nil || !strings.Contains(string(out), ": ok,") {
		t.Errorf("arena replay verify %s: %v\n%s", id, err, out)
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

// A person plays a logic game on its own player page: the kit's
// tic-tac-toe player says it takes input, is told each question and
// sends the clicked cell (arena:move). A move posted by anything but the
// player's frame (here the page itself) is ignored.
func TestAPersonPlaysALogicGame(t *testing.T) {
	cli := dockertest.Client(t)
	logic, bot := logicKit(t, cli)
	bin := arenaBinary(t)
	s := startServer(t, bin, t.TempDir(), freePort(t), "--games", "ttt="+logic, "--human-turn", "20s")
	id := s.post(t, fmt.Sprintf(`{"game":"ttt","bots":[{"human":true},%q]}`, bot))

	ctx := newBrowser(t, 1280, 1100)
	must, eval := browserSteps(t, ctx)
	must("watch the match", chromedp.Navigate(s.url+"/#/match/"+id), chromedp.WaitVisible(chromedp.CSS("#player")))
	seat := func() map[string]any {
		res, err := http.Get(s.url + "/api/matches/" + id + "/moves")
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var st map[string]any
		json.NewDecoder(res.Body).Decode(&st)
		if res.StatusCode == http.StatusConflict && strings.Contains(fmt.Sprint(st["error"]), "takes no more moves") {
			return map[string]any{"over": true}
		}
		return st
	}
	waitAsked := func(after float64) map[string]any {
		t.Helper()
		var st map[string]any
		poll.Until(t, 30*time.Second, func() error {
			if st = seat(); !(st["turn"] != nil && st["turn"].(float64) > after || st["over"] == true) {
				return fmt.Errorf("no question after turn %v: %v", after, st)
			}
			return nil
		})
		return st
	}
	st := waitAsked(0)
	// The player was told (it says so in its label).
	must("the player is asked", chromedp.Poll[chromedp.Void](`document.querySelector("#player").title.includes("Your move")`, chromedp.WithPollingTimeout(10*time.Second)))

	// A move from elsewhere than the player's frame changes nothing.
	must("a forged move", chromedp.Evaluate[chromedp.Void](`window.postMessage({type: "arena:move", answer: "0 0"}, "*")`))
	time.Sleep(time.Second) // Sleeps on purpose: proves the forged move is not taken meanwhile.
	if again := seat(); again["turn"] != st["turn"] {
		t.Fatalf("a move posted by the page itself was taken: asked %v, now %v", st["turn"], again["turn"])
	}

	// Click the first empty cell of each board asked, in the player.
	clicks := 0
	for st["over"] != true {
		var ask struct {
			Board [][]int `json:"board"`
		}
		for _, line := range strings.Split(fmt.Sprint(st["input"]), "\n") {
			if json.Unmarshal([]byte(line), &ask) == nil && len(ask.Board) == 3 {
				break
			}
		}
		row, col := -1, -1
		for r := range ask.Board {
			for c := range ask.Board[r] {
				if row < 0 && ask.Board[r][c] < 0 {
					row, col = r, c
				}
			}
		}
		if row < 0 {
			t.Fatalf("no empty cell in the question %v", st)
		}
		// The player's canvas: 12 px of margin, a caption, 8 px more.
		x := eval(fmt.Sprintf(`String(document.querySelector("#player").getBoundingClientRect().left + 12 + 50 + 100 * %d)`, col))
		y := eval(fmt.Sprintf(`String(document.querySelector("#player").getBoundingClientRect().top + 37 + 50 + 100 * %d)`, row))
		var fx, fy float64
		fmt.Sscan(x, &fx)
		fmt.Sscan(y, &fy)
		turn := st["turn"].(float64)
		must(fmt.Sprintf("click cell %d %d", row, col), chromedp.MouseClickXY(fx, fy))
		clicks++
		st = waitAsked(turn)
		if clicks > 9 {
			t.Fatal("more than 9 moves in a game of tic-tac-toe")
		}
	}
	m := s.waitStatus(t, id, "finished")
	me := m["result"].(map[string]any)["bots"].([]any)[0].(map[string]any)
	if me["status"] != "ok" || me["id"] != "human:admin" {
		t.Errorf("the person's seat: %v", me)
	}
	rep := replayOf(t, bin, s, id)
	if n := answersLike(rep, 0, `^[0-2] [0-2]$`); n != clicks {
		t.Errorf("%d of the person's %d clicks are in the replay", n, clicks)
	}
}
