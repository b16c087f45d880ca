package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"arena/matches"
	"arena/orchestrator"
	"arena/sandbox"
)

const rerunUsage = `Usage: arena replay rerun FILE --seat N [--turn K] [--wait D]

Reproduces a bot's turns: starts a fresh container of the exact image the
replay recorded for seat N (by image id, whatever its tag points to now),
feeds it the same inputs the bot received, turn by turn up to turn K
(default: its last answer), and prints side by side what it answered then
and now. It stops at the first answer that differs and shows that turn in
full: the input, both answers and what the bot wrote to stderr then and
now. The other seats' recorded answers drive the game, so every game
works, Pac-Man's sequential protocol included; a logic game's logic is
played again to that turn (the image the replay recorded, by its id, or
the one --logic names).

Exit status: 0 when every answer is the same, 1 when one differs or the
image is no longer present (or the platform fails), 2 for bad usage.

Flags:
`

// replaySetting is a setting that applies to what a replay starts again
// (rerun, a logic's verify): the sandbox's, not a match's time limits or
// the warm pool.
func replaySetting(s setting) bool {
	return !s.server && s.only == "" && !slices.Contains([]string{"timeout", "warmup", "pool", "pool-max"}, s.flag)
}

func rerunFlags(out io.Writer) (*flag.FlagSet, *int, *int, *time.Duration, *string, map[string]*string) {
	fs := flag.NewFlagSet("arena replay rerun", flag.ContinueOnError)
	fs.SetOutput(out)
	seat := fs.Int("seat", -1, "the seat of the bot to rerun (0 is the first bot)")
	logic := fs.String("logic", "", "a logic game's replay: play this logic image, not the one the replay recorded")
	turn := fs.Int("turn", 0, "the last turn to replay (default: the bot's last answer)")
	timeout := fs.Duration("wait", 5*time.Second, "how long the bot may take per answer (the first gets at least the replay's warm-up)")
	// The sandbox's settings apply; the match's time limits and the warm
	// pool do not (--wait bounds each answer).
	vals := registerIf(fs, replaySetting)
	fs.Usage = func() {
		fmt.Fprint(out, rerunUsage)
		fs.PrintDefaults()
	}
	return fs, seat, turn, timeout, logic, vals
}

func cmdReplayRerun(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, seat, turn, timeout, logic, vals := rerunFlags(stderr)
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageErr("%v (see arena help replay)", err)
	}
	if len(pos) != 1 {
		return usageErr("usage: arena replay rerun FILE --seat N [--turn K]")
	}
	if *seat < 0 {
		return usageErr("--seat: which bot to rerun? (0 is the first bot)")
	}
	if *turn < 0 || *timeout <= 0 {
		return usageErr("--turn and --wait must be positive")
	}
	cfg, err := load(vals)
	if err != nil {
		return usageErr("%v", err)
	}
	rep, err := readReplay(pos[0], vals)
	if err != nil {
		return usageErr("%v", err)
	}
	if *seat >= len(rep.Bots) {
		return usageErr("--seat %d: the match in %s has seats 0 to %d", *seat, pos[0], len(rep.Bots)-1)
	}
	local := false
	for _, b := range rep.Bots {
		local = local || sandbox.IsLocalRef(b.Image)
	}
	log := newLogger(cfg.LogLevel, stderr)
	defer log.Sync()
	cli, d, l, err := sandboxes(ctx, cfg, log, stderr, local)
	if err != nil {
		return err
	}
	defer cli.Close()
	defer d.Close(context.WithoutCancel(ctx))
	known := games()
	if logicReplay(rep, *logic) {
		g, err := replayLogic(ctx, cli, pos[0], rep, *logic, cfg.LogicLimits)
		if err != nil {
			return err
		}
		known = append(known, g)
	}
	b := rep.Bots[*seat]
	fmt.Fprintf(stdout, "Rerunning seat %d, %s (image %s), of match %s: %s on %s, seed %d\n\n", *seat, b.ID, shortID(b.ImageID), rep.MatchID, rep.Game, rep.Map, rep.Seed)
	// Fixed columns: the rows are printed as the bot answers.
	fmt.Fprintf(stdout, "%-6s%s  %s  %s\n", "TURN", pad("THEN", 44), pad("NOW", 44), "")
	orch := orchestrator.New(orchestrator.Launchers(d, l), orchestrator.WithLogger(log))
	res, err := orch.Rerun(ctx, known, orchestrator.RerunRequest{Replay: rep, Seat: *seat, Turn: *turn, AnswerTimeout: *timeout}, func(s orchestrator.RerunStep) {
		mark := "same"
		if !s.Same {
			mark = "DIFFERS"
		}
		fmt.Fprintf(stdout, "%-6d%s  %s  %s\n", s.Turn, pad(thenText(s), 44), pad(nowText(s), 44), mark)
	})
	warnFallback(stderr, d.StdioPath())
	if err != nil {
		var mm *matches.Mismatch
		switch {
		case badInput(err):
			return usageErr("%s: %v", pos[0], err)
		case errors.As(err, &mm):
			return platformErr(fmt.Errorf("%s does not replay: %w", pos[0], err))
		}
		return platformErr(err)
	}
	if len(res.Steps) > 0 {
		printRerunStep(stdout, res.Steps[len(res.Steps)-1])
	}
	if res.Differs {
		s := res.Steps[len(res.Steps)-1]
		return platformErr(fmt.Errorf("seat %d answers differently at turn %d (%d answer(s) the same before it)", *seat, s.Turn, len(res.Steps)-1))
	}
	fmt.Fprintf(stdout, "\nseat %d gave the same %d answer(s), up to turn %d\n", *seat, len(res.Steps), res.LastTurn)
	return nil
}

// printRerunStep shows one turn in full.
func printRerunStep(w io.Writer, s orchestrator.RerunStep) {
	title := "Turn %d (the last replayed)"
	if !s.Same {
		title = "Turn %d, the first difference"
	}
	fmt.Fprintf(w, "\n"+title+":\n", s.Turn)
	fmt.Fprintln(w, "  input:")
	for _, m := range s.Input {
		fmt.Fprint(w, indent(string(m), "    "))
	}
	fmt.Fprintf(w, "  then: %s\n", thenText(s))
	fmt.Fprintf(w, "  now:  %s (%s)\n", nowText(s), s.Took.Round(time.Millisecond))
	fmt.Fprintf(w, "  stderr then:\n%s", indent(orNone(s.ThenStderr), "    "))
	fmt.Fprintf(w, "  stderr now:\n%s", indent(orNone(s.NowStderr), "    "))
}

func thenText(s orchestrator.RerunStep) string {
	if s.ThenFault != "" {
		if s.ThenDetail != "" {
			return fmt.Sprintf("%s: %s", s.ThenFault, s.ThenDetail)
		}
		return string(s.ThenFault)
	}
	return quoteIfNeeded(s.Then)
}

func nowText(s orchestrator.RerunStep) string {
	if s.NowErr != "" {
		return "no answer: " + s.NowErr
	}
	return quoteIfNeeded(s.Now)
}

// quoteIfNeeded shows an answer as is when it is one line of printable
// text, else quoted.
func quoteIfNeeded(b []byte) string {
	s := string(b)
	if strconv.CanBackquote(s) && !strings.ContainsAny(s, "\n\r") {
		return s
	}
	return strconv.Quote(s)
}

// pad clips or pads s to n characters.
func pad(s string, n int) string {
	r := []rune(strings.ReplaceAll(s, "\t", " "))
	if len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return string(r) + strings.Repeat(" ", n-len(r))
}

func indent(s, pre string) string {
	var b strings.Builder
	for _, line := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		b.WriteString(pre + line + "\n")
	}
	return b.String()
}

func orNone(s string) string {
	if s == "" {
		return "(nothing)"
	}
	return s
}

func shortID(id string) string {
	id = strings.TrimPrefix(id, "sha256:")
	if len(id) > 12 {
		return id[:12]
	}
	return id
}
