package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"arena/sandbox"
)

func cleanupFlags(out io.Writer) (*flag.FlagSet, *bool) {
	fs := flag.NewFlagSet("arena cleanup", flag.ContinueOnError)
	fs.SetOutput(out)
	all := fs.Bool("all", false, "remove every Arena container, also those of Arena processes still running")
	fs.Usage = func() {
		fmt.Fprint(out, `Usage: arena cleanup [--all]

Removes the containers of Arena runs that died (killed, crashed, machine
lost power). Every arena command also does this when it starts. Containers
of Arena processes still running are kept unless --all is given.

`)
		fs.PrintDefaults()
	}
	return fs, all
}

func cmdCleanup(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, all := cleanupFlags(stderr)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageErr("%v", err)
	}
	if fs.NArg() > 0 {
		return usageErr("cleanup takes no arguments, got %q", fs.Args())
	}
	cli, owner, err := connect(ctx)
	if err != nil {
		return err
	}
	defer cli.Close()
	rep, err := sandbox.Reap(ctx, cli, sandbox.Liveness{Self: owner, ProcRoot: "/proc"}, sandbox.ReapFilter{All: *all})
	for _, name := range rep.Removed {
		fmt.Fprintf(stdout, "removed %s\n", name)
	}
	fmt.Fprintf(stdout, "%d container(s) removed, %d of running Arena processes kept\n", len(rep.Removed), rep.Kept)
	if err != nil {
		return platformErr(err)
	}
	return nil
}
