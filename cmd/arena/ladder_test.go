package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"arena/internal/testsupport/dockertest"
	"arena/internal/testsupport/poll"
)

func (s *server) call(t testing.TB, method, path, body string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(method, s.url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var m map[string]any
	json.NewDecoder(res.Body).Decode(&m)
	return res.StatusCode, m
}

// boardOrder is the leaderboard's entry names, best first.
func boardOrder(b map[string]any) []string {
	var names []string
	for _, e := range b["entries"].([]any) {
		names = append(names, e.(map[string]any)["name"].(string))
	}
	return names
}

// kendall compares a ranking with the known order of the same names.
func kendall(got, want []string) float64 {
	agree, pairs := 0, 0
	for i := range want {
		for j := i + 1; j < len(want); j++ {
			pairs++
			if slices.Index(got, want[i]) < slices.Index(got, want[j]) {
				agree++
			} else {
				agree--
			}
		}
	}
	return float64(agree) / float64(pairs)
}

// The ladder with real bots in real containers: registered by image
// name, played by image id, it ranks bots of known strength in their
// order (the hunter beats the random bot, which beats a bot that never
// moves; a bot that crashes loses to all), counts the crashes, and its
// ratings recompute to the same numbers once the server is stopped.
func TestLadderWithRealBots(t *testing.T) {
	cli := dockertest.Client(t)
	bots := dockertest.ExampleBots(t, cli)
	idle := dockertest.TestBot(t, cli, "delay=1ms")
	crasher := dockertest.TestBot(t, cli, "exit-at=3")
	bin := arenaBinary(t)
	data := t.TempDir()
	// One match at a time: on two shared cores, more make the bots time
	// out, and timeouts are losses.
	s := startServer(t, bin, data, freePort(t), "--concurrency", "1")
	want := []string{"hunter", "random", "idle", "crasher"}
	for name, image := range map[string]string{"hunter": bots[1], "random": bots[0], "idle": idle, "crasher": crasher} {
		if status, e := s.call(t, "POST", "/api/ladders/tanks/entries", fmt.Sprintf(`{"name":%q,"image":%q}`, name, image)); status != 201 || !strings.HasPrefix(e["image_id"].(string), "sha256:") {
			t.Fatalf("register %s: %d %v", name, status, e)
		}
	}
	start := time.Now()
	converged, rated := -1, 0
	var b map[string]any
	// The board every half second (when its order converged is told by
	// what was seen then), up to 24 rated matches; fewer after five
	// minutes are judged below, once the board is logged.
	_ = poll.Every(500*time.Millisecond, 5*time.Minute, func() error {
		_, b = s.call(t, "GET", "/api/ladders/tanks", "")
		rated = int(b["rated"].(float64))
		if tau := kendall(boardOrder(b), want); tau >= 0.8 {
			if converged < 0 {
				converged = rated
			}
		} else {
			converged = -1
		}
		if rated < 24 {
			return fmt.Errorf("%d rated matches", rated)
		}
		return nil
	})
	took := time.Since(start)
	t.Logf("%d rated matches in %v; board %v; τ ≥ 0.8 from match %d on", rated, took.Round(time.Second), boardOrder(b), converged)
	for _, e := range b["entries"].([]any) {
		e := e.(map[string]any)
		f := e["faults"].(map[string]any)
		t.Logf("  #%v %-8v rating %6.2f μ %6.2f σ %5.2f  %v matches %v/%v/%v  timeout %.0f%% crash %.0f%%", e["rank"], e["name"], e["rating"], e["mu"], e["sigma"], e["matches"], e["wins"], e["draws"], e["losses"],
			f["timeout"].(map[string]any)["percent"], f["crash"].(map[string]any)["percent"])
	}
	if rated < 24 {
		t.Fatalf("only %d rated matches in %v", rated, took)
	}
	if converged < 0 {
		t.Errorf("the board %v does not agree with the known order %v (τ %.2f)", boardOrder(b), want, kendall(boardOrder(b), want))
	}
	last := b["entries"].([]any)[3].(map[string]any)
	if crash := last["faults"].(map[string]any)["crash"].(map[string]any); last["name"] != "crasher" || crash["percent"].(float64) != 100 {
		t.Errorf("the crasher: %v", last)
	}
	// A match of the entries' images, under their references, with the
	// entries' names.
	id := b["recent"].([]any)[0].(map[string]any)["match_id"].(string)
	m := s.get(t, id)
	if m["status"] != "finished" || len(m["ladder"].([]any)) < 2 {
		t.Errorf("a ladder match: %v", m)
	}
	for _, bot := range m["bots"].([]any) {
		if !slices.Contains([]string{bots[0], bots[1], idle, crasher}, bot.(string)) {
			t.Errorf("a ladder bot named %q", bot)
		}
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	s.cmd.Wait()
	out, err := exec.Command(bin, "ladder", "recompute", "tanks", "--data", data).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "by 0 at most") {
		t.Errorf("arena ladder recompute: %v\n%s", err, out)
	}
	t.Logf("arena ladder recompute tanks:\n%s", out)
}

// The ladder's page in a real browser: register two bots in the form,
// watch the leaderboard fill in by itself as the ladder plays, open an
// entry's page (its rating plot, its matches), and open one of its
// matches in the viewer.
func TestLadderBrowser(t *testing.T) {
	cli := dockertest.Client(t)
	bots := dockertest.ExampleBots(t, cli)
	s := startServer(t, arenaBinary(t), t.TempDir(), freePort(t), "--concurrency", "2")

	ctx := newBrowser(t, 1400, 1100)
	must := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, steps...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	poll := func(what, js string, timeout time.Duration) {
		t.Helper()
		if _, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](js, chromedp.WithPollingTimeout(timeout))); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	shot := func(name string) {
		if png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)); err == nil {
			saveArtefact(t, name, png)
		}
	}

	// The header settles once the page knows who is here (its account
	// menu): a click before that may land on a link that moved.
	must("open the ladder", chromedp.Navigate(s.url), chromedp.WaitVisible(chromedp.CSS("#account-menu a")),
		chromedp.Click(chromedp.CSS("#nav-ladders")), chromedp.WaitVisible(chromedp.CSS("#entry-form")))
	poll("the empty board", `document.querySelector("#ladder-why").textContent.includes("two entries or more")`, 10*time.Second)
	for _, e := range []struct{ name, image string }{{"hunter", bots[1]}, {"random", bots[0]}} {
		must("register "+e.name,
			chromedp.SetValue(chromedp.CSS("#entry-name"), e.name),
			chromedp.SetValue(chromedp.CSS("#entry-image"), e.image),
			chromedp.Click(chromedp.CSS("#register")))
		poll(e.name+" on the board", fmt.Sprintf(`[...document.querySelectorAll("#leaderboard tbody tr")].some(tr => tr.textContent.includes(%q))`, e.name), 10*time.Second)
	}
	// A name taken by another image is refused, with the reason shown.
	must("register a taken name",
		chromedp.SetValue(chromedp.CSS("#entry-name"), "hunter"),
		chromedp.SetValue(chromedp.CSS("#entry-image"), bots[0]),
		chromedp.Click(chromedp.CSS("#register")))
	poll("the refusal", `document.querySelector("#entry-error").textContent.includes("hunter is registered with image")`, 10*time.Second)

	// The board updates by itself: no reload, matches get played and rated.
	poll("the ladder running", `document.querySelector("#ladder-status").textContent === "running"`, 10*time.Second)
	poll("a match playing or next", `document.querySelectorAll("#upcoming a").length > 0 && document.querySelector("#upcoming").textContent.includes("least certain")`, 30*time.Second)
	poll("three rated matches", `(() => {
		const rows = [...document.querySelectorAll("#leaderboard tbody tr")];
		return rows.length === 2 && rows.every(tr => Number(tr.children[6].textContent) >= 3);
	})()`, 3*time.Minute)
	board, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("#leaderboard tbody tr")].map(tr => [...tr.children].slice(0, 8).map(td => td.textContent.trim().replace(/\s+/g, " ")).join(" | "))`))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("leaderboard:\n  %s", strings.Join(board, "\n  "))
	shot("ladder-board.png")

	// An entry's page: the plot has a line on it, its matches are listed.
	// The board is drawn again as matches are rated: the link is clicked
	// as it is now.
	poll("the hunter's page opened", `(() => {
		const a = document.querySelector('#leaderboard a[href$="/entry/1"]');
		if (a && document.querySelector("#entry-view").hidden) a.click();
		return !document.querySelector("#entry-view").hidden;
	})()`, 10*time.Second)
	poll("the entry's matches", `document.querySelectorAll("#entry-matches tbody tr").length >= 3 && document.querySelector("#entry-title").textContent.includes("hunter")`, 10*time.Second)
	blue, err := chromedp.Run(ctx, chromedp.Evaluate[int](`(() => {
		const c = document.querySelector("#rating-plot");
		const d = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
		let n = 0;
		for (let i = 0; i < d.length; i += 4) if (d[i] < 80 && d[i+1] > 80 && d[i+1] < 130 && d[i+2] > 200) n++;
		return n;
	})()`))
	if err != nil || blue < 50 {
		t.Errorf("the rating plot has %d pixels of its line (%v)", blue, err)
	}
	if opp, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#entry-opponents tbody"))); err != nil || !strings.Contains(opp, "random") {
		t.Errorf("opponents: %q %v", opp, err)
	}
	shot("ladder-entry.png")

	// One of its matches, in the viewer, with the entries' names.
	must("open a match", chromedp.Click(chromedp.CSS(`#entry-matches tbody tr a[href^="#/match/"]`)), chromedp.WaitVisible(chromedp.CSS("#viewer")))
	poll("the match's result", `document.querySelector("#result").classList.contains("visible") && document.querySelector("#match-title").textContent.includes("ladder")`, 30*time.Second)
	legend, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#legend")))
	if err != nil || !strings.Contains(legend, "hunter") || !strings.Contains(legend, "random") {
		t.Errorf("the viewer's legend: %q %v", legend, err)
	}
	if hidden := mustText(t, ctx, "#ladder"); !strings.Contains(hidden, "leaderboard") {
		t.Logf("ladder section: %.80q", hidden)
	}
	shot("ladder-match.png")
}

func mustText(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[string](fmt.Sprintf(`(document.querySelector(%q) || {}).textContent || ""`, sel)))
	if err != nil {
		t.Fatalf("read %s: %v", sel, err)
	}
	return v
}

// Ladder bots play under their images' names, as in a match started by
// hand: a bot that finds its tank by its image's name, as the original
// TankFight bots do, plays its ladder matches ok (it crashed at turn 1
// of every one when the ladder named bots by image id).
func TestLadderBotsFindThemselvesByName(t *testing.T) {
	cli := dockertest.Client(t)
	base := dockertest.TestBot(t, cli, "find-self")
	s := startServer(t, arenaBinary(t), t.TempDir(), freePort(t), "--concurrency", "1")
	for _, name := range []string{"a", "b"} {
		ref := "arena-test/selfbot:" + name
		dockertest.Build(t, cli, ref, "FROM "+base+"\nENV ARENA_TEST_SELF="+ref+"\n", nil)
		if status, e := s.call(t, "POST", "/api/ladders/tanks/entries", fmt.Sprintf(`{"name":"self-%s","image":%q}`, name, ref)); status != 201 {
			t.Fatalf("register %s: %d %v", ref, status, e)
		}
	}
	var b map[string]any
	poll.Until(t, 2*time.Minute, func() error {
		_, b = s.call(t, "GET", "/api/ladders/tanks", "")
		if rated, _ := b["rated"].(float64); rated < 2 {
			return fmt.Errorf("no ladder match rated: %v", b)
		}
		return nil
	})
	for _, e := range b["entries"].([]any) {
		e := e.(map[string]any)
		f := e["faults"].(map[string]any)
		if crash := f["crash"].(map[string]any)["percent"].(float64); crash != 0 {
			t.Errorf("%s crashed in %.0f%% of its matches: %v", e["name"], crash, e)
		}
	}
	// And the match says so: each bot under its image's name, ok.
	_, list := s.call(t, "GET", "/api/matches", "")
	finished := 0
	for _, m := range list["matches"].([]any) {
		m := m.(map[string]any)
		if m["status"] != "finished" {
			continue
		}
		finished++
		for _, bot := range m["result"].(map[string]any)["bots"].([]any) {
			bot := bot.(map[string]any)
			if bot["status"] != "ok" || !strings.HasPrefix(bot["id"].(string), "arena-test/selfbot:") {
				t.Errorf("a ladder bot: %s %s (%v)", bot["id"], bot["status"], bot["fault_detail"])
			}
		}
	}
	if finished < 2 {
		t.Errorf("%d matches finished: %v", finished, list)
	}
}
