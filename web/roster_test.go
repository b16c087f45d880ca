package web

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"strings"
	"testing"
)

// importCSV posts a roster as the admin and returns the status and body.
func importCSV(t *testing.T, ms *matrixServer, roster string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", ms.url+"/api/users/import", strings.NewReader(roster))
	req.Header.Set("Content-Type", "text/csv")
	req.Header.Set("Authorization", "Bearer "+matrixAdminToken)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(body)
}

// An admin imports a class: the accounts and teams are made, the answer
// is a CSV of name,link; the same file again makes nothing; a file with a
// bad row applies nothing and names it. A link sets its password once
// and signs its student in.
func TestARosterThroughTheAPI(t *testing.T) {
	ms := newMatrixServer(t, Config{})
	var roster strings.Builder
	roster.WriteString("name,email,team\n")
	for i := range 100 {
		fmt.Fprintf(&roster, "s%03d,s%03d@uni.example,lab%02d\n", i, i, i/5)
	}
	status, body := importCSV(t, ms, roster.String())
	if status != http.StatusOK {
		t.Fatalf("import: %d %s", status, body)
	}
	links, err := csv.NewReader(strings.NewReader(body)).ReadAll()
	if err != nil || len(links) != 101 || links[0][0] != "name" || links[0][1] != "link" || links[1][0] != "s000" {
		t.Fatalf("the links: %v %q", err, body)
	}
	if !strings.HasPrefix(links[1][1], "http://"+strings.TrimPrefix(ms.url, "http://")+"/#/password/password_") {
		t.Errorf("a link: %s", links[1][1])
	}
	if status, body := importCSV(t, ms, roster.String()); status != http.StatusOK || strings.TrimSpace(body) != "name,link" {
		t.Errorf("the same roster again: %d %q", status, body)
	}
	for _, bad := range []struct{ roster, want string }{
		{"name,team\nnew1,lab00\nnew2,s001\n", "line 3: team s001: the name is an account's"},
		{"name\nnew3\nbots\n", "line 3: name \"bots\" is reserved"},
		{"name,email\nnew4,nope\n", `line 2: email "nope"`},
	} {
		status, body := importCSV(t, ms, bad.roster)
		var e struct{ Error string }
		json.Unmarshal([]byte(body), &e)
		if status != http.StatusBadRequest || !strings.Contains(e.Error, bad.want) {
			t.Errorf("%q: %d %s, want 400 naming %q", bad.roster, status, body, bad.want)
		}
	}
	for _, name := range []string{"new1", "new3", "new4"} {
		if _, err := ms.store.User(t.Context(), name); err == nil {
			t.Errorf("%s was made by a roster with a bad row", name)
		}
	}
	req, _ := http.NewRequest("POST", ms.url+"/api/users/import", strings.NewReader("name\nx1\n"))
	req.Header.Set("Content-Type", "text/plain")
	req.Header.Set("Authorization", "Bearer "+matrixAdminToken)
	if res, err := http.DefaultClient.Do(req); err != nil || res.StatusCode != http.StatusUnsupportedMediaType {
		t.Errorf("a roster as text/plain (what a form can send): %v %v", res.StatusCode, err)
	}

	// s007 sets a password with the link, and is signed in.
	jar, _ := cookiejar.New(nil)
	student := &http.Client{Jar: jar}
	set := func(link, password string) int {
		req, _ := http.NewRequest("POST", ms.url+"/api/users/password", strings.NewReader(fmt.Sprintf(`{"link":%q,"password":%q}`, link, password)))
		req.Header.Set("Content-Type", "application/json")
		res, err := student.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	if st := set(links[8][1], password("s007")); st != http.StatusOK {
		t.Fatalf("set a password by link: %d", st)
	}
	res, err := student.Get(ms.url + "/api/me")
	if err != nil {
		t.Fatal(err)
	}
	me, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if !strings.Contains(string(me), `"name":"s007"`) || !strings.Contains(string(me), `"lab01"`) {
		t.Errorf("after the link, /api/me is %s", me)
	}
	if st := set(links[8][1], "another-password"); st != http.StatusForbidden {
		t.Errorf("the link again: %d, want 403", st)
	}
	if hdr := ms.signIn(t, "s007"); len(hdr) == 0 {
		t.Error("s007 does not sign in")
	}
}
