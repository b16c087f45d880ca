package main

import (
	"fmt"
	"strings"
	"testing"

	"arena/internal/testsupport/dockertest"
)

// Bad --sprt arguments are usage errors that name the problem, before
// any Docker work.
func TestBenchSPRTUsage(t *testing.T) {
	for _, tt := range []struct {
		give []string
		want string
	}{
		{[]string{"--sprt", "20,0", "--bots", "a,b"}, "--sprt: ELO0 (20) must be less than ELO1 (0)"},
		{[]string{"--sprt", "0", "--bots", "a,b"}, `--sprt: "0": want ELO0,ELO1 (e.g. 0,20)`},
		{[]string{"--sprt", "0,20", "--sprt-max-matches", "1", "--bots", "a,b"}, "--sprt-max-matches must be at least 2"},
		{[]string{"--sprt", "0,20", "--baseline", "--bots", "a,b"}, "--baseline does not go with --sprt"},
	} {
		code, _, stderr := arena(t, append([]string{"bench"}, tt.give...)...)
		if code != exitUsage || !strings.Contains(stderr, tt.want) {
			t.Errorf("%v: exit %d, %q; want %d with %q", tt.give, code, stderr, exitUsage, tt.want)
		}
	}
}

// The real example bots: the hunter is accepted as better than the
// random tank (H1) in a few pairs, the random tank as not better than the
// hunter (H0); the output has the LLR with its bounds on every line and
// the Elo estimate at the end. Three bots are refused.
func TestBenchSPRT(t *testing.T) {
	cli := dockertest.Client(t)
	bots := dockertest.ExampleBots(t, cli) // random, hunter
	random, hunter := bots[0], bots[1]
	for _, tt := range []struct {
		bots []string
		want []string
	}{
		{[]string{hunter + "," + random}, []string{"H1 accepted: " + hunter + " is better", "LLR ", "[-2.94, 2.94]", "Elo difference: +"}},
		{[]string{random, "--opponents", hunter}, []string{"H0 accepted: " + random + " is not better", "Elo difference: -"}},
	} {
		args := append([]string{"bench", "--game", "tanks", "--sprt", "0,50", "--jobs", "2", "--seed", "3", "--bots"}, tt.bots...)
		code, stdout, stderr := arena(t, args...)
		if code != exitOK {
			t.Fatalf("%v: exit %d: %s\n%s", tt.bots, code, stderr, stdout)
		}
		for _, w := range tt.want {
			if !strings.Contains(stdout, w) {
				t.Errorf("%v: output lacks %q:\n%s", tt.bots, w, stdout)
			}
		}
		t.Logf("%v:\n%s", tt.bots, stdout[strings.LastIndex(stdout, "SPRT of"):])
		var played, fixed int
		if _, err := fmt.Sscanf(stdout[strings.LastIndex(stdout, "  matches: "):], "  matches: %d; a fixed number of matches with the same error rates would be about %d", &played, &fixed); err != nil || played >= fixed {
			t.Errorf("%v: %d matches played, %d for a fixed run (%v)", tt.bots, played, fixed, err)
		}
	}
	code, _, stderr := arena(t, "bench", "--sprt", "0,20", "--bots", hunter+","+random+","+hunter+"x")
	if code != exitUsage || !strings.Contains(stderr, "--sprt compares two different bots") {
		t.Errorf("three bots: exit %d, %s", code, stderr)
	}
}
