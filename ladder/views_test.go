package ladder

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"arena/engine"
	"arena/store"
)

// A board is read in one snapshot: a person never sees counts that
// disagree with each other, such as more crashes than matches (issue
// #60: "crash 107%", 15 crashes of 14 matches, because a match was
// settled between the board's reads of the matches and of the faults).
//
// A crasher and a steady bot are given boardMatches pending matches,
// which one goroutine settles as fast as it can, the crasher crashing in
// every one, while this one reads the board and the crasher's page again
// and again. Every figure of one read must then agree with every other:
// the crasher's crashes equal its matches, each entry's results add up
// to its matches, the entries' matches to twice the rated matches, the
// rated and the upcoming to boardMatches, the crasher's rating to the
// number of rated matches, its page's history and rated matches to its
// matches. The store has one connection, which database/sql hands to the
// settler waiting for it whenever a read that is not in a transaction
// lets it go: with the board read in separate queries, nearly every read
// that overlaps the settler sees a settle between two of its queries
// (measured on the code before the fix: 100 runs of 100 failed, and 100 of
// 100 with GOMAXPROCS=1, with 84% of the reads inconsistent, the first
// one's crash rate often above 100%), and with the board read in one
// transaction (store.Snapshot) none can: the settler waits for the read.
func TestBoardIsOneSnapshot(t *testing.T) {
	const boardMatches = 100
	st, err := store.Open(t.TempDir(), "test")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := t.Context()
	l := newLadder(t, st, &queue{})
	var ids [2]int64
	for i, name := range []string{"crasher", "steady"} {
		e, _, err := l.Register(ctx, Registration{Game: "tanks", Name: name, Image: "bots/" + name, Owner: "admin", By: "admin"})
		if err != nil {
			t.Fatal(err)
		}
		ids[i] = e.ID
	}
	crasher, steady := ids[0], ids[1]
	mu0 := l.cfg.Model.New().Mu
	// The crasher's rating after its kth rated match.
	muAfter := func(k int) float64 { return mu0 - float64(k)/100 }
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	matchIDs := make([]string, boardMatches)
	for i := range matchIDs {
		matchIDs[i] = fmt.Sprintf("snapshot%04d", i)
		m := store.Match{ID: matchIDs[i], Status: "finished", Game: "tanks", Map: "arena", Bots: []string{"bots/crasher", "bots/steady"}, CreatedAt: t0.Add(time.Duration(i) * time.Second)}
		lm := store.LadderMatch{Seq: int64(i + 1), Note: "test", Seats: []store.LadderSeat{{Seat: 0, EntryID: crasher}, {Seat: 1, EntryID: steady}}}
		if err := st.InsertLadderMatch(ctx, m, lm); err != nil {
			t.Fatal(err)
		}
	}

	settled := make(chan error, 1)
	go func() {
		for i, id := range matchIDs {
			_, err := st.SettleLadderMatch(ctx, id, t0.Add(time.Hour+time.Duration(i)*time.Second), func(lm store.LadderMatch, _ store.Match, entries []store.Entry) (store.Settlement, error) {
				return store.Settlement{Seats: []store.LadderSeat{
					{Place: 1, Outcome: Loss, Status: string(engine.StatusCrashed), Mu: muAfter(i + 1), Sigma: entries[0].Sigma},
					{Place: 0, Outcome: Win, Status: string(engine.StatusOK), Mu: entries[1].Mu + 0.01, Sigma: entries[1].Sigma},
				}}, nil
			})
			if err != nil {
				settled <- err
				return
			}
		}
		settled <- nil
	}()

	// boardWrong says what disagrees in one read of the board, "" if
	// nothing does.
	boardWrong := func(b Board) string {
		if len(b.Entries) != 2 {
			return fmt.Sprintf("%d entries", len(b.Entries))
		}
		sum := 0
		for _, s := range b.Entries {
			sum += s.Matches
			if s.Wins+s.Draws+s.Losses != s.Matches {
				return fmt.Sprintf("%s: %d wins, %d draws, %d losses of %d matches", s.Name, s.Wins, s.Draws, s.Losses, s.Matches)
			}
			for kind, r := range map[string]Rate{"timeout": s.Faults.Timeout, "crash": s.Faults.Crash, "bad output": s.Faults.BadOutput} {
				if r.N > s.Matches || r.Percent > 100 {
					return fmt.Sprintf("%s: %s %.0f%% (%d of %d matches)", s.Name, kind, r.Percent, r.N, s.Matches)
				}
			}
			if s.ID == crasher {
				if s.Faults.Crash.N != s.Matches {
					return fmt.Sprintf("crasher: %d crashes of %d matches", s.Faults.Crash.N, s.Matches)
				}
				if s.Mu != muAfter(b.Rated) {
					return fmt.Sprintf("crasher: μ %v, %v after %d rated matches", s.Mu, muAfter(b.Rated), b.Rated)
				}
			}
		}
		if sum != 2*b.Rated {
			return fmt.Sprintf("the entries played %d seats of %d rated matches", sum, b.Rated)
		}
		if len(b.Upcoming)+b.Rated != boardMatches {
			return fmt.Sprintf("%d upcoming and %d rated of %d matches", len(b.Upcoming), b.Rated, boardMatches)
		}
		if len(b.Recent) != min(12, b.Rated) {
			return fmt.Sprintf("%d recent of %d rated matches", len(b.Recent), b.Rated)
		}
		return ""
	}
	pageWrong := func(p Page) string {
		rated := 0
		for _, m := range p.Recent {
			if m.State == store.LadderRated {
				rated++
			}
		}
		if rated != p.Matches || len(p.History) != p.Matches+1 {
			return fmt.Sprintf("crasher's page: %d matches, %d rated listed, %d points of history", p.Matches, rated, len(p.History))
		}
		if last := p.History[len(p.History)-1]; math.Abs(last.Mu-p.Mu) > 1e-9 {
			return fmt.Sprintf("crasher's page: μ %v, its history ends at %v", p.Mu, last.Mu)
		}
		for _, f := range p.Faults {
			if f.N != p.Matches || f.Percent > 100 {
				return fmt.Sprintf("crasher's page: %s %.0f%% (%d of %d matches)", f.Status, f.Percent, f.N, p.Matches)
			}
		}
		if p.Matches > 0 && len(p.Faults) != 1 {
			return fmt.Sprintf("crasher's page: %d fault kinds", len(p.Faults))
		}
		return ""
	}

	reads, wrong := 0, 0
	var first string
	read := func() {
		b, err := l.Leaderboard(ctx, "tanks")
		if err != nil {
			t.Fatal(err)
		}
		p, err := l.EntryPage(ctx, "tanks", crasher, 0)
		if err != nil {
			t.Fatal(err)
		}
		reads++
		if w := strings.Trim(boardWrong(b)+"; "+pageWrong(p), "; "); w != "" {
			wrong++
			if first == "" {
				first = w
			}
		}
	}
	for done := false; !done; {
		select {
		case err := <-settled:
			if err != nil {
				t.Fatal(err)
			}
			done = true
		default:
		}
		read()
	}
	if wrong > 0 {
		t.Errorf("%d of %d reads of the board and the crasher's page disagreed with themselves while matches were settled; the first: %s", wrong, reads, first)
	}
	// Once every match is settled, the board shows them all.
	b, err := l.Leaderboard(ctx, "tanks")
	if err != nil || b.Rated != boardMatches || boardWrong(b) != "" {
		t.Errorf("the board once settled: %d rated, %s, %v", b.Rated, boardWrong(b), err)
	}
	t.Logf("%d reads while %d matches were settled", reads, boardMatches)
}
