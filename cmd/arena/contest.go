package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"gopkg.in/yaml.v3"
)

const contestUsage = `Usage:
  arena contest create FILE [SERVER]      create a contest from a JSON or YAML file (staff)
  arena contest list [SERVER]             the contests, their phases and deadlines
  arena contest standings ID [--csv] [SERVER]  a contest's standings (final once it is done)

A contest file holds the settings POST /api/contests takes, e.g.

  name: Spring cup
  game: tanks
  maps: [classic, triad]
  rounds: 4                 # games per pair of entries and map, half in each seat order
  freeze_at: 2027-03-31T18:00:00Z   # the deadline: no new entry or version after it
  format: auto              # round-robin, swiss (swiss_rounds: N), or auto: Swiss past 24 entries
  answer_timeout_ms: 500    # limits (0 or absent: the game's)
  memory_mb: 256            # each bot's memory (0 or absent: the platform's)
  entrants: everyone        # listed, with allowed: [alice, red-team]; or invite: a link staff send
  entries_per_person: 1     # entries that may count for one person (a team's counts for each member)
  tiebreak: [head-to-head, sonneborn-berger]   # or rating
  rules: |
    Be kind.

The commands use the token of arena login for SERVER (by default
ARENA_SERVER, else http://localhost:5006), or ARENA_TOKEN on a server in
local mode.
`

// contestClient is an API client for SERVER (pos[0], if given): with the
// token of arena login when there is one, else ARENA_TOKEN.
func contestClient(pos []string) (*apiClient, error) {
	server, c, err := loggedIn(pos)
	if err != nil {
		var ee *exitError
		if server == "" || !errors.As(err, &ee) || ee.code != exitUsage {
			return nil, err
		}
		c.Token = settingValue("ARENA_TOKEN") // not logged in: a local server
	}
	return newAPIClient(server, c.Token), nil
}

// readContestFile reads a contest's settings from a JSON or YAML file, as
// the JSON the API takes.
func readContestFile(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, usageErr("%v", err)
	}
	if ext := strings.ToLower(filepath.Ext(path)); ext == ".json" || bytes.HasPrefix(bytes.TrimSpace(data), []byte("{")) {
		if !json.Valid(data) {
			return nil, usageErr("%s is not valid JSON", path)
		}
		return data, nil
	}
	var v map[string]any
	if err := yaml.Unmarshal(data, &v); err != nil {
		return nil, usageErr("%s: %v", path, err)
	}
	for k, x := range v {
		if t, ok := x.(time.Time); ok {
			v[k] = t.UTC().Format(time.RFC3339)
		}
	}
	return json.Marshal(v)
}

func cmdContest(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("arena contest", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asCSV := fs.Bool("csv", false, "standings: print them as CSV")
	asJSON := fs.Bool("json", false, "print the server's answer as JSON")
	fs.Usage = func() { fmt.Fprint(stderr, contestUsage) }
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageErr("%v (see arena help contest)", err)
	}
	if len(pos) == 0 {
		return usageErr("arena contest create|list|standings (see arena help contest)")
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	switch pos[0] {
	case "create":
		return contestCreate(ctx, pos[1:], stdout)
	case "list":
		return contestList(ctx, pos[1:], *asJSON, stdout)
	case "standings":
		return contestStandings(ctx, pos[1:], *asCSV, *asJSON, stdout)
	}
	return usageErr("unknown contest command %q: create, list or standings", pos[0])
}

// contestCreate is arena contest create FILE [SERVER].
func contestCreate(ctx context.Context, args []string, stdout io.Writer) error {
	if len(args) < 1 || len(args) > 2 {
		return usageErr("usage: arena contest create FILE [SERVER]")
	}
	body, err := readContestFile(args[0])
	if err != nil {
		return err
	}
	api, err := contestClient(args[1:])
	if err != nil {
		return err
	}
	var out struct {
		ID       int64     `json:"id"`
		Name     string    `json:"name"`
		FreezeAt time.Time `json:"freeze_at"`
	}
	if err := api.send(ctx, "POST", "/api/contests", "application/json", bytes.NewReader(body), &out); err != nil {
		return platformErr(err)
	}
	fmt.Fprintf(stdout, "contest %d (%s) created: its final starts at %s; %s/#/contest/%d\n", out.ID, out.Name, out.FreezeAt.Local().Format(time.RFC3339), api.server, out.ID)
	return nil
}

// contestList is arena contest list [SERVER].
func contestList(ctx context.Context, args []string, asJSON bool, stdout io.Writer) error {
	api, err := contestClient(args)
	if err != nil {
		return err
	}
	var raw json.RawMessage
	if err := api.call(ctx, "GET", "/api/contests", nil, &raw); err != nil {
		return platformErr(err)
	}
	if asJSON {
		_, err := fmt.Fprintf(stdout, "%s\n", raw)
		return err
	}
	var list []struct {
		ID       int64     `json:"id"`
		Name     string    `json:"name"`
		Game     string    `json:"game"`
		Phase    string    `json:"phase"`
		FreezeAt time.Time `json:"freeze_at"`
	}
	if err := json.Unmarshal(raw, &list); err != nil {
		return platformErr(err)
	}
	w := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "ID\tCONTEST\tGAME\tPHASE\tDEADLINE")
	for _, c := range list {
		fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%s\n", c.ID, c.Name, c.Game, c.Phase, c.FreezeAt.Local().Format("2006-01-02 15:04"))
	}
	return w.Flush()
}

// contestStandings is arena contest standings ID [SERVER]: a table, the
// server's JSON or its CSV export.
func contestStandings(ctx context.Context, args []string, asCSV, asJSON bool, stdout io.Writer) error {
	if len(args) < 1 || len(args) > 2 {
		return usageErr("usage: arena contest standings ID [--csv] [SERVER]")
	}
	api, err := contestClient(args[1:])
	if err != nil {
		return err
	}
	path := "/api/contests/" + args[0]
	if asCSV {
		req := path + "/export?format=csv"
		var buf bytes.Buffer
		if err := api.raw(ctx, req, &buf); err != nil {
			return platformErr(err)
		}
		_, err := stdout.Write(buf.Bytes())
		return err
	}
	var raw json.RawMessage
	if err := api.call(ctx, "GET", path+"/standings", nil, &raw); err != nil {
		return platformErr(err)
	}
	if asJSON {
		_, err := fmt.Fprintf(stdout, "%s\n", raw)
		return err
	}
	var b struct {
		Phase string `json:"phase"`
		Final bool   `json:"final"`
		Rows  []struct {
			Rank                                int
			Name, Owner                         string
			Points                              float64
			Played, Wins, Draws, Losses, Faults int
			Interval                            [2]float64
			Disqualified                        bool
		} `json:"rows"`
	}
	if err := json.Unmarshal(raw, &b); err != nil {
		return platformErr(err)
	}
	state := "so far"
	if b.Final {
		state = "final"
	}
	fmt.Fprintf(stdout, "contest %s: %s (standings %s)\n", args[0], b.Phase, state)
	w := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "#\tENTRY\tOWNER\tPOINTS\tPLAYED\tW/D/L\tINTERVAL\tFAULTS")
	for _, r := range b.Rows {
		rank := fmt.Sprint(r.Rank)
		if r.Disqualified {
			rank = "DQ"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%g\t%d\t%d/%d/%d\t%.2f–%.2f\t%d\n", rank, r.Name, r.Owner, r.Points, r.Played, r.Wins, r.Draws, r.Losses, r.Interval[0], r.Interval[1], r.Faults)
	}
	return w.Flush()
}
