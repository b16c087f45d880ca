package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/client"

	"arena/internal/testsupport/dockertest"
	"arena/internal/testsupport/poll"
	"arena/matches"
)

// hostileLogic is a logic that misbehaves as its config's "mode" says,
// after a first round played by the book.
const hostileLogic = `import json, os, struct, sys, time
def read():
    n, = struct.unpack(">I", sys.stdin.buffer.read(4))
    return json.loads(sys.stdin.buffer.read(n))
def send(target, obj):
    data = json.dumps(obj).encode()
    sys.stdout.buffer.write(struct.pack(">Ii", len(data), target) + data)
    sys.stdout.buffer.flush()
mode = read()["config"].get("mode") or os.environ.get("MODE", "crash")
send(-1, {"state": 1, "listen": [0], "player": [0], "content": ['{"board": [[-1,-1,-1],[-1,-1,-1],[-1,-1,-1]], "you": 0}\n']})
read()
if mode == "crash":
    print("the logic's own bug", file=sys.stderr)
    sys.exit(3)
if mode == "hang":
    time.sleep(3600)
if mode == "huge":
    data = b"x" * ((1 << 20) + 1)
    sys.stdout.buffer.write(struct.pack(">Ii", len(data), 0) + data)
    sys.stdout.buffer.flush()
    time.sleep(3600)
if mode == "memory":
    hog = bytearray(1 << 30)  # more than its memory, touched page by page
    for i in range(0, len(hog), 4096):
        hog[i] = 1
    time.sleep(3600)
if mode == "slow":
    time.sleep(3)  # over a round time of 1 s
if mode == "garbage":
    sys.stdout.buffer.write(b"\x00\x00\x00\x05\xff\xff\xff\xffhello")
    sys.stdout.buffer.flush()
    time.sleep(3600)
`

// logicKit builds the logic kit's tic-tac-toe logic and its bot.
func logicKit(t testing.TB, cli *client.Client) (logic, bot string) {
	dockertest.Standins(t)
	kit := filepath.Join(dockertest.Root(), "botkits", "logic")
	read := func(path string) string {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	logic = dockertest.Build(t, cli, "arena-test/ttt-logic", read(filepath.Join(kit, "logic", "Dockerfile")), map[string]string{
		"logic.py":          read(filepath.Join(kit, "logic", "logic.py")),
		"player/index.html": read(filepath.Join(kit, "logic", "player", "index.html")),
		"player/player.js":  read(filepath.Join(kit, "logic", "player", "player.js")),
	})
	bot = dockertest.Build(t, cli, "arena-test/ttt-bot", read(filepath.Join(kit, "bot", "Dockerfile")),
		map[string]string{"bot.py": read(filepath.Join(kit, "bot", "bot.py"))})
	return logic, bot
}

// misbehaving builds a tic-tac-toe bot that never answers (from the
// kit's bot) and a logic that misbehaves as its config's mode says
// (hostileLogic).
func misbehaving(t *testing.T, cli *client.Client, bot string) (sleeper, hostile string) {
	sleeper = dockertest.Build(t, cli, "arena-test/ttt-sleeper", "FROM "+bot+"\nENTRYPOINT [\"python3\", \"-c\", \"import time; time.sleep(3600)\"]\n", nil)
	hostile = dockertest.Build(t, cli, "arena-test/hostile-logic", "FROM python:3.14-slim-trixie\nCOPY logic.py /logic.py\nLABEL io.arena.logic=saiblo\nENTRYPOINT [\"python3\", \"-u\", \"/logic.py\"]\n",
		map[string]string{"logic.py": hostileLogic})
	return sleeper, hostile
}

// BenchmarkLogicRound is what a round of a logic game costs: the kit's
// tic-tac-toe, a series of 1 game and of 41 (see roundCost).
func BenchmarkLogicRound(b *testing.B) {
	cli := dockertest.Client(b)
	logic, bot := logicKit(b, cli)
	roundCost(b, logic, bot, `{"games":1}`, `{"games":41}`)
}

// BenchmarkJudgerRound is a whole round of a logic game through arena
// run, beside the bots' answer: relaylogic, a Go logic whose work per
// round is a few microseconds, and Go bots answering at once, 200 rounds
// and 2,000 (see roundCost). What the judger adds to a built-in game of
// the same shape is orchestrator's BenchmarkJudgerAgainstBuiltIn.
func BenchmarkJudgerRound(b *testing.B) {
	cli := dockertest.Client(b)
	logic, bot := dockertest.RelayImages(b, cli)
	roundCost(b, logic, bot, `{"rounds":200}`, `{"rounds":2000}`)
}

// roundCost plays a short and a long match of a logic game between two
// copies of bot, and reports the difference in duration over the
// difference in rounds (container starts cancel out) as round-ms, beside
// the bots' own answer time (answer-ms: p50, from the moment a bot may
// run to its answer read); ratio is round/answer.
func roundCost(b *testing.B, logic, bot, short, long string) {
	bin := arenaBinary(b)
	play := func(settings string) matches.Result {
		out, err := exec.Command(bin, "run", "--json", "--game", "logic:"+logic, "--settings", settings, bot, bot).Output()
		if err != nil {
			b.Fatalf("arena run: %v\n%s", err, out)
		}
		var res matches.Result
		if err := json.Unmarshal(out, &res); err != nil {
			b.Fatal(err)
		}
		return res
	}
	var round, answer float64
	for b.Loop() {
		s, l := play(short), play(long)
		round += (l.DurationMS - s.DurationMS) / float64(l.Turns-s.Turns)
		answer += (l.Bots[0].AnswerMSP50 + l.Bots[1].AnswerMSP50) / 2
	}
	n := float64(b.N)
	b.ReportMetric(round/n, "round-ms")
	b.ReportMetric(answer/n, "answer-ms")
	b.ReportMetric(round/answer, "ratio")
}

// A game whose rules are an image: the logic kit's tic-tac-toe plays its
// bots through arena run, in the sandbox; a bot that times out or crashes
// is reported to the logic, whose verdict is the result; a logic that
// crashes, hangs or talks garbage fails the match (exit 1, its reason
// said), and nothing is left behind.
func TestALogicGame(t *testing.T) {
	t.Parallel() // see docs/tests.md
	cli := dockertest.Client(t)
	logic, bot := logicKit(t, cli)
	sleeper, hostile := misbehaving(t, cli, bot)
	crasher := dockertest.Build(t, cli, "arena-test/ttt-crasher", "FROM "+bot+"\nENTRYPOINT [\"python3\", \"-c\", \"import sys; sys.stdin.readline(); sys.exit(2)\"]\n", nil)
	bin := arenaBinary(t)
	run := func(args ...string) (matches.Result, string, int) {
		t.Helper()
		cmd := exec.Command(bin, append([]string{"run", "--json"}, args...)...)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		code := 0
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			code = exit.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		var res matches.Result
		if code == 0 {
			if err := json.Unmarshal(out, &res); err != nil {
				t.Fatalf("arena run's result: %v\n%s", err, out)
			}
		}
		// Nothing left by the run, whatever its end (matched by its owner,
		// the process: other tests' containers may be running).
		if left := containersOf(t, cli, cmd.Process.Pid); len(left) > 0 {
			t.Errorf("arena run %v: %d containers left behind", args, len(left))
		}
		return res, stderr.String(), code
	}
	game := "logic:" + logic

	replay := filepath.Join(t.TempDir(), "ttt.json")
	res, stderr, code := run("--game", game, "--replay", replay, bot, bot)
	if code != 0 || res.Game != game || len(res.Bots) != 2 || res.Turns < 5 {
		t.Fatalf("two kit bots: exit %d, %+v\n%s", code, res, stderr)
	}
	for _, b := range res.Bots {
		if b.Status != "ok" || b.Answers < 2 {
			t.Errorf("seat %d: %s, %d answers", b.Seat, b.Status, b.Answers)
		}
	}
	// The same perfect player on both sides: a draw.
	if len(res.Winners) != 0 || res.Bots[0].Score != 0 || res.Bots[1].Score != 0 {
		t.Errorf("two perfect players: winners %v, scores %d-%d", res.Winners, res.Bots[0].Score, res.Bots[1].Score)
	}
	rep, err := matches.ReadReplay(replay)
	if err != nil || len(rep.Frames) != res.Turns+1 || !strings.Contains(string(rep.Frames[1].State), `"listen":[1]`) {
		t.Errorf("the replay: %v, %d frames for %d rounds", err, len(rep.Frames), res.Turns)
	}

	// The replay verifies: the logic, played again on the recorded
	// answers, does the same; changed, it does not.
	if out, err := exec.Command(bin, "replay", "verify", replay).CombinedOutput(); err != nil || !strings.Contains(string(out), "ok, ") {
		t.Errorf("arena replay verify of a logic game: %v\n%s", err, out)
	}
	// It records the logic it was played with, by id; --logic names
	// another image.
	if rep.Logic == nil || rep.Logic.Image != logic || !strings.HasPrefix(rep.Logic.ImageID, "sha256:") {
		t.Errorf("the replay's logic: %+v", rep.Logic)
	}
	if out, err := exec.Command(bin, "replay", "verify", replay, "--logic", logic).CombinedOutput(); err != nil || !strings.Contains(string(out), "logic "+logic+")") {
		t.Errorf("arena replay verify --logic: %v\n%s", err, out)
	}
	// A seat's bot rerun on its inputs: the logic brings the match to
	// each of its turns again.
	if out, err := exec.Command(bin, "replay", "rerun", replay, "--seat", "1").CombinedOutput(); err != nil || !strings.Contains(string(out), "gave the same") {
		t.Errorf("arena replay rerun of a logic game: %v\n%s", err, out)
	}
	if out, err := exec.Command(bin, "replay", "rerun", replay, "--seat", "0", "--turn", "3").CombinedOutput(); err != nil || !strings.Contains(string(out), "up to turn 3") {
		t.Errorf("arena replay rerun --turn 3 of a logic game: %v\n%s", err, out)
	}
	for i, b := range rep.Frames[2].Bots {
		if b.Answer != "" {
			rep.Frames[2].Bots[i].Answer = "2 1" // the second move, said to be another
		}
	}
	changed := filepath.Join(t.TempDir(), "changed.json")
	if err := matches.WriteReplay(changed, rep); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(bin, "replay", "verify", changed).CombinedOutput(); err == nil || !strings.Contains(string(out), "does not verify") {
		t.Errorf("arena replay verify of a changed replay: %v\n%s", err, out)
	} else {
		t.Logf("a changed replay:\n%s", out)
	}

	// A bot that does not answer in the round's time (1 s, the logic's
	// round config), one that crashes: the logic hears TLE and RE, and
	// its verdict is the result.
	res, stderr, code = run("--game", game, "--warmup", "5s", bot, sleeper) // the sleeper's warm-up is waited for
	if code != 0 || res.Bots[1].Status != "timeout" || res.Bots[0].Score != 1 || len(res.Winners) != 1 {
		t.Errorf("against a bot that sleeps: exit %d, %+v\n%s", code, res, stderr)
	}
	res, stderr, code = run("--game", game, crasher, bot)
	if code != 0 || res.Bots[0].Status != "crashed" || res.Bots[1].Score != 1 {
		t.Errorf("against a bot that crashes: exit %d, %+v\n%s", code, res, stderr)
	}

	// Hostile logics: the match fails, no bot loses it.
	for mode, want := range map[string]string{
		"crash":   `the game's logic failed: the logic stopped before the end of the match: output closed; it exited with code 3; its last words on stderr: "the logic's own bug"`,
		"hang":    "the game's logic failed: the logic sent nothing more for 10s",
		"garbage": `the game's logic failed: the logic sent the judger a message that is not a JSON object`,
		"huge":    "the game's logic failed: the logic sent a message over 1 MiB",
		// Its own limits (ARENA_LOGIC_*), not the bots'.
		"memory": "the logic stopped before the end of the match: output closed; it was killed for exceeding its memory limit",
		"slow":   "the game's logic failed: the logic sent nothing more for 1s (its time for a round)",
	} {
		round := "10000"
		if mode == "slow" {
			round = "1000"
		}
		_, stderr, code := run("--game", "logic:"+hostile, "--settings", `{"mode":"`+mode+`"}`, "--logic-memory", "64m", "--logic-round-ms", round, bot, bot)
		if code != 1 || !strings.Contains(stderr, want) {
			t.Errorf("a logic that %s: exit %d, stderr:\n%s\nwant %s", mode, code, stderr, want)
		}
	}

	// A tournament of it: arena bench.
	csv := filepath.Join(t.TempDir(), "bench.csv")
	out, err := exec.Command(bin, "bench", "--game", game, "--bots", bot+","+crasher, "--repeats", "2", "--jobs", "1", "--out", csv).CombinedOutput()
	if err != nil || !strings.Contains(string(out), bot) {
		t.Errorf("arena bench of a logic game: %v\n%s", err, out)
	} else if rows, _ := os.ReadFile(csv); strings.Count(string(rows), "\n") != 3 || strings.Count(string(rows), game) != 2 {
		t.Errorf("arena bench of a logic game: the CSV:\n%s\noutput:\n%s", rows, out)
	}

	// Is the kit's bot better than one that crashes? arena bench --sprt
	// decides, on the logic's verdicts.
	out, err = exec.Command(bin, "bench", "--game", game, "--sprt", "0,50", "--jobs", "1", "--seed", "3", "--bots", bot+","+crasher).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "H1 accepted: "+bot+" is better") {
		t.Errorf("arena bench --sprt of a logic game: %v\n%s", err, out)
	} else {
		t.Logf("arena bench --sprt of a logic game:\n%s", out[strings.LastIndex(string(out), "SPRT of"):])
	}

	// A logic of two for three bots: refused, before anything starts.
	if _, stderr, code := run("--game", game, bot, bot, bot); code != 2 || !strings.Contains(stderr, "takes 2 bots") {
		t.Errorf("three bots for a logic of two: exit %d\n%s", code, stderr)
	}
}

// spyPlayer is a logic's player that tries what a hostile one would:
// read the server's API, reach into the page that shows it, and leave.
const spyPlayer = `<!doctype html><script>
addEventListener("message", async (e) => {
  if (!e.data || e.data.type !== "arena:frame") return;
  let api = "fetch blocked", page = "page blocked", cookie = "no cookie";
  try { const r = await fetch("/api/games"); api = "fetch read " + (await r.text()).length + " bytes"; } catch (err) {}
  try { page = "page read: " + parent.document.title; } catch (err) {}
  try { cookie = "cookie " + document.cookie; } catch (err) {}
  try { top.location = "https://example.org/"; } catch (err) {}
  parent.postMessage({type: "arena:label", text: "spy: " + [api, page, cookie].join(", ")}, "*");
});
</script>`

// A logic game registered on a server (ARENA_GAMES) is offered as the
// built-in games are: listed, played through the API (in the server's
// own process: no other host's replay of a logic is believed), shown in
// the page by its own player (in a sandboxed iframe, where a hostile one
// reaches nothing) or else the generic view, in a contest and on a
// ladder; a match whose logic fails is failed, and its ladder rates no
// one for it; arena ladder rates the logic game's ladder again.
func TestALogicGameOnTheServer(t *testing.T) {
	t.Parallel() // see docs/tests.md
	cli := dockertest.Client(t)
	logic, bot := logicKit(t, cli)
	sleeper, hostile := misbehaving(t, cli, bot)
	// The same logic without its player, and with a hostile one.
	plain := dockertest.Build(t, cli, "arena-test/ttt-plain", "FROM "+logic+"\nLABEL io.arena.player=\n", nil)
	spy := dockertest.Build(t, cli, "arena-test/ttt-spy", "FROM "+logic+"\nCOPY index.html /spy/index.html\nLABEL io.arena.player=/spy\n", map[string]string{"index.html": spyPlayer})
	bin := arenaBinary(t)

	// A game whose image is not there: the server says so, and stops.
	out, err := exec.Command(bin, "serve", "--port", strconv.Itoa(freePort(t)), "--data", t.TempDir(), "--games", "ghost=arena-test/no-such-logic").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "game ghost: its logic image arena-test/no-such-logic") {
		t.Errorf("a registered game without its image: %v\n%s", err, out)
	}

	data := t.TempDir()
	// A save of an image no longer registered, from an earlier start.
	os.MkdirAll(filepath.Join(data, "players"), 0o700)
	os.WriteFile(filepath.Join(data, "players", "base-0123.tar"), []byte("stale"), 0o600)
	registered := "ttt=" + logic + ",bad=" + hostile + ",plain=" + plain + ",spy=" + spy
	// The sleeper's first answer is waited for in every match it plays:
	// a warm-up of 5 s, not the game's 20.
	s := startServer(t, bin, data, freePort(t), "--games", registered, "--warmup", "5s")
	res, err := http.Get(s.url + "/api/games")
	if err != nil {
		t.Fatal(err)
	}
	var games []map[string]any
	json.NewDecoder(res.Body).Decode(&games)
	res.Body.Close()
	if names := fmt.Sprint(games); !strings.Contains(names, "name:ttt") || !strings.Contains(names, "name:bad") || !strings.Contains(names, "max_players:2") ||
		!strings.Contains(names, "player:/games/ttt/player/index.html") || strings.Contains(names, "player:/games/plain") || !strings.Contains(names, "title:Tic-tac-toe") {
		t.Fatalf("the games: %v", games)
	}
	wait := func(id string) map[string]any {
		t.Helper()
		var m map[string]any
		poll.Until(t, time.Minute, func() error {
			if _, m = s.call(t, "GET", "/api/matches/"+id, ""); m["status"] != "finished" && m["status"] != "failed" {
				return fmt.Errorf("match %s did not end: %v", id, m)
			}
			return nil
		})
		return m
	}
	play := func(game string) string {
		t.Helper()
		status, m := s.call(t, "POST", "/api/matches", fmt.Sprintf(`{"game":%q,"bots":[%q,%q]}`, game, bot, sleeper))
		if status != 201 {
			t.Fatalf("a match of %s: %d %v", game, status, m)
		}
		m = wait(m["id"].(string))
		result, _ := m["result"].(map[string]any)
		if m["status"] != "finished" || result == nil || fmt.Sprint(result["winners"]) != "["+bot+"]" {
			t.Errorf("a match of %s: %v", game, m)
		}
		return m["id"].(string)
	}
	ctx := newBrowser(t, 1280, 900)
	// open shows a match in the page, at its last turn, once cond holds.
	open := func(id, game, cond string) {
		t.Helper()
		if err := chromedp.Do(ctx,
			chromedp.Navigate(s.url+"/#/match/"+id),
			chromedp.Poll[chromedp.Void](fmt.Sprintf(`document.querySelector("#match-title").textContent.startsWith(%q) && document.querySelector("#result").classList.contains("visible") && /^Turn (\d+) \/ \1$/.test(document.querySelector("#turn").textContent) && (%s)`, game, cond), chromedp.WithPollingTimeout(30*time.Second))); err != nil {
			t.Fatalf("the match of %s in the page: %v", game, err)
		}
		if png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)); err == nil {
			saveArtefact(t, "logic-game-"+game+".png", png)
		}
	}
	type view struct {
		Label   string `json:"label"`
		Height  int    `json:"height"`
		Board   bool   `json:"board"`
		Player  bool   `json:"player"`
		Title   string `json:"title"`
		Sandbox string `json:"sandbox"`
	}
	look := func() view {
		t.Helper()
		v, err := chromedp.Run(ctx, chromedp.Evaluate[view](`(() => { const b = document.querySelector("#board"), p = document.querySelector("#player");
			return {label: b.getAttribute("aria-label") || "", height: b.height, board: !b.hidden, player: !p.hidden, title: p.title, sandbox: p.getAttribute("sandbox")}; })()`))
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	// Its own player, in a sandboxed iframe, says what it shows.
	// At its last turn, the final position: who won, and why.
	open(play("ttt"), "ttt", `/^Tic-tac-toe, Round \d+: the match is over, X won \(.*the other's fault: TLE\)$/.test(document.querySelector("#player").title)`)
	if v := look(); !v.Player || v.Board || v.Sandbox != "allow-scripts" {
		t.Errorf("the game's own player: %+v", v)
	}
	// Without a player, the generic view: the round, what each bot was
	// sent and answered.
	open(play("plain"), "plain", `document.querySelector("#board").getAttribute("aria-label").startsWith("plain: turn")`)
	if v := look(); !v.Board || v.Player || v.Height < 120 {
		t.Errorf("the generic view: %+v", v)
	}
	// A hostile player reads nothing of the server or the page, and
	// cannot take the page elsewhere.
	open(play("spy"), "spy", `document.querySelector("#player").title.startsWith("spy:")`)
	if v := look(); v.Title != "spy: fetch blocked, page blocked, no cookie" {
		t.Errorf("a hostile player: %q", v.Title)
	}
	if url, err := chromedp.Run(ctx, chromedp.Evaluate[string](`location.href`)); err != nil || !strings.HasPrefix(url, s.url) {
		t.Errorf("a hostile player took the page to %s (%v)", url, err)
	}
	// The match form lists a game by its title (io.arena.title), if any.
	if opts, err := chromedp.Run(ctx, chromedp.Evaluate[string](`[...document.querySelectorAll("#game option")].map((o) => o.textContent + "=" + o.value).join("|")`)); err != nil ||
		!strings.Contains(opts, "|Tic-tac-toe (ttt)=ttt|") || !strings.Contains(opts, "|bad=bad|") {
		t.Errorf("the games in the match form: %q (%v)", opts, err)
	}

	status, m := s.call(t, "POST", "/api/matches", fmt.Sprintf(`{"game":"bad","bots":[%q,%q],"settings":{"mode":"crash"}}`, bot, bot))
	if status != 201 {
		t.Fatalf("a match of bad: %d %v", status, m)
	}
	if m = wait(m["id"].(string)); m["status"] != "failed" || !strings.Contains(fmt.Sprint(m["error"]), "the logic's own bug") {
		t.Errorf("a match whose logic crashes: %v", m)
	}

	// A game registered with limits of its own: listed with them, the
	// server's where it sets none; its logic over its memory fails its
	// matches, saying so.
	hog := dockertest.Build(t, cli, "arena-test/hog-logic", "FROM "+hostile+"\nENV MODE=memory\n", nil)
	if status, b := s.call(t, "POST", "/api/games", fmt.Sprintf(`{"name":"hog","image":%q,"limits":{"memory_bytes":67108864,"round_ms":2000}}`, hog)); status != http.StatusCreated {
		t.Fatalf("register hog: %d %v", status, b)
	}
	if status, b := s.call(t, "POST", "/api/games", fmt.Sprintf(`{"name":"hog2","image":%q,"limits":{"memory_bytes":1024}}`, hog)); status != http.StatusBadRequest || !strings.Contains(fmt.Sprint(b["error"]), "memory_bytes 1024") {
		t.Errorf("a memory limit below the engine's: %d %v", status, b)
	}
	res, err = http.Get(s.url + "/api/games")
	if err != nil {
		t.Fatal(err)
	}
	games = nil
	json.NewDecoder(res.Body).Decode(&games)
	res.Body.Close()
	for _, g := range games {
		if g["name"] != "hog" {
			continue
		}
		lim, _ := g["logic"].(map[string]any)["limits"].(map[string]any)
		if lim["memory_bytes"] != float64(64<<20) || lim["round_ms"] != float64(2000) || lim["cpus"] != float64(1) || lim["message_bytes"] != float64(1<<20) {
			t.Errorf("hog's limits: %v", g)
		}
	}
	status, m = s.call(t, "POST", "/api/matches", fmt.Sprintf(`{"game":"hog","bots":[%q,%q]}`, bot, bot))
	if status != 201 {
		t.Fatalf("a match of hog: %d %v", status, m)
	}
	if m = wait(m["id"].(string)); m["status"] != "failed" || !strings.Contains(fmt.Sprint(m["error"]), "killed for exceeding its memory limit") {
		t.Errorf("a match whose logic runs out of memory: %v", m)
	}
	// And past its own round time.
	if status, b := s.call(t, "POST", "/api/games", fmt.Sprintf(`{"name":"slow","image":%q,"limits":{"round_ms":1000}}`, hostile)); status != http.StatusCreated {
		t.Fatalf("register slow: %d %v", status, b)
	}
	status, m = s.call(t, "POST", "/api/matches", fmt.Sprintf(`{"game":"slow","bots":[%q,%q],"settings":{"mode":"slow"}}`, bot, bot))
	if status != 201 {
		t.Fatalf("a match of slow: %d %v", status, m)
	}
	if m = wait(m["id"].(string)); m["status"] != "failed" || !strings.Contains(fmt.Sprint(m["error"]), "the logic sent nothing more for 1s (its time for a round)") {
		t.Errorf("a match whose logic is past its round time: %v", m)
	}

	// A contest of it: the final plays the registered game, its logic's
	// verdicts are the standings.
	final := tttCup(t, s, 3*time.Minute, bot, sleeper)
	if rows := contestRows(final); len(rows) != 2 || !strings.HasPrefix(rows[0], bot+" #1 2 pts 2/0/0") || !strings.HasPrefix(rows[1], sleeper+" #2 0 pts 0/0/2 faults 2") {
		t.Errorf("the standings of a logic game's contest: %q", rows)
	}

	// The ladders: ttt's rates its matches; bad's and hog's void every
	// one (their entries the same bots, labelled for no game).
	anyBot := dockertest.Build(t, cli, "arena-test/ttt-anybot", "FROM "+bot+"\nLABEL io.arena.game=\n", nil)
	anySleeper := dockertest.Build(t, cli, "arena-test/ttt-anysleeper", "FROM "+sleeper+"\nLABEL io.arena.game=\n", nil)
	for _, game := range []string{"ttt", "bad", "hog"} {
		entries := [][2]string{{"first", bot}, {"second", sleeper}}
		if game != "ttt" {
			entries = [][2]string{{"first", anyBot}, {"second", anySleeper}}
		}
		for _, e := range entries {
			if status, b := s.call(t, "POST", "/api/ladders/"+game+"/entries", fmt.Sprintf(`{"name":%q,"image":%q}`, e[0], e[1])); status != 201 {
				t.Fatalf("%s's ladder, entry %s: %d %v", game, e[0], status, b)
			}
		}
	}
	var bad, hogs map[string]any
	var recent, hogRecent []any
	poll.Until(t, 2*time.Minute, func() error {
		_, ttt := s.call(t, "GET", "/api/ladders/ttt", "")
		_, bad = s.call(t, "GET", "/api/ladders/bad", "")
		_, hogs = s.call(t, "GET", "/api/ladders/hog", "")
		recent, _ = bad["recent"].([]any)
		hogRecent, _ = hogs["recent"].([]any)
		if rated, _ := ttt["rated"].(float64); rated < 1 || len(recent) < 1 || len(hogRecent) < 1 {
			return fmt.Errorf("no ladder match settled: ttt %v\nbad %v\nhog %v", ttt, bad, hogs)
		}
		return nil
	})
	if r, _ := bad["rated"].(float64); r != 0 || !strings.Contains(fmt.Sprint(recent[0]), "state:void") {
		t.Errorf("the ladder of a failing logic: %v", bad)
	}
	if r, _ := hogs["rated"].(float64); r != 0 || !strings.Contains(fmt.Sprint(hogRecent[0]), "state:void") {
		t.Errorf("the ladder of a logic over its memory: %v", hogs)
	}

	// The saves the players were read from: ttt's and spy's, nothing else.
	var saves []string
	for _, image := range []string{logic, spy} {
		info, err := cli.ImageInspect(t.Context(), image)
		if err != nil {
			t.Fatal(err)
		}
		saves = append(saves, saveName(info.ID))
	}
	if entries, err := os.ReadDir(filepath.Join(data, "players")); err != nil || len(entries) != 2 || !slices.Contains(saves, entries[0].Name()) || !slices.Contains(saves, entries[1].Name()) {
		t.Errorf("the players' saves: %v %v, want %v", entries, err, saves)
	}

	// arena ladder, the server stopped: the logic game's board, rated
	// again from its history, as the server rated it.
	s.cmd.Process.Signal(syscall.SIGTERM)
	s.cmd.Wait()
	if out, err := exec.Command(bin, "ladder", "recompute", "ttt", "--data", data).CombinedOutput(); err == nil || !strings.Contains(string(out), "ARENA_GAMES or --games") {
		t.Errorf("arena ladder of a logic game not named: %v\n%s", err, out)
	}
	out, err = exec.Command(bin, "ladder", "recompute", "ttt", "--data", data, "--games", registered).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "by 0 at most") || !strings.Contains(string(out), "first") || !strings.Contains(string(out), "second") {
		t.Errorf("arena ladder recompute of a logic game: %v\n%s", err, out)
	}
	t.Logf("arena ladder recompute ttt:\n%s", out)
}

// An admin registers a logic game in the page (the Admin view, in local
// mode): it is offered at once, plays, stays registered across a
// restart (and in arena ladder, with no --games), and is removed in the
// page; a game whose image is not on the engine is refused with why.
func TestRegisteringALogicGameInThePage(t *testing.T) {
	cli := dockertest.Client(t)
	logic, bot := logicKit(t, cli)
	bin := arenaBinary(t)
	data, port := t.TempDir(), freePort(t)
	s := startServer(t, bin, data, port)
	ctx := newBrowser(t, 1280, 900)
	// register registers a game in the Admin view; with limits, its
	// logic's time for a round (ms) and memory (MiB) of its own.
	register := func(name, image string, limits ...string) {
		t.Helper()
		steps := []chromedp.Action[chromedp.Void]{
			chromedp.Navigate(s.url + "/#/admin"),
			chromedp.WaitVisible("#game-form"),
			chromedp.SetValue("#game-name", name),
			chromedp.SetValue("#game-image", image),
		}
		if len(limits) == 2 {
			steps = append(steps, chromedp.Click("#game-limits summary"), chromedp.WaitVisible("#game-round-ms"),
				chromedp.SetValue("#game-round-ms", limits[0]), chromedp.SetValue("#game-memory-mib", limits[1]))
		}
		if err := chromedp.Do(ctx, append(steps, chromedp.Click("#game-register"))...); err != nil {
			t.Fatal(err)
		}
	}
	// An image that is not there: the reason, and nothing registered.
	register("ghost", "arena-test/no-such-logic")
	if err := chromedp.Do(ctx, chromedp.Poll[chromedp.Void](`document.querySelector("#admin-error").textContent.includes("its logic image arena-test/no-such-logic")`, chromedp.WithPollingTimeout(20*time.Second))); err != nil {
		msg, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector("#admin-error").textContent`))
		t.Fatalf("registering a game without its image: %v (the page says %q)", err, msg)
	}
	register("ttt", logic, "5000", "128")
	// While its image is checked, the button says so.
	if text, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector("#game-register").textContent`)); err != nil || !strings.HasPrefix(text, "Registering") {
		t.Errorf("the button while ttt is registered: %q (%v)", text, err)
	}
	if err := chromedp.Do(ctx, chromedp.Poll[chromedp.Void](`document.querySelector("#logic-games tbody").textContent.includes("on offer") &&
		document.querySelector("#game-register").textContent === "Register" &&
		[...document.querySelectorAll("#game option")].some((o) => o.value === "ttt" && o.textContent === "Tic-tac-toe (ttt)") &&
		[...document.querySelectorAll("#ladder-game option")].some((o) => o.value === "ttt")`, chromedp.WithPollingTimeout(60*time.Second))); err != nil {
		rows, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector("#logic-games").textContent + " | " + document.querySelector("#admin-error").textContent`))
		t.Fatalf("ttt registered in the page: %v (%q)", err, rows)
	}
	if png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)); err == nil {
		saveArtefact(t, "logic-game-registered.png", png)
	}
	if text, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector("#logic-games tbody").textContent`)); err != nil ||
		!strings.Contains(text, logic) || !strings.Contains(text, "admin") || strings.Contains(text, "ghost") ||
		!strings.Contains(text, "5 s a round · 128 MiB · 1 CPU · 1024 KiB a message (its own where set)") {
		t.Errorf("the registered games: %q (%v)", text, err)
	}
	// It plays, with its own player.
	play := func(s *server, game string) {
		t.Helper()
		status, m := s.call(t, "POST", "/api/matches", fmt.Sprintf(`{"game":%q,"bots":[%q,%q]}`, game, bot, bot))
		if status != http.StatusCreated {
			t.Fatalf("a match of %s: %d %v", game, status, m)
		}
		id := m["id"].(string)
		poll.Until(t, time.Minute, func() error {
			if _, m = s.call(t, "GET", "/api/matches/"+id, ""); m["status"] != "finished" && m["status"] != "failed" {
				return fmt.Errorf("the match of %s did not end: %v", game, m)
			}
			return nil
		})
		if m["status"] != "finished" || m["game"] != game {
			t.Fatalf("a match of %s: %v", game, m)
		}
	}
	play(s, "ttt")
	// The same logic named by its image in the API plays too.
	play(s, "logic:"+logic)
	if res, err := http.Get(s.url + "/games/ttt/player/index.html"); err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("ttt's player: %v %v", res, err)
	} else {
		res.Body.Close()
	}
	// A ladder match of it, for arena ladder below.
	for _, name := range []string{"first", "second"} {
		if status, b := s.call(t, "POST", "/api/ladders/ttt/entries", fmt.Sprintf(`{"name":%q,"image":%q}`, name, bot)); status != http.StatusCreated {
			t.Fatalf("ttt's ladder, entry %s: %d %v", name, status, b)
		}
	}
	poll.Until(t, 2*time.Minute, func() error {
		if _, b := s.call(t, "GET", "/api/ladders/ttt", ""); b["rated"] == nil || b["rated"].(float64) < 1 {
			return fmt.Errorf("no ladder match of ttt was rated: %v", b)
		}
		return nil
	})

	// A restart: it is offered again, with its player, and arena ladder
	// knows it from the data folder alone.
	s.cmd.Process.Signal(syscall.SIGTERM)
	s.cmd.Wait()
	if out, err := exec.Command(bin, "ladder", "show", "ttt", "--data", data).CombinedOutput(); err != nil || !strings.Contains(string(out), "first") {
		t.Errorf("arena ladder show of a registered game: %v\n%s", err, out)
	}
	s = startServer(t, bin, data, port)
	if _, b := s.call(t, "GET", "/api/ladders/ttt", ""); b["game"] != "ttt" {
		t.Fatalf("ttt's ladder after a restart: %v", b)
	}
	play(s, "ttt")

	// Removed in the page: no longer offered.
	if err := chromedp.Do(ctx,
		chromedp.Navigate(s.url+"/"),
		chromedp.Navigate(s.url+"/#/admin"),
		chromedp.Poll[chromedp.Void](`document.querySelector("#logic-games tbody").textContent.includes("on offer")`, chromedp.WithPollingTimeout(20*time.Second)),
		chromedp.Evaluate[chromedp.Void](`window.confirm = () => true`),
		chromedp.Click(`#logic-games button[data-act="remove-game"]`),
		chromedp.Poll[chromedp.Void](`document.querySelector("#logic-games tbody").textContent.includes("none registered") &&
			![...document.querySelectorAll("#game option")].some((o) => o.value === "ttt")`, chromedp.WithPollingTimeout(20*time.Second)),
	); err != nil {
		t.Fatalf("removing ttt in the page: %v", err)
	}
	if status, m := s.call(t, "POST", "/api/matches", fmt.Sprintf(`{"game":"ttt","bots":[%q,%q]}`, bot, bot)); status != http.StatusBadRequest {
		t.Errorf("a match of ttt once removed: %d %v", status, m)
	}
}

// The logic kit as its README says, on a server with accounts: the kit's
// bot, built as it is (its Dockerfile labels it for ttt), pushed to the
// server's registry, is checked on the registered game and plays it; a
// bot pushed without the label is rejected, the message naming every
// game the server offers; the kit's logic pushed is found a logic, not
// a bot, and plays as logic:IMAGE.
func TestTheLogicKitWithAccounts(t *testing.T) {
	cli := dockertest.Client(t)
	logic, bot := logicKit(t, cli)
	port := freePort(t)
	host := fmt.Sprintf("127.0.0.1:%d", port)
	s := startServer(t, arenaBinary(t), t.TempDir(), port, "--auth", "accounts", "--admin-password", "the-admin-password", "--games", "ttt="+logic)
	admin := signedIn(t, s.url, "admin", "the-admin-password")
	if status, body := admin.call(t, "POST", "/api/users", `{"name":"alice","password":"alice-password"}`); status != 201 {
		t.Fatalf("make alice: %d %v", status, body)
	}
	alice := signedIn(t, s.url, "alice", "alice-password")
	status, body := alice.call(t, "POST", "/api/tokens", `{"name":"docker"}`)
	if status != 201 {
		t.Fatalf("alice's token: %d %v", status, body)
	}
	config := t.TempDir()
	if out, err := dockerCLI(t, config, body["token"].(string), "login", host, "-u", "alice", "--password-stdin"); err != nil {
		t.Fatalf("alice logs in: %v\n%s", err, out)
	}
	pushed, unlabelled, pushedLogic := host+"/alice/ttt-bot:v1", host+"/alice/ttt-plain:v1", host+"/alice/ttt-logic:v1"
	for ref, from := range map[string]string{pushed: bot, pushedLogic: logic} {
		if err := cli.ImageTag(t.Context(), from, ref); err != nil {
			t.Fatal(err)
		}
	}
	dockertest.Build(t, cli, unlabelled, "FROM "+bot+"\nLABEL io.arena.game=\n", nil)
	t.Cleanup(func() {
		for _, ref := range []string{pushed, unlabelled, pushedLogic} {
			cli.ImageRemove(context.Background(), ref, image.RemoveOptions{})
		}
		removeHeld(cli, host)
	})
	for _, ref := range []string{pushed, unlabelled, pushedLogic} {
		if out, err := dockerCLI(t, config, "", "push", ref); err != nil {
			t.Fatalf("alice pushes %s: %v\n%s", ref, err, out)
		}
	}
	state := func(ref string) map[string]any { return pushedImage(t, alice, ref) }
	poll.Until(t, 2*time.Minute, func() error {
		if a, b, c := state("alice/ttt-bot:v1"), state("alice/ttt-plain:v1"), state("alice/ttt-logic:v1"); a["state"] != "ready" || b["state"] != "rejected" || c["state"] != "ready" {
			return fmt.Errorf("the kit's bot, an unlabelled one and the kit's logic: %v\n%v\n%v", a, b, c)
		}
		return nil
	})
	if why := fmt.Sprint(state("alice/ttt-plain:v1")["reason"]); !strings.Contains(why, "io.arena.game=tanks, snake, pacman or ttt") {
		t.Errorf("why an unlabelled bot is rejected: %s", why)
	}
	if why := fmt.Sprint(state("alice/ttt-logic:v1")["reason"]); !strings.Contains(why, "play it as the game logic:alice/ttt-logic:v1") {
		t.Errorf("what the check says of a pushed logic: %s", why)
	}
	// Her bot plays the registered game, and her pushed logic as
	// logic:IMAGE.
	for _, game := range []string{"ttt", "logic:alice/ttt-logic:v1"} {
		status, m := alice.call(t, "POST", "/api/matches", fmt.Sprintf(`{"game":%q,"bots":["alice/ttt-bot:v1","alice/ttt-bot:v1"]}`, game))
		if status != 201 {
			t.Fatalf("alice's match of %s: %d %v", game, status, m)
		}
		id := m["id"].(string)
		poll.Until(t, time.Minute, func() error {
			if _, m = alice.call(t, "GET", "/api/matches/"+id, ""); m["status"] != "finished" {
				return fmt.Errorf("alice's match of %s: %v", game, m)
			}
			return nil
		})
		if r, _ := m["result"].(map[string]any); r == nil || r["turns"].(float64) < 5 {
			t.Errorf("alice's match of %s: %v", game, m)
		}
	}
}

// tttCup is a contest of ttt (contest 1) between two entries, frozen in
// 4 s: its standings once its final is over, within wait.
func tttCup(t *testing.T, s *server, wait time.Duration, first, second string) map[string]any {
	t.Helper()
	freeze := time.Now().Add(4 * time.Second).UTC().Format(time.RFC3339)
	if status, b := s.call(t, "POST", "/api/contests", fmt.Sprintf(`{"name":"TTT cup","game":"ttt","maps":["default"],"rounds":2,"freeze_at":%q,"answer_timeout_ms":1000,"entries_per_person":2}`, freeze)); status != http.StatusCreated {
		t.Fatalf("a contest of a logic game: %d %v", status, b)
	}
	for _, e := range []string{first, second} {
		if status, b := s.call(t, "POST", "/api/contests/1/entries", fmt.Sprintf(`{"image":%q}`, e)); status != http.StatusCreated {
			t.Fatalf("enter %s: %d %v", e, status, b)
		}
	}
	var final map[string]any
	poll.Until(t, wait, func() error {
		if _, final = s.call(t, "GET", "/api/contests/1/standings", ""); final["final"] != true {
			return fmt.Errorf("the final of a logic game did not end: %v", final)
		}
		return nil
	})
	return final
}
