package main

import (
	"bytes"
	"strings"
	"testing"

	"arena/engine"
	"arena/matches"
)

// The summary shows the warm-up answer in its own column, apart from the
// answer times.
func TestSummaryWarmUpColumn(t *testing.T) {
	warm, cpu := 812.5, 40.0
	var out bytes.Buffer
	printSummary(&out, matches.Result{Game: "tanks", Map: "classic", Seed: 1, Turns: 9, Winners: []string{"a"}, Bots: []matches.BotResult{
		{Seat: 0, ID: "a", Status: engine.StatusOK, Answers: 9, WarmUpMS: &warm, AnswerMSP50: 1.5, AnswerMSMax: 3.25, CPUMS: &cpu},
		{Seat: 1, ID: "b", Status: engine.StatusStartFailed, Accounting: "unavailable: the bot did not start"},
	}})
	lines := strings.Split(out.String(), "\n")
	head, a, b := strings.Fields(lines[2]), strings.Fields(lines[3]), strings.Fields(lines[4])
	col := map[string]int{}
	for i, h := range strings.Fields(strings.NewReplacer(" MS", "_MS", "MEM PEAK", "MEM_PEAK").Replace(lines[2])) {
		col[h] = i
	}
	if len(head) == 0 || a[col["WARM-UP_MS"]] != "812.50" || a[col["MAX_MS"]] != "3.25" || b[col["WARM-UP_MS"]] != "-" {
		t.Errorf("summary:\n%s", out.String())
	}
}
