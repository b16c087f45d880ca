package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"arena/orchestrator"
)

const replayUsage = `Usage: arena replay verify FILE

Re-runs the game's engine on the answers recorded in a replay and checks
that it reproduces every frame and the result. Prints the first frame that
differs, if any. Exit status: 0 when the replay verifies, 1 when it does
not, 2 for bad usage.
`

func cmdReplay(_ context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprint(stdout, replayUsage)
		if len(args) == 0 {
			return usageErr("replay needs a subcommand: verify")
		}
		return nil
	}
	if args[0] != "verify" {
		return usageErr("unknown replay subcommand %q (subcommands: verify)", args[0])
	}
	if len(args) != 2 {
		return usageErr("usage: arena replay verify FILE")
	}
	rep, err := orchestrator.ReadReplay(args[1])
	if err != nil {
		return usageErr("%v", err)
	}
	if err := orchestrator.Verify(games(), rep); err != nil {
		var mm *orchestrator.Mismatch
		if errors.As(err, &mm) {
			return platformErr(fmt.Errorf("%s does not verify: %w", args[1], err))
		}
		return usageErr("%s: %v", args[1], err)
	}
	fmt.Fprintf(stdout, "%s: ok, %d frames reproduced (%s on %s, seed %d)\n", args[1], len(rep.Frames), rep.Game, rep.Map, rep.Seed)
	return nil
}
