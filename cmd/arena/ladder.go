package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"text/tabwriter"

	"arena/engine"
	"arena/judger"
	"arena/ladder"
	"arena/ladder/skill"
	"arena/store"
)

func ladderFlags(out io.Writer) (*flag.FlagSet, map[string]*string) {
	fs := flag.NewFlagSet("arena ladder", flag.ContinueOnError)
	fs.SetOutput(out)
	vals := registerOnly(fs, "data", "games")
	fs.Usage = func() {
		fmt.Fprint(out, `Usage:
  arena ladder show GAME [--data DIR] [--games NAME=IMAGE,...]
  arena ladder recompute GAME [--data DIR] [--games NAME=IMAGE,...]

GAME is a built-in game or a logic game the server offers: one an admin
registered (kept in the data folder), or the operator's (ARENA_GAMES or
--games, as given to arena serve).

show prints a game's leaderboard from the data folder: rank, entry,
rating (μ − 3σ) with μ and σ, matches, wins, draws and losses, and fault
rates.

recompute rates the game's ladder again from its history: every rated
match, in the order it was rated, judged again from its recorded result
and rated from fresh ratings. It writes the figures it finds and says
how far the stored ones were from them (0 when the history gives the
same numbers). The data folder must not be in use by a running server.

`)
		fs.PrintDefaults()
	}
	return fs, vals
}

func cmdLadder(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, vals := ladderFlags(stderr)
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageErr("%v (see arena help ladder)", err)
	}
	if len(pos) != 2 || (pos[0] != "show" && pos[0] != "recompute") {
		return usageErr("usage: arena ladder show|recompute GAME (see arena help ladder)")
	}
	cfg, err := loadOnly(vals)
	if err != nil {
		return usageErr("%v", err)
	}
	host, _ := os.Hostname()
	st, err := store.Open(cfg.Data, fmt.Sprintf("arena ladder %s (pid %d on %s)", pos[0], os.Getpid(), host))
	if err != nil {
		return platformErr(err)
	}
	defer st.Close()
	// The logic games: the operator's (ARENA_GAMES, given here as to the
	// server) and those an admin registered (kept in the data folder).
	// Their number of bots (the image's label) plays no part here: the
	// board and its history are read from the data folder.
	known := engine.NewCatalog(games()...)
	for _, lg := range cfg.LogicGames {
		known.Add(judger.Named(lg.Name, lg.Image, 2, ""))
	}
	registered, err := st.LogicGames(ctx)
	if err != nil {
		return platformErr(err)
	}
	for _, lg := range registered {
		known.Add(judger.Named(lg.Name, lg.Image, 2, ""))
	}
	g, err := known.Find(pos[1])
	if err != nil {
		if len(cfg.LogicGames) == 0 {
			return usageErr("%v (a logic game is named by the server's ARENA_GAMES or --games: give the same here)", err)
		}
		return usageErr("%v", err)
	}
	if pos[0] == "recompute" {
		rc, err := ladder.Recompute(ctx, st, skill.Default(), g.Name(), true)
		if err != nil {
			return platformErr(err)
		}
		fmt.Fprintf(stdout, "%s ladder: %d rated matches of %d entries replayed; the stored ratings differ from the recomputed ones by %.3g at most", rc.Game, rc.Matches, rc.Entries, rc.MaxDiff)
		if rc.Changed > 0 {
			fmt.Fprintf(stdout, "; %d seats are judged differently now (kept as recorded)", rc.Changed)
		}
		fmt.Fprintln(stdout)
	}
	l := ladder.New(ladder.Config{}, ladder.Deps{Store: st, Games: known})
	b, err := l.Leaderboard(ctx, g.Name())
	if err != nil {
		return platformErr(err)
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "RANK\tENTRY\tRATING\tμ\tσ\tMATCHES\tW\tD\tL\tTIMEOUT\tCRASH\tBAD OUTPUT\tSTATE\t")
	for _, e := range b.Entries {
		fmt.Fprintf(tw, "%d\t%s\t%.2f\t%.2f\t%.2f\t%d\t%d\t%d\t%d\t%.0f%%\t%.0f%%\t%.0f%%\t%s\t\n", e.Rank, e.Name, e.Rating, e.Mu, e.Sigma, e.Matches, e.Wins, e.Draws, e.Losses,
			e.Faults.Timeout.Percent, e.Faults.Crash.Percent, e.Faults.BadOutput.Percent, e.State)
	}
	return tw.Flush()
}
