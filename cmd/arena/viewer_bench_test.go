package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"arena/internal/testsupport/dockertest"
)

// longTaskProbe records, from the page's start, every task of the main
// thread over 50 ms (the Long Tasks API): when it started (ms from the
// page's start) and how long it took.
const longTaskProbe = `window.longTasks = [];
new PerformanceObserver((l) => l.getEntries().forEach((e) => longTasks.push({ at: e.startTime, ms: e.duration }))).observe({ type: "longtask", buffered: true });`

// longTask is a task the probe recorded.
type longTask struct {
	At float64 `json:"at"`
	Ms float64 `json:"ms"`
}

// viewerFigures are what the page measured of itself.
type viewerFigures struct {
	Frames     int        `json:"frames"`
	LongTasks  []longTask `json:"longTasks"`
	FirstBoard float64    `json:"firstBoard"`
	// Opened is when the match was opened (ms from the page's start).
	Opened float64 `json:"opened"`
}

// String lists the tasks, each as its length @ its start from the
// opening, for the log.
func (f viewerFigures) String() string {
	var b strings.Builder
	for _, t := range f.LongTasks {
		fmt.Fprintf(&b, " %.0f ms @ %.0f ms", t.Ms, t.At-f.Opened)
	}
	if b.Len() == 0 {
		return " none"
	}
	return b.String()
}

// longMatch is a match's request body and its name in a benchmark.
type longMatch struct{ name, body string }

// longMatches starts a server and a browser for the viewer's benchmarks,
// and gives the long matches they play: Pac-Man's example bots (1,200
// rounds, three levels) and a 2,000-turn Snake match on Snake's largest
// map (two snakebots circling their loops, no apples, so neither grows
// nor dies).
func longMatches(b *testing.B) (*server, context.Context, []longMatch) {
	cli := dockertest.Client(b)
	runner, ghosts := dockertest.KitBot(b, cli, "pacman-runner"), dockertest.KitBot(b, cli, "pacman-ghosts")
	circler := dockertest.SnakeBot(b, cli)
	s := startServer(b, arenaBinary(b), b.TempDir(), freePort(b), "--ladder", "off")
	return s, newBrowser(b, 1280, 1000), []longMatch{
		{"pacman", fmt.Sprintf(`{"game":"pacman","bots":[%q,%q]}`, runner, ghosts)},
		{"snake", fmt.Sprintf(`{"game":"snake","map":"wide60x30","settings":{"apples":0,"shields":0,"max_rounds":2000},"bots":[%q,%q]}`, circler, circler)},
	}
}

// BenchmarkViewer watches long matches in Chromium, live (the page open
// before the match starts) and then opened finished (the page loaded
// afresh), and reports the page's tasks over 50 ms (the Long Tasks API:
// how many, the longest; live, from the match's opening on), the longest
// task by the main thread's CPU time (a DevTools trace, taskTrace: a task
// long by the clock but short by the CPU waited for the cores the match
// runs on) and, opened finished, the time from the page's start to its
// first board, for longMatches; each as this machine runs the page, then
// with the page's CPU slowed four times (the slowing counts as CPU time:
// opened finished, a slowed task's CPU time is close to its wall time).
// Run it with make bench.
func BenchmarkViewer(b *testing.B) {
	s, ctx, matches := longMatches(b)
	if _, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: longTaskProbe}); err != nil {
		b.Fatal(err)
	}
	// With DevTools' network domain on (chromedp turns it on), the page's
	// main thread also keeps and decodes every response body for the
	// DevTools: ~50 ms at the end of a 6 MB stream, work a person's page
	// does not do.
	if _, err := chromedp.Call(ctx, network.Disable, struct{}{}); err != nil {
		b.Fatal(err)
	}
	figures := func() viewerFigures {
		b.Helper()
		f, err := chromedp.Run(ctx, chromedp.Evaluate[viewerFigures](`({
			frames: Number(document.querySelector("#charts").dataset.frames || 0),
			longTasks: longTasks,
			firstBoard: (performance.getEntriesByName("arena:first-board")[0] || { startTime: -1 }).startTime,
			opened: window.openedAt || 0,
		})`))
		if err != nil {
			b.Fatal(err)
		}
		return f
	}
	over := viewerAtTheEnd
	trace := newTaskTrace(b, ctx)
	_, eval := browserSteps(b, ctx)
	longest := func(ts []longTask) float64 {
		m := 0.0
		for _, t := range ts {
			m = max(m, t.Ms)
		}
		return m
	}
	// Each match is watched as this machine runs the page, then with the
	// page's CPU slowed four times (DevTools' CPU throttling) for a slower
	// computer watching the same server.
	for _, slow := range []float64{1, 4} {
		for _, m := range matches {
			name := m.name
			if slow != 1 {
				name += fmt.Sprintf("-cpu-slowed-%gx", slow)
			}
			b.Run(name, func(b *testing.B) {
				if _, err := chromedp.Call(ctx, emulation.SetCPUThrottlingRate, emulation.SetCPUThrottlingRateParams{Rate: slow}); err != nil {
					b.Fatal(err)
				}
				for b.Loop() {
					// Live: the page opened, then the match started.
					if err := chromedp.Do(ctx, chromedp.Navigate(s.url), chromedp.Poll[chromedp.Void](`document.readyState === "complete"`)); err != nil {
						b.Fatal(err)
					}
					time.Sleep(time.Second) // Sleeps on purpose: the page's own loading settles.
					id := s.post(b, m.body)
					// The page's own loading is not the match's. The match is
					// opened in a task of its own, as a click on its link would:
					// DevTools' evaluation is not the page's work.
					trace.start(b)
					if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`longTasks.length = 0; setTimeout(() => { window.openedAt = performance.now(); location.hash = "#/match/`+id+`" })`),
						chromedp.Poll[chromedp.Void](over, chromedp.WithPollingTimeout(10*time.Minute))); err != nil {
						b.Fatalf("watch it live to its end: %v; the viewer: %s", err, eval(viewerState))
					}
					live := figures()
					liveTrace := trace.stop(b)
					// Finished: opened afresh.
					if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
						b.Fatal(err)
					}
					trace.start(b)
					if err := chromedp.Do(ctx, chromedp.Navigate(s.url+"/#/match/"+id),
						chromedp.Poll[chromedp.Void](over+` && Number(document.querySelector("#charts").dataset.frames) === `+fmt.Sprint(live.Frames), chromedp.WithPollingTimeout(time.Minute))); err != nil {
						b.Fatalf("open it finished: %v; the viewer: %s", err, eval(viewerState))
					}
					done := figures()
					doneTrace := trace.stop(b)
					b.Logf("tasks over 50 ms, live:%s; opened finished:%s", live, done)
					b.Logf("traced, live:%s; opened finished:%s", liveTrace, doneTrace)
					b.ReportMetric(float64(live.Frames), "frames")
					b.ReportMetric(float64(len(live.LongTasks)), "live-tasks>50ms")
					b.ReportMetric(longest(live.LongTasks), "live-longest-ms")
					b.ReportMetric(float64(len(done.LongTasks)), "open-tasks>50ms")
					b.ReportMetric(longest(done.LongTasks), "open-longest-ms")
					b.ReportMetric(done.FirstBoard, "first-board-ms")
					b.ReportMetric(liveTrace.longestCPU(), "live-longest-cpu-ms")
					b.ReportMetric(doneTrace.longestCPU(), "open-longest-cpu-ms")
				}
			})
		}
	}
}

// drawEveryFrame, given a match's id, draws every frame of its replay in order on a
// fresh canvas on the viewer's stage, with the game's renderer, each
// followed by a read of one pixel (so the drawing is done, not queued),
// and reports the times and the sizes the canvas took.
const drawEveryFrame = `(async (ID) => {
	const { rendererFor } = await import("/games/index.js");
	const rep = await (await fetch("/api/matches/" + ID + "/replay")).json();
	const draw = rendererFor(rep.game);
	const c = document.createElement("canvas");
	document.querySelector("#board").parentElement.append(c);
	const g = c.getContext("2d");
	const ms = [];
	const sizes = new Set();
	for (let i = 0; i < rep.frames.length; i++) {
		const t0 = performance.now();
		draw.draw(c, rep.frames[i], { ids: rep.bots.map((b) => b.id), frames: rep.frames, index: i });
		g.getImageData(0, 0, 1, 1);
		ms.push(performance.now() - t0);
		sizes.add(c.width + "x" + c.height);
	}
	c.remove();
	return { ms, sizes: sizes.size };
})`

// BenchmarkBoards draws every frame of a long match in order, in
// Chromium, as the viewer does while it follows a match, for longMatches
// (Pac-Man's three levels are three board sizes). It reports the median,
// 99th percentile and longest frame, the frames over 8 ms after the
// first (half an animation frame) and the sizes the canvas took. Run it
// with make bench.
func BenchmarkBoards(b *testing.B) {
	s, ctx, matches := longMatches(b)
	for _, m := range matches {
		id := s.post(b, m.body)
		if err := chromedp.Do(ctx, chromedp.Navigate(s.url+"/#/match/"+id), chromedp.Poll[chromedp.Void](viewerAtTheEnd, chromedp.WithPollingTimeout(10*time.Minute))); err != nil {
			b.Fatalf("%s: %v", m.name, err)
		}
		b.Run(m.name, func(b *testing.B) {
			for b.Loop() {
				got, err := chromedp.Run(ctx, chromedp.Evaluate[struct {
					Ms    []float64 `json:"ms"`
					Sizes int       `json:"sizes"`
				}](drawEveryFrame+`("`+id+`")`, chromedp.EvalAwaitPromise))
				if err != nil {
					b.Fatal(err)
				}
				over := 0
				for _, ms := range got.Ms[1:] {
					if ms > 8 {
						over++
					}
				}
				sorted := slices.Sorted(slices.Values(got.Ms))
				at := func(q float64) float64 { return sorted[int(q*float64(len(sorted)-1))] }
				b.ReportMetric(float64(len(got.Ms)), "frames")
				b.ReportMetric(at(0.5), "p50-ms")
				b.ReportMetric(at(0.99), "p99-ms")
				b.ReportMetric(at(1), "max-ms")
				b.ReportMetric(float64(over), "frames>8ms")
				b.ReportMetric(float64(got.Sizes), "canvas-sizes")
			}
		})
	}
}
