package main

import (
	"encoding/csv"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"arena/engine"
	"arena/matches"
	"arena/orchestrator"
)

type namedMap string

func (m namedMap) Info() engine.MapInfo { return engine.MapInfo{Name: string(m)} }
func (m namedMap) Data() []byte         { return nil }

// arena bench's CSV: image names, the map's, a death reason and an
// error start as formulas and are neutralised; the numbers (a negative
// score) are not.
func TestBenchCSVNeutralisesFormulas(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bench.csv")
	c, err := newBenchCSV(path)
	if err != nil {
		t.Fatal(err)
	}
	m := orchestrator.BenchMatch{Index: 3, Map: namedMap("=map"), Seed: 42, Images: []string{"=evil/bot:1", "-other"}}
	c.write("logic:=g", orchestrator.BenchOutcome{Match: m, Result: &matches.Result{MatchID: "m1", Turns: 10, Winners: []string{"=evil/bot:1"}, DurationMS: 12,
		Bots: []matches.BotResult{{Score: -2, Status: "ok"}, {Score: 5, Status: "crash", DeathReason: "@reason", DeathTurn: 9}}}})
	c.write("tanks", orchestrator.BenchOutcome{Match: m, Err: errors.New("+failed")})
	c.close()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{
		benchColumns,
		{"3", "logic:=g", "'=map", "42", "'=evil/bot:1", "'-other", "'=evil/bot:1", "10", "-2", "5", "", "'@reason", "", "9", "ok", "crash", "m1", "12", ""},
		{"3", "tanks", "'=map", "42", "'=evil/bot:1", "'-other", "", "", "", "", "", "", "", "", "", "", "", "", "'+failed"},
	}
	if len(recs) != len(want) {
		t.Fatalf("%d records: %q", len(recs), recs)
	}
	for i := range want {
		if !slices.Equal(recs[i], want[i]) {
			t.Errorf("row %d: %q, want %q", i, recs[i], want[i])
		}
	}
}
