package contest

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"arena/engine"
	"arena/engine/tanks"
	"arena/internal/errs"
	"arena/ladder/skill"
	"arena/matches"
	"arena/store"
)

// Every pair plays every map Rounds times, half in each seat order, with
// the same seeds for every pairing and both orders.
func TestSchedule(t *testing.T) {
	games := Schedule([]int64{3, 1, 2}, []string{"a", "b"}, 4, 42)
	if len(games) != 3*2*4 {
		t.Fatalf("%d games, want 24", len(games))
	}
	type key struct {
		a, b int64
		m    string
	}
	count := map[key]int{}
	seeds := map[string]map[uint64]int{}
	for i, g := range games {
		if g.Idx != i {
			t.Errorf("game %d has index %d", i, g.Idx)
		}
		count[key{g.First, g.Second, g.Map}]++
		if seeds[g.Map] == nil {
			seeds[g.Map] = map[uint64]int{}
		}
		seeds[g.Map][g.Seed]++
	}
	for _, p := range [][2]int64{{1, 2}, {1, 3}, {2, 3}} {
		for _, m := range []string{"a", "b"} {
			if count[key{p[0], p[1], m}] != 2 || count[key{p[1], p[0], m}] != 2 {
				t.Errorf("%v on %s: %d and %d games by seat order, want 2 and 2", p, m, count[key{p[0], p[1], m}], count[key{p[1], p[0], m}])
			}
		}
	}
	for m, s := range seeds {
		// Two seeds a map (rounds/2), each used by the 3 pairings twice.
		if len(s) != 2 {
			t.Errorf("map %s: %d seeds, want 2", m, len(s))
		}
		for seed, n := range s {
			if n != 6 || seed >= 1<<53 {
				t.Errorf("map %s: seed %d used %d times, want 6 (and below 2^53)", m, seed, n)
			}
		}
	}
	if !slices.Equal(Schedule([]int64{1, 2, 3}, []string{"a", "b"}, 4, 42), games) {
		t.Error("the schedule depends on the entries' order")
	}
	if slices.Equal(Schedule([]int64{1, 2, 3}, []string{"a", "b"}, 4, 43), games) {
		t.Error("another contest seed gives the same schedule")
	}
}

func TestOutcomes(t *testing.T) {
	for _, r := range []Result{{1, 0, "ok", "crashed"}, {0, 1, "timeout", "ok"}, {0.5, 0.5, "ok", "ok"}} {
		got, err := DecodeOutcome(EncodeOutcome(r))
		if err != nil || got != r {
			t.Errorf("%+v → %q → %+v, %v", r, EncodeOutcome(r), got, err)
		}
	}
	for _, bad := range []string{"", "1-1:ok,ok", "2-0", "x"} {
		if _, err := DecodeOutcome(bad); err == nil {
			t.Errorf("%q read as an outcome", bad)
		}
	}
}

// Points, then head to head among the tied, then Sonneborn–Berger; a
// disqualified entry last and unranked; faults counted with their
// matches; intervals around the score.
func TestCompute(t *testing.T) {
	ents := []Entrant{{ID: 1, Name: "a"}, {ID: 2, Name: "b"}, {ID: 3, Name: "c"}, {ID: 4, Name: "d", Disqualified: true}}
	win := func(a, b int64, m string) Played {
		return Played{First: a, Second: b, MatchID: m, Result: Result{1, 0, "ok", "ok"}}
	}
	games := []Played{
		win(1, 2, "m1"), // a beats b
		win(2, 3, "m2"), // b beats c
		win(3, 1, "m3"), // c beats a: a, b, c on 1 point each… until d
		win(1, 4, "m4"),
		{First: 2, Second: 4, MatchID: "m5", Result: Result{1, 0, "ok", "crashed"}},
		{First: 3, Second: 4, MatchID: "m6", Result: Result{0.5, 0.5, "ok", "ok"}},
	}
	s := Compute(ents, games, []string{HeadToHead, SonnebornBerger}, skill.Default())
	var order []string
	for _, r := range s.Rows {
		order = append(order, fmt.Sprintf("%d:%s:%g", r.Rank, r.Name, r.Points))
	}
	// a and b have 2 points, c 1.5; a beat b head to head.
	if want := []string{"1:a:2", "2:b:2", "3:c:1.5", "0:d:0.5"}; !slices.Equal(order, want) {
		t.Errorf("standings %v, want %v", order, want)
	}
	d := s.Rows[3]
	if d.Faults != 1 || !slices.Equal(d.FaultMatches, []string{"m5"}) || d.Played != 3 || d.Losses != 2 || d.Draws != 1 {
		t.Errorf("d: %+v", d)
	}
	a := s.Rows[0]
	if a.Interval[0] >= 2.0/3 || a.Interval[1] <= 2.0/3 || a.Interval[0] < 0 || a.Interval[1] > 1 {
		t.Errorf("a's interval %v does not hold its score 2/3", a.Interval)
	}
	if s.HeadToHead[0][1] != 1 || s.HeadToHead[1][0] != 0 || s.HeadToHead[0][0] != -1 {
		t.Errorf("head to head %v", s.HeadToHead)
	}
	// Equal in everything: the same rank.
	same := Compute([]Entrant{{ID: 1, Name: "x"}, {ID: 2, Name: "y"}}, []Played{{First: 1, Second: 2, Result: Result{0.5, 0.5, "ok", "ok"}}}, []string{HeadToHead}, skill.Default())
	if same.Rows[0].Rank != 1 || same.Rows[1].Rank != 1 {
		t.Errorf("a draw gives ranks %d and %d", same.Rows[0].Rank, same.Rows[1].Rank)
	}
}

// The "rating" tie-break: of the entries tied on points, the one whose
// win was against the stronger opponent (and whose loss was to it) rates
// higher, as the ladders' model says.
func TestComputeTieBreakByRating(t *testing.T) {
	ents := []Entrant{{ID: 1, Name: "s"}, {ID: 2, Name: "w"}, {ID: 3, Name: "x"}, {ID: 4, Name: "y"}}
	win := func(a, b int64) Played { return Played{First: a, Second: b, Result: Result{1, 0, "ok", "ok"}} }
	games := []Played{
		win(1, 2), win(1, 2), win(1, 2), // s is strong, w weak
		win(3, 1), win(1, 3), // x splits with s
		win(4, 2), win(2, 4), // y splits with w
	}
	st := Compute(ents, games, []string{Rating}, skill.Default())
	var order []string
	for _, r := range st.Rows {
		order = append(order, fmt.Sprintf("%d:%s:%g", r.Rank, r.Name, r.Points))
	}
	// x, y and w have 1 point each; x's split is worth more.
	if order[0] != "1:s:4" || order[1] != "2:x:1" {
		t.Fatalf("standings %v: want s, then x", order)
	}
	for k := 1; k < 3; k++ {
		if a, b := st.Rows[k].TieBreaks[0], st.Rows[k+1].TieBreaks[0]; !(a > b) {
			t.Errorf("row %d's rating %g is not above row %d's %g: %v", k, a, k+1, b, order)
		}
	}
	for _, r := range st.Rows {
		if len(r.TieBreaks) != 1 {
			t.Errorf("%s: tie-breaks %v, want its rating", r.Name, r.TieBreaks)
		}
	}
	// A spec declares it; twice is refused.
	s := Spec{Name: "n", Game: "tanks", FreezeAt: time.Now(), TieBreak: []string{Rating, HeadToHead}}
	if err := s.Check([]engine.Game{tanks.New()}); err != nil {
		t.Errorf("rating refused: %v", err)
	}
	s.TieBreak = []string{Rating, Rating}
	if err := s.Check([]engine.Game{tanks.New()}); err == nil || !strings.Contains(err.Error(), "twice") {
		t.Errorf("a tie-break given twice: %v", err)
	}
}

// fakeQueue plays a match at once: the stronger bot (by its image's
// place in strength) wins; a bot named "crash" crashes; with void set,
// a match fails as an interrupted one does, once per game.
type fakeQueue struct {
	st       *store.Store
	mu       sync.Mutex
	strength []string
	voidOnce map[uint64]bool
	// voidAlways: every match fails as an interrupted one does.
	voidAlways bool
	played     []string
	hold       bool
	held       []string
}

func (q *fakeQueue) Submit(ctx context.Context, req matches.Request, insert func(context.Context, store.Match) error) error {
	m := store.Match{ID: req.MatchID, Status: string(matches.StateQueued), Game: req.Game.Name(), Map: req.Map.Info().Name, Seed: req.Seed, Bots: req.Images, CreatedAt: time.Now()}
	if err := insert(ctx, m); err != nil {
		return err
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	q.played = append(q.played, fmt.Sprintf("%s %s %s %d", req.Images[0], req.Images[1], req.Map.Info().Name, req.Seed))
	if q.hold {
		q.held = append(q.held, req.MatchID)
		return nil
	}
	return q.finish(ctx, req)
}

func (q *fakeQueue) finish(ctx context.Context, req matches.Request) error {
	key := req.Seed ^ uint64(len(req.Images[0]))
	if q.voidAlways || q.voidOnce != nil && !q.voidOnce[key] {
		if q.voidOnce != nil {
			q.voidOnce[key] = true
		}
		return q.st.Finish(ctx, req.MatchID, store.Outcome{Status: string(matches.StateFailed), Error: "interrupted: the server stopped during the match"}, time.Now())
	}
	res := matches.Result{MatchID: req.MatchID, Game: req.Game.Name(), Turns: 10}
	rank := func(img string) int { return slices.Index(q.strength, img) }
	for i, img := range req.Images {
		b := matches.BotResult{Seat: i, ID: img, Image: img, Status: engine.StatusOK}
		if strings.Contains(img, "crash") {
			b.Status = engine.StatusCrashed
		}
		res.Bots = append(res.Bots, b)
	}
	if rank(req.Images[0]) < rank(req.Images[1]) {
		res.Winners = []string{req.Images[0]}
	} else {
		res.Winners = []string{req.Images[1]}
	}
	data, _ := json.Marshal(res)
	return q.st.Finish(ctx, req.MatchID, store.Outcome{Status: string(matches.StateFinished), Result: data}, time.Now())
}

type rig struct {
	// practice turns the practice ladder on.
	practice bool
	st       *store.Store
	q        *fakeQueue
	c        *Contests
	now      time.Time
	mu       sync.Mutex
}

func (r *rig) clock() time.Time { r.mu.Lock(); defer r.mu.Unlock(); return r.now }
func (r *rig) advance(d time.Duration) {
	r.mu.Lock()
	r.now = r.now.Add(d)
	r.mu.Unlock()
}

func newRig(t *testing.T, dir string) *rig {
	st, err := store.Open(dir, "test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	r := &rig{st: st, now: time.Date(2027, 1, 1, 12, 0, 0, 0, time.UTC)}
	r.q = &fakeQueue{st: st, strength: []string{"good", "random", "slow", "crash"}}
	r.c = r.contests()
	return r
}

func (r *rig) contests() *Contests {
	return New(Config{InFlight: 3, NoPractice: !r.practice}, Deps{Store: r.st, Games: engine.NewCatalog(tanks.New()), Queue: r.q, Now: r.clock,
		Image: func(ctx context.Context, ref string) (string, error) {
			if strings.Contains(ref, "missing") {
				return "", fmt.Errorf("%w: %s", matches.ErrImageNotFound, ref)
			}
			if tag, ok := strings.CutPrefix(ref, "alice/bot:"); ok {
				ref = "img" + tag // a pushed version
			}
			return "sha256:" + strings.Repeat("0", 64-len(ref)) + ref, nil
		},
		Labels: func(ctx context.Context, id string) (string, string) {
			if strings.HasSuffix(id, "snakebot") {
				return "snake", ""
			}
			return "", "someone <a@b.c>"
		},
	})
}

func (r *rig) create(t *testing.T) store.Contest {
	t.Helper()
	ct, err := r.c.Create(t.Context(), Spec{Name: "Cup", Game: "tanks", Maps: []string{"classic"}, Rounds: 2, FreezeAt: r.now.Add(time.Minute), Seed: 7}, "admin")
	if err != nil {
		t.Fatal(err)
	}
	return ct
}

func (r *rig) runToEnd(t *testing.T, id int64) Board {
	t.Helper()
	for i := 0; i < 100; i++ {
		if err := r.c.Step(t.Context()); err != nil {
			t.Fatal(err)
		}
		ct, err := r.st.Contest(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		if ct.State == store.ContestDone {
			b, err := r.c.Standings(t.Context(), id)
			if err != nil {
				t.Fatal(err)
			}
			return b
		}
	}
	t.Fatal("the final did not end")
	return Board{}
}

// A contest of four bots of known strength: nothing plays before the
// freeze; after it every pair plays with the seats swapped, the
// standings rank them in their order, the export matches them; an entry
// after the freeze is refused and plays nothing.
func TestAContestRunsItsFinalAtTheFreeze(t *testing.T) {
	r := newRig(t, t.TempDir())
	ct := r.create(t)
	for _, img := range []string{"slow", "crash", "random", "good"} {
		if _, err := r.c.Enter(t.Context(), ct.ID, Entry{Owner: "u-" + img, By: "u-" + img, Image: img}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := r.c.Enter(t.Context(), ct.ID, Entry{Owner: "x", By: "x", Image: "good"}); err == nil {
		t.Error("the same image entered twice")
	}
	if _, err := r.c.Enter(t.Context(), ct.ID, Entry{Owner: "x", By: "x", Image: "snakebot"}); !errs.IsInvalid(err) || !strings.Contains(err.Error(), "labelled for snake") {
		t.Errorf("a snake bot entered in a tanks contest: %v", err)
	}
	if es, _ := r.st.ContestEntries(t.Context(), ct.ID); es[0].Authors != "someone <a@b.c>" {
		t.Errorf("the authors' contact: %q", es[0].Authors)
	}
	if err := r.c.Step(t.Context()); err != nil {
		t.Fatal(err)
	}
	if len(r.q.played) != 0 {
		t.Fatalf("%d matches before the freeze", len(r.q.played))
	}
	r.advance(time.Minute)
	if _, err := r.c.Enter(t.Context(), ct.ID, Entry{Owner: "late", By: "late", Image: "late"}); !errors.Is(err, store.ErrContestClosed) {
		t.Errorf("an entry after the deadline: %v", err)
	}
	b := r.runToEnd(t, ct.ID)
	if len(r.q.played) != 12 {
		t.Errorf("%d matches, want 12 (6 pairs, both seat orders)", len(r.q.played))
	}
	var names []string
	for _, row := range b.Rows {
		names = append(names, row.Name)
		if row.Played != 6 {
			t.Errorf("%s played %d games, want 6", row.Name, row.Played)
		}
	}
	if want := []string{"good", "random", "slow", "crash"}; !slices.Equal(names, want) {
		t.Errorf("standings %v, want %v", names, want)
	}
	if b.Rows[3].Faults != 6 || len(b.Rows[3].FaultMatches) != 6 || !b.Final {
		t.Errorf("crash: %d faults; final %v", b.Rows[3].Faults, b.Final)
	}
	for _, p := range r.q.played {
		if strings.Contains(p, "late") {
			t.Errorf("the late entry played: %s", p)
		}
	}
	var buf bytes.Buffer
	if err := b.WriteCSV(&buf); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&buf).ReadAll()
	if err != nil || len(recs) != 5 {
		t.Fatalf("csv: %v, %d records", err, len(recs))
	}
	for i, row := range b.Rows {
		if recs[i+1][2] != row.Name || recs[i+1][4] != fmt.Sprint(row.Points) || recs[i+1][0] != fmt.Sprint(row.Rank) {
			t.Errorf("csv row %d %v, standings %+v", i+1, recs[i+1], row)
		}
	}
}

// A final cut in the middle (the server killed: its matches left
// unfinished, then marked interrupted) resumes in a new runner: no
// finished game is played again, the interrupted ones are, and the
// standings are those of an uninterrupted final with the same seed.
func TestAFinalResumesAfterARestart(t *testing.T) {
	whole := newRig(t, t.TempDir())
	wct := whole.create(t)
	cut := newRig(t, t.TempDir())
	cct := cut.create(t)
	for _, img := range []string{"slow", "crash", "random", "good"} {
		for _, r := range []*rig{whole, cut} {
			id := wct.ID
			if r == cut {
				id = cct.ID
			}
			if _, err := r.c.Enter(t.Context(), id, Entry{Owner: img, By: img, Image: img}); err != nil {
				t.Fatal(err)
			}
		}
	}
	whole.advance(time.Minute)
	cut.advance(time.Minute)
	want := whole.runToEnd(t, wct.ID)

	// Two steps, then matches held (playing) when the server dies.
	for i := 0; i < 2; i++ {
		if err := cut.c.Step(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	cut.q.hold = true
	if err := cut.c.Step(t.Context()); err != nil {
		t.Fatal(err)
	}
	held := slices.Clone(cut.q.held)
	if len(held) == 0 {
		t.Fatal("no match was playing at the cut")
	}
	finishedBefore := len(cut.q.played) - len(held)
	// The restart: unfinished matches are interrupted (Server.Recover),
	// a new runner takes over.
	for _, id := range held {
		if err := cut.st.Finish(t.Context(), id, store.Outcome{Status: string(matches.StateFailed), Error: "interrupted: the server stopped during the match"}, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	cut.q.hold = false
	cut.c = cut.contests()
	got := cut.runToEnd(t, cct.ID)
	if n := len(cut.q.played); n != 12+len(held) {
		t.Errorf("%d matches queued in all, want 12 + the %d interrupted", n, len(held))
	}
	seen := map[string]int{}
	for _, p := range cut.q.played[:finishedBefore] {
		seen[p]++
	}
	for _, p := range cut.q.played[finishedBefore+len(held):] {
		if seen[p] > 0 {
			t.Errorf("a finished game was played again: %s", p)
		}
	}
	// The same but for the matches' ids (each server names its own).
	for _, b := range []*Board{&got, &want} {
		for i := range b.Rows {
			b.Rows[i].FaultMatches = nil
		}
	}
	if fmt.Sprint(got.Standings) != fmt.Sprint(want.Standings) {
		t.Errorf("standings after the cut\n%+v\nuninterrupted\n%+v", got.Standings, want.Standings)
	}
}

// A game the platform could not play is played again, not scored.
func TestAVoidGameIsPlayedAgain(t *testing.T) {
	r := newRig(t, t.TempDir())
	r.q.voidOnce = map[uint64]bool{}
	ct := r.create(t)
	for _, img := range []string{"good", "random"} {
		if _, err := r.c.Enter(t.Context(), ct.ID, Entry{Owner: img, By: img, Image: img}); err != nil {
			t.Fatal(err)
		}
	}
	r.advance(time.Minute)
	b := r.runToEnd(t, ct.ID)
	if len(r.q.played) != 4 || b.Rows[0].Played != 2 || b.Rows[0].Name != "good" || b.Rows[0].Points != 2 {
		t.Errorf("%d matches; %+v", len(r.q.played), b.Rows)
	}
}

// At the freeze a pushed bot's final version is the chosen one if it was
// ready before the deadline, else the newest that was; a version pushed
// after the deadline is never chosen.
func TestTheFinalVersionIsPinnedAtTheFreeze(t *testing.T) {
	r := newRig(t, t.TempDir())
	ct := r.create(t)
	push := func(tag string, at time.Time, state string) {
		t.Helper()
		id := "img" + tag
		if err := r.st.RecordTag(t.Context(), store.Tag{Repository: "alice/bot", Tag: tag, Owner: "alice", Digest: "sha256:d" + tag, ImageID: "sha256:" + strings.Repeat("0", 64-len(id)) + id, PushedBy: "alice", PushedAt: at}); err != nil {
			t.Fatal(err)
		}
		if state != store.TagPending {
			if _, err := r.st.CheckTag(t.Context(), "alice/bot", tag, "sha256:d"+tag, store.Tag{State: state}); err != nil {
				t.Fatal(err)
			}
		}
	}
	push("v1", r.now, store.TagReady)
	push("v2", r.now.Add(10*time.Second), store.TagReady)
	e, err := r.c.Enter(t.Context(), ct.ID, Entry{Owner: "alice", By: "alice", Repository: "alice/bot", Tag: "v1"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.c.Enter(t.Context(), ct.ID, Entry{Owner: "bob", By: "bob", Repository: "alice/bot"}); err == nil {
		t.Error("bob entered alice's bot")
	}
	// The owner changes their mind: the latest.
	latest := ""
	if _, err := r.c.ChangeEntry(t.Context(), ct.ID, e.ID, Change{Version: &latest, By: "alice"}); err != nil {
		t.Fatal(err)
	}
	// Pushed after the deadline: not chosen.
	push("v3", r.now.Add(2*time.Minute), store.TagReady)
	if _, err := r.c.Enter(t.Context(), ct.ID, Entry{Owner: "bob", By: "bob", Image: "good"}); err != nil {
		t.Fatal(err)
	}
	r.advance(3 * time.Minute)
	if err := r.c.Step(t.Context()); err != nil {
		t.Fatal(err)
	}
	entries, _ := r.st.ContestEntries(t.Context(), ct.ID)
	if entries[0].FinalRef != "alice/bot:v2" || entries[0].FinalDigest != "alice/bot@sha256:dv2" {
		t.Errorf("alice's final version %q (%q), want v2", entries[0].FinalRef, entries[0].FinalDigest)
	}
	v := "v1"
	if _, err := r.c.ChangeEntry(t.Context(), ct.ID, e.ID, Change{Version: &v, By: "alice"}); !errors.Is(err, store.ErrContestClosed) {
		t.Errorf("a version chosen after the freeze: %v", err)
	}
	why := "copied code"
	if _, err := r.c.ChangeEntry(t.Context(), ct.ID, e.ID, Change{Disqualify: &why, By: "admin"}); err != nil {
		t.Errorf("a disqualification after the freeze: %v", err)
	}
	log, _ := r.st.AuditLog(t.Context(), ct.ID)
	var actions []string
	for _, a := range log {
		actions = append(actions, a.Action)
	}
	if !slices.Equal(actions, []string{"create", "freeze", "disqualify"}) {
		t.Errorf("audit %v", actions)
	}
}

// A contest's seed reads as a JSON number or string, is written as a
// string (exact in JavaScript), and anything else is refused naming the
// range.
func TestSeedJSON(t *testing.T) {
	for _, in := range []string{`{"seed":18446744073709551615}`, `{"seed":"18446744073709551615"}`} {
		var s Spec
		if err := json.Unmarshal([]byte(in), &s); err != nil || s.Seed != Seed(1<<64-1) {
			t.Errorf("%s: %v, %d", in, err, s.Seed)
		}
	}
	out, _ := json.Marshal(Spec{Seed: 42})
	if !strings.Contains(string(out), `"seed":"42"`) {
		t.Errorf("written as %s", out)
	}
	var s Spec
	if err := json.Unmarshal([]byte(`{"seed":-1}`), &s); err == nil || !strings.Contains(err.Error(), "18446744073709551615") {
		t.Errorf("a negative seed: %v", err)
	}
}

// Before the freeze the entries play practice matches, the pair that met
// least often first, each with its current version; the practice board
// rates them (the strongest first) and stays once the final starts,
// beside the final's standings; no practice match is made after the
// freeze.
func TestThePracticeLadder(t *testing.T) {
	r := newRig(t, t.TempDir())
	r.practice = true
	r.c = r.contests()
	ct := r.create(t)
	for _, img := range []string{"random", "good", "slow"} {
		if _, err := r.c.Enter(t.Context(), ct.ID, Entry{Owner: img, By: img, Image: img}); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 30; i++ {
		if err := r.c.Step(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	games, _ := r.st.PracticeGames(t.Context(), ct.ID)
	met := map[[2]int64]int{}
	for _, g := range games {
		met[pairOf(g.First, g.Second)]++
	}
	if len(games) < 20 || len(met) != 3 {
		t.Fatalf("%d practice games over %d pairs", len(games), len(met))
	}
	for p, n := range met {
		if n < len(games)/3-1 || n > len(games)/3+1 {
			t.Errorf("pair %v met %d times in %d games", p, n, len(games))
		}
	}
	b, err := r.c.Standings(t.Context(), ct.ID)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, row := range b.Practice {
		names = append(names, row.Name)
	}
	if !slices.Equal(names, []string{"good", "random", "slow"}) || b.Practice[0].Rating <= b.Practice[2].Rating {
		t.Errorf("practice board %+v", b.Practice)
	}
	if len(b.PracticeMatches) == 0 || b.PracticeMatches[0].MatchID != games[len(games)-1].MatchID {
		t.Errorf("the latest practice matches: %+v", b.PracticeMatches)
	}
	// One more practice game, still playing at the freeze: settled once
	// it is over.
	r.q.hold = true
	if err := r.c.Step(t.Context()); err != nil {
		t.Fatal(err)
	}
	r.q.hold = false
	if len(r.q.held) != 1 {
		t.Fatalf("%d practice games held, want 1", len(r.q.held))
	}
	r.advance(time.Minute)
	games, _ = r.st.PracticeGames(t.Context(), ct.ID)
	before := len(games)
	if err := r.c.Step(t.Context()); err != nil { // the freeze
		t.Fatal(err)
	}
	r.st.Finish(t.Context(), r.q.held[0], store.Outcome{Status: string(matches.StateFailed), Error: "interrupted: the server stopped during the match"}, time.Now())
	b = r.runToEnd(t, ct.ID)
	games, _ = r.st.PracticeGames(t.Context(), ct.ID)
	if len(games) != before {
		t.Errorf("%d practice games after the freeze", len(games)-before)
	}
	for _, g := range games {
		if g.State == store.GamePending {
			t.Errorf("practice game %s is still pending after the final", g.MatchID)
		}
	}
	if len(b.Practice) != 3 || b.Rows[0].Name != "good" {
		t.Errorf("final %+v beside practice %+v", b.Rows, b.Practice)
	}
}

// A game the platform can never play is tried Tries times, then void:
// not scored, and the final still ends.
func TestAGameNeverPlayedIsVoidAfterItsTries(t *testing.T) {
	r := newRig(t, t.TempDir())
	ct := r.create(t)
	for _, img := range []string{"good", "random"} {
		if _, err := r.c.Enter(t.Context(), ct.ID, Entry{Owner: img, By: img, Image: img}); err != nil {
			t.Fatal(err)
		}
	}
	r.q.voidAlways = true
	r.advance(time.Minute)
	b := r.runToEnd(t, ct.ID)
	if len(r.q.played) != 2*5 {
		t.Errorf("%d matches, want 5 tries of each of the 2 games", len(r.q.played))
	}
	for _, g := range b.Games {
		if g.State != store.GameVoid || !strings.Contains(g.Note, "in 5 tries") {
			t.Errorf("game %+v", g)
		}
	}
	for _, row := range b.Rows {
		if row.Played != 0 {
			t.Errorf("%s scored %d games", row.Name, row.Played)
		}
	}
}

// Staff change an open contest's settings with a merge patch: each
// change is checked as at creation and named in the audit log; the game,
// the seed and the invitation code cannot be set; after the freeze
// nothing changes.
func TestStaffChangeTheSettingsBeforeTheFreeze(t *testing.T) {
	r := newRig(t, t.TempDir())
	ct := r.create(t)
	patch := func(body string) error { return r.c.Update(t.Context(), ct.ID, json.RawMessage(body), "admin") }
	if err := patch(`{"maps":["classic","crossroads"],"rounds":4,"answer_timeout_ms":300,"memory_mb":128,"tiebreak":["rating"],"rules":"no copying"}`); err != nil {
		t.Fatal(err)
	}
	got, _ := r.st.Contest(t.Context(), ct.ID)
	s, err := spec(got)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(s.Maps, []string{"classic", "crossroads"}) || s.Rounds != 4 || s.AnswerTimeoutMS != 300 || s.MemoryMB != 128 || !slices.Equal(s.TieBreak, []string{Rating}) || s.Rules != "no copying" || s.Seed != 7 || s.Name != "Cup" {
		t.Errorf("settings after the patch: %+v", s)
	}
	if lim := s.Limits(); lim.MemoryBytes != 128<<20 || lim.AnswerTimeout != 300*time.Millisecond {
		t.Errorf("the matches' limits: %+v", lim)
	}
	for body, want := range map[string]string{
		`{"rounds":3}`:               "rounds: 3",
		`{"maps":["nowhere"]}`:       "maps:",
		`{"memory_mb":4}`:            "memory_mb: 4",
		`{"game":"snake"}`:           "game: a contest's game is fixed",
		`{"seed":"1"}`:               "seed: a contest's seed is fixed",
		`{"invite":"mine"}`:          "new_invite",
		`{"colour":"red"}`:           `unknown field "colour"`,
		`{"entrants":"listed"}`:      "allowed:",
		`{}`:                         "no setting",
		`[1]`:                        "JSON object",
		`{"tiebreak":["coin-toss"]}`: "coin-toss",
	} {
		if err := patch(body); !errs.IsInvalid(err) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error naming %q", body, err, want)
		}
	}
	got2, _ := r.st.Contest(t.Context(), ct.ID)
	if string(got2.Spec) != string(got.Spec) {
		t.Errorf("a refused patch changed the settings: %s", got2.Spec)
	}
	log, _ := r.st.AuditLog(t.Context(), ct.ID)
	if len(log) != 2 || log[1].Action != "update" {
		t.Fatalf("audit %+v", log)
	}
	for _, want := range []string{`maps ["classic"] → ["classic","crossroads"]`, "rounds 2 → 4", "memory_mb set to 128", "rules changed", `tiebreak ["head-to-head","sonneborn-berger"] → ["rating"]`} {
		if !strings.Contains(log[1].Detail, want) {
			t.Errorf("audit detail %q does not say %q", log[1].Detail, want)
		}
	}
	// After the freeze: closed.
	r.advance(2 * time.Minute)
	if err := r.c.Step(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := patch(`{"rules":"late"}`); !errors.Is(err, store.ErrContestClosed) {
		t.Errorf("a change after the freeze: %v", err)
	}
}

// Entry by invitation: the code is made with the contest and shown to
// staff only; without it, or with a wrong or replaced one, an entry is
// refused (ErrNotInvited); the listed enter without one; a clone has a
// code of its own.
func TestEntryByInvitation(t *testing.T) {
	r := newRig(t, t.TempDir())
	ct, err := r.c.Create(t.Context(), Spec{Name: "Club cup", Game: "tanks", Maps: []string{"classic"}, FreezeAt: r.now.Add(time.Minute), Entrants: Invited, Allowed: []string{"carol"}}, "admin")
	if err != nil {
		t.Fatal(err)
	}
	staff, _ := r.c.Page(t.Context(), ct.ID, Viewer{Staff: true})
	code := staff.Spec.Invite
	if len(code) < 20 {
		t.Fatalf("invitation code %q", code)
	}
	anyone, _ := r.c.Page(t.Context(), ct.ID, Viewer{Owners: []string{"alice"}})
	list, _ := r.c.List(t.Context())
	if anyone.Spec.Invite != "" || list[0].Spec.Invite != "" {
		t.Errorf("the code is shown to a non-staff viewer: %q, %q", anyone.Spec.Invite, list[0].Spec.Invite)
	}
	for _, tag := range []string{"alice", "bob", "carol"} {
		id := "img" + tag
		if err := r.st.RecordTag(t.Context(), store.Tag{Repository: tag + "/bot", Tag: "v1", Owner: tag, Digest: "sha256:d" + tag, ImageID: "sha256:" + strings.Repeat("0", 64-len(id)) + id, PushedBy: tag, PushedAt: r.now}); err != nil {
			t.Fatal(err)
		}
	}
	enter := func(owner, invite string) error {
		_, err := r.c.Enter(t.Context(), ct.ID, Entry{Owner: owner, By: owner, Repository: owner + "/bot", Invite: invite})
		return err
	}
	if err := enter("alice", ""); !errors.Is(err, ErrNotInvited) || !strings.Contains(err.Error(), "invitation code") {
		t.Errorf("no code: %v", err)
	}
	if err := enter("alice", code[:len(code)-1]+"x"); !errors.Is(err, ErrNotInvited) {
		t.Errorf("a wrong code: %v", err)
	}
	if err := enter("alice", code); err != nil {
		t.Errorf("the code: %v", err)
	}
	if err := enter("carol", ""); err != nil {
		t.Errorf("a listed entrant: %v", err)
	}
	// A new code: the old one no longer admits.
	if err := r.c.Update(t.Context(), ct.ID, json.RawMessage(`{"new_invite":true}`), "admin"); err != nil {
		t.Fatal(err)
	}
	if err := enter("bob", code); !errors.Is(err, ErrNotInvited) {
		t.Errorf("the replaced code: %v", err)
	}
	staff, _ = r.c.Page(t.Context(), ct.ID, Viewer{Staff: true})
	if staff.Spec.Invite == code || staff.Spec.Invite == "" {
		t.Errorf("new code %q", staff.Spec.Invite)
	}
	if err := enter("bob", staff.Spec.Invite); err != nil {
		t.Errorf("the new code: %v", err)
	}
	log, _ := r.st.AuditLog(t.Context(), ct.ID)
	if d := log[len(log)-1].Detail; !strings.Contains(d, "new invitation code") || strings.Contains(d, code) || strings.Contains(d, staff.Spec.Invite) {
		t.Errorf("audit of the new code: %q", d)
	}
	cl, err := r.c.Clone(t.Context(), ct.ID, "Club cup II", r.now.Add(time.Hour), "admin")
	if err != nil {
		t.Fatal(err)
	}
	clone, _ := r.c.Page(t.Context(), cl.ID, Viewer{Staff: true})
	if clone.Spec.Invite == "" || clone.Spec.Invite == staff.Spec.Invite {
		t.Errorf("the clone's code %q", clone.Spec.Invite)
	}
	// A listed contest: no code admits the unlisted.
	listed, err := r.c.Create(t.Context(), Spec{Name: "Closed", Game: "tanks", FreezeAt: r.now.Add(time.Minute), Entrants: Listed, Allowed: []string{"carol"}}, "admin")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.c.Enter(t.Context(), listed.ID, Entry{Owner: "alice", By: "alice", Repository: "alice/bot", Invite: code}); !errors.Is(err, ErrNotInvited) || !strings.Contains(err.Error(), "not on the list") {
		t.Errorf("an unlisted entrant of a listed contest: %v", err)
	}
}

// Swiss pairings: the first round's top half meets its bottom half; an
// odd field's lowest without a bye sits out; later rounds pair equal
// points and no pair meets twice while another partner remains.
func TestSwissPairs(t *testing.T) {
	order := []int64{1, 2, 3, 4, 5, 6, 7, 8}
	pairs, bye := SwissPairs(order, nil, nil, nil)
	if fmt.Sprint(pairs) != "[[1 5] [2 6] [3 7] [4 8]]" || bye != 0 {
		t.Errorf("round 1 of 8: %v, bye %d", pairs, bye)
	}
	pairs, bye = SwissPairs(order[:5], nil, nil, map[int64]bool{5: true})
	if fmt.Sprint(pairs) != "[[1 3] [2 5]]" || bye != 4 {
		t.Errorf("5 entries, 5 had a bye: %v, bye %d", pairs, bye)
	}
	// Every pair has met: they meet again, the preferred partners.
	all := map[[2]int64]bool{{1, 2}: true, {1, 3}: true, {1, 4}: true, {2, 3}: true, {2, 4}: true, {3, 4}: true}
	pairs, _ = SwissPairs(order[:4], map[int64]float64{1: 3, 2: 2, 3: 1, 4: 0}, all, nil)
	if fmt.Sprint(pairs) != "[[1 2] [3 4]]" {
		t.Errorf("a round after all have met: %v", pairs)
	}
	for n, want := range map[int]int{2: 1, 3: 2, 4: 3, 8: 5, 9: 6, 24: 7, 100: 9} {
		if got := SwissRounds(n); got != want {
			t.Errorf("SwissRounds(%d) = %d, want %d", n, got, want)
		}
	}
	// A whole Swiss system of 8 and of 7 entries where the lower id
	// always wins: no rematch, the strongest wins every round, every
	// entry plays each round or has a bye, no bye twice.
	for _, n := range []int{8, 7, 12, 201} {
		var order []int64
		for i := 1; i <= n; i++ {
			order = append(order, int64(i))
		}
		points := map[int64]float64{}
		met := map[[2]int64]bool{}
		byes := map[int64]bool{}
		for r := 0; r < SwissRounds(n); r++ {
			pairs, bye := SwissPairs(order, points, met, byes)
			seen := map[int64]bool{}
			for _, p := range pairs {
				if met[pairOf(p[0], p[1])] {
					t.Errorf("%d entries, round %d: %v meet again", n, r+1, p)
				}
				met[pairOf(p[0], p[1])] = true
				seen[p[0]], seen[p[1]] = true, true
				points[min(p[0], p[1])]++
			}
			if bye != 0 {
				if byes[bye] {
					t.Errorf("%d entries, round %d: a second bye for %d", n, r+1, bye)
				}
				byes[bye], seen[bye] = true, true
				points[bye]++
			}
			if len(seen) != n || len(pairs) != n/2 {
				t.Errorf("%d entries, round %d: %v and bye %d", n, r+1, pairs, bye)
			}
		}
		if points[1] != float64(SwissRounds(n)) {
			t.Errorf("%d entries: the strongest has %g points of %d", n, points[1], SwissRounds(n))
		}
	}
}

// A Swiss final through the runner: seven entries of known strength,
// each round paired when the last is over (audited), a bye a round, the
// strongest first with every point, and after a restart mid-round the
// same standings as without one.
func TestASwissFinal(t *testing.T) {
	imgs := []string{"s1", "s2", "s3", "s4", "s5", "s6", "s7"}
	run := func(cutAt int) (Board, *rig, store.Contest) {
		r := newRig(t, t.TempDir())
		r.q.strength = imgs
		ct, err := r.c.Create(t.Context(), Spec{Name: "Open", Game: "tanks", Maps: []string{"classic"}, Rounds: 2, FreezeAt: r.now.Add(time.Minute), Seed: 9, Format: FormatSwiss}, "admin")
		if err != nil {
			t.Fatal(err)
		}
		for _, img := range []string{"s4", "s7", "s1", "s6", "s2", "s5", "s3"} {
			if _, err := r.c.Enter(t.Context(), ct.ID, Entry{Owner: img, By: img, Image: img}); err != nil {
				t.Fatal(err)
			}
		}
		r.advance(time.Minute)
		for i := 0; i < cutAt; i++ {
			if err := r.c.Step(t.Context()); err != nil {
				t.Fatal(err)
			}
		}
		if cutAt > 0 {
			r.q.hold = true
			if err := r.c.Step(t.Context()); err != nil {
				t.Fatal(err)
			}
			for _, id := range r.q.held {
				r.st.Finish(t.Context(), id, store.Outcome{Status: string(matches.StateFailed), Error: "interrupted: the server stopped during the match"}, time.Now())
			}
			r.q.hold = false
			r.c = r.contests()
		}
		return r.runToEnd(t, ct.ID), r, ct
	}
	b, r, ct := run(0)
	rounds := SwissRounds(7)
	if len(b.Games) != rounds*(3*2+2) {
		t.Fatalf("%d games, want %d rounds of 3 pairings × 2 seat orders and a bye × 2", len(b.Games), rounds)
	}
	met := map[[2]int64]int{}
	byes := map[int64]int{}
	perRound := map[int]int{}
	for _, g := range b.Games {
		perRound[g.Round]++
		if g.State != store.GameScored {
			t.Errorf("game %+v", g)
		}
		if g.Second == 0 {
			byes[g.First]++
			continue
		}
		met[pairOf(g.First, g.Second)]++
	}
	for p, n := range met {
		if n != 2 {
			t.Errorf("pair %v played %d games, want 2 (they met twice?)", p, n)
		}
	}
	if len(byes) != rounds || len(perRound) != rounds {
		t.Errorf("byes %v over %d rounds, games per round %v", byes, rounds, perRound)
	}
	if top := b.Rows[0]; top.Name != "s1" || top.Points != float64(2*rounds) || top.Rank != 1 {
		t.Errorf("the strongest: %+v", top)
	}
	for _, row := range b.Rows {
		if row.Played+row.Byes != 2*rounds {
			t.Errorf("%s: %d games and %d byes, want %d in all", row.Name, row.Played, row.Byes, 2*rounds)
		}
	}
	// Each round is paired on the points of every game before it (no
	// practice was played: seeded in the order of entry).
	var order []int64
	for _, row := range b.Rows {
		order = append(order, row.Entry)
	}
	slices.Sort(order)
	for round := 1; round < rounds; round++ {
		points, seen, had := map[int64]float64{}, map[[2]int64]bool{}, map[int64]bool{}
		want, got := map[[2]int64]bool{}, map[[2]int64]bool{}
		for _, g := range b.Games {
			switch {
			case g.Round == round && g.Second != 0:
				got[pairOf(g.First, g.Second)] = true
			case g.Round == round:
				got[[2]int64{g.First}] = true
			case g.Round > round:
			case g.Second == 0:
				points[g.First]++
				had[g.First] = true
			default:
				res, err := DecodeOutcome(g.Outcome)
				if err != nil {
					t.Fatal(err)
				}
				points[g.First] += res.First
				points[g.Second] += res.Second
				seen[pairOf(g.First, g.Second)] = true
			}
		}
		pairs, bye := SwissPairs(order, points, seen, had)
		for _, p := range pairs {
			want[pairOf(p[0], p[1])] = true
		}
		want[[2]int64{bye}] = true
		if !maps.Equal(got, want) {
			t.Errorf("round %d paired %v, want %v from the points %v", round+1, got, want, points)
		}
	}
	log, _ := r.st.AuditLog(t.Context(), ct.ID)
	var actions []string
	for _, a := range log {
		actions = append(actions, a.Action)
	}
	if want := "create freeze" + strings.Repeat(" round", rounds-1); strings.Join(actions, " ") != want {
		t.Errorf("audit %v, want %s", actions, want)
	}
	// Cut in the middle of the third round: the same standings.
	cut, _, _ := run(5)
	for _, x := range []*Board{&b, &cut} {
		for i := range x.Rows {
			x.Rows[i].FaultMatches = nil
		}
	}
	if fmt.Sprint(cut.Standings) != fmt.Sprint(b.Standings) {
		t.Errorf("standings after a cut\n%+v\nuninterrupted\n%+v", cut.Standings, b.Standings)
	}
}
