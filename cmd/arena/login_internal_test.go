package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A server named without a scheme is reached over HTTPS unless it is this
// host: a password never crosses the network in clear by default.
func TestServerURL(t *testing.T) {
	for give, want := range map[string]string{
		"localhost:5006":             "http://localhost:5006",
		"127.0.0.1:5006":             "http://127.0.0.1:5006",
		"[::1]:5006":                 "http://[::1]:5006",
		"localhost":                  "http://localhost",
		"arena.example.org":          "https://arena.example.org",
		"arena.example.org:5006":     "https://arena.example.org:5006",
		"10.0.0.7:5006":              "https://10.0.0.7:5006",
		"http://arena.example.org/x": "http://arena.example.org",
		"https://localhost:8443/":    "https://localhost:8443",
	} {
		if got, err := serverURL(give); err != nil || got != want {
			t.Errorf("serverURL(%q) = %q, %v; want %q", give, got, err, want)
		}
	}
	for _, bad := range []string{"ftp://x", "http://", "://x"} {
		if got, err := serverURL(bad); err == nil {
			t.Errorf("serverURL(%q) = %q, want an error", bad, got)
		}
	}
}

// The credentials file is its owner's alone, whatever the umask, and a
// save replaces it whole.
func TestCredentialsFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cfg")
	t.Setenv("ARENA_CONFIG", dir)
	c, path, err := loadCredentials()
	if err != nil || len(c.Servers) != 0 {
		t.Fatalf("no file yet: %+v %v", c, err)
	}
	c.Servers["http://localhost:5006"] = credential{Name: "alice", Token: "arena_secret", TokenID: 3}
	if err := c.save(path); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the file: %v %v", fi, err)
	}
	if di, err := os.Stat(dir); err != nil || di.Mode().Perm() != 0o700 {
		t.Errorf("the folder arena made: %v %v", di, err)
	}
	again, _, err := loadCredentials()
	if err != nil || again.Servers["http://localhost:5006"].Token != "arena_secret" {
		t.Errorf("read back: %+v %v", again, err)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".credentials-*")); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

// A server in local mode needs no login, and says so; a server that is
// not there is named in the error.
func TestLoginWhereThereIsNoAccount(t *testing.T) {
	t.Setenv("ARENA_CONFIG", t.TempDir())
	local := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"mode":"local","user":null}`))
	}))
	defer local.Close()
	var out, errOut bytes.Buffer
	if err := cmdLogin(t.Context(), []string{local.URL}, &out, &errOut); err != nil || !strings.Contains(errOut.String(), "has no accounts (local mode)") {
		t.Errorf("login to a local-mode server: %v %q", err, errOut.String())
	}
	if c, _, _ := loadCredentials(); len(c.Servers) != 0 {
		t.Errorf("a local-mode login kept %v", c.Servers)
	}
	local.Close()
	err := cmdLogin(t.Context(), []string{local.URL}, &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), "is an arena server at "+local.URL) {
		t.Errorf("login to no server: %v", err)
	}
}
