package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/client"
	"golang.org/x/term"

	"arena/engine"
	"arena/internal/csvsafe"
	"arena/matches"
	"arena/orchestrator"
	"arena/sandbox"
	"arena/sprt"
)

type benchOptions struct {
	game, bots, opponents, maps, seed, out, settings string
	nats                                             string
	repeats, jobs, maxRounds                         int
	baseline                                         bool
	sprt                                             string // bench_sprt.go
	sprtMax                                          int
}

func benchFlags(out io.Writer) (*flag.FlagSet, *benchOptions, map[string]*string) {
	fs := flag.NewFlagSet("arena bench", flag.ContinueOnError)
	fs.SetOutput(out)
	o := &benchOptions{}
	fs.StringVar(&o.game, "game", "tanks", "the game to play")
	fs.StringVar(&o.bots, "bots", "", "comma-separated bots: image names, or patterns matched against local images (team_a/*)")
	fs.StringVar(&o.opponents, "opponents", "", "comma-separated opponents (names or patterns); without it the bots play each other")
	fs.StringVar(&o.maps, "maps", "", "comma-separated map names or globs (open*), or map files (default: the game's first map)")
	fs.IntVar(&o.repeats, "repeats", 2, "matches per pairing and map; seats swap every other time")
	fs.IntVar(&o.jobs, "jobs", max(1, runtime.NumCPU()/2), "matches played at once")
	fs.StringVar(&o.seed, "seed", "", "the tournament seed; each match's seed derives from it (default: random)")
	fs.StringVar(&o.out, "out", "", "write one CSV row per finished match to this file")
	fs.StringVar(&o.settings, "settings", "", "game settings as JSON")
	fs.IntVar(&o.maxRounds, "max-rounds", 0, "lower the game's round limit (games with a max_rounds setting)")
	fs.StringVar(&o.nats, "nats", "", "play the matches on the workers of this NATS (comma-separated URLs), --jobs of them at once")
	fs.BoolVar(&o.baseline, "baseline", false, "also time the bare container lifecycle (create, start, remove) of as many containers, and the platform's memory per running match")
	sprtFlags(fs, o)
	vals := register(fs, false)
	fs.Usage = func() {
		fmt.Fprintf(out, `Usage: arena bench [flags] --bots IMAGES [--opponents IMAGES]
       arena bench --sprt ELO0,ELO1 [flags] --bots NEW,OLD

Plays a tournament of two-player matches in parallel: every pairing of the
bots (or every bot against every opponent), on every map, --repeats times,
each match with a seed derived from --seed so the whole tournament can be
replayed. While it runs it shows a table refreshed in place (played, wins,
draws, losses, win rate with its 95%% interval, rank); when stdout is not a
terminal it prints a line per match. At the end: the ranking and, per bot,
how its matches ended (death reasons and fault statuses). Ctrl-C stops it
cleanly: finished matches stay in the CSV and every container is removed.
%s
Games and maps:
%s
Flags (settings also read their ARENA_* environment variable):
`, sprtUsage, gameList())
		fs.PrintDefaults()
	}
	return fs, o, vals
}

func cmdBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, b, err := benchArgs(args, stderr)
	if err != nil {
		return err
	}
	cfg, game, maps, settings, seed, test := b.cfg, b.game, b.maps, b.settings, b.seed, b.test

	log := newLogger(cfg.LogLevel, stderr)
	defer log.Sync()
	cli, d, local, err := sandboxes(ctx, cfg, log, stderr, strings.Contains(o.bots+","+o.opponents, sandbox.LocalPrefix),
		sandbox.WithPool(cfg.Pool, poolIdle), sandbox.WithPoolMax(cfg.PoolMax))
	if err != nil {
		return err
	}
	defer cli.Close()
	defer d.Close(context.WithoutCancel(ctx))
	bots, err := expandBots(ctx, cli, o.bots)
	if err != nil {
		return err
	}
	opponents, err := expandBots(ctx, cli, o.opponents)
	if err != nil {
		return err
	}
	if o.sprt != "" {
		return benchSPRT(ctx, stdout, stderr, o, test, cfg, log, d, local, game, maps, bots, opponents, seed, settings)
	}
	plan := orchestrator.BenchPlan{
		Game: game, Maps: maps, Bots: bots, Opponents: opponents, Repeats: o.repeats, Seed: seed,
		Settings: settings, Limits: matches.Limits{AnswerTimeout: cfg.AnswerTimeout, WarmUp: cfg.WarmUp},
	}
	total := len(plan.Matches())

	var csvOut *benchCSV
	if o.out != "" {
		if csvOut, err = newBenchCSV(o.out); err != nil {
			return usageErr("--out: %v", err)
		}
		defer csvOut.close()
	}
	everyone := append(slices.Clone(bots), opponents...)
	table := orchestrator.NewTable(slices.Compact(slices.Sorted(slices.Values(everyone)))...)
	view := newBenchView(stdout, total, seed, game.Name())
	view.start(table)
	done, failed := 0, 0
	var mem *rssSampler
	if o.baseline {
		mem = sampleRSS()
	}
	started := time.Now()
	orch := orchestrator.New(orchestrator.Launchers(d, local), cfg.Orchestrator(log)...)
	var player matches.Player = orch
	if o.nats != "" {
		disp, stop, err := benchDispatcher(ctx, o.nats, orch, log)
		if err != nil {
			return platformErr(err)
		}
		defer stop()
		player = disp
	}
	err = orch.RunBenchOn(ctx, player, plan, o.jobs, func(out orchestrator.BenchOutcome) {
		done++
		if out.Err != nil {
			failed++
		} else {
			table.Add(out.Match, out.Result)
		}
		if csvOut != nil {
			csvOut.write(game.Name(), out)
		}
		view.update(table, done, out)
	})
	view.stop(table, done)
	warnFallback(stderr, d.StdioPath())
	if err := tournamentErr(err); err != nil {
		return err
	}
	took := time.Since(started)
	printRanking(stdout, table, done, total, took)
	if o.baseline && ctx.Err() == nil {
		if err := printBaseline(ctx, stdout, d, bots[0], total, o.jobs, took, mem.stop()); err != nil {
			return platformErr(fmt.Errorf("baseline: %w", err))
		}
	}
	if csvOut != nil {
		fmt.Fprintf(stdout, "\n%d match(es) written to %s\n", done, o.out)
	}
	if ctx.Err() != nil {
		return platformErr(fmt.Errorf("interrupted after %d of %d matches; the running matches' containers were removed", done, total))
	}
	if failed > 0 {
		return platformErr(fmt.Errorf("%d of %d matches could not be played (see the error column)", failed, total))
	}
	return nil
}

// benchSetup is what bench's flags resolve to.
type benchSetup struct {
	cfg      Config
	game     engine.Game
	maps     []engine.Map
	settings json.RawMessage
	seed     uint64
	test     sprt.Test
}

// benchArgs reads bench's arguments and checks them.
func benchArgs(args []string, stderr io.Writer) (*benchOptions, benchSetup, error) {
	var b benchSetup
	fs, o, vals := benchFlags(stderr)
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, b, err
		}
		return nil, b, usageErr("%v (see arena help bench)", err)
	}
	if len(pos) > 0 {
		return nil, b, usageErr("bench takes its bots with --bots, got %q", pos)
	}
	if b.cfg, err = load(vals); err != nil {
		return nil, b, usageErr("%v", err)
	}
	if b.game, err = findGame(o.game, 2, b.cfg.LogicLimits); err != nil { // bench plays pairs
		return nil, b, usageErr("%v", err)
	}
	if b.maps, err = resolveMaps(b.game, o.maps); err != nil {
		return nil, b, usageErr("%v", err)
	}
	if b.settings, err = gameSettings(o.settings, o.maxRounds); err != nil {
		return nil, b, usageErr("%v", err)
	}
	if b.seed, err = parseSeed(o.seed); err != nil {
		return nil, b, usageErr("--seed: %v", err)
	}
	if o.bots == "" {
		return nil, b, usageErr("no bots given (--bots 'team_a/*' or --bots img1,img2)")
	}
	if o.repeats < 1 || o.jobs < 1 {
		return nil, b, usageErr("--repeats and --jobs must be at least 1")
	}
	if b.test, err = sprtTest(o); err != nil {
		return nil, b, err
	}
	return o, b, nil
}

// resolveMaps takes names, globs over the shipped maps, or files.
func resolveMaps(g engine.Game, spec string) ([]engine.Map, error) {
	if spec == "" {
		m, err := resolveMap(g, "")
		return []engine.Map{m}, err
	}
	var out []engine.Map
	for _, item := range strings.Split(spec, ",") {
		item = strings.TrimSpace(item)
		if strings.ContainsAny(item, "*?[") && !strings.ContainsAny(item, "./\\") {
			matched := false
			for _, info := range g.Maps() {
				if ok, _ := path.Match(item, info.Name); ok {
					m, err := g.Map(info.Name)
					if err != nil {
						return nil, err
					}
					out = append(out, m)
					matched = true
				}
			}
			if !matched {
				return nil, fmt.Errorf("no %s map matches %q", g.Name(), item)
			}
			continue
		}
		m, err := resolveMap(g, item)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

// expandBots turns names and patterns into image names. A pattern (with
// * ? or [) matches local images by repository (or repository:tag when
// the pattern has a tag); it must match at least one.
func expandBots(ctx context.Context, cli *client.Client, spec string) ([]string, error) {
	if strings.TrimSpace(spec) == "" {
		return nil, nil
	}
	var images []image.Summary
	var out []string
	for _, item := range strings.Split(spec, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		if sandbox.IsLocalRef(item) || !strings.ContainsAny(item, "*?[") {
			out = append(out, item)
			continue
		}
		if images == nil {
			var err error
			if images, err = cli.ImageList(ctx, image.ListOptions{}); err != nil {
				return nil, platformErr(fmt.Errorf("list images: %w", err))
			}
		}
		var matched []string
		for _, img := range images {
			for _, tag := range img.RepoTags {
				repo, t, _ := strings.Cut(tag, ":")
				if repo == "<none>" {
					continue
				}
				target := repo
				if strings.Contains(item, ":") {
					target = tag
				}
				if ok, _ := path.Match(item, target); ok {
					name := tag
					if t == "latest" {
						name = repo
					}
					matched = append(matched, name)
				}
			}
		}
		if len(matched) == 0 {
			return nil, usageErr("no local image matches %q", item)
		}
		slices.Sort(matched)
		out = append(out, matched...)
	}
	return slices.Compact(out), nil
}

// benchCSV writes one row per match as it ends, so an interrupted
// tournament keeps what it played.
type benchCSV struct {
	f *os.File
	w *csvsafe.Writer
}

var benchColumns = []string{"index", "game", "map", "seed", "p0", "p1", "winner", "rounds", "p0_score", "p1_score",
	"p0_death", "p1_death", "p0_death_round", "p1_death_round", "p0_status", "p1_status", "match_id", "duration_ms", "error"}

func newBenchCSV(path string) (*benchCSV, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	c := &benchCSV{f: f, w: csvsafe.NewWriter(f)}
	c.w.Header(benchColumns...)
	c.w.Flush()
	return c, c.w.Error()
}

func (c *benchCSV) write(game string, out orchestrator.BenchOutcome) {
	m := out.Match
	// The game, the map and the images are named by whoever runs the
	// bench or pushed the bots; a death reason can quote a bot.
	row := []csvsafe.Cell{csvsafe.Int(m.Index), csvsafe.Text(game), csvsafe.Text(m.Map.Info().Name), csvsafe.Int(m.Seed),
		csvsafe.Text(m.Images[0]), csvsafe.Text(m.Images[1])}
	if out.Result == nil {
		none := csvsafe.None
		row = append(row, none, none, none, none, none, none, none, none, none, none, none, none, csvsafe.Text(out.Err.Error()))
	} else {
		r := out.Result
		winner := "draw"
		if !r.Draw() {
			winner = strings.Join(r.Winners, " ")
		}
		b0, b1 := r.Bots[0], r.Bots[1]
		round := func(b matches.BotResult) csvsafe.Cell {
			if b.DeathReason == "" {
				return csvsafe.None
			}
			return csvsafe.Int(b.DeathTurn)
		}
		row = append(row, csvsafe.Text(winner), csvsafe.Int(r.Turns), csvsafe.Int(b0.Score), csvsafe.Int(b1.Score),
			csvsafe.Text(b0.DeathReason), csvsafe.Text(b1.DeathReason), round(b0), round(b1), csvsafe.Text(string(b0.Status)), csvsafe.Text(string(b1.Status)),
			csvsafe.Text(r.MatchID), csvsafe.Float(r.DurationMS, 'f', 0), csvsafe.None)
	}
	c.w.Write(row...)
	c.w.Flush()
}

func (c *benchCSV) close() {
	c.w.Flush()
	c.f.Close()
}

// benchView shows progress: a table redrawn in place on a terminal, a
// line per match otherwise.
type benchView struct {
	w      io.Writer
	tty    bool
	total  int
	header string
	lines  int
	mu     sync.Mutex
	last   time.Time
}

func newBenchView(w io.Writer, total int, seed uint64, game string) *benchView {
	tty := false
	if f, ok := w.(*os.File); ok {
		tty = term.IsTerminal(int(f.Fd()))
	}
	return &benchView{w: w, tty: tty, total: total, header: fmt.Sprintf("%s tournament, seed %d: %d matches", game, seed, total)}
}

func (v *benchView) start(t *orchestrator.Table) {
	if v.tty {
		v.draw(t, 0)
	} else {
		fmt.Fprintln(v.w, v.header)
	}
}

func (v *benchView) update(t *orchestrator.Table, done int, out orchestrator.BenchOutcome) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if !v.tty {
		m := out.Match
		what := outcomeText(out)
		if out.Result != nil {
			what += fmt.Sprintf(" after %d turns", out.Result.Turns)
		}
		fmt.Fprintf(v.w, "[%d/%d] %s seed %d: %s vs %s: %s\n", done, v.total, m.Map.Info().Name, m.Seed, m.Images[0], m.Images[1], what)
		return
	}
	// Redraw at most ten times a second.
	if time.Since(v.last) < 100*time.Millisecond && done < v.total {
		return
	}
	v.draw(t, done)
}

func (v *benchView) draw(t *orchestrator.Table, done int) {
	var b strings.Builder
	if v.lines > 0 {
		fmt.Fprintf(&b, "\x1b[%dA", v.lines)
	}
	text := standingsText(t, fmt.Sprintf("%s - %d/%d done", v.header, done, v.total))
	for _, line := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		b.WriteString(line + "\x1b[K\n")
	}
	v.lines = strings.Count(text, "\n")
	io.WriteString(v.w, b.String())
	v.last = time.Now()
}

// stop leaves the table as it ends.
func (v *benchView) stop(t *orchestrator.Table, done int) {
	if v.tty {
		v.draw(t, done)
	}
}

func standingsText(t *orchestrator.Table, title string) string {
	var b strings.Builder
	fmt.Fprintln(&b, title)
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RANK\tBOT\tPLAYED\tWON\tDRAWN\tLOST\tWIN RATE\t95% INTERVAL")
	for i, s := range t.Ranking() {
		lo, hi := s.Interval()
		fmt.Fprintf(tw, "%d\t%s\t%d\t%d\t%d\t%d\t%5.1f%%\t%5.1f%% - %5.1f%%\n", i+1, s.Bot, s.Played, s.Won, s.Drew, s.Lost, 100*s.Rate(), 100*lo, 100*hi)
	}
	tw.Flush()
	return b.String()
}

func printRanking(w io.Writer, t *orchestrator.Table, done, total int, took time.Duration) {
	fmt.Fprintf(w, "\n%s", standingsText(t, fmt.Sprintf("Final ranking (%d of %d matches, %.1fs):", done, total, took.Seconds())))
	fmt.Fprintln(w, "\nHow each bot's matches ended (death reasons, fault statuses):")
	for _, s := range t.Ranking() {
		fmt.Fprintf(w, "  %s: %s\n", s.Bot, s.ReasonSummary())
	}
}

// printBaseline times the bare lifecycle of as many containers as the
// tournament used (two per match, as many at once), and compares.
func printBaseline(ctx context.Context, w io.Writer, d *sandbox.Docker, ref string, matches, jobs int, took time.Duration, rssPerMatch float64) error {
	img, err := d.Image(ctx, ref)
	if err != nil {
		return err
	}
	n := 2 * matches
	work := make(chan int)
	errs := make(chan error, n)
	start := time.Now()
	var wg sync.WaitGroup
	for j := 0; j < 2*jobs; j++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range work {
				errs <- d.Lifecycle(ctx, img, "baseline")
			}
		}()
	}
	for i := 0; i < n; i++ {
		work <- i
	}
	close(work)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			return err
		}
	}
	bare := time.Since(start)
	// The serial rate: a sample of the same lifecycle, one container at a
	// time.
	k := min(n, 10)
	start = time.Now()
	for i := 0; i < k; i++ {
		if err := d.Lifecycle(ctx, img, "baseline"); err != nil {
			return err
		}
	}
	serial := float64(k) / 2 / time.Since(start).Seconds() // matches' worth per second
	matchRate := float64(matches) / took.Seconds()
	limit := float64(matches) / bare.Seconds() // matches' worth of containers per second
	fmt.Fprintf(w, "\nThroughput: %.2f matches/s; the bare lifecycle of %d containers (%d at once) took %.1fs, %.2f matches' worth/s: %.0f%% of the limit; one container at a time, %.2f matches' worth/s: %.0f%% of the serial lifecycle\n",
		matchRate, n, 2*jobs, bare.Seconds(), limit, 100*matchRate/limit, serial, 100*matchRate/serial)
	fmt.Fprintf(w, "Platform memory per running match: %.1f MiB (resident set growth over %d matches at once)\n", rssPerMatch/float64(max(1, jobs))/(1<<20), jobs)
	return nil
}

// rssSampler follows this process's resident set during a tournament.
type rssSampler struct {
	base, peak int64
	stopc      chan struct{}
	done       chan struct{}
}

func sampleRSS() *rssSampler {
	s := &rssSampler{base: readRSS(), stopc: make(chan struct{}), done: make(chan struct{})}
	s.peak = s.base
	go func() {
		defer close(s.done)
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				s.peak = max(s.peak, readRSS())
			case <-s.stopc:
				return
			}
		}
	}()
	return s
}

// stop ends the sampling and returns the growth of the resident set.
func (s *rssSampler) stop() float64 {
	if s == nil {
		return 0
	}
	close(s.stopc)
	<-s.done
	return float64(max(0, s.peak-s.base))
}

func readRSS() int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// tournamentErr is how a tournament's error ends the command: none when it
// was interrupted (the finished rows are kept), a usage error for what was
// asked wrong, else the platform's.
func tournamentErr(err error) error {
	switch {
	case err == nil || errors.Is(err, context.Canceled):
		return nil
	case badInput(err):
		return usageErr("%v", err)
	default:
		return platformErr(err)
	}
}

// outcomeText says how a tournament's match ended: its winners, a draw, or
// the error that ended it.
func outcomeText(out orchestrator.BenchOutcome) string {
	switch {
	case out.Result == nil:
		return "error: " + fmt.Sprint(out.Err)
	default:
		return out.Result.Outcome()
	}
}
