package contest

import (
	"bytes"
	"encoding/csv"
	"slices"
	"strings"
	"testing"
	"time"

	"arena/store"
)

// The prefixes a spreadsheet reads as the start of a formula.
var formulaStarts = []string{"=", "+", "-", "@", "\t", "\r"}

func readCSV(t *testing.T, b *bytes.Buffer) [][]string {
	t.Helper()
	r := csv.NewReader(b)
	r.FieldsPerRecord = -1
	recs, err := r.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

// A grades CSV whose names, emails, teams and gates start as formulas
// comes out with each of those cells after a single quote; its numbers,
// negative ones too, are unchanged.
func TestGradesCSVNeutralisesFormulas(t *testing.T) {
	yes := true
	var rows []GradeRow
	for _, p := range formulaStarts {
		rows = append(rows, GradeRow{Name: p + "name", Email: p + "cmd|'/Ccalc'!A0@x.org", Team: p + "team", Entry: 1, Rank: 2,
			Points: -3.5, Interval: [2]float64{-0.25, 1}, Gates: []*bool{&yes}, Digest: p + "digest"})
	}
	var buf bytes.Buffer
	if err := WriteGradesCSV(&buf, rows, []string{"=gate"}); err != nil {
		t.Fatal(err)
	}
	recs := readCSV(t, &buf)
	if want := []string{"name", "email", "team", "rank", "points", "interval_low", "interval_high", "'=gate", "digest"}; !slices.Equal(recs[0], want) {
		t.Errorf("header %q, want %q", recs[0], want)
	}
	for i, p := range formulaStarts {
		want := []string{"'" + p + "name", "'" + p + "cmd|'/Ccalc'!A0@x.org", "'" + p + "team", "2", "-3.5", "-0.250", "1.000", "1", "'" + p + "digest"}
		if got := recs[i+1]; !slices.Equal(got, want) {
			t.Errorf("prefix %q: %q, want %q", p, got, want)
		}
	}
}

// A class CSV: every text column neutralised, the numbers (the
// practice rating negative) and the time unchanged.
func TestClassCSVNeutralisesFormulas(t *testing.T) {
	rating := -3.5
	pushed := time.Date(2027, 1, 1, 12, 0, 0, 0, time.UTC)
	var rows []ClassRow
	for _, p := range formulaStarts {
		rows = append(rows, ClassRow{Name: p + "name", Kind: "user", Email: p + "cmd|'/Ccalc'!A0@x.org", Teams: []string{p + "team", "t2"},
			Entry: 7, EntryOwner: p + "owner", Bot: p + "bot", Version: p + "v1", Digest: "sha256:00", Check: "rejected", Reason: p + "reason",
			PushedAt: &pushed, Ready: false, PracticeRank: 3, PracticeRating: &rating})
	}
	var buf bytes.Buffer
	if err := WriteClassCSV(&buf, rows); err != nil {
		t.Fatal(err)
	}
	recs := readCSV(t, &buf)
	for i, p := range formulaStarts {
		q := "'" + p
		want := []string{q + "name", "user", q + "cmd|'/Ccalc'!A0@x.org", q + "team t2", "7", q + "owner", q + "bot", q + "v1", "sha256:00", "rejected",
			q + "reason", "2027-01-01T12:00:00Z", "false", "3", "-3.50"}
		if got := recs[i+1]; !slices.Equal(got, want) {
			t.Errorf("prefix %q: %q, want %q", p, got, want)
		}
	}
}

// The standings' CSV: names and owners neutralised, numbers not.
func TestStandingsCSVNeutralisesFormulas(t *testing.T) {
	b := Board{Standings: Standings{Rows: []Row{{Rank: 1, Entry: 4, Name: "=bot", Owner: "@owner", Points: -1.5, Played: 2, Interval: [2]float64{-0.5, 0.75}}}}}
	var buf bytes.Buffer
	if err := b.WriteCSV(&buf); err != nil {
		t.Fatal(err)
	}
	recs := readCSV(t, &buf)
	want := []string{"1", "4", "'=bot", "'@owner", "-1.5", "2", "0", "0", "0", "0", "-0.5", "0.75", "false", "0"}
	if len(recs) != 2 || !slices.Equal(recs[1], want) {
		t.Errorf("standings CSV %q, want row %q", recs, want)
	}
}

// End to end: a user imported with the email of issue #59 finds it
// neutralised in the class and grades a contest exports.
func TestAFormulaEmailInTheClassAndGrades(t *testing.T) {
	r := newRig(t, t.TempDir())
	ctx := t.Context()
	const evil = "=cmd|'/Ccalc'!A0@x.org"
	for _, u := range []string{"u-good", "u-slow"} {
		email := u + "@uni.example"
		if u == "u-good" {
			email = evil
		}
		if err := r.st.CreateUser(ctx, store.User{Name: u, Password: "x", Role: "player", CreatedAt: r.now, Email: email}, ""); err != nil {
			t.Fatal(err)
		}
	}
	ct := r.create(t)
	for _, img := range []string{"good", "slow"} {
		if _, err := r.c.Enter(ctx, ct.ID, Entry{Owner: "u-" + img, By: "u-" + img, Image: img}); err != nil {
			t.Fatal(err)
		}
	}
	r.advance(time.Minute)
	r.runToEnd(t, ct.ID)

	class, err := r.c.Class(ctx, ct.ID, "")
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteClassCSV(&buf, class); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	if strings.Contains(strings.ReplaceAll(out, "'"+evil, ""), evil) || !strings.Contains(out, "'"+evil) {
		t.Errorf("the class CSV:\n%s", out)
	}
	rows, gates, err := r.c.Grades(ctx, ct.ID)
	if err != nil {
		t.Fatal(err)
	}
	buf.Reset()
	if err := WriteGradesCSV(&buf, rows, gates); err != nil {
		t.Fatal(err)
	}
	recs := readCSV(t, &buf)
	found := false
	for _, rec := range recs[1:] {
		if rec[0] == "u-good" {
			found = true
			if rec[1] != "'"+evil || rec[3] != "1" {
				t.Errorf("u-good's grades: %q", rec)
			}
		}
	}
	if !found {
		t.Errorf("no row for u-good: %q", recs)
	}
}
