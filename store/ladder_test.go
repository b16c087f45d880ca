package store

import (
	"database/sql"
	"encoding/json"
	"errors"
	"path/filepath"
	"testing"
	"time"
)

func openTest(t *testing.T) *Store {
	t.Helper()
	s, err := Open(t.TempDir(), "test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestRegisterEntry(t *testing.T) {
	s := openTest(t)
	ctx := t.Context()
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	reg := func(name, image, id string) (Entry, bool, error) {
		return s.RegisterEntry(ctx, Entry{Game: "tanks", Name: name, Image: image, ImageID: id, Mu: 25, Sigma: 8, CreatedAt: t0}, EntryLimits{Listed: 3})
	}
	hunter, created, err := reg("hunter", "arena/tanks-hunter", "sha256:1")
	if err != nil || !created || hunter.Version != 1 || hunter.State != EntryActive || hunter.ID == 0 {
		t.Fatalf("first: %+v %v %v", hunter, created, err)
	}
	if again, created, err := reg("hunter", "arena/tanks-hunter", "sha256:1"); err != nil || created || again.ID != hunter.ID {
		t.Errorf("the same image again: %+v %v %v", again, created, err)
	}
	if _, _, err := reg("hunter", "someone/else", "sha256:9"); !errors.Is(err, ErrNameTaken) {
		t.Errorf("the name with another image: %v", err)
	}
	v2, created, err := reg("hunter", "arena/tanks-hunter", "sha256:2")
	if err != nil || !created || v2.Version != 2 || v2.ID == hunter.ID {
		t.Fatalf("a new version: %+v %v %v", v2, created, err)
	}
	if old, err := s.Entry(ctx, hunter.ID); err != nil || old.State != EntryRetired || old.Listed() {
		t.Errorf("the old version: %+v %v", old, err)
	}
	if _, _, err := reg("random", "arena/tanks-random", "sha256:3"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := reg("idle", "arena/idle", "sha256:4"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := reg("fourth", "arena/fourth", "sha256:5"); !errors.Is(err, ErrLadderFull) {
		t.Errorf("past the most entries: %v", err)
	}
	if _, err := s.SetEntryState(ctx, v2.ID, EntryRemoved, ""); err != nil {
		t.Fatal(err)
	}
	// A removed entry frees its name and its place.
	if e, created, err := reg("hunter", "someone/else", "sha256:9"); err != nil || !created || e.Version != 3 {
		t.Errorf("the name after removal: %+v %v %v", e, created, err)
	}
	listed, err := s.Entries(ctx, "tanks", EntryActive, EntryPaused)
	if err != nil || len(listed) != 3 {
		t.Errorf("listed: %v %v", listed, err)
	}
	if _, err := s.SetEntryState(ctx, 999, EntryPaused, ""); !errors.Is(err, ErrNoEntry) {
		t.Errorf("unknown entry: %v", err)
	}
	if l, a, err := s.LadderGames(ctx); err != nil || l["tanks"] != 3 || a["tanks"] != 3 {
		t.Errorf("games: %v %v %v", l, a, err)
	}
}

func TestLadderMatchSettlesOnce(t *testing.T) {
	s := openTest(t)
	ctx := t.Context()
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	a, _, _ := s.RegisterEntry(ctx, Entry{Game: "tanks", Name: "a", Image: "x/a", ImageID: "sha256:a", Mu: 25, Sigma: 8, CreatedAt: t0}, EntryLimits{})
	b, _, _ := s.RegisterEntry(ctx, Entry{Game: "tanks", Name: "b", Image: "x/b", ImageID: "sha256:b", Mu: 25, Sigma: 8, CreatedAt: t0}, EntryLimits{})
	for i, id := range []string{"aaaaaaaaaaaa", "bbbbbbbbbbbb"} {
		seq, err := s.NextLadderSeq(ctx, "tanks")
		if err != nil || seq != int64(i+1) {
			t.Fatalf("seq %d %v", seq, err)
		}
		m := Match{ID: id, Status: "queued", Game: "tanks", Map: "classic", Seed: 7, Bots: []string{"sha256:a", "sha256:b"}, CreatedAt: t0.Add(time.Duration(i) * time.Second)}
		if err := s.InsertLadderMatch(ctx, m, LadderMatch{Seq: seq, Note: "why", Seats: []LadderSeat{{Seat: 0, EntryID: a.ID}, {Seat: 1, EntryID: b.ID}}}); err != nil {
			t.Fatal(err)
		}
	}
	if ids, err := s.PendingLadderMatches(ctx); err != nil || len(ids) != 2 {
		t.Fatalf("pending: %v %v", ids, err)
	}
	s.Finish(ctx, "aaaaaaaaaaaa", Outcome{Status: "finished", Result: json.RawMessage(`{"winners":["sha256:a"]}`)}, t0)
	decide := func(lm LadderMatch, m Match, entries []Entry) (Settlement, error) {
		if m.Status != "finished" || len(entries) != 2 || entries[0].ID != a.ID || lm.Seats[1].EntryID != b.ID {
			t.Errorf("decide got %+v %+v %+v", lm, m, entries)
		}
		return Settlement{Seats: []LadderSeat{{Place: 0, Outcome: "win", Status: "ok", Mu: 27, Sigma: 7}, {Place: 1, Outcome: "loss", Status: "timeout", Mu: 23, Sigma: 7}}}, nil
	}
	if ok, err := s.SettleLadderMatch(ctx, "aaaaaaaaaaaa", t0, decide); !ok || err != nil {
		t.Fatalf("settle: %v %v", ok, err)
	}
	if ok, err := s.SettleLadderMatch(ctx, "aaaaaaaaaaaa", t0, func(LadderMatch, Match, []Entry) (Settlement, error) {
		t.Error("a settled match was decided again")
		return Settlement{}, nil
	}); ok || err != nil {
		t.Errorf("settle again: %v %v", ok, err)
	}
	if ok, err := s.SettleLadderMatch(ctx, "bbbbbbbbbbbb", t0, func(LadderMatch, Match, []Entry) (Settlement, error) {
		return Settlement{Void: "interrupted"}, nil
	}); !ok || err != nil {
		t.Errorf("void: %v %v", ok, err)
	}
	if _, err := s.SettleLadderMatch(ctx, "cccccccccccc", t0, decide); !errors.Is(err, ErrNotFound) {
		t.Errorf("not a ladder match: %v", err)
	}
	if e, _ := s.Entry(ctx, a.ID); e.Mu != 27 || e.Sigma != 7 {
		t.Errorf("a after the match: %+v", e)
	}
	rated, err := s.RatedMatches(ctx, "tanks")
	if err != nil || len(rated) != 1 || rated[0].RatedSeq != 1 || rated[0].Seats[1].Status != "timeout" || rated[0].Seats[1].MuBefore != 25 || rated[0].Seats[1].Mu != 23 {
		t.Errorf("rated: %+v %v", rated, err)
	}
	if lm, err := s.LadderMatchOf(ctx, "bbbbbbbbbbbb"); err != nil || lm.State != LadderVoid || lm.Note != "interrupted" {
		t.Errorf("void match: %+v %v", lm, err)
	}
	stats, err := s.LadderStats(ctx, "tanks")
	if err != nil || stats[a.ID].Wins != 1 || stats[b.ID].Losses != 1 || stats[b.ID].Faults["timeout"] != (FaultCount{1, "aaaaaaaaaaaa", 1}) || stats[a.ID].Matches != 1 {
		t.Errorf("stats: %+v %v", stats, err)
	}
	if list, err := s.EntryMatches(ctx, a.ID, 0); err != nil || len(list) != 2 || list[0].MatchID != "bbbbbbbbbbbb" {
		t.Errorf("a's matches: %+v %v", list, err)
	}
	err = s.ReplaceRatings(ctx, "tanks", []Rerating{{MatchID: "aaaaaaaaaaaa", Seat: 0, Place: 0, Outcome: "win", Status: "ok", MuBefore: 25, SigmaBefore: 8, Mu: 30, Sigma: 6}},
		map[int64][2]float64{a.ID: {30, 6}}, [2]float64{25, 8})
	if err != nil {
		t.Fatal(err)
	}
	if e, _ := s.Entry(ctx, a.ID); e.Mu != 30 {
		t.Errorf("a after the recomputation: %+v", e)
	}
	if e, _ := s.Entry(ctx, b.ID); e.Mu != 25 || e.Sigma != 8 {
		t.Errorf("b after the recomputation: %+v", e)
	}
}

// A database from before the ladders gains their tables when opened.
func TestLadderTablesAreAddedToAnExistingDatabase(t *testing.T) {
	dir := t.TempDir()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "arena.db"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(schema); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO matches (id, status, game, map, seed, bots, created_at) VALUES ('aaaaaaaaaaaa', 'finished', 'tanks', 'classic', '1', '["a","b"]', '2026-01-01T00:00:00Z')`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	s, err := Open(dir, "test")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if m, err := s.Get(t.Context(), "aaaaaaaaaaaa"); err != nil || m.Status != "finished" {
		t.Errorf("the old match: %+v %v", m, err)
	}
	if _, _, err := s.RegisterEntry(t.Context(), Entry{Game: "tanks", Name: "a", Image: "x/a", ImageID: "sha256:a", Mu: 25, Sigma: 8}, EntryLimits{}); err != nil {
		t.Errorf("register on the old database: %v", err)
	}
}

// An owner at the most entries they may list still registers a new
// version of one of their names: it takes the place of the old one.
func TestANewVersionTakesTheOldOnesPlace(t *testing.T) {
	s := openTest(t)
	ctx := t.Context()
	lim := EntryLimits{PerOwner: 2}
	for _, name := range []string{"a", "b"} {
		if _, _, err := s.RegisterEntry(ctx, Entry{Game: "tanks", Name: name, Image: "x/" + name, ImageID: "sha256:1" + name, Mu: 25, Sigma: 8, Owner: "alice"}, lim); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := s.RegisterEntry(ctx, Entry{Game: "tanks", Name: "c", Image: "x/c", ImageID: "sha256:1c", Mu: 25, Sigma: 8, Owner: "alice"}, lim); !errors.Is(err, ErrLadderFull) {
		t.Errorf("a third name: %v", err)
	}
	if _, created, err := s.RegisterEntry(ctx, Entry{Game: "tanks", Name: "a", Image: "x/a", ImageID: "sha256:2a", Mu: 25, Sigma: 8, Owner: "alice"}, lim); err != nil || !created {
		t.Errorf("a new version of a: %v, %v", created, err)
	}
	if _, _, err := s.RegisterEntry(ctx, Entry{Game: "tanks", Name: "c", Image: "x/c", ImageID: "sha256:1c", Mu: 25, Sigma: 8, Owner: "bob"}, lim); err != nil {
		t.Errorf("bob's entry: %v", err)
	}
}
