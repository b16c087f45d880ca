package web

import (
	"encoding/csv"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"arena/internal/testsupport/poll"
	"arena/orchestrator/fake"
)

// Staff see the class: every user who may enter (admins aside), entered
// or not, with the newest version and its check; alice's every version
// was rejected, which her contest page says before the deadline; bob's
// team entered for carol; dave did not enter. The filters keep those
// not entered and those with nothing ready; the CSV has a row each.
func TestStaffSeeTheClass(t *testing.T) {
	es := newEntrantsServer(t)
	tanksImage := fakePulls(t, es.matrixServer)
	good := tanksImage("good", fake.Script{})
	bad := tanksImage("bad", fake.Script{Faults: map[int]fake.Fault{1: fake.Crash}})
	if status, body := es.push(t, "alice", es.tok["alice"], "alice/bot", "v1", bad); status != http.StatusCreated {
		t.Fatalf("push: %d %s", status, body)
	}
	if status, body := es.push(t, "bob", es.tok["bob"], "blue/bot", "v1", good); status != http.StatusCreated {
		t.Fatalf("push: %d %s", status, body)
	}
	tags := func() error {
		for _, owner := range []string{"alice", "blue"} {
			list, err := es.store.Tags(t.Context(), owner)
			if err != nil {
				return err
			}
			if len(list) != 1 || list[0].State == "pending" {
				return fmt.Errorf("%s's versions: %+v", owner, list)
			}
		}
		return nil
	}
	poll.Until(t, 20*time.Second, tags)
	path := es.contest(t, "")
	es.enter(t, path, "alice", "alice/bot", "")
	es.enter(t, path, "bob", "blue/bot", "")

	_, page := es.do(t, "GET", path, "", es.auth["alice"]...)
	warned := false
	for _, e := range page["entries"].([]any) {
		e := e.(map[string]any)
		if e["owner"] == "alice" && strings.Contains(fmt.Sprint(e["warning"]), "every version of alice/bot was rejected by its check") {
			warned = true
		}
		if e["owner"] == "blue" && e["warning"] != nil {
			t.Errorf("blue's ready entry is warned: %v", e["warning"])
		}
	}
	if !warned {
		t.Errorf("alice's contest page does not say her every version was rejected: %v", page["entries"])
	}
	_, bobsView := es.do(t, "GET", path, "", es.auth["bob"]...)
	for _, e := range bobsView["entries"].([]any) {
		if e := e.(map[string]any); e["owner"] == "alice" && e["warning"] != nil {
			t.Errorf("bob sees alice's warning: %v", e["warning"])
		}
	}

	class := func(query string) map[string]map[string]any {
		t.Helper()
		status, body := es.do(t, "GET", path+"/class"+query, "", es.auth["admin"]...)
		if status != http.StatusOK {
			t.Fatalf("the class%s: %d %v", query, status, body)
		}
		out := map[string]map[string]any{}
		for _, r := range body["rows"].([]any) {
			r := r.(map[string]any)
			out[r["name"].(string)] = r
		}
		return out
	}
	all := class("")
	if len(all) != 4 || all["admin"] != nil {
		t.Errorf("the class: %v", all)
	}
	if a := all["alice"]; a["entry"] == nil || a["check"] != "rejected" || a["ready"] != false || a["version"] != "v1" || a["pushed_at"] == nil || !strings.Contains(fmt.Sprint(a["reason"]), "crashed") {
		t.Errorf("alice: %v", a)
	}
	if c := all["carol"]; c["entry_owner"] != "blue" || c["check"] != "ready" || c["ready"] != true || fmt.Sprint(c["teams"]) != "[blue red]" {
		t.Errorf("carol, in teams blue and red: %v", c)
	}
	if d := all["dave"]; d["entry"] != nil || d["ready"] != false {
		t.Errorf("dave: %v", d)
	}
	if got := class("?filter=not-entered"); len(got) != 1 || got["dave"] == nil {
		t.Errorf("not entered: %v", got)
	}
	if got := class("?filter=no-ready"); len(got) != 1 || got["alice"] == nil {
		t.Errorf("no ready version: %v", got)
	}
	if status, _ := es.do(t, "GET", path+"/class?filter=lazy", "", es.auth["admin"]...); status != http.StatusBadRequest {
		t.Errorf("an unknown filter: %d", status)
	}
	if status, _ := es.do(t, "GET", path+"/class", "", es.auth["alice"]...); status != http.StatusForbidden {
		t.Errorf("alice reads the class: %d", status)
	}
	res := es.send(t, "GET", path+"/class?format=csv", "", es.auth["admin"]...)
	defer res.Body.Close()
	data, _ := io.ReadAll(res.Body)
	rows, err := csv.NewReader(strings.NewReader(string(data))).ReadAll()
	if err != nil || len(rows) != 5 || rows[0][0] != "name" || rows[1][0] != "alice" || rows[1][9] != "rejected" {
		t.Errorf("the class as CSV: %v %q", err, data)
	}
}
