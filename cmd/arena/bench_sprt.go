package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"arena/engine"
	"arena/matches"
	"arena/orchestrator"
	"arena/sandbox"
	"arena/sprt"
)

const sprtUsage = `
With --sprt ELO0,ELO1 it answers "is NEW better than OLD?" instead: it plays
pairs of matches between the first bot of --bots (NEW) and the other (the
second of --bots, or --opponents), each pair on one seed with the seats
swapped, and stops as soon as a sequential probability ratio test (SPRT,
as fishtest and cutechess-cli run it: pentanomial model on pairs, logistic
Elo, alpha = beta = 0.05) accepts H0 (NEW is at most ELO0 stronger) or H1
(NEW is at least ELO1 stronger), e.g. --sprt 0,20. The live table shows the
log-likelihood ratio (LLR) and its bounds; the end shows the verdict, the
Elo difference with its 95% interval, and how many matches a fixed run of
the same confidence would have needed. --repeats does not apply; an
undecided test stops after --sprt-max-matches.
`

func sprtFlags(fs *flag.FlagSet, o *benchOptions) {
	fs.StringVar(&o.sprt, "sprt", "", "run an SPRT of the first bot against the other: ELO0,ELO1 (e.g. 0,20)")
	fs.IntVar(&o.sprtMax, "sprt-max-matches", 10000, "with --sprt: stop an undecided test after this many matches")
}

// sprtTest checks the SPRT flags before anything starts (zero Test
// without --sprt).
func sprtTest(o *benchOptions) (sprt.Test, error) {
	if o.sprt == "" {
		return sprt.Test{}, nil
	}
	t, err := sprt.Parse(o.sprt)
	if err != nil {
		return t, usageErr("--sprt: %v", err)
	}
	if o.sprtMax < 2 {
		return t, usageErr("--sprt-max-matches must be at least 2 (one pair)")
	}
	if o.baseline {
		return t, usageErr("--baseline does not go with --sprt")
	}
	return t, nil
}

// sprtBots are the candidate and the base: two bots, or one bot and one
// opponent.
func sprtBots(bots, opponents []string) (candidate, base string, err error) {
	all := append(append([]string(nil), bots...), opponents...)
	if len(all) != 2 || all[0] == all[1] {
		return "", "", usageErr("--sprt compares two different bots: --bots NEW,OLD (or --bots NEW --opponents OLD), got %q", all)
	}
	return all[0], all[1], nil
}

func benchSPRT(ctx context.Context, stdout, stderr io.Writer, o *benchOptions, test sprt.Test, cfg Config, log *zap.Logger,
	d *sandbox.Docker, local *sandbox.Local, game engine.Game, maps []engine.Map, bots, opponents []string, seed uint64, settings json.RawMessage) error {
	candidate, base, err := sprtBots(bots, opponents)
	if err != nil {
		return err
	}
	plan := orchestrator.SPRTPlan{
		Game: game, Maps: maps, Candidate: candidate, Base: base, Test: test, MaxPairs: o.sprtMax / 2,
		Seed: seed, Settings: settings, Limits: matches.Limits{AnswerTimeout: cfg.AnswerTimeout, WarmUp: cfg.WarmUp},
	}
	var csvOut *benchCSV
	if o.out != "" {
		if csvOut, err = newBenchCSV(o.out); err != nil {
			return usageErr("--out: %v", err)
		}
		defer csvOut.close()
	}
	table := orchestrator.NewTable(candidate, base)
	view := newBenchView(stdout, o.sprtMax, seed, game.Name())
	view.header = fmt.Sprintf("%s SPRT, seed %d: is %s better than %s? H0: %+g Elo, H1: %+g Elo", game.Name(), seed, candidate, base, test.Elo0, test.Elo1)
	sv := &sprtView{benchView: view, test: test}
	sv.start(table)
	done := 0
	started := time.Now()
	orch := orchestrator.New(orchestrator.Launchers(d, local), cfg.Orchestrator(log)...)
	st, err := orch.RunSPRT(ctx, plan, o.jobs, func(out orchestrator.BenchOutcome, st orchestrator.SPRTState) {
		done++
		if out.Err == nil {
			table.Add(out.Match, out.Result)
		}
		if csvOut != nil {
			csvOut.write(game.Name(), out)
		}
		sv.update(table, done, out, st)
	})
	sv.stop(table, done)
	warnFallback(stderr, d.StdioPath())
	if err := tournamentErr(err); err != nil {
		return err
	}
	printSPRT(stdout, test, st, candidate, base, time.Since(started))
	if csvOut != nil {
		fmt.Fprintf(stdout, "\n%d match(es) written to %s\n", done, o.out)
	}
	if ctx.Err() != nil {
		return platformErr(fmt.Errorf("interrupted after %d matches, before the test decided; the running matches' containers were removed", done))
	}
	if st.Failed > 0 {
		return platformErr(fmt.Errorf("%d match(es) could not be played; their pairs were not counted", st.Failed))
	}
	return nil
}

// sprtView is the bench view with the test's state under the table.
type sprtView struct {
	*benchView
	test sprt.Test
	mu   sync.Mutex
	st   orchestrator.SPRTState
}

func (v *sprtView) start(t *orchestrator.Table) {
	if v.tty {
		v.redraw(t, 0)
	} else {
		fmt.Fprintln(v.w, v.header)
	}
}

func (v *sprtView) update(t *orchestrator.Table, done int, out orchestrator.BenchOutcome, st orchestrator.SPRTState) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.st = st
	if !v.tty {
		m := out.Match
		fmt.Fprintf(v.w, "[%d] %s seed %d: %s vs %s: %s | %s\n", done, m.Map.Info().Name, m.Seed, m.Images[0], m.Images[1], outcomeText(out), sprtLine(v.test, st))
		return
	}
	if time.Since(v.last) < 100*time.Millisecond && st.Decision == sprt.Continue {
		return
	}
	v.redraw(t, done)
}

func (v *sprtView) stop(t *orchestrator.Table, done int) {
	if v.tty {
		v.redraw(t, done)
	}
}

func (v *sprtView) redraw(t *orchestrator.Table, done int) {
	var b strings.Builder
	if v.lines > 0 {
		fmt.Fprintf(&b, "\x1b[%dA", v.lines)
	}
	text := standingsText(t, fmt.Sprintf("%s - %d matches", v.header, done)) + sprtLine(v.test, v.st) + "\n"
	for _, line := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		b.WriteString(line + "\x1b[K\n")
	}
	v.lines = strings.Count(text, "\n")
	io.WriteString(v.w, b.String())
	v.last = time.Now()
}

// sprtLine is the test's state in one line: the LLR between its bounds
// and the pairs so far.
func sprtLine(t sprt.Test, st orchestrator.SPRTState) string {
	lo, hi := t.Bounds()
	p := st.Pairs
	return fmt.Sprintf("LLR %.2f [%.2f, %.2f] (%s) after %d pairs, pentanomial %d %d %d %d %d",
		st.LLR, lo, hi, st.Decision, p.Pairs(), p[0], p[1], p[2], p[3], p[4])
}

// printSPRT prints the verdict, the Elo estimate and the cost compared
// with a fixed run.
func printSPRT(w io.Writer, t sprt.Test, st orchestrator.SPRTState, candidate, base string, took time.Duration) {
	p := st.Pairs
	fmt.Fprintf(w, "\nSPRT of %s against %s (H0: %+g Elo, H1: %+g Elo, alpha %g, beta %g), %.1fs:\n", candidate, base, t.Elo0, t.Elo1, t.Alpha, t.Beta, took.Seconds())
	switch st.Decision {
	case sprt.AcceptH1:
		fmt.Fprintf(w, "  H1 accepted: %s is better (at least %+g Elo).\n", candidate, t.Elo1)
	case sprt.AcceptH0:
		fmt.Fprintf(w, "  H0 accepted: %s is not better by %+g Elo (at most %+g).\n", candidate, t.Elo1, t.Elo0)
	default:
		fmt.Fprintln(w, "  undecided: no hypothesis accepted yet.")
	}
	fmt.Fprintf(w, "  %s\n", sprtLine(t, st))
	won, drawn, lost := p.Games()
	fmt.Fprintf(w, "  games for %s: %d won, %d drawn, %d lost\n", candidate, won, drawn, lost)
	if p.Pairs() > 0 {
		elo, lo, hi := sprt.Estimate(p)
		fmt.Fprintf(w, "  Elo difference: %s (95%% interval %s to %s)\n", eloText(elo), eloText(lo), eloText(hi))
		fmt.Fprintf(w, "  matches: %d; a fixed number of matches with the same error rates would be about %d\n", 2*p.Pairs(), 2*t.FixedPairs(p))
	}
}

func eloText(e float64) string {
	if math.IsInf(e, 0) {
		return map[bool]string{true: "+inf", false: "-inf"}[e > 0]
	}
	return fmt.Sprintf("%+.1f", e)
}
