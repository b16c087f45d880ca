package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"arena/sandbox"
)

func cleanupFlags(out io.Writer) (*flag.FlagSet, *bool, map[string]*string) {
	fs := flag.NewFlagSet("arena cleanup", flag.ContinueOnError)
	fs.SetOutput(out)
	all := fs.Bool("all", false, "remove every Arena container, also those of Arena processes still running")
	vals := registerOnly(fs, "stdio-dir", "log-level")
	fs.Usage = func() {
		fmt.Fprint(out, `Usage: arena cleanup [--all]

Removes the containers of Arena runs that died (killed, crashed, machine
lost power), their bots' FIFO folders, and copies of other builds'
launcher older than a day. arena serve, run and bench also do this when
they start; no other command touches the engine's containers. Containers
of Arena processes still running are kept unless --all is given.

`)
		fs.PrintDefaults()
	}
	return fs, all, vals
}

func cmdCleanup(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, all, vals := cleanupFlags(stderr)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageErr("%v", err)
	}
	if fs.NArg() > 0 {
		return usageErr("cleanup takes no arguments, got %q", fs.Args())
	}
	cfg, err := loadOnly(vals)
	if err != nil {
		return usageErr("%v", err)
	}
	log := newLogger(cfg.LogLevel, stderr)
	defer log.Sync()
	cli, owner, err := connect(ctx)
	if err != nil {
		return err
	}
	defer cli.Close()
	janitor := newJanitor(cli, owner, cfg.StdioDir, log)
	var rep sandbox.CleanupReport
	if *all {
		rep, err = janitor.RemoveAll(ctx)
	} else {
		rep, err = janitor.Sweep(ctx)
	}
	for _, name := range rep.Removed {
		fmt.Fprintf(stdout, "removed %s\n", name)
	}
	for _, path := range rep.Swept {
		fmt.Fprintf(stdout, "removed %s\n", path)
	}
	fmt.Fprintf(stdout, "%d container(s) removed, %d of running Arena processes kept\n", len(rep.Removed), rep.Kept)
	if err != nil {
		return platformErr(err)
	}
	return nil
}
