package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"
)

const usersUsage = `Usage:
  arena users import FILE [-o LINKS] [SERVER]   make a class's accounts and teams from a roster (admins)

FILE is a CSV whose first line names its columns: name, and optionally
email, team and role (player or admin), e.g.

  name,email,team,role
  alice,alice@uni.example,red,
  bob,bob@uni.example,red,
  carol,carol@uni.example,,admin

Accounts that are not there are made, each with a single-use link that
sets its password (valid 14 days); teams that are not there are made, with
their members. The links are printed as a CSV of name,link (or written to
LINKS), for a mail merge. Importing the same file again makes nothing; a
file with a bad row makes nothing and names the row.

The command uses the token of arena login for SERVER (by default
ARENA_SERVER, else http://localhost:5006).
`

func cmdUsers(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("arena users", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("o", "", "write the links to this file (default: standard output)")
	fs.Usage = func() { fmt.Fprint(stderr, usersUsage) }
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageErr("%v (see arena help users)", err)
	}
	if len(pos) < 2 || len(pos) > 3 || pos[0] != "import" {
		return usageErr("usage: arena users import FILE [-o LINKS] [SERVER] (see arena help users)")
	}
	roster, err := os.ReadFile(pos[1])
	if err != nil {
		return usageErr("%v", err)
	}
	api, err := contestClient(pos[2:])
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	res, err := api.do(ctx, "POST", "/api/users/import", "text/csv", bytes.NewReader(roster))
	if err != nil {
		return platformErr(err)
	}
	defer res.Body.Close()
	links, err := io.ReadAll(res.Body)
	if err != nil {
		return platformErr(err)
	}
	made := bytes.Count(links, []byte("\n")) - 1
	if *out == "" {
		_, err := stdout.Write(links)
		fmt.Fprintf(stderr, "arena: %d account(s) made\n", max(0, made))
		return err
	}
	if err := os.WriteFile(*out, links, 0o600); err != nil {
		return platformErr(err)
	}
	fmt.Fprintf(stderr, "arena: %d account(s) made; their links are in %s\n", max(0, made), *out)
	return nil
}
