package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"text/tabwriter"

	"arena/dispatch/trust"
)

// cmdJoinToken prints the token a worker joins the server's embedded NATS
// with, makes a new one, lists the joined workers or revokes one. It reads
// and writes the server's data folder, while the server runs or not: a
// running server applies a change within a second.
func cmdJoinToken(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("arena join-token", flag.ContinueOnError)
	fs.SetOutput(stderr)
	vals := registerOnly(fs, "data")
	rotate := fs.Bool("rotate", false, "make a new token: the old one joins no more (workers that joined keep their own keys)")
	revoke := fs.String("revoke", "", "forget the worker of this name: its key connects no more, and it is disconnected")
	list := fs.Bool("workers", false, "list the workers that joined")
	fs.Usage = func() {
		fmt.Fprint(stderr, `Usage: arena join-token [--rotate] [--data DIR]
       arena join-token --workers | --revoke NAME

Prints the token with which a worker of another host joins this server:

  arena worker --nats nats://SERVER:4222 --join TOKEN

The token pins the server's CA (the worker checks it is talking to this
server) and carries the join secret. A worker that joined keeps a key of
its own in its data folder and needs no token again.

Flags:
`)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageErr("%v (see arena join-token -h)", err)
	}
	if fs.NArg() > 0 {
		return usageErr("join-token takes no arguments, got %q", fs.Args())
	}
	cfg, err := loadOnly(vals)
	if err != nil {
		return usageErr("%v", err)
	}
	if st, err := os.Stat(cfg.Data); err != nil || !st.IsDir() {
		return usageErr("no data folder %s: give the server's (--data or ARENA_DATA)", cfg.Data)
	}
	tr, err := trust.OpenTrust(trustDir(cfg.Data))
	if err != nil {
		return platformErr(err)
	}
	switch {
	case *revoke != "":
		ok, err := tr.Revoke(*revoke)
		if err != nil {
			return platformErr(err)
		}
		if !ok {
			return usageErr("no worker %s joined (see arena join-token --workers)", *revoke)
		}
		fmt.Fprintf(stderr, "arena: worker %s revoked\n", *revoke)
		return nil
	case *list:
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "NAME\tJOINED\tSTATE")
		for _, w := range tr.Workers() {
			state := "ok"
			if w.Quarantined != "" {
				state = "quarantined: " + w.Quarantined
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\n", w.Name, w.Joined.Format("2006-01-02 15:04"), state)
		}
		return tw.Flush()
	}
	var token string
	if *rotate {
		token, err = tr.Rotate()
	} else {
		token, err = tr.Token()
	}
	if err != nil {
		return platformErr(err)
	}
	fmt.Fprintln(stdout, token)
	return nil
}
