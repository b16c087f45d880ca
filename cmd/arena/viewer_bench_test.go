package main

import (
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"arena/internal/dockertest"
)

// longTaskProbe records, from the page's start, every task of the main
// thread over 50 ms (the Long Tasks API) and the time each took.
const longTaskProbe = `window.longTasks = [];
new PerformanceObserver((l) => l.getEntries().forEach((e) => longTasks.push(e.duration))).observe({ type: "longtask", buffered: true });`

// viewerFigures are what the page measured of itself.
type viewerFigures struct {
	Frames     int       `json:"frames"`
	LongTasks  []float64 `json:"longTasks"`
	FirstBoard float64   `json:"firstBoard"`
}

// BenchmarkViewer watches long matches in Chromium, live (the page open
// before the match starts) and then opened finished (the page loaded
// afresh), and reports the page's tasks over 50 ms (the Long Tasks API:
// how many, the longest; live, from the match's opening on) and, opened
// finished, the time from the page's start to its first board: Pac-Man's example bots (1,200 rounds) and
// two greedy snakes on Snake's largest map (corridor30x15). Run it with make bench.
func BenchmarkViewer(b *testing.B) {
	cli := dockertest.Client(b)
	runner, ghosts := dockertest.KitBot(b, cli, "pacman-runner"), dockertest.KitBot(b, cli, "pacman-ghosts")
	greedy := dockertest.KitBot(b, cli, "snake-greedy")
	s := startServer(b, arenaBinary(b), b.TempDir(), freePort(b), "--ladder", "off")
	ctx := newBrowser(b, 1280, 1000)
	if _, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: longTaskProbe}); err != nil {
		b.Fatal(err)
	}
	figures := func() viewerFigures {
		b.Helper()
		f, err := chromedp.Run(ctx, chromedp.Evaluate[viewerFigures](`({
			frames: Number(document.querySelector("#charts").dataset.frames || 0),
			longTasks: longTasks,
			firstBoard: (performance.getEntriesByName("arena:first-board")[0] || { startTime: -1 }).startTime,
		})`))
		if err != nil {
			b.Fatal(err)
		}
		return f
	}
	over := viewerAtTheEnd
	longest := func(ts []float64) float64 {
		m := 0.0
		for _, t := range ts {
			m = max(m, t)
		}
		return m
	}
	for _, m := range []struct{ name, body string }{
		{"pacman", fmt.Sprintf(`{"game":"pacman","bots":[%q,%q]}`, runner, ghosts)},
		{"snake", fmt.Sprintf(`{"game":"snake","map":"corridor30x15","bots":[%q,%q]}`, greedy, greedy)},
	} {
		b.Run(m.name, func(b *testing.B) {
			for b.Loop() {
				// Live: the page opened, then the match started.
				if err := chromedp.Do(ctx, chromedp.Navigate(s.url), chromedp.WaitVisible(chromedp.CSS("#history"))); err != nil {
					b.Fatal(err)
				}
				id := s.post(b, m.body)
				// The page's own loading is not the match's.
				if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`longTasks.length = 0; location.hash = "#/match/`+id+`"`),
					chromedp.Poll[chromedp.Void](over, chromedp.WithPollingTimeout(10*time.Minute))); err != nil {
					b.Fatal(err)
				}
				live := figures()
				// Finished: opened afresh.
				if err := chromedp.Do(ctx, chromedp.Navigate("about:blank"), chromedp.Navigate(s.url+"/#/match/"+id),
					chromedp.Poll[chromedp.Void](over+` && Number(document.querySelector("#charts").dataset.frames) === `+fmt.Sprint(live.Frames), chromedp.WithPollingTimeout(time.Minute))); err != nil {
					b.Fatal(err)
				}
				done := figures()
				b.ReportMetric(float64(live.Frames), "frames")
				b.ReportMetric(float64(len(live.LongTasks)), "live-tasks>50ms")
				b.ReportMetric(longest(live.LongTasks), "live-longest-ms")
				b.ReportMetric(float64(len(done.LongTasks)), "open-tasks>50ms")
				b.ReportMetric(longest(done.LongTasks), "open-longest-ms")
				b.ReportMetric(done.FirstBoard, "first-board-ms")
			}
		})
	}
}
