package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"arena/contest"
	"arena/engine"
	"arena/engine/tanks"
	"arena/judger"
	"arena/orchestrator/fake"
	"arena/platform"
	"arena/store"
)

// fakeLogic is a platform.LogicChecker that knows the images in present (image →
// title) and says of any other what the real one says of an image not on
// the engine; an image whose title is "player" ships a player.
func fakeLogic(present map[string]string) platform.LogicChecker {
	return func(_ context.Context, spec platform.LogicSpec) (engine.Game, map[string][]byte, error) {
		name, image := spec.Name, spec.Image
		title, ok := present[image]
		if !ok {
			return nil, nil, errors.New("its logic image " + image + ": No such image (build it, or docker pull it, first)")
		}
		var files map[string][]byte
		if title == "player" {
			title, files = "", map[string][]byte{"index.html": []byte("<p>board</p>")}
		}
		return judger.Named(name, image, 2, title).Pinned("sha256:" + strings.Repeat("ab", 32)).WithLimits(spec.Limits), files, nil
	}
}

// An admin registers a logic game through the API: it is offered at once
// (the game list, its player, contests), survives a restart, and is
// removed again; what cannot be registered or removed is refused with a
// reason.
func TestRegisteringALogicGame(t *testing.T) {
	ts := newTestServer(t, Config{}, 1, with(platform.Config{Token: "s3cret"}), withDeps(func(d *platform.Deps) {
		d.Logic = fakeLogic(map[string]string{"kit/ttt-logic": "player", "kit/go-logic": "Go 9×9"})
	}))
	auth := []string{"Authorization", "Bearer s3cret"}
	names := func() []string {
		var games []gameInfo
		res := ts.send(t, "GET", "/api/games", "")
		defer res.Body.Close()
		json.NewDecoder(res.Body).Decode(&games)
		out := []string{}
		for _, g := range games {
			out = append(out, g.Name+"|"+g.Title+"|"+g.Player)
		}
		return out
	}

	// Without the server's token, nobody registers anything.
	if status, body := ts.do(t, "POST", "/api/games", `{"name":"ttt","image":"kit/ttt-logic"}`); status != http.StatusUnauthorized {
		t.Fatalf("without the token: %d %v", status, body)
	}
	for _, bad := range []struct{ body, want string }{
		{`{"name":"TTT","image":"kit/ttt-logic"}`, `the game's name "TTT": want a lower-case letter`},
		{`{"name":"ttt"}`, `the game's logic image is missing`},
		{`{"name":"ttt","image":"kit/ttt logic"}`, `the game's logic image:`},
		{`{"name":"tanks","image":"kit/ttt-logic"}`, `the name tanks is taken`},
		{`{"name":"ttt","image":"kit/absent"}`, `its logic image kit/absent: No such image (build it, or docker pull it, first)`},
		{`{"name":"ttt","image":"kit/ttt-logic","players":3}`, `unknown field "players"`},
		{`name=ttt`, `is not a JSON game`},
		{`{"name":"ttt","image":"kit/ttt-logic","limits":{"round_ms":5}}`, `the logic's limits: round_ms 5`},
		{`{"name":"ttt","image":"kit/ttt-logic","limits":{"memory":1}}`, `unknown field "memory"`},
	} {
		status, body := ts.do(t, "POST", "/api/games", bad.body, auth...)
		if msg, _ := body["error"].(string); status/100 != 4 || !strings.Contains(msg, bad.want) {
			t.Errorf("POST %s: %d %v, want a 4xx naming %q", bad.body, status, body, bad.want)
		}
	}
	if got := names(); len(got) != 1 {
		t.Fatalf("after refusals the games are %v, want tanks alone", got)
	}

	status, body := ts.do(t, "POST", "/api/games", `{"name":"ttt","image":"kit/ttt-logic"}`, auth...)
	if status != http.StatusCreated || body["name"] != "ttt" || body["player"] != "/games/ttt/player/index.html" {
		t.Fatalf("register ttt: %d %v", status, body)
	}
	// With limits of its own: listed with them, pinned to its image.
	status, body = ts.do(t, "POST", "/api/games", `{"name":"go9","image":"kit/go-logic","limits":{"round_ms":2500,"memory_bytes":536870912}}`, auth...)
	if logic, _ := body["logic"].(map[string]any); status != http.StatusCreated || body["title"] != "Go 9×9" || logic == nil ||
		fmt.Sprint(logic["limits"]) != "map[cpus:1 memory_bytes:5.36870912e+08 message_bytes:1.048576e+06 round_ms:2500]" || logic["image_id"] != "sha256:"+strings.Repeat("ab", 32) {
		t.Fatalf("register go9: %d %v", status, body)
	}
	res := ts.send(t, "GET", "/api/games/registered", "", auth...)
	var registered []map[string]any
	json.NewDecoder(res.Body).Decode(&registered)
	res.Body.Close()
	if len(registered) != 2 || fmt.Sprint(registered[1]["limits"]) != "map[memory_bytes:5.36870912e+08 round_ms:2500]" ||
		!strings.Contains(fmt.Sprint(registered[1]["effective_limits"]), "cpus:1") {
		t.Errorf("the registered games: %v", registered)
	}
	if status, body := ts.do(t, "POST", "/api/games", `{"name":"ttt","image":"kit/go-logic"}`, auth...); status != http.StatusConflict {
		t.Fatalf("ttt again: %d %v, want 409", status, body)
	}
	if got, want := strings.Join(names(), " "), "tanks|| ttt||/games/ttt/player/index.html go9|Go 9×9|"; got != want {
		t.Fatalf("games %q, want %q", got, want)
	}
	if res := ts.send(t, "GET", "/games/ttt/player/index.html", ""); res.StatusCode != http.StatusOK {
		t.Fatalf("ttt's player: %d", res.StatusCode)
	}
	// A contest may be of it at once.
	ct, err := ts.svc.Contests.Create(t.Context(), localAdmin, contest.Spec{Name: "Noughts", Game: "ttt", FreezeAt: time.Now().Add(time.Hour)})
	if err != nil {
		t.Fatalf("a contest of ttt: %v", err)
	}

	// The built-in games and a game in a contest not over stay.
	if status, body := ts.do(t, "DELETE", "/api/games/tanks", "", auth...); status != http.StatusConflict || !strings.Contains(body["error"].(string), "the server's own") {
		t.Fatalf("remove tanks: %d %v", status, body)
	}
	if status, body := ts.do(t, "DELETE", "/api/games/ttt", "", auth...); status != http.StatusConflict || !strings.Contains(body["error"].(string), `"Noughts"`) {
		t.Fatalf("remove ttt in a contest: %d %v", status, body)
	}
	if status, body := ts.do(t, "DELETE", "/api/games/chess", "", auth...); status != http.StatusNotFound {
		t.Fatalf("remove chess: %d %v", status, body)
	}
	if status, _ := ts.do(t, "DELETE", "/api/games/go9", ""); status != http.StatusUnauthorized {
		t.Fatalf("remove go9 without the token: %d", status)
	}

	// Once its contest is over, ttt may go: no longer listed, its player
	// no longer served, a new match of it refused; its name is free again.
	if _, err := ts.store.StartFinal(t.Context(), ct.ID, nil, nil, time.Now()); err != nil {
		t.Fatal(err)
	}
	if status, body := ts.do(t, "DELETE", "/api/games/ttt", "", auth...); status != http.StatusConflict || !strings.Contains(body["error"].(string), `"Noughts"`) {
		t.Fatalf("remove ttt in a contest's final: %d %v", status, body)
	}
	if err := ts.store.FinishContest(t.Context(), ct.ID, time.Now()); err != nil {
		t.Fatal(err)
	}
	if status, body := ts.do(t, "DELETE", "/api/games/ttt", "", auth...); status != http.StatusNoContent {
		t.Fatalf("remove ttt: %d %v", status, body)
	}
	if got, want := strings.Join(names(), " "), "tanks|| go9|Go 9×9|"; got != want {
		t.Fatalf("after removing ttt the games are %q, want %q", got, want)
	}
	if res := ts.send(t, "GET", "/games/ttt/player/index.html", ""); res.StatusCode != http.StatusNotFound {
		t.Fatalf("ttt's player once removed: %d", res.StatusCode)
	}
	if status, body := ts.do(t, "POST", "/api/matches", `{"game":"ttt","bots":["a/b","c/d"]}`, auth...); status != http.StatusBadRequest || !strings.Contains(body["error"].(string), `unknown game "ttt"`) {
		t.Fatalf("a match of ttt once removed: %d %v", status, body)
	}
	if status, body := ts.do(t, "POST", "/api/games", `{"name":"ttt","image":"kit/ttt-logic"}`, auth...); status != http.StatusCreated {
		t.Fatalf("ttt registered anew: %d %v", status, body)
	}

	// A restart offers the registered games again, each checked again: one
	// whose image has gone is shown to the admin with its problem, and may
	// be removed.
	// (A record of the server's own game's name: from a registration
	// before the operator set that name in ARENA_GAMES.)
	if err := ts.store.AddLogicGame(t.Context(), store.LogicGame{Name: "tanks", Image: "kit/ttt-logic", AddedBy: "admin", AddedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	pf, err := platform.New(t.Context(), platform.Config{Token: "s3cret"}, platform.Deps{Store: ts.store, Games: engine.NewCatalog(tanks.New()),
		Logic: fakeLogic(map[string]string{"kit/ttt-logic": "player"}), Log: ts.log})
	if err != nil {
		t.Fatal(err)
	}
	if err := pf.Recover(t.Context()); err != nil {
		t.Fatal(err)
	}
	again := New(ts.cfg, Deps{Services: pf.Services(), Lifecycle: pf, Metrics: pf.Metrics(), Log: ts.log})
	get := func(s *Server, method, path string) (int, string) {
		req := httptest.NewRequest(method, "http://127.0.0.1"+path, nil)
		req.Header.Set("Authorization", "Bearer s3cret")
		rec := httptest.NewRecorder()
		s.echo.ServeHTTP(rec, req)
		b, _ := io.ReadAll(rec.Body)
		return rec.Code, string(b)
	}
	if _, err := again.svc.Games.Find("ttt"); err != nil {
		t.Fatalf("after a restart: %v", err)
	}
	if _, err := again.svc.Games.Find("go9"); err == nil {
		t.Fatal("go9, whose image has gone, is offered after a restart")
	}
	code, list := get(again, "GET", "/api/games/registered")
	var reg []platform.RegisteredGame
	if err := json.Unmarshal([]byte(list), &reg); code != http.StatusOK || err != nil || len(reg) != 3 || reg[2].Name != "tanks" || reg[2].Offered || !strings.Contains(reg[2].Problem, "taken by a game of the server's own") || !reg[1].Offered || reg[1].Players != 2 ||
		reg[0].Offered || !strings.Contains(reg[0].Problem, "kit/go-logic: No such image") || reg[1].AddedBy != "admin" {
		t.Fatalf("registered games after a restart: %d %s", code, list)
	}
	if code, body := get(again, "GET", "/games/ttt/player/index.html"); code != http.StatusOK || body != "<p>board</p>" {
		t.Fatalf("ttt's player after a restart: %d %s", code, body)
	}
	if code, body := get(again, "DELETE", "/api/games/go9"); code != http.StatusNoContent {
		t.Fatalf("remove go9, not on offer: %d %s", code, body)
	}
	if code, body := get(again, "DELETE", "/api/games/tanks"); code != http.StatusNoContent {
		t.Fatalf("remove the record named tanks: %d %s", code, body)
	}
	if _, err := again.svc.Games.Find("tanks"); err != nil {
		t.Fatalf("the built-in tanks went with a record of its name: %v", err)
	}
	if code, body := get(again, "GET", "/api/games/registered"); code != http.StatusOK || strings.Contains(body, "go9") || strings.Contains(body, "tanks") {
		t.Fatalf("registered games after the removals: %d %s", code, body)
	}

}

// A match of logic:IMAGE, a logic image named in the API: the image is
// one the visitor may play, on the engine and labelled a logic taking as
// many bots as the match has; anything else is refused with why, and
// nothing starts.
func TestAMatchOfALogicImage(t *testing.T) {
	ts := newTestServer(t, Config{}, 1, with(platform.Config{Allow: []string{"arena/*", "bots/*"}}))
	ts.launcher.Add("bots/ttt-logic", fake.Script{Labels: map[string]string{judger.LogicLabel: "saiblo", judger.PlayersLabel: "2"}})
	ts.launcher.Add("bots/other-logic", fake.Script{Labels: map[string]string{judger.LogicLabel: "botzone"}})
	for _, tt := range []struct {
		game   string
		status int
		want   string
	}{
		{"logic:", 400, `game logic:: `},
		{"logic:bots/Bad Name", 400, `"bots/Bad Name" is not an image name`},
		{"logic:evil/logic", 403, "game: image evil/logic is not allowed here"},
		{"logic:bots/absent", 400, "game logic:bots/absent: "},
		{"logic:bots/slow", 400, "no label io.arena.logic=saiblo"},
		{"logic:bots/other-logic", 400, `label io.arena.logic="botzone" (Arena speaks the saiblo protocol)`},
		{"lgic:bots/ttt-logic", 400, `unknown game "lgic:bots/ttt-logic" (games: [tanks]) (or logic:IMAGE, a logic image)`},
	} {
		status, body := ts.do(t, "POST", "/api/matches", `{"game":"`+tt.game+`","bots":["arena/tanks-random","arena/tanks-hunter"]}`)
		if msg, _ := body["error"].(string); status != tt.status || !strings.Contains(msg, tt.want) {
			t.Errorf("game %s: %d %v, want %d naming %q", tt.game, status, body, tt.status, tt.want)
		}
	}
	status, body := ts.do(t, "POST", "/api/matches", `{"game":"logic:bots/ttt-logic","bots":["arena/tanks-random","arena/tanks-hunter","bots/slow"]}`)
	if msg, _ := body["error"].(string); status != 400 || !strings.Contains(msg, "the logic bots/ttt-logic takes 2 bots (label io.arena.players), the match has 3") {
		t.Errorf("three bots for a logic of two: %d %v", status, body)
	}
	if n := len(ts.launcher.Bots()); n != 0 {
		t.Errorf("refused matches started %d bots", n)
	}
	status, body = ts.do(t, "POST", "/api/matches", `{"game":"logic:bots/ttt-logic","bots":["arena/tanks-random","arena/tanks-hunter"]}`)
	if status != http.StatusCreated || body["game"] != "logic:bots/ttt-logic" {
		t.Fatalf("a match of a logic image: %d %v", status, body)
	}
}

// A pushed image named as a game (logic:IMAGE) plays only once its check
// passed, as a ladder's bot does: one still pending is refused, saying
// to wait, and one rejected is refused with the reason. (The versions are
// recorded before the server starts: its checks of pending versions run
// then, and leave these as they are.)
func TestAPushedLogicPlaysOnceChecked(t *testing.T) {
	digest := "sha256:" + strings.Repeat("1", 64)
	ms := newMatrixServer(t, Config{}, registryAt("127.0.0.1:5006"), withDeps(func(d *platform.Deps) {
		for _, tag := range []string{"v1", "v2"} {
			if err := d.Store.RecordTag(t.Context(), store.Tag{Repository: "alice/lg", Tag: tag, Owner: "alice", Digest: digest, ImageID: "sha256:" + strings.Repeat("2", 64), Game: "tanks", PushedBy: "alice", PushedAt: time.Now()}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := d.Store.CheckTag(t.Context(), "alice/lg", "v2", digest, store.Tag{State: store.TagRejected, Reason: "not a logic"}); err != nil {
			t.Fatal(err)
		}
	}))
	_, aliceTok := ms.token(t, "alice")
	alice := []string{"Authorization", "Bearer " + aliceTok}
	status, body := ms.do(t, "POST", "/api/matches", `{"game":"logic:alice/lg:v1","bots":["arena/tanks-random","arena/tanks-hunter"]}`, alice...)
	if msg, _ := body["error"].(string); status != http.StatusConflict || !strings.Contains(msg, "alice/lg:v1 is ") || !strings.Contains(msg, "play it as a game once My bots says ready") {
		t.Errorf("a logic still being checked: %d %v", status, body)
	}
	status, body = ms.do(t, "POST", "/api/matches", `{"game":"logic:alice/lg:v2","bots":["arena/tanks-random","arena/tanks-hunter"]}`, alice...)
	if msg, _ := body["error"].(string); status != http.StatusBadRequest || !strings.Contains(msg, "alice/lg:v2 was rejected by its check: not a logic") {
		t.Errorf("a rejected logic: %d %v", status, body)
	}
	if n := len(ms.launcher.Bots()); n != 0 {
		t.Errorf("refused matches started %d bots", n)
	}
}
