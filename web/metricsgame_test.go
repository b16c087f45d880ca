package web

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"arena/internal/testsupport/poll"
	"arena/judger"
	"arena/orchestrator/fake"
	"arena/platform"
)

// The metrics' game label is a game on offer's name, never what a user
// chose: a match of a logic image a visitor names (logic:bob/lg:v1)
// counts under game="logic"; a game an admin registered (ttt) and a
// built-in one (tanks) keep their names.
func TestMetricsLabelOnlyGamesOnOffer(t *testing.T) {
	ts := newTestServer(t, Config{}, 1, with(platform.Config{Token: "s3cret", Allow: []string{"arena/*", "bots/*", "bob/*"}}), withDeps(func(d *platform.Deps) {
		d.Logic = fakeLogic(map[string]string{"kit/ttt-logic": ""})
	}))
	logic := fake.Script{Labels: map[string]string{judger.LogicLabel: "saiblo", judger.PlayersLabel: "2"}}
	ts.launcher.Add("bob/lg:v1", logic)
	ts.launcher.Add("kit/ttt-logic", logic)
	auth := []string{"Authorization", "Bearer s3cret"}
	if status, body := ts.do(t, "POST", "/api/games", `{"name":"ttt","image":"kit/ttt-logic"}`, auth...); status != http.StatusCreated {
		t.Fatalf("register ttt: %d %v", status, body)
	}
	for _, game := range []string{"logic:bob/lg:v1", "ttt", "tanks"} {
		status, created := ts.do(t, "POST", "/api/matches", `{"game":"`+game+`","bots":["arena/tanks-random","arena/tanks-hunter"]}`, auth...)
		if status != http.StatusCreated {
			t.Fatalf("a match of %s: %d %v", game, status, created)
		}
		ts.waitFinal(t, created["id"].(string))
	}
	var text string
	poll.Until(t, 5*time.Second, func() error {
		text = scrape(t, ts.url)
		ended := map[string]bool{}
		for _, line := range strings.Split(text, "\n") {
			if rest, ok := strings.CutPrefix(line, `arena_matches_ended_total{game="`); ok {
				ended[rest[:strings.Index(rest, `"`)]] = true
			}
		}
		if !ended["logic"] || !ended["ttt"] || !ended["tanks"] {
			return fmt.Errorf("the ended matches by game are %v, want logic, ttt and tanks", ended)
		}
		return nil
	})
	for _, line := range strings.Split(text, "\n") {
		if strings.Contains(line, "bob/lg") || strings.Contains(line, `game="logic:`) {
			t.Errorf("a label carries the image a visitor named: %s", line)
		}
	}
	// (Neither logic speaks here: both matches fail.)
	for _, series := range []string{`arena_matches_ended_total{game="logic",kind="hand",status="failed"}`, `arena_matches_ended_total{game="ttt",kind="hand",status="failed"}`,
		`arena_matches_ended_total{game="tanks",kind="hand",status="finished"}`} {
		if v, ok := metric(text, series); !ok || v != 1 {
			t.Errorf("%s: %v %v, want 1", series, v, ok)
		}
	}
}
