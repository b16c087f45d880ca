package contest

import (
	"bytes"
	"encoding/csv"
	"strings"
	"testing"
	"time"

	"arena/internal/errs"
	"arena/store"
)

// A gate against the random bot: the good bot passes it (it wins every
// game), the slow one fails it; the games swap seats and take seeds from
// the contest's. An entrant asks for the gates before the deadline: they
// play on their version, and a second request at once is too many. The
// grades have a row per user, with the standings' rank and points and
// each gate.
func TestGatesGradeTheFinalVersions(t *testing.T) {
	r := newRig(t, t.TempDir())
	ctx := t.Context()
	for _, u := range []string{"u-good", "u-slow", "u-none"} {
		if err := r.st.CreateUser(ctx, store.User{Name: u, Password: "x", Role: "player", CreatedAt: r.now, Email: u + "@uni.example"}, ""); err != nil {
			t.Fatal(err)
		}
	}
	bad := Spec{Name: "Cup", Game: "tanks", Maps: []string{"classic"}, Rounds: 2, FreezeAt: r.now.Add(time.Minute), Seed: 7,
		Gates: []Gate{{Name: "beats random", Against: "random", Games: 3, Wins: 2}}}
	if _, err := r.c.Create(ctx, bad, "admin"); !errs.IsInvalid(err) || !strings.Contains(err.Error(), "games: 3: an even number") {
		t.Errorf("a gate of 3 games: %v", err)
	}
	bad.Gates = []Gate{{Name: "beats random", Against: "random", Games: 4, Wins: 5}}
	if _, err := r.c.Create(ctx, bad, "admin"); !errs.IsInvalid(err) {
		t.Errorf("a gate of 5 wins in 4 games: %v", err)
	}
	spec := bad
	spec.Gates = []Gate{{Name: "beats random", Against: "random", Games: 4, Wins: 3}}
	ct, err := r.c.Create(ctx, spec, "admin")
	if err != nil {
		t.Fatal(err)
	}
	for _, img := range []string{"good", "slow"} {
		if _, err := r.c.Enter(ctx, ct.ID, Entry{Owner: "u-" + img, By: "u-" + img, Image: img}); err != nil {
			t.Fatal(err)
		}
	}

	// Before the deadline: u-good asks, once.
	if _, err := r.c.RequestGates(ctx, ct.ID, []string{"u-none"}); !errs.IsNotFound(err) {
		t.Errorf("a request without an entry: %v", err)
	}
	if _, err := r.c.RequestGates(ctx, ct.ID, []string{"u-good"}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.c.RequestGates(ctx, ct.ID, []string{"u-good"}); !errs.IsTooMany(err) {
		t.Errorf("a second request at once: %v", err)
	}
	var asked []GateResult
	for i := 0; i < 10 && (len(asked) == 0 || asked[0].Passed == nil); i++ {
		if err := r.c.Step(ctx); err != nil {
			t.Fatal(err)
		}
		if asked, err = r.c.Gates(ctx, ct.ID); err != nil {
			t.Fatal(err)
		}
	}
	if len(asked) != 1 || asked[0].Kind != store.GateRequest || asked[0].Passed == nil || !*asked[0].Passed || asked[0].Won != 4 {
		t.Errorf("u-good's request: %+v", asked)
	}

	r.advance(time.Minute)
	r.runToEnd(t, ct.ID)
	var board Board
	for i := 0; i < 20; i++ {
		if err := r.c.Step(ctx); err != nil {
			t.Fatal(err)
		}
		if board, err = r.c.Standings(ctx, ct.ID); err != nil {
			t.Fatal(err)
		}
		decided := 0
		for _, g := range board.Gates {
			if g.Kind == store.GateFinal && g.Passed != nil {
				decided++
			}
		}
		if decided == 2 {
			break
		}
	}
	final := map[int64]GateResult{}
	for _, g := range board.Gates {
		if g.Kind == store.GateFinal {
			final[g.Entry] = g
		}
	}
	good, slow := board.Rows[0], board.Rows[1]
	if good.Name != "good" || slow.Name != "slow" {
		t.Fatalf("the standings: %+v", board.Rows)
	}
	if g := final[good.Entry]; g.Passed == nil || !*g.Passed || g.Won != 4 || g.Played != 4 || len(g.Matches) != 4 {
		t.Errorf("the good bot at the gate: %+v", g)
	}
	if g := final[slow.Entry]; g.Passed == nil || *g.Passed || g.Won != 0 {
		t.Errorf("the slow bot at the gate: %+v", g)
	}
	// The seats swap: the good bot plays the first seat and the second.
	firsts, seconds := 0, 0
	for _, p := range r.q.played {
		switch {
		case strings.HasPrefix(p, "good random "):
			firsts++
		case strings.HasPrefix(p, "random good "):
			seconds++
		}
	}
	if firsts != 4 || seconds != 4 { // the request's and the final's
		t.Errorf("the good bot's gate games by seat: %d first, %d second; want 4 and 4", firsts, seconds)
	}

	rows, names, err := r.c.Grades(ctx, ct.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(names) != 1 || names[0] != "beats random" || len(rows) != 3 {
		t.Fatalf("grades: %v %+v", names, rows)
	}
	var buf bytes.Buffer
	if err := WriteGradesCSV(&buf, rows, names); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{
		{"name", "email", "team", "rank", "points", "interval_low", "interval_high", "beats random", "digest"},
		{"u-good", "u-good@uni.example", "", "1", "2"},
		{"u-none", "u-none@uni.example", "", "", ""},
		{"u-slow", "u-slow@uni.example", "", "2", "0"},
	}
	for i, w := range want {
		if i >= len(recs) || !equalPrefix(recs[i], w) {
			t.Errorf("grades row %d: %v, want %v…", i, recs, w)
		}
	}
	if recs[1][7] != "1" || recs[3][7] != "0" || recs[2][7] != "" {
		t.Errorf("the gate's column: %v", recs)
	}
	if !strings.HasPrefix(recs[1][8], "sha256:") && recs[1][8] != "" {
		t.Errorf("the final digest: %q", recs[1][8])
	}
	if _, err := r.c.RequestGates(ctx, ct.ID, []string{"u-good"}); !errs.IsConflict(err) {
		t.Errorf("a request after the deadline: %v", err)
	}
}

func equalPrefix(got, want []string) bool {
	if len(got) < len(want) {
		return false
	}
	for i := range want {
		if got[i] != want[i] {
			return false
		}
	}
	return true
}
