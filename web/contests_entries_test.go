package web

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// entrantsServer is a server with a contest's entrants: alice, bob, carol
// and dave, each with a token; team red (alice, carol) and team blue
// (bob, carol); bots pushed to the registry.
type entrantsServer struct {
	*matrixServer
	auth map[string][]string
	tok  map[string]string
}

func newEntrantsServer(t *testing.T) *entrantsServer {
	ms := newMatrixServer(t, Config{}, registryAt("127.0.0.1:5006"))
	if err := ms.accounts.CreateTeam(t.Context(), ms.principal(t, "bob"), "blue"); err != nil {
		t.Fatal(err)
	}
	ms.joinTeam(t, "blue", "bob", "carol")
	es := &entrantsServer{matrixServer: ms, auth: map[string][]string{"admin": {"Authorization", "Bearer " + matrixAdminToken}}, tok: map[string]string{}}
	for _, u := range []string{"alice", "bob", "carol", "dave"} {
		_, tok := ms.token(t, u)
		es.tok[u], es.auth[u] = tok, []string{"Authorization", "Bearer " + tok}
	}
	return es
}

// pushBot pushes repo (NAME/bot) as user (NAME, or a member of team NAME).
func (es *entrantsServer) pushBot(t *testing.T, user, repo string) {
	t.Helper()
	if status, body := es.push(t, user, es.tok[user], repo, "v1", newImage(t, nil, repo)); status != http.StatusCreated {
		t.Fatalf("push %s: %d %s", repo, status, body)
	}
}

// contest creates a contest (settings: more of its JSON) and returns
// its path.
func (es *entrantsServer) contest(t *testing.T, settings string) string {
	t.Helper()
	freeze := es.clock.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	status, c := es.do(t, "POST", "/api/contests", `{"name":"Cup","game":"tanks","freeze_at":"`+freeze+`"`+settings+`}`, es.auth["admin"]...)
	if status != http.StatusCreated {
		t.Fatalf("create: %d %v", status, c)
	}
	return fmt.Sprintf("/api/contests/%v", c["id"])
}

// enter enters a bot as user: 201 (the entry's id) or, with want set, a
// 409 whose error says want.
func (es *entrantsServer) enter(t *testing.T, path, user, bot, want string) any {
	t.Helper()
	status, body := es.do(t, "POST", path+"/entries", fmt.Sprintf(`{"bot":%q}`, bot), es.auth[user]...)
	switch {
	case want == "" && status != http.StatusCreated:
		t.Errorf("%s enters %s: %d %v, want 201", user, bot, status, body)
	case want != "" && (status != http.StatusConflict || !strings.Contains(fmt.Sprint(body["error"]), want)):
		t.Errorf("%s enters %s: %d %v, want 409 saying %q", user, bot, status, body, want)
	}
	return body["id"]
}

// One user, two repositories, through the API: the second is refused
// (409), by the user or by staff on their behalf; once the first is
// withdrawn, the second is taken.
func TestContestTakesOneEntryPerPersonNotPerRepository(t *testing.T) {
	es := newEntrantsServer(t)
	es.pushBot(t, "alice", "alice/bot")
	es.pushBot(t, "alice", "alice/bot2")
	path := es.contest(t, "")
	first := es.enter(t, path, "alice", "alice/bot", "")
	es.enter(t, path, "alice", "alice/bot2", fmt.Sprintf(`alice is already in contest "Cup" with entry %v (alice/bot): it takes one entry per person`, first))
	es.enter(t, path, "admin", "alice/bot2", "alice is already in contest")
	if status, body := es.do(t, "PATCH", fmt.Sprintf("%s/entries/%v", path, first), `{"withdraw":true}`, es.auth["alice"]...); status != http.StatusOK {
		t.Fatalf("withdraw: %d %v", status, body)
	}
	es.enter(t, path, "alice", "alice/bot2", "")
	es.enter(t, path, "alice", "alice/bot", "alice is already in contest")
}

// carol (in team red) enters alone: red's entry is refused; in another
// contest red enters first: carol alone is refused; blue, which shares
// carol with red, is refused too; dave (in neither) enters.
func TestContestMemberAndTeamDoNotBothEnter(t *testing.T) {
	es := newEntrantsServer(t)
	for user, repo := range map[string]string{"carol": "carol/bot", "alice": "red/bot", "bob": "blue/bot", "dave": "dave/bot"} {
		es.pushBot(t, user, repo)
	}
	one := es.contest(t, "")
	carol := es.enter(t, one, "carol", "carol/bot", "")
	es.enter(t, one, "alice", "red/bot", fmt.Sprintf(`carol (of team red) is already in contest "Cup" with entry %v (carol/bot): it takes one entry per person, and a team's entry counts for each of its members`, carol))
	es.enter(t, one, "dave", "dave/bot", "")

	two := es.contest(t, "")
	red := es.enter(t, two, "alice", "red/bot", "")
	es.enter(t, two, "carol", "carol/bot", fmt.Sprintf(`carol is already in contest "Cup" through team red's entry %v (red/bot)`, red))
	es.enter(t, two, "bob", "blue/bot", fmt.Sprintf(`carol (of team blue) is already in contest "Cup" through team red's entry %v (red/bot)`, red))
	es.enter(t, two, "dave", "dave/bot", "")
	// Red withdraws: blue is taken.
	if status, body := es.do(t, "PATCH", fmt.Sprintf("%s/entries/%v", two, red), `{"withdraw":true}`, es.auth["carol"]...); status != http.StatusOK {
		t.Fatalf("withdraw: %d %v", status, body)
	}
	es.enter(t, two, "bob", "blue/bot", "")
}

// A contest whose setting allows more takes more: two of alice's, not a
// third until staff raise it; the setting shows in the page and is
// checked (400 naming it).
func TestContestEntriesPerPersonSetting(t *testing.T) {
	es := newEntrantsServer(t)
	for _, repo := range []string{"alice/a", "alice/b", "alice/c"} {
		es.pushBot(t, "alice", repo)
	}
	path := es.contest(t, `,"entries_per_person":2`)
	es.enter(t, path, "alice", "alice/a", "")
	es.enter(t, path, "alice", "alice/b", "")
	es.enter(t, path, "alice", "alice/c", "it takes 2 entries per person")
	status, page := es.do(t, "PATCH", path, `{"entries_per_person":3}`, es.auth["admin"]...)
	if status != http.StatusOK || page["spec"].(map[string]any)["entries_per_person"] != 3.0 {
		t.Fatalf("raise to 3: %d %v", status, page)
	}
	es.enter(t, path, "alice", "alice/c", "")
	if status, body := es.do(t, "PATCH", path, `{"entries_per_person":3}`, es.auth["alice"]...); status != http.StatusForbidden {
		t.Errorf("alice changes the setting: %d %v", status, body)
	}
	if status, body := es.do(t, "PATCH", path, `{"entries_per_person":101}`, es.auth["admin"]...); status != http.StatusBadRequest || !strings.Contains(fmt.Sprint(body["error"]), "entries_per_person: 101") {
		t.Errorf("101 per person: %d %v", status, body)
	}
	// Unset: one.
	if _, page := es.do(t, "GET", es.contest(t, ""), ""); page["spec"].(map[string]any)["entries_per_person"] != 1.0 {
		t.Errorf("the default: %v", page["spec"])
	}
}
