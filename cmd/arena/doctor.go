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
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/client"

	"arena/sandbox"
	"arena/sandbox/probe"
)

// check is one thing the doctor verified.
type check struct {
	Pass   bool   `json:"pass"`
	Reason string `json:"reason"`
}

// doctorReport is what `arena doctor --json` prints.
type doctorReport struct {
	ClientVersion     string  `json:"client_version"`
	DaemonVersion     string  `json:"daemon_version"`
	APIVersion        string  `json:"api_version"`
	CgroupVersion     string  `json:"cgroup_version"`
	CgroupDriver      string  `json:"cgroup_driver"`
	StdioPath         string  `json:"stdio_path"`
	RoundTrips        int     `json:"round_trips"`
	PipeRTTP50US      float64 `json:"pipe_rtt_p50_us"`
	PipeRTTP99US      float64 `json:"pipe_rtt_p99_us"`
	ContainerRTTP50US float64 `json:"container_rtt_p50_us"`
	ContainerRTTP99US float64 `json:"container_rtt_p99_us"`
	RTTRatioP50       float64 `json:"rtt_ratio_p50"`
	RTTRatioP99       float64 `json:"rtt_ratio_p99"`
	// TurnRTT* are a whole turn's round trip: the container's with the
	// orchestrator's work around the answer (its figures read, the bot
	// let run between answers as one that runs nothing there is);
	// TurnRatio* its ratio to the pipe, the headline figure. The paths
	// also hold a frozen bot's turn (container_turn_frozen: frozen after
	// its answer, as a bot that ran between answers is, and thawed when
	// asked again; the freeze itself is made off the answer's path, and
	// the bot asked again only once it is frozen, as in a match where the
	// other bots answer in between).
	TurnRTTP50US   float64 `json:"turn_rtt_p50_us"`
	TurnRTTP99US   float64 `json:"turn_rtt_p99_us"`
	TurnRatioP50   float64 `json:"turn_ratio_p50"`
	TurnRatioP99   float64 `json:"turn_ratio_p99"`
	AttachRTTP50US float64 `json:"attach_rtt_p50_us,omitempty"`
	AttachRTTP99US float64 `json:"attach_rtt_p99_us,omitempty"`
	// RTTRuns is how many alternating batches of RoundTrips each path got;
	// its figures are the medians over them.
	RTTRuns int `json:"rtt_runs"`
	// Paths are every measured path's figures, and CostsUS what each part
	// of a container adds to a round trip at p50: seccomp, the CPU quota,
	// the container itself (bare: neither, against the pipe), and the
	// orchestrator's per-turn work (reading the bot's figures, thawing it).
	Paths   map[string]pathFigures `json:"paths"`
	CostsUS map[string]float64     `json:"costs_us"`
	// StartMSP50 is with warm containers (as the server and tournaments
	// start bots); ColdStart* without.
	StartMSP50     float64          `json:"start_ms_p50"`
	StartMSMax     float64          `json:"start_ms_max"`
	ColdStartMSP50 float64          `json:"cold_start_ms_p50"`
	ColdStartMSMax float64          `json:"cold_start_ms_max"`
	Checks         map[string]check `json:"checks"`
}

func doctorFlags(out io.Writer) (*flag.FlagSet, *bool, *int, *int, map[string]*string) {
	fs := flag.NewFlagSet("arena doctor", flag.ContinueOnError)
	fs.SetOutput(out)
	asJSON := fs.Bool("json", false, "print one JSON object")
	rounds := fs.Int("rounds", 2000, "round trips per batch of each measured path")
	runs := fs.Int("runs", 5, "alternating batches of each path (at least 5)")
	vals := register(fs, false)
	fs.Usage = func() {
		fmt.Fprint(out, `Usage: arena doctor [--json]

Checks what Arena needs and measures what it adds: the Docker engine
(versions), the cgroups (version, driver, whether a bot's figures can be
read), the sandbox policy as seen from inside a probe container (no
capabilities, no network, read-only root, non-root user, no Docker
socket), which stdio path bots use (FIFOs or the engine's attach stream,
and why), the round trip of one JSON line through a local pipe and through
a container, and how long two bots take to start. The probe image is made
from the arena binary itself; nothing is pulled. Exit status 0 when every
check passes.

`)
		fs.PrintDefaults()
	}
	return fs, asJSON, rounds, runs, vals
}

func cmdDoctor(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, asJSON, rounds, runs, vals := doctorFlags(stderr)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageErr("%v", err)
	}
	cfg, err := load(vals)
	if err != nil {
		return usageErr("%v", err)
	}
	if *rounds < 100 {
		return usageErr("--rounds must be at least 100")
	}
	if *runs < 5 {
		return usageErr("--runs must be at least 5")
	}
	log := newLogger(cfg.LogLevel, stderr)
	rep := doctorReport{Checks: map[string]check{}, RoundTrips: *rounds, RTTRuns: *runs}
	// The doctor looks and measures; it removes nothing of other runs.
	cli, owner, err := connect(ctx)
	if err != nil {
		rep.Checks["docker"] = check{false, err.Error()}
		return finishDoctor(rep, *asJSON, stdout)
	}
	defer cli.Close()
	d, local, err := runners(ctx, cfg, cli, owner, log, stderr, true)
	if err != nil {
		rep.Checks["docker"] = check{false, err.Error()}
		return finishDoctor(rep, *asJSON, stdout)
	}
	rep.Checks["docker"] = check{true, "the engine answers at " + cli.DaemonHost()}
	rep.ClientVersion = cli.ClientVersion()
	if v, err := cli.ServerVersion(ctx); err == nil {
		rep.DaemonVersion, rep.APIVersion = v.Version, v.APIVersion
	}
	if info, err := cli.Info(ctx); err == nil {
		rep.CgroupVersion, rep.CgroupDriver = info.CgroupVersion, info.CgroupDriver
	}

	exe, _ := os.Executable()
	probe, made, err := sandbox.MakeProbeImage(ctx, cli, exe)
	if err != nil {
		rep.Checks["probe"] = check{false, "cannot make the probe image: " + err.Error()}
		return finishDoctor(rep, *asJSON, stdout)
	}
	if made {
		// Removed once every container of it is (the deferred closes
		// below run first): the doctor leaves no image behind.
		defer cli.ImageRemove(context.WithoutCancel(ctx), probe, image.RemoveOptions{PruneChildren: true})
	}
	img, err := d.Image(ctx, probe)
	if err != nil {
		return platformErr(err)
	}
	doctorPolicy(ctx, d, img, &rep)

	line := []byte(`{"round":1,"mat":["##########","#..o.....#","#...1....#","#....2...#","##########"],"you":1}` + "\n")
	measureRoundTrips(ctx, cfg, cli, owner, d, local, img, exe, line, *rounds, *runs, &rep)
	rep.StdioPath = d.StdioPath()
	rep.Checks["stdio"] = check{rep.StdioPath == "fifo", "bots' stdio: " + rep.StdioPath}

	pooled, err := sandbox.NewDocker(cli, cfg.Policy(), owner, append(dockerOptions(cfg, cli, d.Runtime(), log, io.Discard), sandbox.WithPool(2, time.Minute))...)
	if err != nil {
		return platformErr(err)
	}
	defer pooled.Close(context.WithoutCancel(ctx))
	// The first start fills the pool; the others find it warm.
	if _, err := startTimes(ctx, pooled, img, line, 1, nil); err != nil {
		rep.Checks["start"] = check{false, err.Error()}
	} else if starts, err := startTimes(ctx, pooled, img, line, 5, func() bool { return pooled.Warm(img) >= 2 }); err != nil {
		rep.Checks["start"] = check{false, err.Error()}
	} else {
		rep.StartMSP50, rep.StartMSMax = milli(pct(starts, 50)), milli(pct(starts, 100))
	}
	if starts, err := startTimes(ctx, d, img, line, 5, nil); err != nil {
		rep.Checks["start"] = check{false, err.Error()}
	} else {
		rep.ColdStartMSP50, rep.ColdStartMSMax = milli(pct(starts, 50)), milli(pct(starts, 100))
	}
	return finishDoctor(rep, *asJSON, stdout)
}

// measureRoundTrips starts an echo bot on every path and measures them
// in alternating batches (measure.go).
func measureRoundTrips(ctx context.Context, cfg Config, cli *client.Client, owner sandbox.Owner, d *sandbox.Docker, local *sandbox.Local, img sandbox.Image, exe string, line []byte, rounds, runs int, rep *doctorReport) {
	var paths []echoPath
	closeAll := func() {
		for _, p := range paths {
			p.bot.Close(context.WithoutCancel(ctx))
		}
	}
	defer closeAll()
	add := func(name string, start func() (botConn, error)) botConn {
		b, err := start()
		if err != nil {
			rep.Checks[name+"_rtt"] = check{false, err.Error()}
			return nil
		}
		paths = append(paths, echoPath{name: name, bot: b})
		return b
	}
	echo := sandbox.Spec{Image: img, MatchID: "doctor", BotID: "echo", MaxMessageBytes: 1 << 20}
	add("pipe", func() (botConn, error) {
		return local.Start(ctx, sandbox.Spec{Image: sandbox.Image{Ref: sandbox.LocalPrefix + exe + " " + sandbox.EchoCommand}, BotID: "pipe", MaxMessageBytes: 1 << 20})
	})
	add("container", func() (botConn, error) { return d.Start(ctx, echo) })
	// The same container, with the orchestrator's work around each answer.
	for _, frozen := range []bool{false, true} {
		name := "container_turn_accounting"
		if frozen {
			name = "container_turn_frozen"
		}
		if c := add(name, func() (botConn, error) { return d.Start(ctx, echo) }); c != nil {
			ct := c.(*sandbox.Container)
			ct.FreezeAtAnswers(frozen)
			p := &paths[len(paths)-1]
			p.before, p.after = turnAccounting(ct)
			if ct.FiguresAfterAnswers() {
				p.idle = untilFigures(ct)
			}
		}
	}
	variant := func(name string, change func(*sandbox.Policy), opts ...sandbox.Option) {
		p := cfg.Policy()
		change(&p)
		v, err := sandbox.NewDocker(cli, p, owner, append([]sandbox.Option{sandbox.WithRuntime(d.Runtime()), sandbox.WithCgroupRoot(cfg.CgroupRoot)}, opts...)...)
		if err != nil {
			rep.Checks[name+"_rtt"] = check{false, err.Error()}
			return
		}
		add(name, func() (botConn, error) { return v.Start(ctx, echo) })
	}
	fifo := []sandbox.Option{}
	if f, err := fifoPath(cfg, cli, d.Runtime()); err == nil {
		fifo = append(fifo, sandbox.WithFIFO(f))
	}
	variant("container_no_seccomp", func(p *sandbox.Policy) { p.SeccompUnconfined = true }, fifo...)
	variant("container_no_cpu_quota", func(p *sandbox.Policy) { p.NanoCPUs = 0 }, fifo...)
	variant("container_bare", func(p *sandbox.Policy) { p.SeccompUnconfined, p.NanoCPUs = true, 0 }, fifo...)
	if d.StdioPath() == "fifo" {
		variant("attach", func(*sandbox.Policy) {})
	}
	figures, err := interleaved(ctx, paths, line, rounds, runs)
	if err != nil {
		rep.Checks["round_trips"] = check{false, err.Error()}
		return
	}
	rep.Paths = figures
	rep.PipeRTTP50US, rep.PipeRTTP99US = figures["pipe"].P50US, figures["pipe"].P99US
	rep.ContainerRTTP50US, rep.ContainerRTTP99US = figures["container"].P50US, figures["container"].P99US
	rep.AttachRTTP50US, rep.AttachRTTP99US = figures["attach"].P50US, figures["attach"].P99US
	if rep.PipeRTTP50US > 0 && rep.ContainerRTTP50US > 0 {
		rep.RTTRatioP50 = round2(rep.ContainerRTTP50US / rep.PipeRTTP50US)
		if t, ok := figures["container_turn_accounting"]; ok {
			rep.TurnRTTP50US, rep.TurnRTTP99US = t.P50US, t.P99US
			rep.TurnRatioP50, rep.TurnRatioP99 = round2(t.P50US/rep.PipeRTTP50US), round2(t.P99US/rep.PipeRTTP99US)
		}
		rep.RTTRatioP99 = round2(rep.ContainerRTTP99US / rep.PipeRTTP99US)
	}
	c := figures["container"].P50US
	rep.CostsUS = map[string]float64{
		"seccomp":         round2(c - figures["container_no_seccomp"].P50US),
		"cpu_quota":       round2(c - figures["container_no_cpu_quota"].P50US),
		"container_bare":  round2(figures["container_bare"].P50US - rep.PipeRTTP50US),
		"turn_accounting": round2(figures["container_turn_accounting"].P50US - c),
		"turn_frozen":     round2(figures["container_turn_frozen"].P50US - c),
	}
}

// doctorPolicy starts the probe under the policy and checks what it
// reports, and that its cgroup can be read.
func doctorPolicy(ctx context.Context, d *sandbox.Docker, img sandbox.Image, rep *doctorReport) {
	c, err := d.Start(ctx, sandbox.Spec{Image: img, MatchID: "doctor", BotID: "probe", MaxMessageBytes: 1 << 20, Args: []string{sandbox.ProbeCommand}})
	if err != nil {
		rep.Checks["policy"] = check{false, "cannot start the probe: " + err.Error()}
		return
	}
	defer c.Close(context.WithoutCancel(ctx))
	if u := c.Usage(); u.Source != "" {
		rep.Checks["cgroup"] = check{true, "bots' CPU and memory are read from " + u.Source}
	} else {
		rep.Checks["cgroup"] = check{false, u.Unavailable}
	}
	line, err := c.Receive(ctx, time.Now().Add(20*time.Second))
	if err != nil {
		rep.Checks["policy"] = check{false, "the probe did not report: " + err.Error()}
		return
	}
	var p probe.Report
	if err := json.Unmarshal(line, &p); err != nil {
		rep.Checks["policy"] = check{false, fmt.Sprintf("the probe reported %q", line)}
		return
	}
	policyChecks(p, d.Runtime(), rep.Checks)
}

// policyChecks judges the probe's report: one check per rule of the
// policy it can see from inside.
func policyChecks(p probe.Report, rt sandbox.Runtime, checks map[string]check) {
	orElse := func(s, otherwise string) string {
		if s == "" {
			return otherwise
		}
		return s
	}
	checks["no_capabilities"] = check{p.CapEff == "0000000000000000", "effective capabilities " + p.CapEff}
	checks["no_new_privileges"] = check{p.NoNewPrivs == "1", "NoNewPrivs " + p.NoNewPrivs}
	checks["no_network"] = check{slices.Equal(p.Interfaces, []string{"lo"}),
		fmt.Sprintf("interfaces: %s; a loopback dial: %s", strings.Join(p.Interfaces, ", "), orElse(p.DialErr, "connected"))}
	// gVisor refuses a write to its read-only root as a permission.
	refused := strings.Contains(p.RootWriteErr, "read-only file system") || rt.GVisor && strings.Contains(p.RootWriteErr, "permission denied")
	checks["read_only_root"] = check{refused && p.TmpWriteErr == "",
		fmt.Sprintf("writing to /: %s; writing to /tmp: %s", orElse(p.RootWriteErr, "allowed"), orElse(p.TmpWriteErr, "allowed"))}
	checks["non_root_user"] = check{p.UID != 0 && p.GID != 0, fmt.Sprintf("uid %d, gid %d", p.UID, p.GID)}
	checks["no_docker_socket"] = check{len(p.DockerSockFound) == 0, "Docker socket visible: " + orElse(strings.Join(p.DockerSockFound, ", "), "none")}
	switch {
	case rt.GVisor:
		checks["runtime"] = check{true, fmt.Sprintf("%s (gVisor): bots' system calls go to gVisor's own kernel, under its own seccomp filter; their figures include the sandbox's own CPU and memory", rt.Name)}
	case rt.Name != "":
		checks["runtime"] = check{true, rt.Name}
	default:
		checks["runtime"] = check{true, "the engine's default (runc), with the engine's default seccomp profile"}
	}
}

// botConn is a started echo bot.
type botConn interface {
	Send(p []byte, deadline time.Time) error
	Receive(ctx context.Context, deadline time.Time) ([]byte, error)
	Close(ctx context.Context) error
}

func micro(d time.Duration) float64 { return round2(float64(d.Nanoseconds()) / 1e3) }
func milli(d time.Duration) float64 { return round2(float64(d.Nanoseconds()) / 1e6) }
func round2(v float64) float64      { return float64(int64(v*100+0.5)) / 100 }

func finishDoctor(rep doctorReport, asJSON bool, stdout io.Writer) error {
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.Encode(rep)
	} else {
		printDoctor(stdout, rep)
	}
	var failed []string
	for name, c := range rep.Checks {
		if !c.Pass {
			failed = append(failed, name)
		}
	}
	sort.Strings(failed)
	if len(failed) > 0 {
		return platformErr(fmt.Errorf("checks failed: %s", strings.Join(failed, ", ")))
	}
	return nil
}

func printDoctor(w io.Writer, r doctorReport) {
	fmt.Fprintf(w, "Docker: client API %s, engine %s (API %s); cgroup v%s, %s driver\n", r.ClientVersion, r.DaemonVersion, r.APIVersion, r.CgroupVersion, r.CgroupDriver)
	fmt.Fprintf(w, "Bots' stdio: %s\n\n", r.StdioPath)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	names := make([]string, 0, len(r.Checks))
	for n := range r.Checks {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		c := r.Checks[n]
		mark := "ok"
		if !c.Pass {
			mark = "FAIL"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", mark, n, c.Reason)
	}
	tw.Flush()
	fmt.Fprintf(w, "\nOne JSON line out and back: the median over %d alternating batches of %d round trips:\n", r.RTTRuns, r.RoundTrips)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PATH\tP50 µs\tP99 µs")
	for _, p := range []struct{ key, label string }{
		{"pipe", "local pipe"},
		{"container", "container (" + strings.SplitN(r.StdioPath, " ", 2)[0] + ")"},
		{"container_turn_accounting", "  a whole turn: + its figures"},
		{"container_turn_frozen", "  a frozen bot's turn: + thaw, freeze, figures"},
		{"container_no_seccomp", "  without seccomp"},
		{"container_no_cpu_quota", "  without the CPU quota"},
		{"container_bare", "  without either"},
		{"attach", "container (attach)"},
	} {
		if f, ok := r.Paths[p.key]; ok {
			fmt.Fprintf(tw, "%s\t%.1f\t%.1f\n", p.label, f.P50US, f.P99US)
		}
	}
	tw.Flush()
	if r.TurnRTTP50US > 0 {
		fmt.Fprintf(w, "A turn / pipe: p50 %.2f×, p99 %.2f× (the bare container / pipe: p50 %.2f×, p99 %.2f×)\n", r.TurnRatioP50, r.TurnRatioP99, r.RTTRatioP50, r.RTTRatioP99)
	} else {
		fmt.Fprintf(w, "container / pipe: p50 %.2f×, p99 %.2f×\n", r.RTTRatioP50, r.RTTRatioP99)
	}
	if len(r.CostsUS) > 0 {
		fmt.Fprintf(w, "What a container adds at p50: seccomp %.1f µs, CPU quota %.1f µs, the bare container %.1f µs; the per-turn work %.1f µs (%.1f µs for a bot frozen between answers)\n",
			r.CostsUS["seccomp"], r.CostsUS["cpu_quota"], r.CostsUS["container_bare"], r.CostsUS["turn_accounting"], r.CostsUS["turn_frozen"])
	}
	fmt.Fprintf(w, "Two bots from request to first state written: p50 %.1f ms, max %.1f ms with warm containers; p50 %.0f ms, max %.0f ms without\n",
		r.StartMSP50, r.StartMSMax, r.ColdStartMSP50, r.ColdStartMSMax)
}
