package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"arena/internal/testsupport/dockertest"
	"arena/internal/testsupport/poll"
)

// leavingPlayer is a logic's player that goes to another page (another
// origin) when it gets its first frame.
const leavingPlayer = `<!doctype html><script>
addEventListener("message", (e) => {
  if (e.data && e.data.type === "arena:frame") location = %q;
});
</script>`

// elsewhere is the page the player goes to: it reports its load and
// every message it gets to the server it came from.
const elsewhere = `<!doctype html><script>
fetch("/loaded");
addEventListener("message", (e) => fetch("/got?type=" + encodeURIComponent((e.data && e.data.type) || "?")));
</script>`

// A logic's player that navigates itself to another page is torn down:
// the page it went to gets no frame, however the match is stepped
// through, and the viewer shows the match in the plain view, saying why.
func TestAPlayerThatLeavesItsPageIsTornDown(t *testing.T) {
	cli := dockertest.Client(t)
	logic, bot := dockertest.RelayImages(t, cli)
	var mu sync.Mutex
	var heard []string
	away := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		heard = append(heard, r.URL.RequestURI())
		mu.Unlock()
		w.Header().Set("Access-Control-Allow-Origin", "*")
		if r.URL.Path == "/" {
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, elsewhere)
		}
	}))
	defer away.Close()
	got := func(prefix string) int {
		mu.Lock()
		defer mu.Unlock()
		n := 0
		for _, h := range heard {
			if strings.HasPrefix(h, prefix) {
				n++
			}
		}
		return n
	}
	nav := dockertest.Build(t, cli, "arena-test/relaylogic-leaving", "FROM "+logic+"\nCOPY index.html /leave/index.html\nLABEL io.arena.player=/leave\n",
		map[string]string{"index.html": fmt.Sprintf(leavingPlayer, away.URL+"/")})
	s := startServer(t, arenaBinary(t), t.TempDir(), freePort(t), "--games", "leaving="+nav)
	status, m := s.call(t, "POST", "/api/matches", fmt.Sprintf(`{"game":"leaving","bots":[%q,%q],"settings":{"rounds":20}}`, bot, bot))
	if status != 201 {
		t.Fatalf("a match: %d %v", status, m)
	}
	id := m["id"].(string)
	s.waitStatus(t, id, "finished", "failed")

	ctx := newBrowser(t, 1280, 900)
	if err := chromedp.Do(ctx, chromedp.Navigate(s.url+"/#/match/"+id)); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, 30*time.Second, func() error {
		if got("/loaded") == 0 {
			state, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`(() => { const p = document.querySelector("#player");
				return "turn " + document.querySelector("#turn").textContent + ", the player's iframe hidden " + p.hidden + ", src " + p.getAttribute("src"); })()`))
			return fmt.Errorf("the player did not leave its page: %v; %s", heard, state)
		}
		return nil
	})
	type view struct {
		Player, Note, Board bool
		Src                 string
	}
	var v view
	poll.Until(t, 30*time.Second, func() error {
		var err error
		v, err = chromedp.Run(ctx, chromedp.Evaluate[view](`(() => { const p = document.querySelector("#player");
			return {Player: !p.hidden, Note: !document.querySelector("#player-note").hidden, Board: !document.querySelector("#board").hidden, Src: p.getAttribute("src")}; })()`))
		if err != nil {
			return err
		}
		if v.Player || !v.Note || !v.Board || v.Src != "about:blank" {
			return fmt.Errorf("the player is not torn down: %+v", v)
		}
		return nil
	})
	// Stepped through, the match sends the page elsewhere nothing.
	for _, key := range []string{"b", "B", "n", "n", "b"} {
		if err := chromedp.Do(ctx, chromedp.KeyEvent(key)); err != nil {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Millisecond) // Sleeps on purpose: paces the keys, a step at a time.
	}
	time.Sleep(500 * time.Millisecond) // Sleeps on purpose: time for a message to arrive, which none must.
	if n := got("/got"); n != 0 {
		t.Errorf("the page the player went to got %d messages: %v", n, heard)
	}
	if png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)); err == nil {
		saveArtefact(t, "player-left.png", png)
	}
}

// A finished match shown by its game's own player, opened from another
// of the page's views, is read as any match is (a slice of its frames an
// animation frame), not a frame an animation frame: 2,000 frames would
// take over half a minute at 60 a second.
func TestAPlayersMatchIsReadWhole(t *testing.T) {
	cli := dockertest.Client(t)
	logic, bot := dockertest.RelayImages(t, cli)
	player := dockertest.Build(t, cli, "arena-test/relaylogic-player", "FROM "+logic+"\nCOPY index.html /player/index.html\nLABEL io.arena.player=/player\n",
		map[string]string{"index.html": "<!doctype html><title>a player</title><p>the board"})
	s := startServer(t, arenaBinary(t), t.TempDir(), freePort(t), "--games", "shown="+player)
	status, m := s.call(t, "POST", "/api/matches", fmt.Sprintf(`{"game":"shown","bots":[%q,%q],"settings":{"rounds":2000}}`, bot, bot))
	if status != 201 {
		t.Fatalf("a match: %d %v", status, m)
	}
	id := m["id"].(string)
	if m := s.waitStatus(t, id, "finished", "failed"); m["status"] != "finished" {
		t.Fatalf("the match: %v", m)
	}
	ctx := newBrowser(t, 1280, 900)
	must, eval := browserSteps(t, ctx)
	// The page first, with its list of games (and so of players).
	must("open the page", chromedp.Navigate(s.url), chromedp.WaitVisible(chromedp.CSS(`#bot-fields input[name="bot1"]`)),
		chromedp.Poll[chromedp.Void](`[...document.querySelectorAll("#game option")].some((o) => o.value === "shown")`, chromedp.WithPollingTimeout(10*time.Second)))
	start := time.Now()
	if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`location.hash = "#/match/`+id+`"`),
		chromedp.Poll[chromedp.Void](`/^Turn (\d+) \/ \1$/.test(document.querySelector("#turn").textContent)`, chromedp.WithPollingTimeout(15*time.Second))); err != nil {
		t.Fatalf("the match's frames not all read in 15 s: %v; the viewer: %s", err, eval(viewerState))
	}
	t.Logf("read whole in %v: %s", time.Since(start).Round(time.Millisecond), eval(`document.querySelector("#turn").textContent`))
	if v := eval(`(() => { const p = document.querySelector("#player"); return p.hidden + " " + p.getAttribute("src"); })()`); !strings.HasPrefix(v, "false /games/shown/player/") {
		t.Errorf("the player's iframe (hidden, src): %s", v)
	}
}
