package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/docker/docker/client"
	"github.com/moby/sys/atomicwriter"

	"arena/engine"
	"arena/engine/pacman"
	"arena/imageref"
	"arena/judger"
	"arena/matches"
	"arena/orchestrator"
)

const replayUsage = `Usage:
  arena replay verify FILE [--logic IMAGE]
  arena replay export --format saiblo [-o OUT] FILE
  arena replay rerun FILE --seat N [--turn K] [--wait D]

verify re-runs the game's engine on the answers recorded in a replay and
checks that it reproduces every frame and the result. It prints the first
frame that differs, if any. A logic game's replay (logic:IMAGE, or a
game a server registered by name) is verified by playing the logic again,
in the sandbox, on the recorded answers: the exact image the replay
records (by its id, whatever its tag names now), or the one --logic
names. That needs the Docker engine and the logic's image, and fails
where the logic is not deterministic given its seed. Exit status: 0 when
the replay verifies, 1 when it does not, 2 for bad usage.

export writes a replay in another format: saiblo is the original Pac-Man
game's JSON-lines replay (an init line per level, one line per round, the
final state with its StopReason), for Pac-Man matches. It writes to OUT,
or to standard output.

rerun starts a fresh container of the exact image a seat played (by image
id), feeds it the inputs that bot received up to turn K, and prints what
it answered then and now, side by side, stopping at the first difference
(arena replay rerun --help for its flags).
`

func cmdReplay(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprint(stdout, replayUsage)
		if len(args) == 0 {
			return usageErr("replay needs a subcommand: verify, export or rerun")
		}
		return nil
	}
	if args[0] == "rerun" {
		return cmdReplayRerun(ctx, args[1:], stdout, stderr)
	}
	if args[0] == "export" {
		return cmdReplayExport(args[1:], stdout, stderr)
	}
	if args[0] != "verify" {
		return usageErr("unknown replay subcommand %q (subcommands: verify, export, rerun)", args[0])
	}
	fs := flag.NewFlagSet("arena replay verify", flag.ContinueOnError)
	fs.SetOutput(stderr)
	logic := fs.String("logic", "", "a logic game's replay: play this logic image, not the one the replay recorded")
	vals := registerIf(fs, replaySetting)
	pos, err := parseInterspersed(fs, args[1:])
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageErr("%v (see arena help replay)", err)
	}
	if len(pos) != 1 {
		return usageErr("usage: arena replay verify FILE [--logic IMAGE]")
	}
	rep, err := readReplay(pos[0], vals)
	if err != nil {
		return usageErr("%v", err)
	}
	if logicReplay(rep, *logic) {
		return verifyLogic(ctx, pos[0], rep, *logic, vals, stdout, stderr)
	}
	if err := matches.Verify(games(), rep); err != nil {
		var mm *matches.Mismatch
		if errors.As(err, &mm) {
			return platformErr(fmt.Errorf("%s does not verify: %w", args[1], err))
		}
		return usageErr("%s: %v", args[1], err)
	}
	fmt.Fprintf(stdout, "%s: ok, %d frames reproduced (%s on %s, seed %d)\n", args[1], len(rep.Frames), rep.Game, rep.Map, rep.Seed)
	return nil
}

func cmdReplayExport(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("arena replay export", flag.ContinueOnError)
	fs.SetOutput(stderr)
	format := fs.String("format", "", "the output format: saiblo (Pac-Man only)")
	out := fs.String("o", "", "write to this file (default: standard output)")
	fs.Usage = func() { fmt.Fprint(stderr, replayUsage) }
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageErr("%v", err)
	}
	if len(pos) != 1 {
		return usageErr("usage: arena replay export --format saiblo [-o OUT] FILE")
	}
	if *format != "saiblo" {
		return usageErr("--format %q: the only export format is saiblo", *format)
	}
	rep, err := readReplay(pos[0], nil)
	if err != nil {
		return usageErr("%v", err)
	}
	if rep.Game != "pacman" {
		return usageErr("%s is a %s replay; the saiblo format is for pacman", pos[0], rep.Game)
	}
	frames := make([]json.RawMessage, len(rep.Frames))
	for i, f := range rep.Frames {
		frames[i] = f.State
	}
	data, err := pacman.SaibloReplay(frames)
	if err != nil {
		return platformErr(fmt.Errorf("export %s: %w", pos[0], err))
	}
	if *out == "" {
		_, err = stdout.Write(data)
		return err
	}
	if err := atomicwriter.WriteFile(*out, data, 0o644); err != nil {
		return platformErr(err)
	}
	return nil
}

// readReplay reads a replay file within the bounds of its match
// (matches.ReadReplayWithin): those of the replay budget the settings
// give (--replay-budget, ARENA_REPLAY_BUDGET; vals, else the environment)
// with the cap of the game the replay names on a message, a built-in
// game's, else a logic game's (a bot's answer, or its logic's message,
// ARENA_LOGIC_MESSAGE_BYTES). A forged file is refused as soon as it
// passes a bound (issue #59: a 33 KB zstd file that held a 1 GiB string).
func readReplay(path string, vals map[string]*string) (*matches.Replay, error) {
	set := map[string]*string{}
	for _, env := range []string{"ARENA_REPLAY_BUDGET", "ARENA_LOGIC_MESSAGE_BYTES"} {
		v, ok := vals[env]
		if !ok {
			s := settingValue(env)
			v = &s
		}
		set[env] = v
	}
	cfg, err := loadOnly(set)
	if err != nil {
		return nil, err
	}
	logic := max(judger.MaxLength, cfg.LogicLimits.MessageBytes)
	return matches.ReadReplayWithin(path, func(game string) matches.ReplayBounds {
		if g, err := engine.Find(games(), game); err == nil {
			return matches.BoundsFor(cfg.ReplayBudget, matches.AnswerCap(g))
		}
		return matches.BoundsFor(cfg.ReplayBudget, logic)
	})
}

// logicReplay says whether a replay is of a logic game: one it records
// the logic of, logic:IMAGE, or one not built in (a game registered by
// name on a server), or one whose logic is named (--logic).
func logicReplay(rep *matches.Replay, logic string) bool {
	if logic != "" || rep.Logic != nil || strings.HasPrefix(rep.Game, judger.Prefix) {
		return true
	}
	_, err := engine.Find(games(), rep.Game)
	return err != nil
}

// replayLogic is the logic game a replay was played with, as a verify or
// a rerun plays it again, under the logic limits lim: the logic named
// (--logic) if any; else the image the replay recorded, by the id it ran
// (whatever its tag names now); else, for a replay that records none, the
// image of its game's name, logic:IMAGE.
func replayLogic(ctx context.Context, cli *client.Client, file string, rep *matches.Replay, logic string, lim judger.Limits) (*judger.Game, error) {
	n := len(rep.Bots)
	switch {
	case logic != "":
		if err := imageref.Check(logic); err != nil {
			return nil, usageErr("--logic: %v", err)
		}
		return judger.Named(rep.Game, logic, n, "").WithLimits(lim), nil
	case rep.Logic != nil:
		if _, err := cli.ImageInspect(ctx, rep.Logic.ImageID); err != nil {
			return nil, platformErr(fmt.Errorf("%s: the logic it was played with, image %s (%s then), is not on this engine: rebuild that exact image or docker load it, or name a logic with --logic IMAGE", file, rep.Logic.ImageID, rep.Logic.Image))
		}
		return judger.Named(rep.Game, rep.Logic.Image, n, "").Pinned(rep.Logic.ImageID).WithLimits(lim), nil
	}
	ref, ok := strings.CutPrefix(rep.Game, judger.Prefix)
	if !ok {
		return nil, usageErr("%s: game %s is not built in, and the replay does not record its logic: name its image with --logic IMAGE", file, rep.Game)
	}
	if err := imageref.Check(ref); err != nil {
		return nil, usageErr("%s: game %s: %v", file, rep.Game, err)
	}
	return judger.New(ref, n).WithLimits(lim), nil
}

// verifyLogic verifies the replay of a logic game: the logic is played
// again, in the sandbox, on the recorded answers.
func verifyLogic(ctx context.Context, file string, rep *matches.Replay, logic string, vals map[string]*string, stdout, stderr io.Writer) error {
	// The sandbox's settings, from the environment and the flags.
	cfg, err := load(vals)
	if err != nil {
		return usageErr("%v", err)
	}
	log := newLogger(cfg.LogLevel, stderr)
	defer log.Sync()
	cli, d, _, err := sandboxes(ctx, cfg, log, stderr, false)
	if err != nil {
		return err
	}
	defer cli.Close()
	defer d.Close(context.WithoutCancel(ctx))
	game, err := replayLogic(ctx, cli, file, rep, logic, cfg.LogicLimits)
	if err != nil {
		return err
	}
	orch := orchestrator.New(orchestrator.Docker(d), orchestrator.WithLogger(log))
	if err := orch.VerifyHosted(ctx, game, rep); err != nil {
		var mm *matches.Mismatch
		switch {
		case errors.As(err, &mm):
			return platformErr(fmt.Errorf("%s does not verify: %w\n(the logic, played again on the recorded answers, did otherwise: it is not deterministic given its seed, or the replay was changed)", file, err))
		case badInput(err):
			return usageErr("%s: %v", file, err)
		}
		return platformErr(fmt.Errorf("%s: %w", file, err))
	}
	ref, id := game.HostImage()
	if id != "" {
		ref += " " + shortID(id)
	}
	fmt.Fprintf(stdout, "%s: ok, %d frames reproduced by playing the logic again (%s, seed %d; logic %s)\n", file, len(rep.Frames), rep.Game, rep.Seed, ref)
	return nil
}
