package web

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"arena/engine"
	"arena/engine/tanks"
	"arena/matches"
	"arena/platform"
)

// A person plays a seat: their seat is asked each turn with its input,
// their moves are judged as a bot's, nobody else may send them (403), an
// idle person is faulted after the people's turn time, the replay names
// their seat human:NAME and verifies, and a match of two bots started
// meanwhile does not wait for theirs (it takes no slot).
func TestAPersonPlaysASeat(t *testing.T) {
	ms := newMatrixServer(t, Config{}, func(c *platform.Config, _ *platform.Deps) {
		c.Seats = platform.SeatsConfig{Turn: 2 * time.Second, Matches: 1}
	})
	_, aliceTok := ms.token(t, "alice")
	_, bobTok := ms.token(t, "bob")
	alice := []string{"Authorization", "Bearer " + aliceTok}
	bob := []string{"Authorization", "Bearer " + bobTok}
	status, m := ms.do(t, "POST", "/api/matches", `{"game":"tanks","map":"classic","bots":[{"human":true},"arena/tanks-random"],"settings":{"zone_radius":3}}`, alice...)
	if status != http.StatusCreated {
		t.Fatalf("alice plays: %d %v", status, m)
	}
	id := m["id"].(string)
	if fmt.Sprint(m["bots"]) != "[human:alice arena/tanks-random]" {
		t.Errorf("the seats: %v", m["bots"])
	}
	moves := "/api/matches/" + id + "/moves"
	_, seat := ms.do(t, "GET", moves+"?after=0", "", alice...)
	if seat["turn"] != 1.0 || seat["seat"] != 0.0 || !strings.Contains(fmt.Sprint(seat["input"]), "ContentsInfo") || seat["deadline"] == nil {
		t.Fatalf("alice's seat at turn 1: %v", seat)
	}
	// The two bots' match of bob's does not wait for alice's.
	status, other := ms.do(t, "POST", "/api/matches", `{"game":"tanks","bots":["arena/tanks-random","arena/tanks-hunter"],"settings":{"zone_radius":0}}`, bob...)
	if status != http.StatusCreated {
		t.Fatalf("bob's match: %d %v", status, other)
	}
	if done := ms.waitFinal(t, other["id"].(string)); done["status"] != "finished" {
		t.Errorf("bob's match: %v", done)
	}
	// Nobody else moves alice's seat; a move names its turn.
	for _, bad := range []struct {
		auth   []string
		body   string
		status int
		want   string
	}{
		{bob, `{"turn":1,"answer":"[]"}`, 403, "only alice plays seat 0"},
		{nil, `{"turn":1,"answer":"[]"}`, 401, ""},
		{alice, `{"turn":2,"answer":"[]"}`, 409, "asked for turn 1"},
		{alice, `{"turn":1}`, 400, "names its turn and its answer"},
		{alice, `{"turn":1,"answer":"[]\n[]"}`, 400, "one line"},
		{alice, `[]`, 400, "not a JSON move"},
	} {
		status, body := ms.do(t, "POST", moves, bad.body, bad.auth...)
		if status != bad.status || !strings.Contains(fmt.Sprint(body["error"]), bad.want) {
			t.Errorf("%s: %d %v, want %d %q", bad.body, status, body, bad.status, bad.want)
		}
	}
	if status, _ := ms.do(t, "GET", moves, "", bob...); status != http.StatusForbidden {
		t.Errorf("bob reads alice's seat: %d", status)
	}
	// Alice moves up twice, then idles.
	for turn := 1; turn <= 2; turn++ {
		if status, body := ms.do(t, "POST", moves, fmt.Sprintf(`{"turn":%d,"answer":"[{\"Type\":0,\"Direction\":0}]"}`, turn), alice...); status != http.StatusAccepted {
			t.Fatalf("alice's move %d: %d %v", turn, status, body)
		}
		if status, body := ms.do(t, "POST", moves, fmt.Sprintf(`{"turn":%d,"answer":"[]"}`, turn), alice...); status != http.StatusConflict {
			t.Errorf("alice's move %d again: %d %v", turn, status, body)
		}
		_, seat = ms.do(t, "GET", moves+fmt.Sprintf("?after=%d", turn), "", alice...)
		if seat["turn"] != float64(turn+1) && seat["over"] != true {
			t.Fatalf("after move %d: %v", turn, seat)
		}
	}
	done := ms.waitFinal(t, id)
	res := done["result"].(map[string]any)["bots"].([]any)[0].(map[string]any)
	if res["status"] != "timeout" || res["fault_turn"] != 3.0 || !strings.Contains(fmt.Sprint(res["fault_detail"]), "2s") {
		t.Errorf("the idle person's seat: %v", res)
	}
	if status, body := ms.do(t, "POST", moves, `{"turn":3,"answer":"[]"}`, alice...); status != http.StatusConflict || !strings.Contains(fmt.Sprint(body["error"]), "takes no more moves") {
		t.Errorf("a move after the end: %d %v", status, body)
	}
	r := ms.send(t, "GET", "/api/matches/"+id+"/replay", "")
	defer r.Body.Close()
	data, _ := io.ReadAll(r.Body)
	var rep matches.Replay
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatal(err)
	}
	if err := matches.Verify([]engine.Game{tanks.New()}, &rep); err != nil {
		t.Errorf("the replay does not verify: %v", err)
	}
	if rep.Bots[0].ID != "human:alice" || rep.Frames[1].Bots[0].Answer != `[{"Type":0,"Direction":0}]` {
		t.Errorf("the replay's seat %+v, turn 1 %+v", rep.Bots[0], rep.Frames[1].Bots[0])
	}

	// One such match at once here (ARENA_HUMAN_MATCHES=1); none names a
	// person's seat by hand.
	if status, body := ms.do(t, "POST", "/api/matches", `{"game":"tanks","bots":[{"human":true},"bots/held"]}`, alice...); status != http.StatusCreated {
		t.Fatalf("alice's second match: %d %v", status, body)
	}
	if status, body := ms.do(t, "POST", "/api/matches", `{"game":"tanks","bots":["arena/tanks-random",{"human":true}]}`, bob...); status != http.StatusTooManyRequests || !strings.Contains(fmt.Sprint(body["error"]), "ARENA_HUMAN_MATCHES") {
		t.Errorf("a second match with a person: %d %v", status, body)
	}
	for _, bad := range []string{
		`{"game":"tanks","bots":["human:alice","arena/tanks-random"]}`,
		`{"game":"tanks","bots":[{"human":true},{"human":true}]}`,
		`{"game":"tanks","bots":[{"human":false},"arena/tanks-random"]}`,
		`{"game":"tanks","bots":[3,"arena/tanks-random"]}`,
	} {
		if status, body := ms.do(t, "POST", "/api/matches", bad, bob...); status != http.StatusBadRequest {
			t.Errorf("%s: %d %v", bad, status, body)
		}
	}
}

// One user plays at most ARENA_HUMAN_MATCHES_PER_USER matches at once
// (here 2), so they cannot take every place of ARENA_HUMAN_MATCHES from
// the others, even asking for many at once; a place of theirs that ends
// takes another; an admin is not bounded.
func TestOnePersonTakesFewSeats(t *testing.T) {
	ms := newMatrixServer(t, Config{}, func(c *platform.Config, _ *platform.Deps) {
		c.Seats = platform.SeatsConfig{Turn: time.Minute, Matches: 8, PerUser: 2}
	})
	_, aliceTok := ms.token(t, "alice")
	_, bobTok := ms.token(t, "bob")
	alice := []string{"Authorization", "Bearer " + aliceTok}
	const body = `{"game":"tanks","bots":[{"human":true},"bots/held"]}`
	statuses := make(chan int, 10)
	var ids []string
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() {
			status, m := ms.do(t, "POST", "/api/matches", body, alice...)
			statuses <- status
			if status == http.StatusCreated {
				mu.Lock()
				ids = append(ids, m["id"].(string))
				mu.Unlock()
			} else if status != http.StatusTooManyRequests || !strings.Contains(fmt.Sprint(m["error"]), "ARENA_HUMAN_MATCHES_PER_USER") {
				t.Errorf("alice's match: %d %v", status, m)
			}
		})
	}
	wg.Wait()
	close(statuses)
	created := 0
	for s := range statuses {
		if s == http.StatusCreated {
			created++
		}
	}
	if created != 2 {
		t.Fatalf("alice plays %d matches at once, want 2", created)
	}
	if status, m := ms.do(t, "POST", "/api/matches", body, "Authorization", "Bearer "+bobTok); status != http.StatusCreated {
		t.Errorf("bob's match: %d %v", status, m)
	}
	if status, m := ms.do(t, "DELETE", "/api/matches/"+ids[0], "", alice...); status/100 != 2 {
		t.Fatalf("alice cancels one: %d %v", status, m)
	}
	ms.waitFinal(t, ids[0])
	if status, m := ms.do(t, "POST", "/api/matches", body, alice...); status != http.StatusCreated {
		t.Errorf("alice's match once one ended: %d %v", status, m)
	}
	admin := []string{"Authorization", "Bearer " + matrixAdminToken}
	for i := range 3 {
		if status, m := ms.do(t, "POST", "/api/matches", body, admin...); status != http.StatusCreated {
			t.Errorf("the admin's match %d: %d %v", i+1, status, m)
		}
	}
}
