package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/client"

	"arena/internal/testsupport/dockertest"
	"arena/internal/testsupport/poll"
	"arena/sandbox"
)

// server is a real `arena serve` process on a loopback port.
type server struct {
	cmd    *exec.Cmd
	url    string
	stderr *bytes.Buffer
}

func freePort(t testing.TB) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func startServer(t testing.TB, bin, data string, port int, flags ...string) *server {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"serve", "--port", strconv.Itoa(port), "--data", data, "--log-level", "info"}, flags...)...)
	s := &server{cmd: cmd, url: fmt.Sprintf("http://127.0.0.1:%d", port), stderr: new(bytes.Buffer)}
	cmd.Stderr = s.stderr
	// A test binary killed (a timeout, ^C) takes its servers with it: an
	// orphan would go on playing and starting containers beside the next
	// run. SIGTERM: the server removes its containers as it stops.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// SIGTERM first, as a service manager stops it: the server removes
		// its warm pool's containers (SIGKILL leaves them to the next
		// run's sweep); SIGKILL, failing the test, if it has not stopped
		// within 20 s.
		done := make(chan struct{})
		go func() {
			cmd.Wait()
			close(done)
		}()
		if cmd.Process.Signal(syscall.SIGTERM) == nil {
			select {
			case <-done:
			case <-time.After(20 * time.Second):
				t.Errorf("the server (pid %d) did not stop within 20 s of SIGTERM", cmd.Process.Pid)
				cmd.Process.Kill()
			}
		}
		<-done
		// A server that stopped as asked (not one a test killed) leaves
		// no container of its own behind.
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && !(ws.Signaled() && ws.Signal() == syscall.SIGKILL) && !testing.Short() {
			if cli, err := sandbox.Connect(); err == nil {
				if left := containersOf(t, cli, cmd.Process.Pid); len(left) > 0 {
					t.Errorf("the server (pid %d) stopped and left containers behind: %v", cmd.Process.Pid, left)
				}
				removePulled(cli, fmt.Sprintf("127.0.0.1:%d/", port))
				cli.Close()
			}
		}
		if t.Failed() {
			t.Logf("server log:\n%s", s.stderr.String())
		}
	})
	s.waitHealthy(t)
	return s
}

// removePulled removes from the engine the versions a test's server
// pulled from its registry (host/REPO:sha256-…): its data, and so its
// registry, goes with the test.
func removePulled(cli *client.Client, host string) {
	ctx := context.Background()
	imgs, err := cli.ImageList(ctx, image.ListOptions{})
	if err != nil {
		return
	}
	for _, img := range imgs {
		for _, ref := range img.RepoTags {
			if strings.HasPrefix(ref, host) {
				cli.ImageRemove(ctx, ref, image.RemoveOptions{})
			}
		}
	}
}

// waitHealthy waits until the server's /healthz answers 200.
func (s *server) waitHealthy(t testing.TB) {
	t.Helper()
	poll.Until(t, 20*time.Second, func() error {
		res, err := http.Get(s.url + "/healthz")
		if err != nil {
			return fmt.Errorf("the server did not come up: %v\n%s", err, s.stderr.String())
		}
		res.Body.Close()
		if res.StatusCode != 200 {
			return fmt.Errorf("the server did not come up: %s\n%s", res.Status, s.stderr.String())
		}
		return nil
	})
}

func (s *server) post(t testing.TB, body string) string {
	t.Helper()
	res, err := http.Post(s.url+"/api/matches", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var m map[string]any
	json.NewDecoder(res.Body).Decode(&m)
	if res.StatusCode != 201 {
		t.Fatalf("create: %d %v", res.StatusCode, m)
	}
	return m["id"].(string)
}

func (s *server) get(t testing.TB, id string) map[string]any {
	t.Helper()
	res, err := http.Get(s.url + "/api/matches/" + id)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var m map[string]any
	json.NewDecoder(res.Body).Decode(&m)
	return m
}

func (s *server) waitStatus(t testing.TB, id string, want ...string) map[string]any {
	t.Helper()
	var m map[string]any
	poll.Until(t, 60*time.Second, func() error {
		m = s.get(t, id)
		for _, w := range want {
			if m["status"] == w {
				return nil
			}
		}
		return fmt.Errorf("match %s never reached %v: %v", id, want, m)
	})
	return m
}

func matchContainers(t *testing.T, cli *client.Client, id string) int {
	return len(dockertest.ArenaContainers(t, cli, id))
}

// A server killed mid-match: on restart the match is failed
// ("interrupted"), its containers are gone, and the history is intact.
func TestServerRestartAfterAKill(t *testing.T) {
	cli := dockertest.Client(t)
	bots := dockertest.ExampleBots(t, cli)
	slow := dockertest.TestBot(t, cli, "delay=60ms")
	bin := arenaBinary(t)
	data, port := t.TempDir(), freePort(t)

	s := startServer(t, bin, data, port)
	done := s.post(t, fmt.Sprintf(`{"game":"tanks","bots":[%q,%q]}`, bots[0], bots[1]))
	s.waitStatus(t, done, "finished")
	running := s.post(t, fmt.Sprintf(`{"game":"tanks","bots":[%q,%q]}`, slow, slow))
	s.waitStatus(t, running, "running")
	s.cmd.Process.Signal(syscall.SIGKILL)
	s.cmd.Wait()
	if n := matchContainers(t, cli, running); n != 2 {
		t.Fatalf("after kill -9: %d containers, want the 2 orphans", n)
	}

	s = startServer(t, bin, data, port)
	m := s.get(t, running)
	if m["status"] != "failed" || !strings.Contains(fmt.Sprint(m["error"]), "interrupted") {
		t.Errorf("the interrupted match: %v", m)
	}
	if n := matchContainers(t, cli, running); n != 0 {
		t.Errorf("%d containers of the interrupted match remain", n)
	}
	if m := s.get(t, done); m["status"] != "finished" || m["result"] == nil {
		t.Errorf("the finished match after the restart: %v", m)
	}
}

// SIGTERM: the server stops taking matches, cancels the running one and
// removes its containers before it exits.
func TestServerShutdown(t *testing.T) {
	cli := dockertest.Client(t)
	slow := dockertest.TestBot(t, cli, "delay=60ms")
	bin := arenaBinary(t)
	data, port := t.TempDir(), freePort(t)
	s := startServer(t, bin, data, port)
	running := s.post(t, fmt.Sprintf(`{"game":"tanks","bots":[%q,%q]}`, slow, slow))
	s.waitStatus(t, running, "running")
	s.cmd.Process.Signal(syscall.SIGTERM)
	if err := s.cmd.Wait(); err != nil {
		t.Errorf("exit after SIGTERM: %v\n%s", err, s.stderr.String())
	}
	if n := matchContainers(t, cli, running); n != 0 {
		t.Errorf("%d containers remain after SIGTERM", n)
	}
	s = startServer(t, bin, data, port)
	if m := s.get(t, running); m["status"] != "failed" || !strings.Contains(fmt.Sprint(m["error"]), "shutting down") {
		t.Errorf("the match cut by the shutdown: %v", m)
	}
}

// SIGTERM with matches let finish: the warm containers go at once, not
// after the matches (a supervisor's grace period may end first), and
// nothing of the server's remains once it exits.
func TestServerShutdownRemovesWarmContainersFirst(t *testing.T) {
	cli := dockertest.Client(t)
	bots := dockertest.ExampleBots(t, cli)
	slow := dockertest.TestBot(t, cli, "delay=150ms")
	data, port := t.TempDir(), freePort(t)
	s := startServer(t, arenaBinary(t), data, port, "--pool", "2", "--shutdown", "finish", "--shutdown-timeout", "6s")
	// The server's containers: its owner label names its pid.
	mine := func(warmOnly bool) int {
		n := 0
		for _, c := range dockertest.ArenaContainers(t, cli, "") {
			o, err := sandbox.ParseOwner(c.Labels[sandbox.LabelOwner])
			if err != nil || o.PID != s.cmd.Process.Pid {
				continue
			}
			if !warmOnly || slices.ContainsFunc(c.Names, func(n string) bool { return strings.HasPrefix(n, "/arena-pool-") }) {
				n++
			}
		}
		return n
	}
	warm := func() int { return mine(true) }
	s.waitStatus(t, s.post(t, fmt.Sprintf(`{"game":"tanks","bots":[%q,%q]}`, bots[0], bots[1])), "finished")
	running := s.post(t, fmt.Sprintf(`{"game":"tanks","bots":[%q,%q]}`, slow, slow))
	s.waitStatus(t, running, "running")
	poll.Until(t, 30*time.Second, func() error {
		if n := warm(); n < 4 {
			return fmt.Errorf("%d warm containers, want 2 for each example bot", n)
		}
		return nil
	})

	s.cmd.Process.Signal(syscall.SIGTERM)
	start := time.Now()
	poll.Until(t, 4*time.Second, func() error {
		if n := warm(); n > 0 {
			return fmt.Errorf("%d warm containers 4 s after SIGTERM", n)
		}
		return nil
	})
	t.Logf("warm containers removed %v after SIGTERM", time.Since(start).Round(time.Millisecond))
	if n := matchContainers(t, cli, running); n != 2 {
		t.Errorf("the match let finish has %d containers when the warm ones are gone, want its 2 (did it end early?)", n)
	}
	if err := s.cmd.Wait(); err != nil {
		t.Errorf("exit after SIGTERM: %v\n%s", err, s.stderr.String())
	}
	if n := mine(false); n != 0 {
		t.Errorf("%d of the server's containers remain after it exited", n)
	}
}

// The page in a real browser: enter two images, press Start, watch the
// match live, read the result, step back with the original hotkeys, and
// find the match in the history after a reload.
func TestBrowser(t *testing.T) {
	cli := dockertest.Client(t)
	hunter := dockertest.ExampleBots(t, cli)[1]
	slow := dockertest.TestBot(t, cli, "delay=40ms")
	s := startServer(t, arenaBinary(t), t.TempDir(), freePort(t))

	ctx := newBrowser(t, 1400, 1100)

	must := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, steps...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	text := func(sel string) string {
		t.Helper()
		v, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
		if err != nil {
			t.Fatalf("read %s: %v", sel, err)
		}
		return v
	}
	must("open the page", chromedp.Navigate(s.url), chromedp.WaitVisible(chromedp.CSS(`#bot-fields input[name="bot1"]`)))
	defaults, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("#bot-fields input")].map(i => i.value)`))
	if err != nil {
		t.Fatal(err)
	}
	if len(defaults) != 2 || defaults[0] != "arena/tanks-random" || defaults[1] != "arena/tanks-hunter" {
		t.Errorf("the fields are pre-filled with %q, want the example bots", defaults)
	}
	must("start a match",
		chromedp.SetValue(chromedp.CSS(`input[name="bot0"]`), slow),
		chromedp.SetValue(chromedp.CSS(`input[name="bot1"]`), hunter),
		chromedp.Click(chromedp.CSS("#start")),
		chromedp.WaitVisible(chromedp.CSS("#viewer")))
	if _, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](`/^Turn [1-9][0-9]* \/ [0-9]+ · live$/.test(document.querySelector("#turn").textContent) && document.querySelector("#match-status").textContent === "running"`, chromedp.WithPollingTimeout(30*time.Second))); err != nil {
		t.Fatalf("the match was never shown live: %v", err)
	}
	t.Logf("while running: %s", text("#turn"))
	must("wait for the result", chromedp.WaitVisible(chromedp.CSS("#result.visible")))
	banner, turn := text("#result"), text("#turn")
	if !strings.Contains(banner, "Winner") && !strings.Contains(banner, "Draw") {
		t.Errorf("result banner: %q", banner)
	}
	last := turnOf(t, turn)
	if last < 12 {
		t.Fatalf("the turn counter reads %q", turn)
	}
	painted, err := chromedp.Run(ctx, chromedp.Evaluate[int](`(() => {
		const c = document.querySelector("#board");
		const d = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
		let n = 0;
		for (let i = 0; i < d.length; i += 4) if (!(d[i] === 244 && d[i+1] === 241 && d[i+2] === 232)) n++;
		return n;
	})()`))
	if err != nil || painted < 1000 {
		t.Errorf("the canvas has %d painted pixels (%v)", painted, err)
	}
	must("press b", chromedp.KeyEvent("b"))
	if got := turnOf(t, text("#turn")); got != last-1 {
		t.Errorf("after b: turn %d, want %d", got, last-1)
	}
	must("press Shift+b", chromedp.KeyEvent("B"))
	if got := turnOf(t, text("#turn")); got != last-11 {
		t.Errorf("after Shift+b: turn %d, want %d", got, last-11)
	}
	must("press n", chromedp.KeyEvent("n"))
	if got := turnOf(t, text("#turn")); got != last-10 {
		t.Errorf("after n: turn %d, want %d", got, last-10)
	}
	if shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)); err == nil {
		saveArtefact(t, "web-e2e.png", shot)
	} else {
		t.Errorf("screenshot: %v", err)
	}
	id, err := chromedp.Run(ctx, chromedp.Evaluate[string](`location.hash.split("/").pop()`))
	if err != nil {
		t.Fatal(err)
	}
	must("reload and find the match in the history",
		chromedp.Navigate(s.url),
		chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf(`#history tbody tr[data-id=%q]`, id))))

	// The other games' renderers draw their matches too.
	for _, g := range []struct{ game, a, b string }{
		{"snake", dockertest.KitBot(t, cli, "snake-greedy"), dockertest.KitBot(t, cli, "snake-random")},
		{"pacman", dockertest.KitBot(t, cli, "pacman-runner"), dockertest.KitBot(t, cli, "pacman-ghosts")},
	} {
		must("start a "+g.game+" match",
			chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`(() => { const s = document.querySelector("#game"); s.value = %q; s.dispatchEvent(new Event("change")); })()`, g.game)),
			chromedp.SetValue(chromedp.CSS(`input[name="bot0"]`), g.a),
			chromedp.SetValue(chromedp.CSS(`input[name="bot1"]`), g.b),
			chromedp.Click(chromedp.CSS("#start")),
			chromedp.Poll[chromedp.Void](fmt.Sprintf(`document.querySelector("#match-title").textContent.startsWith(%q) && document.querySelector("#result").classList.contains("visible")`, g.game), chromedp.WithPollingTimeout(90*time.Second)),
			chromedp.KeyEvent("B"))
		if banner := text("#result"); !strings.Contains(banner, "Winner") && !strings.Contains(banner, "Draw") {
			t.Errorf("%s result banner: %q", g.game, banner)
		}
		painted, err := chromedp.Run(ctx, chromedp.Evaluate[int](`(() => {
			const c = document.querySelector("#board");
			const d = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
			const colours = new Set();
			for (let i = 0; i < d.length; i += 4 * 7) colours.add(d[i] << 16 | d[i+1] << 8 | d[i+2]);
			return colours.size;
		})()`))
		if err != nil || painted < 5 {
			t.Errorf("%s: the canvas shows %d colours (%v)", g.game, painted, err)
		}
		if shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)); err == nil {
			saveArtefact(t, "web-e2e-"+g.game+".png", shot)
		}
		if g.game == "pacman" {
			checkPacmanFrameAlone(t, ctx)
		}
	}

	// A match the server does not have: the viewer's stream is refused
	// and the page says so, without trying again.
	must("a match that does not exist", chromedp.Evaluate[chromedp.Void](`location.hash = "#/match/0123456789ab"`),
		chromedp.Poll[chromedp.Void](`document.querySelector("#match-status").textContent === "disconnected"`, chromedp.WithPollingTimeout(10*time.Second)))
	// A local server has no notifications: the page never asks for them.
	if strings.Contains(s.stderr.String(), "/api/notifications") {
		t.Errorf("the page of a local server asked for its notifications")
	}
}

// pacmanCheck is what checkPacmanFrameAlone's script found.
type pacmanCheck struct {
	Error      string   `json:"error"`
	Turn       int      `json:"turn"`
	Frames     int      `json:"frames"`
	Rows       int      `json:"rows"`
	Cols       int      `json:"cols"`
	Cell       int      `json:"cell"`
	Checked    int      `json:"checked"`
	Walls      int      `json:"walls"`
	Empty      int      `json:"empty"`
	Beans      int      `json:"beans"`
	BeansLeft  int      `json:"beans_left"`
	Mismatches []string `json:"mismatches"`
}

// checkPacmanFrameAlone draws a late frame of the page's Pac-Man match
// with no other frame at hand, as when jumping straight to it, and reads
// the canvas back cell by cell: walls, beans and eaten cells must be where
// the frame's board has them, and the board's beans must be the frame's
// beans_left.
func checkPacmanFrameAlone(t *testing.T, ctx context.Context) {
	t.Helper()
	got, err := chromedp.Run(ctx, chromedp.Evaluate[pacmanCheck](`(async () => {
		const id = location.hash.split("/").pop();
		const rep = await (await fetch("/api/matches/" + id + "/replay")).json();
		const frames = rep.frames;
		// The latest frame in the middle of a level: a round played, no
		// events (no banner or label over the board), not the last.
		let k = frames.length - 2;
		while (k > 0 && (!frames[k].state.played || frames[k].state.events.length || frames[k].state.init)) k--;
		const f = frames[k];
		const st = f.state;
		const out = { turn: f.turn, frames: frames.length, mismatches: [] };
		const { renderers } = await import("/games/index.js");
		const c = document.createElement("canvas");
		renderers.pacman.draw(c, f, { ids: rep.bots.map((b) => b.id), frames: [f], index: 0 });
		const board = st.board || [];
		out.rows = board.length;
		out.cols = board.length ? board[0].length : 0;
		out.beans_left = st.beans_left;
		out.beans = board.join("").split("").filter((ch) => ch === "." || ch === "o").length;
		const d = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
		const px = (x, y) => [d[4 * (y * c.width + x)], d[4 * (y * c.width + x) + 1], d[4 * (y * c.width + x) + 2]];
		const is = (p, q) => p.every((v, i) => Math.abs(v - q[i]) <= 3);
		const WALL = [0x33, 0x41, 0x55], BEAN = [0xb4, 0x53, 0x09], GROUND = [0xf4, 0xf1, 0xe8];
		// The board's wall border gives its place and its cell size: rows of
		// at least 8 wall-coloured pixels (the header's glyphs, smoothed, can
		// have a pixel of the wall's colour, never 8 in a row).
		let x0 = c.width, y0 = c.height, x1 = -1, y1 = -1;
		for (let y = 0; y < c.height; y++) for (let x = 0, run = 0; x < c.width; x++) {
			run = is(px(x, y), WALL) ? run + 1 : 0;
			if (run < 8) continue;
			x0 = Math.min(x0, x - run + 1); x1 = Math.max(x1, x); y0 = Math.min(y0, y); y1 = Math.max(y1, y);
		}
		if (x1 < 0 || !out.rows) return { ...out, error: "no wall on the canvas or no board in the frame" };
		const cell = (x1 - x0 + 1) / out.cols;
		out.cell = cell;
		if (!Number.isInteger(cell) || (y1 - y0 + 1) / out.rows !== cell) return { ...out, error: "walls span " + (x1 - x0 + 1) + " by " + (y1 - y0 + 1) + " pixels for " + out.rows + " by " + out.cols + " cells" };
		out.checked = out.walls = out.empty = 0;
		for (let x = 0; x < out.rows; x++) for (let y = 0; y < out.cols; y++) {
			const want = { "#": WALL, ".": BEAN, " ": GROUND }[board[x][y]];
			if (!want) continue; // items and the portal
			out.checked++;
			if (board[x][y] === "#") out.walls++;
			if (board[x][y] === " ") out.empty++;
			// Row x is drawn upward from the bottom of the board.
			const p = px(x0 + y * cell + Math.floor(cell / 2), y0 + (out.rows - 1 - x) * cell + Math.floor(cell / 2));
			if (!is(p, want)) out.mismatches.push("(" + x + "," + y + ") " + JSON.stringify(board[x][y]) + " drawn rgb(" + p + ")");
		}
		return out;
	})()`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("draw a Pac-Man frame alone: %v", err)
	}
	t.Logf("Pac-Man turn %d of %d drawn alone: %d×%d cells of %d px, %d checked (%d walls, %d eaten), %d differ",
		got.Turn, got.Frames-1, got.Rows, got.Cols, got.Cell, got.Checked, got.Walls, got.Empty, len(got.Mismatches))
	if got.Error != "" {
		t.Fatalf("Pac-Man turn %d drawn alone: %s", got.Turn, got.Error)
	}
	if got.Turn < got.Frames/2 || got.Walls == 0 || got.Empty == 0 {
		t.Errorf("the check drew turn %d of %d with %d walls and %d eaten cells; it wants a late turn with both", got.Turn, got.Frames-1, got.Walls, got.Empty)
	}
	if got.Beans != got.BeansLeft {
		t.Errorf("turn %d: the board has %d beans, the frame says %d are left", got.Turn, got.Beans, got.BeansLeft)
	}
	// The movers and this round's trails cover a few cells.
	if len(got.Mismatches) > 12 {
		t.Errorf("turn %d drawn alone: %d cells differ from the frame's board, e.g. %q", got.Turn, len(got.Mismatches), got.Mismatches[:12])
	}
}

var turnPattern = regexp.MustCompile(`Turn (\d+) / (\d+)`)

func turnOf(t *testing.T, s string) int {
	t.Helper()
	m := turnPattern.FindStringSubmatch(s)
	if m == nil {
		t.Fatalf("no turn in %q", s)
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// saveArtefact keeps a file for the humans reading a test run, in
// build/test-artifacts/.
func saveArtefact(t *testing.T, name string, data []byte) {
	dir := filepath.Join(dockertest.Root(), "build", "test-artifacts")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Log(err)
		return
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Log(err)
		return
	}
	t.Logf("saved %s", path)
}

// A second server on the same data folder stops at once with one line
// naming the first, and touches nothing of the first server's match.
func TestSecondServerOnTheSameDataFolder(t *testing.T) {
	cli := dockertest.Client(t)
	slow := dockertest.TestBot(t, cli, "delay=30ms")
	bin := arenaBinary(t)
	data := t.TempDir()
	first := startServer(t, bin, data, freePort(t))
	id := first.post(t, fmt.Sprintf(`{"game":"tanks","bots":[%q,%q],"settings":{"zone_radius":12}}`, slow, slow))
	first.waitStatus(t, id, "running")

	second := exec.Command(bin, "serve", "--port", strconv.Itoa(freePort(t)), "--data", data)
	var stderr bytes.Buffer
	second.Stderr = &stderr
	err := second.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("the second server: %v\n%s", err, stderr.String())
	}
	want := fmt.Sprintf("held by arena serve (pid %d on ", first.cmd.Process.Pid)
	if lines := strings.Split(strings.TrimSpace(stderr.String()), "\n"); len(lines) != 1 || !strings.Contains(lines[0], want) {
		t.Errorf("the second server said %q, want one line with %q", stderr.String(), want)
	}
	if n := matchContainers(t, cli, id); n != 2 {
		t.Errorf("the first server's match has %d containers, want 2", n)
	}
	if m := first.waitStatus(t, id, "finished", "failed"); m["status"] != "finished" {
		t.Errorf("the first server's match: %v", m)
	}
	for _, b := range first.waitStatus(t, id, "finished")["result"].(map[string]any)["bots"].([]any) {
		if st := b.(map[string]any)["status"]; st != "ok" {
			t.Errorf("a bot of the first server's match is %v", st)
		}
	}
}

// boardTextProbe records each text written on the board's canvas: its
// size in the canvas' pixels and its left and right ends.
const boardTextProbe = `window.boardTexts = [];
(() => {
	const fill = CanvasRenderingContext2D.prototype.fillText;
	CanvasRenderingContext2D.prototype.fillText = function (text, x, y, ...rest) {
		if (this.canvas.id === "board") {
			const s = String(text), w = Math.min(this.measureText(s).width, rest.length ? rest[0] : Infinity);
			const px = Number((/([\d.]+)px/.exec(this.font) || [0, 0])[1]);
			const left = this.textAlign === "center" ? x - w / 2 : this.textAlign === "right" || this.textAlign === "end" ? x - w : x;
			boardTexts.push({ text: s, px, left, right: left + w });
		}
		return fill.call(this, text, x, y, ...rest);
	};
})();`

// boardTexts is what boardTextProbe found wrong on a board.
type boardTexts struct {
	Count int      `json:"count"`
	Small []string `json:"small"`
	Out   []string `json:"out"`
}

// newBrowser starts Debian's chromium, headless, with a window of the size
// given, cut off from the network it cannot reach here; it ends with the
// test.
func newBrowser(t testing.TB, width, height int) context.Context {
	t.Helper()
	browser, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatalf("the browser test needs Debian's chromium (apt-get install chromium): %v", err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(browser), chromedp.NoSandbox, chromedp.NoFirstRun, chromedp.WindowSize(width, height),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("disable-gpu", true))
	// A page that never shows what a test waits for fails the test within
	// minutes, with the browser's last state, rather than hang the suite.
	bctx, cancelTimeout := context.WithTimeout(t.Context(), browserTimeout)
	actx, cancelAlloc := chromedp.NewExecAllocator(bctx, opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelAlloc(); cancelTimeout() })
	return ctx
}

// browserSteps are a browser test's two usual steps: must runs actions
// and fails the test, naming what, if they fail; eval evaluates a
// JavaScript expression to a string.
func browserSteps(t testing.TB, ctx context.Context) (must func(what string, steps ...chromedp.Action[chromedp.Void]), eval func(js string) string) {
	must = func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, steps...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	eval = func(js string) string {
		t.Helper()
		v, err := chromedp.Run(ctx, chromedp.Evaluate[string](js))
		if err != nil {
			t.Fatalf("%s: %v", js, err)
		}
		return v
	}
	return must, eval
}

// browserTimeout bounds a browser test (the longest takes ~30 s here).
const browserTimeout = 4 * time.Minute

// The boards at a desktop's and a phone's width: a Tanks match with its
// HUD (the turn, the zone's radius, each tank's health) and its key, and a
// 41×41 Pac-Man board, fit the window and use it (Pac-Man's cells at
// least 14 pixels on the desktop), and the full-screen view enlarges the
// board. The screenshots are kept (build/test-artifacts/boards-*.png).
func TestBoardsAtDesktopAndPhoneWidths(t *testing.T) {
	cli := dockertest.Client(t)
	bots := dockertest.ExampleBots(t, cli)
	runner, ghosts := dockertest.KitBot(t, cli, "pacman-runner"), dockertest.KitBot(t, cli, "pacman-ghosts")
	s := startServer(t, arenaBinary(t), t.TempDir(), freePort(t))
	tanksMatch := s.post(t, fmt.Sprintf(`{"game":"tanks","bots":[%q,%q]}`, bots[1], bots[0]))
	pacMatch := s.post(t, fmt.Sprintf(`{"game":"pacman","bots":[%q,%q]}`, runner, ghosts))
	for _, id := range []string{tanksMatch, pacMatch} {
		if m := s.waitStatus(t, id, "finished", "failed"); m["status"] != "finished" {
			t.Fatalf("match %s: %v", id, m)
		}
	}
	type board struct {
		Label      string  `json:"label"`
		Width      float64 `json:"width"`
		Pixels     int     `json:"pixels"`
		Window     float64 `json:"window"`
		Page       float64 `json:"page"`
		Fullscreen bool    `json:"fullscreen"`
	}
	look := func(ctx context.Context) board {
		t.Helper()
		b, err := chromedp.Run(ctx, chromedp.Evaluate[board](`(() => {
			const c = document.querySelector("#board");
			return { label: c.getAttribute("aria-label") || "", width: c.getBoundingClientRect().width, pixels: c.width, window: window.innerWidth, page: document.documentElement.scrollWidth, fullscreen: !!document.fullscreenElement };
		})()`))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for _, size := range []struct {
		name          string
		width, height int
	}{{"desktop", 1280, 900}, {"phone", 390, 844}} {
		ctx := newBrowser(t, max(size.width, 500), size.height)
		// The viewport and the screen exactly (a window is at least 500
		// pixels wide).
		w, h := int64(size.width), int64(size.height)
		if err := chromedp.Do(ctx, chromedp.EmulateViewport(w, h, func(p *emulation.SetDeviceMetricsOverrideParams, _ *emulation.SetTouchEmulationEnabledParams) {
			p.ScreenWidth, p.ScreenHeight = w, h
			p.Mobile = size.width < 500
		})); err != nil {
			t.Fatal(err)
		}
		// Every text written on the board, with its size and its ends.
		if _, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: boardTextProbe}); err != nil {
			t.Fatal(err)
		}
		// open shows a match at an early turn (Pac-Man's first level: the
		// 41×41 board), stepping back ten turns at a time (Shift+b) once
		// every frame is loaded.
		open := func(id, game string) board {
			t.Helper()
			if err := chromedp.Do(ctx,
				chromedp.Navigate(s.url+"/#/match/"+id),
				chromedp.Poll[chromedp.Void](fmt.Sprintf(`document.querySelector("#match-title").textContent.startsWith(%q) && document.querySelector("#result").classList.contains("visible") && /^Turn (\d+) \/ \1$/.test(document.querySelector("#turn").textContent)`, game), chromedp.WithPollingTimeout(30*time.Second))); err != nil {
				t.Fatalf("%s at %d px: %v", game, size.width, err)
			}
			for range 200 {
				turn, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#turn")))
				if err != nil {
					t.Fatal(err)
				}
				if turnOf(t, turn) <= 15 {
					break
				}
				if err := chromedp.Do(ctx, chromedp.KeyEvent("B")); err != nil {
					t.Fatal(err)
				}
			}
			time.Sleep(200 * time.Millisecond) // Sleeps on purpose: a moment for the board to draw the turn, for the screenshot.
			if png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)); err == nil {
				saveArtefact(t, fmt.Sprintf("boards-%s-%s.png", game, size.name), png)
			}
			// Its text as the reader sees it: at least 11 px, within the
			// board (glyphs of one or two characters aside).
			texts, err := chromedp.Run(ctx, chromedp.Evaluate[boardTexts](`(() => {
				boardTexts.length = 0;
				window.dispatchEvent(new Event("resize"));
				const c = document.querySelector("#board"), scale = c.getBoundingClientRect().width / c.width;
				const read = boardTexts.filter((x) => x.text.length > 2);
				return {
					count: read.length,
					small: read.filter((x) => x.px * scale < 11).map((x) => x.text + " @" + (x.px * scale).toFixed(1) + "px"),
					out: read.filter((x) => x.left < -1 || x.right > c.width + 1).map((x) => x.text),
				};
			})()`))
			if err != nil {
				t.Fatal(err)
			}
			if texts.Count == 0 || len(texts.Small) > 0 || len(texts.Out) > 0 {
				t.Errorf("%s at %d px: %d texts on the board; under 11 px: %q; cut off: %q", game, size.width, texts.Count, texts.Small, texts.Out)
			}
			return look(ctx)
		}
		tb := open(tanksMatch, "tanks")
		t.Logf("%s: tanks %v", size.name, tb)
		if !strings.Contains(tb.Label, "Turn ") || !strings.Contains(tb.Label, "zone radius") || !strings.Contains(tb.Label, "health") {
			t.Errorf("%s: the Tanks HUD says %q", size.name, tb.Label)
		}
		if tb.Width > tb.Window || tb.Window != float64(size.width) || tb.Page > tb.Window {
			t.Errorf("%s: the Tanks board is %.0f px wide, the page %.0f, in a %.0f px window (want %d)", size.name, tb.Width, tb.Page, tb.Window, size.width)
		}
		pb := open(pacMatch, "pacman")
		t.Logf("%s: pacman %v", size.name, pb)
		if pb.Width > pb.Window {
			t.Errorf("%s: the Pac-Man board is %.0f px wide in a %.0f px window", size.name, pb.Width, pb.Window)
		}
		if m := regexp.MustCompile(`^pacman: turn (\d+) `).FindStringSubmatch(pb.Label); m == nil || len(m[1]) > 2 {
			t.Errorf("%s: the Pac-Man board shows %q, want an early turn (the first level)", size.name, pb.Label)
		}
		// No page scrolls sideways.
		// (Last, a match the visitor plays: the play panel with its pad.)
		human := s.post(t, fmt.Sprintf(`{"game":"tanks","bots":[{"human":true},%q]}`, bots[1]))
		for _, hash := range []string{"#/", "#/ladder/tanks", "#/contests", "#/challenges", "#/admin", "#/match/" + tanksMatch, "#/match/" + human} {
			if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`location.hash = "`+hash+`"`), chromedp.Sleep(300*time.Millisecond)); err != nil {
				t.Fatal(err)
			}
			if w, err := chromedp.Run(ctx, chromedp.Evaluate[float64](`document.documentElement.scrollWidth - window.innerWidth`)); err != nil || w > 0 {
				t.Errorf("%s: %s scrolls %.0f px sideways (%v)", size.name, hash, w, err)
			}
		}
		if err := chromedp.Do(ctx, chromedp.Poll[chromedp.Void](`document.querySelectorAll("#play-panel:not([hidden]) .pad button").length === 5`, chromedp.WithPollingTimeout(10*time.Second))); err != nil {
			t.Errorf("%s: the play panel's pad: %v", size.name, err)
		}
		if png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)); err == nil {
			saveArtefact(t, fmt.Sprintf("play-%s.png", size.name), png)
		}
		if status, body := s.call(t, "DELETE", "/api/matches/"+human, ""); status != 202 {
			t.Errorf("cancel the match the visitor plays: %d %v", status, body)
		}
		if size.name == "desktop" {
			// 41 cells of at least 14 px, and the margins.
			if pb.Pixels < 41*14 {
				t.Errorf("the 41×41 Pac-Man board is drawn %d px wide: cells under 14 px", pb.Pixels)
			}
			if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#fullscreen"))); err != nil {
				t.Fatal(err)
			}
			time.Sleep(300 * time.Millisecond) // Sleeps on purpose: a moment for the full screen to settle; looked at once.
			fb := look(ctx)
			t.Logf("full screen: pacman %v", fb)
			if !fb.Fullscreen || fb.Pixels <= pb.Pixels {
				t.Errorf("full screen: %v (the board was %d px wide)", fb, pb.Pixels)
			}
			if png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)); err == nil {
				saveArtefact(t, "boards-pacman-fullscreen.png", png)
			}
		}
	}
}

// The History in a real browser: 24 matches, 20 a page; the older ones
// opened with "Older matches" stay through the page's refreshes (it keeps
// its place), its unchanged rows the same elements; a draw says "draw";
// the game filter keeps a game's matches; a crashed bot's match shows why
// on its banner.
func TestHistoryInTheBrowser(t *testing.T) {
	cli := dockertest.Client(t)
	idle := dockertest.TestBot(t, cli, "delay=0s")
	crash := dockertest.TestBot(t, cli, "exit-at=1")
	s := startServer(t, arenaBinary(t), t.TempDir(), freePort(t), "--ladder", "off", "--concurrency", "2", "--rate", "0")
	var ids []string
	crashed := s.post(t, fmt.Sprintf(`{"game":"tanks","bots":[%q,%q],"settings":{"zone_radius":0}}`, crash, idle))
	for range 23 {
		ids = append(ids, s.post(t, fmt.Sprintf(`{"game":"tanks","bots":[%q,%q],"settings":{"zone_radius":0}}`, idle, idle)))
	}
	for _, id := range append(ids, crashed) {
		if m := s.waitStatus(t, id, "finished", "failed"); m["status"] != "finished" {
			t.Fatalf("match %s: %v", id, m)
		}
	}
	ctx := newBrowser(t, 1280, 1000)
	rows := func() int {
		n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("#history tbody tr").length`))
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	poll := func(what, js string) {
		t.Helper()
		if err := chromedp.Do(ctx, chromedp.Poll[chromedp.Void](js, chromedp.WithPollingTimeout(20*time.Second))); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(s.url), chromedp.WaitVisible(chromedp.CSS("#more"))); err != nil {
		t.Fatal(err)
	}
	poll("the first page", `document.querySelectorAll("#history tbody tr").length === 20`)
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#more"))); err != nil {
		t.Fatal(err)
	}
	poll("the older matches", `document.querySelectorAll("#history tbody tr").length === 24 && document.querySelector("#more").hidden`)
	// A refresh keeps the rows of the matches that did not change (the
	// same elements: rows made anew are laid out anew every 5 s).
	if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`document.querySelectorAll("#history tbody tr").forEach((tr) => (tr.seen = true))`)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(6 * time.Second) // Sleeps on purpose: a refresh of the page (every 5 s), which must keep the rows.
	if n := rows(); n != 24 {
		t.Errorf("after a refresh the History shows %d rows, want the 24 opened", n)
	}
	if kept, err := chromedp.Run(ctx, chromedp.Evaluate[int](`[...document.querySelectorAll("#history tbody tr")].filter((tr) => tr.seen).length`)); err != nil || kept != 24 {
		t.Errorf("a refresh kept %d of the 24 unchanged rows (%v)", kept, err)
	}
	// Two idle bots draw; so does a bot that crashes at once against an
	// idle one when the zone closes on the first turn (both tanks die).
	draws, err := chromedp.Run(ctx, chromedp.Evaluate[int](`[...document.querySelectorAll("#history tbody tr")].filter(tr => tr.children[3].textContent === "draw").length`))
	if err != nil || draws < 23 {
		t.Errorf("%d matches say draw, want at least the 23 between idle bots (%v)", draws, err)
	}
	// The crash is marked in its row, and the row links to the match.
	type row struct {
		Fault string `json:"fault"`
		Link  string `json:"link"`
	}
	got, err := chromedp.Run(ctx, chromedp.Evaluate[row](fmt.Sprintf(`(() => { const tr = document.querySelector('#history tr[data-id=%q]'), f = tr.querySelector(".fault"), a = tr.querySelector("a.match"); return { fault: f ? f.textContent : "", link: a ? a.getAttribute("href") : "" }; })()`, crashed)))
	if err != nil || !strings.Contains(got.Fault, crash+" crashed at 1") || got.Link != "#/match/"+crashed {
		t.Errorf("the crashed match's row: %+v (%v), want its fault and a link to it", got, err)
	}
	// A new match comes in at the top; the rest stay as they were.
	newer := s.post(t, fmt.Sprintf(`{"game":"tanks","bots":[%q,%q],"settings":{"zone_radius":0}}`, idle, idle))
	s.waitStatus(t, newer, "finished", "failed")
	poll("the new match's row", fmt.Sprintf(`(() => { const tr = document.querySelector("#history tbody tr"); return tr && tr.dataset.id === %q && !tr.seen && /finished/.test(tr.textContent); })()`, newer))
	if kept, err := chromedp.Run(ctx, chromedp.Evaluate[int](`[...document.querySelectorAll("#history tbody tr")].filter((tr) => tr.seen).length`)); err != nil || kept < 23 {
		t.Errorf("with a new match, a refresh kept %d of the unchanged rows, want 23 or more (%v)", kept, err)
	}
	if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`(() => { const s = document.querySelector("#history-game"); s.value = "snake"; s.dispatchEvent(new Event("change")); })()`)); err != nil {
		t.Fatal(err)
	}
	poll("no snake match", `document.querySelectorAll("#history tbody tr").length === 0`)
	if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`(() => { const s = document.querySelector("#history-game"); s.value = "tanks"; s.dispatchEvent(new Event("change")); })()`)); err != nil {
		t.Fatal(err)
	}
	poll("the tanks matches", `document.querySelectorAll("#history tbody tr").length === 20`)
	if png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)); err == nil {
		saveArtefact(t, "history.png", png)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(s.url+"/#/match/"+crashed)); err != nil {
		t.Fatal(err)
	}
	poll("the crash's reason on the banner", `document.querySelector("#result").classList.contains("visible") && /crashed at turn 1: .*(exit|code|signal)/.test(document.querySelector("#result").textContent)`)
	if png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)); err == nil {
		saveArtefact(t, "history-crash.png", png)
	}
}
