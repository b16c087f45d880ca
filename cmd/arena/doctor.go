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
	"sync"
	"text/tabwriter"
	"time"

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
	ClientVersion     string           `json:"client_version"`
	DaemonVersion     string           `json:"daemon_version"`
	APIVersion        string           `json:"api_version"`
	CgroupVersion     string           `json:"cgroup_version"`
	CgroupDriver      string           `json:"cgroup_driver"`
	StdioPath         string           `json:"stdio_path"`
	RoundTrips        int              `json:"round_trips"`
	PipeRTTP50US      float64          `json:"pipe_rtt_p50_us"`
	PipeRTTP99US      float64          `json:"pipe_rtt_p99_us"`
	ContainerRTTP50US float64          `json:"container_rtt_p50_us"`
	ContainerRTTP99US float64          `json:"container_rtt_p99_us"`
	RTTRatioP50       float64          `json:"rtt_ratio_p50"`
	RTTRatioP99       float64          `json:"rtt_ratio_p99"`
	AttachRTTP50US    float64          `json:"attach_rtt_p50_us,omitempty"`
	AttachRTTP99US    float64          `json:"attach_rtt_p99_us,omitempty"`
	StartMSP50        float64          `json:"start_ms_p50"`
	StartMSMax        float64          `json:"start_ms_max"`
	Checks            map[string]check `json:"checks"`
}

func doctorFlags(out io.Writer) (*flag.FlagSet, *bool, *int, map[string]*string) {
	fs := flag.NewFlagSet("arena doctor", flag.ContinueOnError)
	fs.SetOutput(out)
	asJSON := fs.Bool("json", false, "print one JSON object")
	rounds := fs.Int("rounds", 5000, "round trips per measured path")
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
	return fs, asJSON, rounds, vals
}

func cmdDoctor(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, asJSON, rounds, vals := doctorFlags(stderr)
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
	log := newLogger(cfg.LogLevel, stderr)
	rep := doctorReport{Checks: map[string]check{}, RoundTrips: *rounds}
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
	probe, err := sandbox.ProbeImage(ctx, cli, exe)
	if err != nil {
		rep.Checks["probe"] = check{false, "cannot make the probe image: " + err.Error()}
		return finishDoctor(rep, *asJSON, stdout)
	}
	img, err := d.Image(ctx, probe)
	if err != nil {
		return platformErr(err)
	}
	doctorPolicy(ctx, d, img, &rep)

	line := []byte(`{"round":1,"mat":["##########","#..o.....#","#...1....#","#....2...#","##########"],"you":1}` + "\n")
	pipe, err := roundTrips(ctx, func(ctx context.Context) (botConn, error) {
		return local.Start(ctx, sandbox.Spec{Image: sandbox.Image{Ref: sandbox.LocalPrefix + exe + " " + sandbox.EchoCommand}, BotID: "pipe", MaxMessageBytes: 1 << 20})
	}, line, *rounds)
	if err != nil {
		rep.Checks["pipe_rtt"] = check{false, err.Error()}
	} else {
		rep.PipeRTTP50US, rep.PipeRTTP99US = micro(pct(pipe, 50)), micro(pct(pipe, 99))
	}
	startBot := func(d *sandbox.Docker) func(ctx context.Context) (botConn, error) {
		return func(ctx context.Context) (botConn, error) {
			return d.Start(ctx, sandbox.Spec{Image: img, MatchID: "doctor", BotID: "echo", MaxMessageBytes: 1 << 20})
		}
	}
	container, err := roundTrips(ctx, startBot(d), line, *rounds)
	rep.StdioPath = d.StdioPath()
	if err != nil {
		rep.Checks["container_rtt"] = check{false, err.Error()}
	} else {
		rep.ContainerRTTP50US, rep.ContainerRTTP99US = micro(pct(container, 50)), micro(pct(container, 99))
	}
	rep.Checks["stdio"] = check{rep.StdioPath == "fifo", "bots' stdio: " + rep.StdioPath}
	if rep.StdioPath == "fifo" {
		// The attach stream for comparison.
		if att, err := sandbox.NewDocker(cli, cfg.Policy(), owner, sandbox.WithLogger(log), sandbox.WithCgroupRoot(cfg.CgroupRoot)); err == nil {
			if a, err := roundTrips(ctx, startBot(att), line, *rounds); err == nil {
				rep.AttachRTTP50US, rep.AttachRTTP99US = micro(pct(a, 50)), micro(pct(a, 99))
			}
		}
	}
	if rep.PipeRTTP50US > 0 && rep.ContainerRTTP50US > 0 {
		rep.RTTRatioP50 = round2(rep.ContainerRTTP50US / rep.PipeRTTP50US)
		rep.RTTRatioP99 = round2(rep.ContainerRTTP99US / rep.PipeRTTP99US)
	}
	starts, err := startTimes(ctx, d, img, line, 5)
	if err != nil {
		rep.Checks["start"] = check{false, err.Error()}
	} else {
		rep.StartMSP50, rep.StartMSMax = milli(pct(starts, 50)), milli(pct(starts, 100))
	}
	return finishDoctor(rep, *asJSON, stdout)
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

// roundTrips times n echoes of line through a freshly started bot, after
// a warm-up.
func roundTrips(ctx context.Context, start func(context.Context) (botConn, error), line []byte, n int) ([]time.Duration, error) {
	b, err := start(ctx)
	if err != nil {
		return nil, err
	}
	defer b.Close(context.WithoutCancel(ctx))
	var out []time.Duration
	for i := -500; i < n; i++ {
		t0 := time.Now()
		deadline := t0.Add(5 * time.Second)
		if err := b.Send(line, deadline); err != nil {
			return nil, err
		}
		if _, err := b.Receive(ctx, deadline); err != nil {
			return nil, err
		}
		if i >= 0 {
			out = append(out, time.Since(t0))
		}
	}
	return out, nil
}

// startTimes times, n times, from the request to start two bots at once
// to the first state written to both.
func startTimes(ctx context.Context, d *sandbox.Docker, img sandbox.Image, line []byte, n int) ([]time.Duration, error) {
	var out []time.Duration
	for i := 0; i < n; i++ {
		t0 := time.Now()
		var wg sync.WaitGroup
		bots := make([]*sandbox.Container, 2)
		errs := make([]error, 2)
		for k := range bots {
			wg.Add(1)
			go func() {
				defer wg.Done()
				bots[k], errs[k] = d.Start(ctx, sandbox.Spec{Image: img, MatchID: "doctor", BotID: fmt.Sprint("start", k), MaxMessageBytes: 1 << 20})
				if errs[k] == nil {
					errs[k] = bots[k].Send(line, time.Now().Add(5*time.Second))
				}
			}()
		}
		wg.Wait()
		took := time.Since(t0)
		for _, b := range bots {
			if b != nil {
				b.Close(context.WithoutCancel(ctx))
			}
		}
		if err := errors.Join(errs...); err != nil {
			return nil, err
		}
		out = append(out, took)
	}
	return out, nil
}

func pct(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := (len(s)*p + 99) / 100
	return s[max(0, min(len(s)-1, i-1))]
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
	fmt.Fprintf(w, "\nOne JSON line out and back, %d round trips:\n", r.RoundTrips)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PATH\tP50 µs\tP99 µs")
	fmt.Fprintf(tw, "local pipe\t%.1f\t%.1f\n", r.PipeRTTP50US, r.PipeRTTP99US)
	fmt.Fprintf(tw, "container (%s)\t%.1f\t%.1f\n", strings.SplitN(r.StdioPath, " ", 2)[0], r.ContainerRTTP50US, r.ContainerRTTP99US)
	if r.AttachRTTP50US > 0 {
		fmt.Fprintf(tw, "container (attach)\t%.1f\t%.1f\n", r.AttachRTTP50US, r.AttachRTTP99US)
	}
	tw.Flush()
	fmt.Fprintf(w, "container / pipe: p50 %.2f×, p99 %.2f×\n", r.RTTRatioP50, r.RTTRatioP99)
	fmt.Fprintf(w, "Two bots from request to first state written: p50 %.0f ms, max %.0f ms\n", r.StartMSP50, r.StartMSMax)
}
