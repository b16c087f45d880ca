package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/docker/docker/api/types/system"
	"github.com/docker/docker/client"
	"github.com/docker/go-units"
	"golang.org/x/term"

	"arena/engine"
	"arena/judger"
	"arena/matches"
	"arena/orchestrator"
	"arena/sandbox"
)

type runOptions struct {
	game, mapName, seed, replay, settings string
	json, view                            bool
	maxRounds, viewFPS                    int
}

func runFlags(out io.Writer) (*flag.FlagSet, *runOptions, map[string]*string) {
	fs := flag.NewFlagSet("arena run", flag.ContinueOnError)
	fs.SetOutput(out)
	o := &runOptions{}
	fs.StringVar(&o.game, "game", "tanks", "the game to play")
	fs.StringVar(&o.mapName, "map", "", "a shipped map's name, or the path of a map file (default: the game's first map)")
	fs.StringVar(&o.seed, "seed", "", "the match seed, 0 to 2^64-1 (default: random; the result shows it)")
	fs.BoolVar(&o.json, "json", false, "print the result as one JSON object")
	fs.StringVar(&o.replay, "replay", "", "write the replay to this file")
	fs.StringVar(&o.settings, "settings", "", `game settings as JSON, e.g. '{"zone_radius":20}'`)
	fs.BoolVar(&o.view, "view", false, "draw the match live in the terminal (space: pause/resume, right arrow: step, Esc: quit)")
	fs.IntVar(&o.viewFPS, "view-fps", 10, "turns per second shown by --view")
	fs.IntVar(&o.maxRounds, "max-rounds", 0, "lower the game's round limit (games with a max_rounds setting, e.g. snake)")
	vals := register(fs, false)
	fs.Usage = func() {
		fmt.Fprintf(out, `Usage: arena run [flags] IMAGE IMAGE...

Plays one match between the bots in the given Docker images (one per seat,
in order) and prints the result. The images must exist locally: Arena does
not pull. The same image may play several seats; its ids are then IMAGE,
IMAGE#2, ...

A bot given as exec:COMMAND runs as a local process instead, without
Docker, for quick iteration: exec:./mybot or exec:'python3 bot.py'. It gets
its own cgroup with the memory, CPU and pids limits where this machine
allows it (as root); otherwise it runs unconfined, with a warning.

Exit status: 0 when the match was played (whoever won), 2 for bad usage or
input, 1 when the platform could not run it (no Docker engine, image not
found).

Games and maps:
%s
Flags (settings also read their ARENA_* environment variable):
`, gameList())
		fs.PrintDefaults()
	}
	return fs, o, vals
}

func gameList() string {
	var b strings.Builder
	for _, g := range games() {
		for i, m := range g.Maps() {
			def := ""
			if i == 0 {
				def = " (default)"
			}
			fmt.Fprintf(&b, "  %-8s %-12s %dx%d, %d-%d bots%s\n", g.Name(), m.Name, m.Width, m.Height, m.MinPlayers, m.MaxPlayers, def)
		}
	}
	b.WriteString("  logic:IMAGE           a game whose rules are an image speaking the Saiblo judger protocol\n" +
		"                        (botkits/logic); --settings is its config\n")
	return b.String()
}

func cmdRun(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, o, vals := runFlags(stderr)
	images, err := parseInterspersed(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageErr("%v (see arena help run)", err)
	}
	cfg, err := load(vals)
	if err != nil {
		return usageErr("%v", err)
	}
	req, err := buildRequest(o, images, cfg.LogicLimits)
	if err != nil {
		return err
	}
	if o.view {
		if err := checkViewable(req.Game, stdout); err != nil {
			return err
		}
	}
	if o.replay != "" {
		// Fail before the match, not after it, if the replay cannot be saved.
		if err := checkWritableDir(o.replay); err != nil {
			return usageErr("--replay %s: %v", o.replay, err)
		}
	}
	req.Limits = matches.Limits{AnswerTimeout: cfg.AnswerTimeout, WarmUp: cfg.WarmUp}

	log := newLogger(cfg.LogLevel, stderr)
	defer log.Sync()
	cli, d, local, err := sandboxes(ctx, cfg, log, stderr, slices.ContainsFunc(req.Images, sandbox.IsLocalRef))
	if err != nil {
		return err
	}
	defer cli.Close()
	orch := orchestrator.New(orchestrator.Launchers(d, local), cfg.Orchestrator(log)...)
	var rep *matches.Replay
	if o.view {
		rep, err = playWithView(ctx, orch, req, o.viewFPS, stdout)
	} else {
		rep, err = orch.Play(ctx, req)
	}
	if err != nil {
		switch {
		case badInput(err):
			return usageErr("%v", err)
		case ctx.Err() != nil:
			return platformErr(errors.New("interrupted; the match's containers were removed"))
		}
		return platformErr(err)
	}
	warnFallback(stderr, rep.Result.StdioPath)
	if o.replay != "" {
		if err := matches.WriteReplay(o.replay, rep); err != nil {
			return platformErr(err)
		}
		rep.Result.Replay = o.replay
	}
	if o.json {
		enc := json.NewEncoder(stdout)
		enc.SetEscapeHTML(false)
		return enc.Encode(rep.Result)
	}
	printSummary(stdout, rep.Result)
	return nil
}

// buildRequest resolves the game, the map and the seed. Its errors are
// usage errors.
func buildRequest(o *runOptions, images []string, logic judger.Limits) (matches.Request, error) {
	game, err := findGame(o.game, len(images), logic)
	if err != nil {
		return matches.Request{}, usageErr("%v", err)
	}
	m, err := resolveMap(game, o.mapName)
	if err != nil {
		return matches.Request{}, usageErr("%v", err)
	}
	if len(images) == 0 {
		return matches.Request{}, usageErr("no bot images given (usage: arena run [flags] IMAGE IMAGE...)")
	}
	seed, err := parseSeed(o.seed)
	if err != nil {
		return matches.Request{}, usageErr("--seed: %v", err)
	}
	settings, err := gameSettings(o.settings, o.maxRounds)
	if err != nil {
		return matches.Request{}, usageErr("%v", err)
	}
	req := matches.Request{Game: game, Map: m, Seed: seed, Images: images, Settings: settings}
	if err := req.Check(); err != nil {
		return matches.Request{}, usageErr("%v", err)
	}
	return req, nil
}

// gameSettings joins --settings and --max-rounds into the game's settings
// JSON (nil when neither is given).
func gameSettings(settings string, maxRounds int) (json.RawMessage, error) {
	if settings == "" && maxRounds == 0 {
		return nil, nil
	}
	fields := map[string]json.RawMessage{}
	if settings != "" {
		if err := json.Unmarshal([]byte(settings), &fields); err != nil {
			return nil, fmt.Errorf("--settings is not a JSON object: %s", settings)
		}
	}
	if maxRounds < 0 {
		return nil, fmt.Errorf("--max-rounds %d is negative", maxRounds)
	}
	if maxRounds > 0 {
		fields["max_rounds"] = json.RawMessage(strconv.Itoa(maxRounds))
	}
	return json.Marshal(fields)
}

// resolveMap takes a shipped map's name or a map file's path. Shipped
// names have no dots or slashes, so anything with one is a path.
func resolveMap(g engine.Game, name string) (engine.Map, error) {
	if name == "" {
		return g.Map(g.Maps()[0].Name)
	}
	if !strings.ContainsAny(name, "./\\") {
		return g.Map(name)
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("map file: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, 16<<20))
	if err != nil {
		return nil, fmt.Errorf("map file %s: %w", name, err)
	}
	return g.ParseMap(name, data)
}

func parseSeed(s string) (uint64, error) {
	if s == "" {
		return matches.RandomSeed(), nil
	}
	return strconv.ParseUint(s, 10, 64)
}

func checkWritableDir(path string) error {
	dir := "."
	if i := strings.LastIndexByte(path, '/'); i >= 0 {
		dir = path[:i+1]
	}
	f, err := os.CreateTemp(dir, ".arena-check-*")
	if err != nil {
		return err
	}
	f.Close()
	return os.Remove(f.Name())
}

func printSummary(w io.Writer, r matches.Result) {
	fmt.Fprintf(w, "%s on %s, seed %d: %d turns in %.1fs; %s\n\n", r.Game, r.Map, r.Seed, r.Turns, r.DurationMS/1000, r.Outcome())
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SEAT\tBOT\tSTATUS\tSCORE\tDIED\tANSWERS\tWARM-UP MS\tP50 MS\tMAX MS\tCPU MS\tMEM PEAK")
	for _, b := range r.Bots {
		status := string(b.Status)
		if b.Status != engine.StatusOK {
			status = fmt.Sprintf("%s@%d", b.Status, b.FaultTurn)
		}
		died := "-"
		if b.DeathReason != "" {
			died = fmt.Sprintf("%s@%d", b.DeathReason, b.DeathTurn)
		}
		// The warm-up answer (the first) has its own column; P50 and MAX
		// are the answers after it.
		warm := "-"
		if b.WarmUpMS != nil {
			warm = fmt.Sprintf("%.2f", *b.WarmUpMS)
		}
		cpu, mem := "n/a", "n/a"
		if b.CPUMS != nil {
			cpu = fmt.Sprintf("%.0f", *b.CPUMS)
		}
		if b.MemPeakBytes != nil {
			mem = units.BytesSize(float64(*b.MemPeakBytes))
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%d\t%s\t%d\t%s\t%.2f\t%.2f\t%s\t%s\n", b.Seat, b.ID, status, b.Score, died, b.Answers, warm, b.AnswerMSP50, b.AnswerMSMax, cpu, mem)
	}
	tw.Flush()
	for _, b := range r.Bots {
		if b.FaultDetail != "" {
			fmt.Fprintf(w, "\n%s: %s at turn %d: %s", b.ID, b.Status, b.FaultTurn, b.FaultDetail)
		}
		if b.CPUMS == nil {
			fmt.Fprintf(w, "\n%s: no CPU or memory figures: %s", b.ID, b.Accounting)
		}
	}
	if r.Replay != "" {
		fmt.Fprintf(w, "\nreplay: %s", r.Replay)
	}
	fmt.Fprintln(w)
}

// runtimeOf describes the runtime bots will run under, and refuses one
// the engine does not have, before any container is created.
func runtimeOf(ctx context.Context, cli *client.Client, name string) (sandbox.Runtime, error) {
	if name == "" {
		return sandbox.DescribeRuntime(system.Info{}, "")
	}
	info, err := cli.Info(ctx)
	if err != nil {
		return sandbox.Runtime{}, platformErr(fmt.Errorf("docker info: %w", err))
	}
	rt, err := sandbox.DescribeRuntime(info, name)
	if err != nil {
		return sandbox.Runtime{}, usageErr("--runtime / ARENA_RUNTIME: %v", err)
	}
	return rt, nil
}

// checkViewable tells whether --view can work: the game draws text and
// both ends are a terminal.
func checkViewable(g engine.Game, stdout io.Writer) error {
	if _, ok := g.(engine.TextRenderer); !ok {
		return usageErr("--view: %s has no terminal viewer", g.Name())
	}
	f, ok := stdout.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) || !term.IsTerminal(int(os.Stdin.Fd())) {
		return usageErr("--view needs a terminal (stdin and stdout)")
	}
	return nil
}

// playWithView plays the match while the terminal shows it; Esc stops the
// match (its containers are removed).
func playWithView(ctx context.Context, orch *orchestrator.Orchestrator, req matches.Request, fps int, stdout io.Writer) (*matches.Replay, error) {
	tr := req.Game.(engine.TextRenderer)
	players := matches.BotIDs(req.Images)
	title := fmt.Sprintf("%s on %s, seed %d", req.Game.Name(), req.Map.Info().Name, req.Seed)
	view := newTermView(stdout, title, fps, func(frames []json.RawMessage, i int) string { return tr.RenderText(frames, i, players) })
	req.OnFrame = func(f matches.Frame) { view.add(f.State) }

	old, err := term.MakeRaw(int(os.Stdin.Fd()))
	if err != nil {
		return nil, usageErr("--view: %v", err)
	}
	defer func() {
		term.Restore(int(os.Stdin.Fd()), old)
		fmt.Fprintln(stdout)
	}()
	playCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	type played struct {
		rep *matches.Replay
		err error
	}
	done := make(chan played, 1)
	go func() {
		rep, err := orch.Play(playCtx, req)
		view.end()
		done <- played{rep, err}
	}()
	if view.run(ctx, readKeys(os.Stdin)) {
		cancel()
	}
	p := <-done
	if p.err != nil && playCtx.Err() != nil && ctx.Err() == nil {
		return nil, platformErr(errors.New("stopped from the viewer; the match's containers were removed"))
	}
	return p.rep, p.err
}
