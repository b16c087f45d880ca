package main

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"arena/internal/testsupport/dockertest"
)

// viewerAtTheEnd holds once the viewer shows a match's last turn, its
// result, and charts drawn to its end.
const viewerAtTheEnd = `document.querySelector("#result").classList.contains("visible") && /^Turn (\d+) \/ \1$/.test(document.querySelector("#turn").textContent) && Number(document.querySelector("#charts").dataset.frames) === Number(document.querySelector("#scrubber").max) + 1 && document.querySelector("#charts").dataset.done === "true"`

// viewerState is what viewerAtTheEnd reads, for a test that waited in vain.
const viewerState = `JSON.stringify({ result: document.querySelector("#result").className, turn: document.querySelector("#turn").textContent, frames: document.querySelector("#charts").dataset.frames, max: document.querySelector("#scrubber").max, done: document.querySelector("#charts").dataset.done, status: document.querySelector("#match-status").textContent })`

// The viewer on a long match (Pac-Man's example bots, most of a thousand
// turns), in a real browser, as people use it:
//   - watched live, the charts draw each frame's points once, and again
//     only when a scale grows: the points drawn stay within a few times
//     those plotted, however long the match (work that grew with the
//     square of its length would be hundreds of times);
//   - a chart drawn afresh is drawn a piece an animation frame: no call
//     draws more points than 300 frames' worth;
//   - a step at the last turn draws no chart point, as at turn 10;
//   - the board's canvas keeps one size through the three levels;
//   - a click on the slider lands on the turn under the pointer, and so
//     does a drag;
//   - #/match/ID?turn=40 opens turn 40, in the page and afresh; Copy link
//     gives the link to the turn shown.
func TestTheViewerOnALongMatch(t *testing.T) {
	cli := dockertest.Client(t)
	runner, ghosts := dockertest.KitBot(t, cli, "pacman-runner"), dockertest.KitBot(t, cli, "pacman-ghosts")
	s := startServer(t, arenaBinary(t), t.TempDir(), freePort(t), "--ladder", "off")
	ctx := newBrowser(t, 1280, 1000)
	must, eval := browserSteps(t, ctx)
	num := func(js string) float64 {
		t.Helper()
		v, err := chromedp.Run(ctx, chromedp.Evaluate[float64](js))
		if err != nil {
			t.Fatalf("%s: %v", js, err)
		}
		return v
	}
	turn := func() int { return turnOf(t, eval(`document.querySelector("#turn").textContent`)) }

	must("open the page", chromedp.Navigate(s.url), chromedp.WaitVisible(chromedp.CSS(`#bot-fields input[name="bot1"]`)))
	id := s.post(t, fmt.Sprintf(`{"game":"pacman","bots":[%q,%q]}`, runner, ghosts))
	// The sizes the board's canvas takes (a new size allocates its pixels
	// again and lays the page out again: a long task on a slow computer).
	must("count the board's sizes", chromedp.Evaluate[chromedp.Void](`window.boardSizes = new Set();
		new MutationObserver(() => { const c = document.querySelector("#board"); boardSizes.add(c.width + "x" + c.height); })
			.observe(document.querySelector("#board"), { attributes: true, attributeFilter: ["width", "height"] })`))
	must("watch it live", chromedp.Evaluate[chromedp.Void](`location.hash = "#/match/`+id+`"`))
	t.Logf("opened while %s", eval(`document.querySelector("#turn").textContent`))
	if err := chromedp.Do(ctx, chromedp.Poll[chromedp.Void](viewerAtTheEnd, chromedp.WithPollingTimeout(2*time.Minute))); err != nil {
		t.Fatalf("watch it to its end: %v; the viewer: %s", err, eval(viewerState))
	}
	frames := num(`Number(document.querySelector("#charts").dataset.frames)`)
	drawn := num(`Number(document.querySelector("#charts").dataset.drawn)`)
	plotted := num(`[...document.querySelectorAll("#charts canvas")].reduce((n, c) => n + Number(c.dataset.points || 0), 0)`)
	t.Logf("%.0f frames: %.0f chart points plotted, %.0f drawn", frames, plotted, drawn)
	if frames < 500 {
		t.Fatalf("the match has %.0f frames: not a long match", frames)
	}
	// Pac-Man's three levels are boards of three sizes: the canvas keeps
	// one size (the cells a little smaller where a level needs it).
	if sizes := eval(`JSON.stringify([...boardSizes])`); strings.Count(sizes, "x") != 1 {
		t.Errorf("the board's canvas took the sizes %s watching the match live, want one", sizes)
	}
	if plotted < frames || drawn > 8*plotted {
		t.Errorf("%.0f frames: %.0f points drawn for %.0f plotted, want at most 8 times", frames, drawn, plotted)
	}
	// A chart drawn afresh (the turn axis doubled, the match ended) is
	// drawn 300 frames an animation frame: 1,200 points at most (the
	// answer-time chart: two lines of two seats), whatever the length.
	if most := num(`Number(document.querySelector("#charts").dataset.most)`); most == 0 || most > 1200 {
		t.Errorf("%.0f frames: %.0f chart points drawn at once, want 1 to 1,200", frames, most)
	}

	// A step draws the board and moves the charts' line: no point drawn.
	step := func(key string) float64 {
		t.Helper()
		before := num(`Number(document.querySelector("#charts").dataset.drawn)`)
		must("step", chromedp.KeyEvent(key))
		return num(`Number(document.querySelector("#charts").dataset.drawn)`) - before
	}
	last := turn()
	if d := step("b"); d != 0 || turn() >= last {
		t.Errorf("a step back from the last turn %d: turn %d, %.0f chart points drawn, want none", last, turn(), d)
	}

	// ?turn=40, in the page open on the match, then afresh.
	must("?turn=40", chromedp.Evaluate[chromedp.Void](`location.hash = "#/match/`+id+`?turn=40"`),
		chromedp.Poll[chromedp.Void](`/^Turn 40 \//.test(document.querySelector("#turn").textContent)`, chromedp.WithPollingTimeout(10*time.Second)))
	must("?turn=10 afresh", chromedp.Navigate("about:blank"), chromedp.Navigate(s.url+"/#/match/"+id+"?turn=10"),
		chromedp.Poll[chromedp.Void](fmt.Sprintf(`/^Turn 10 \//.test(document.querySelector("#turn").textContent) && Number(document.querySelector("#charts").dataset.frames) === %.0f && document.querySelector("#charts").dataset.done === "true"`, frames), chromedp.WithPollingTimeout(30*time.Second)))
	if d := step("n"); d != 0 || turn() <= 10 {
		t.Errorf("a step at turn 10: turn %d, %.0f chart points drawn, want none", turn(), d)
	}

	// The slider: a click, then a drag, land on the turn under the pointer.
	type box struct{ X, Y, W, H, Max float64 }
	slider, err := chromedp.Run(ctx, chromedp.Evaluate[box](`(() => { const s = document.querySelector("#scrubber"); s.scrollIntoView({block: "center"}); const r = s.getBoundingClientRect(); return {X: r.left, Y: r.top, W: r.width, H: r.height, Max: Number(s.max)}; })()`))
	if err != nil {
		t.Fatal(err)
	}
	at := func(f float64) float64 { return slider.X + f*slider.W }
	y := slider.Y + slider.H/2
	near := func(what string, f float64) {
		t.Helper()
		got := num(`Number(document.querySelector("#scrubber").value)`)
		if want := f * slider.Max; math.Abs(got-want) > 0.03*slider.Max {
			t.Errorf("%s at %.0f%% of the slider: frame %.0f, want about %.0f (of %.0f)", what, 100*f, got, want, slider.Max)
		}
		if !strings.HasPrefix(eval(`document.querySelector("#turn").textContent`), fmt.Sprintf("Turn %d /", turn())) {
			t.Errorf("%s: the turn shown is not the slider's", what)
		}
	}
	must("click the slider", chromedp.MouseClickXY(at(0.25), y))
	near("a click", 0.25)
	held := func(p *input.DispatchMouseEventParams) { p.Buttons = 1 } // the left button, down
	must("drag the slider",
		chromedp.MouseEvent(chromedp.MousePressed, at(0.3), y, chromedp.ButtonLeft, chromedp.ClickCount(1)),
		chromedp.MouseEvent(chromedp.MouseMoved, at(0.45), y, chromedp.ButtonLeft, held),
		chromedp.MouseEvent(chromedp.MouseMoved, at(0.6), y, chromedp.ButtonLeft, held),
		chromedp.MouseEvent(chromedp.MouseMoved, at(0.7), y, chromedp.ButtonLeft, held),
		chromedp.MouseEvent(chromedp.MouseReleased, at(0.7), y, chromedp.ButtonLeft, chromedp.ClickCount(1)))
	near("a drag", 0.7)

	// Copy link: the link to the turn shown.
	shown := turn()
	must("copy the link", chromedp.Click(chromedp.CSS("#copy-link")),
		chromedp.Poll[chromedp.Void](`!document.querySelector("#link-note").hidden`, chromedp.WithPollingTimeout(5*time.Second)))
	if got, want := eval(`document.querySelector("#link-note").textContent`), fmt.Sprintf("%s/#/match/%s?turn=%d", s.url, id, shown); !strings.HasSuffix(got, want) {
		t.Errorf("Copy link says %q, want the link %s", got, want)
	}
	if shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(90)); err == nil {
		saveArtefact(t, "viewer-long-match.png", shot)
	}
}

// streamEndLate has the page's fetch of a match's stream hand over what
// comes as it comes but its "end" event 40 ms late: the end then comes
// while the viewer draws its charts, a chart an animation frame.
const streamEndLate = `(() => {
	const fetch0 = window.fetch;
	const mark = new TextEncoder().encode("event: end");
	const find = (b) => {
		for (let i = 0; i + mark.length <= b.length; i++) if (mark.every((m, k) => b[i + k] === m)) return i;
		return -1;
	};
	window.fetch = async (url, opts) => {
		const res = await fetch0(url, opts);
		if (!/\/stream$/.test(String(url)) || !res.body) return res;
		const reader = res.body.getReader();
		const body = new ReadableStream({
			async pull(c) {
				const { done, value } = await reader.read();
				if (done) return c.close();
				const i = find(value);
				if (i < 0) return c.enqueue(value);
				if (i > 0) c.enqueue(value.slice(0, i));
				await new Promise((r) => setTimeout(r, 40));
				window.streamEndHeld = (window.streamEndHeld || 0) + 1;
				c.enqueue(value.slice(i));
			},
		});
		return new Response(body, { status: res.status, headers: res.headers });
	};
})();`

// A stream that ends while the viewer draws its charts still leaves the
// turn's label at the last turn, not at "loading the turns".
func TestTheViewerWhenTheStreamEndsAmidItsCharts(t *testing.T) {
	cli := dockertest.Client(t)
	idle := dockertest.TestBot(t, cli, "delay=0s")
	s := startServer(t, arenaBinary(t), t.TempDir(), freePort(t), "--ladder", "off")
	id := s.post(t, fmt.Sprintf(`{"game":"tanks","bots":[%q,%q],"settings":{"zone_radius":0}}`, idle, idle))
	s.waitStatus(t, id, "finished")
	ctx := newBrowser(t, 1280, 1000)
	if _, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: streamEndLate}); err != nil {
		t.Fatal(err)
	}
	_, eval := browserSteps(t, ctx)
	for i := range 5 {
		if err := chromedp.Do(ctx, chromedp.Navigate("about:blank"), chromedp.Navigate(s.url+"/#/match/"+id),
			chromedp.Poll[chromedp.Void](viewerAtTheEnd, chromedp.WithPollingTimeout(15*time.Second))); err != nil {
			t.Fatalf("opening %d: %v; the viewer: %s", i+1, err, eval(viewerState))
		}
		if held := eval(`String(window.streamEndHeld)`); held != "1" {
			t.Fatalf("opening %d: the stream's end was held back %s times, want once", i+1, held)
		}
	}
}

// The stream's reader (web/static/util.js follow) lets the page paint
// within a chunk of the body, not only between chunks: a finished match
// comes in chunks of up to a megabyte, hundreds of frames, and a chunk read
// whole was a task of 17-31 ms (docs/performance.md, BenchmarkViewer). Here one
// chunk of 1,000 events, each taking 0.1 ms to handle, must be read in
// more than one task: a timer set before it runs amid its events.
func TestTheStreamLetsThePagePaintWithinAChunk(t *testing.T) {
	s := startServer(t, arenaBinary(t), t.TempDir(), freePort(t), "--ladder", "off")
	ctx := newBrowser(t, 800, 600)
	must, _ := browserSteps(t, ctx)
	must("open the page", chromedp.Navigate(s.url))
	got, err := chromedp.Run(ctx, chromedp.Evaluate[[]int](`(async () => {
		const { follow } = await import("/util.js");
		const body = "event: frame\nid: 1\ndata: {}\n\n".repeat(1000) + "event: end\ndata: \n\n";
		const fetch = window.fetch;
		window.fetch = async () => new Response(new ReadableStream({ start(c) { c.enqueue(new TextEncoder().encode(body)); c.close(); } }));
		let ticked = false;
		const seen = [0, 0]; // events handled before the timer ran, and after
		setTimeout(() => (ticked = true));
		await new Promise((end) => follow("/stream", {
			frame: () => {
				for (const until = performance.now() + 0.1; performance.now() < until; );
				seen[ticked ? 1 : 0]++;
			},
			end,
		}));
		window.fetch = fetch;
		return seen;
	})()`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0]+got[1] != 1000 || got[0] == 0 || got[1] == 0 {
		t.Errorf("events handled before the timer and after: %v, want 1,000 in all, some of them after (the page let in)", got)
	}
}
