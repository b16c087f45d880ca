package main

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// arena users import posts the roster as text/csv with the admin's token
// and hands the links on: to standard output, or to a file only its owner
// reads. The server's refusal (a bad row) is the command's error.
func TestUsersImport(t *testing.T) {
	t.Setenv("ARENA_CONFIG", t.TempDir())
	t.Setenv("ARENA_TOKEN", "the-admins-token")
	var got struct{ method, path, ctype, auth, body string }
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got.method, got.path, got.ctype, got.auth, got.body = r.Method, r.URL.Path, r.Header.Get("Content-Type"), r.Header.Get("Authorization"), string(body)
		if strings.Contains(string(body), "bad") {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			w.Write([]byte(`{"error":"line 3: name \"bad name\": 2 to 32 lower-case letters"}`))
			return
		}
		w.Header().Set("Content-Type", "text/csv")
		w.Write([]byte("name,link\nalice,http://x/#/password/password_a\nbob,http://x/#/password/password_b\n"))
	}))
	defer srv.Close()
	dir := t.TempDir()
	roster := filepath.Join(dir, "class.csv")
	os.WriteFile(roster, []byte("name,team\nalice,red\nbob,red\n"), 0o644)
	var out, errOut bytes.Buffer
	if code := runMain(t.Context(), []string{"users", "import", roster, srv.URL}, &out, &errOut); code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	if got.method != "POST" || got.path != "/api/users/import" || got.ctype != "text/csv" || got.auth != "Bearer the-admins-token" || got.body != "name,team\nalice,red\nbob,red\n" {
		t.Errorf("the request: %+v", got)
	}
	if !strings.HasPrefix(out.String(), "name,link\nalice,") || !strings.Contains(errOut.String(), "2 account(s) made") {
		t.Errorf("out %q, err %q", out.String(), errOut.String())
	}
	links := filepath.Join(dir, "links.csv")
	out.Reset()
	if code := runMain(t.Context(), []string{"users", "import", roster, "-o", links, srv.URL}, &out, &errOut); code != exitOK || out.Len() != 0 {
		t.Fatalf("exit %d, out %q: %s", code, out.String(), errOut.String())
	}
	if info, err := os.Stat(links); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("the links file: %v %v", info, err)
	}
	os.WriteFile(roster, []byte("name\nalice\nbad name\n"), 0o644)
	errOut.Reset()
	if code := runMain(t.Context(), []string{"users", "import", roster, srv.URL}, &out, &errOut); code == exitOK || !strings.Contains(errOut.String(), `line 3: name "bad name"`) {
		t.Errorf("a bad row: exit %d, %q", code, errOut.String())
	}
	if code := runMain(t.Context(), []string{"users", "import"}, &out, &errOut); code != exitUsage {
		t.Errorf("no file: exit %d", code)
	}
}
