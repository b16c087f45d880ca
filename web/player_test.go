package web

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"arena/platform"
)

// A logic's player is served from what was read out of its image, under
// a policy that sandboxes it wherever it is opened and lets it make no
// request; no other file is reachable through its path.
func TestPlayerFiles(t *testing.T) {
	s := newTestServer(t, Config{}, 1, withDeps(func(d *platform.Deps) {
		d.Players = map[string]map[string][]byte{
			"ttt": {"index.html": []byte(`<script src="draw.js"></script>`), "draw.js": []byte("// draws")},
		}
	}))
	get := func(path string) (*http.Response, string) {
		t.Helper()
		res, err := http.Get(s.url + path)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		return res, string(body)
	}
	res, body := get("/games/ttt/player/index.html")
	csp := res.Header.Get("Content-Security-Policy")
	if res.StatusCode != 200 || !strings.Contains(body, "draw.js") || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") ||
		!strings.HasPrefix(csp, "sandbox allow-scripts;") || !strings.Contains(csp, "connect-src 'none'") || strings.Contains(csp, "allow-same-origin") {
		t.Errorf("the player's page: %d %q, %v", res.StatusCode, body, res.Header)
	}
	if res, body := get("/games/ttt/player/draw.js"); res.StatusCode != 200 || body != "// draws" || res.Header.Get("Content-Security-Policy") != csp {
		t.Errorf("the player's script: %d %v", res.StatusCode, res.Header)
	}
	for _, path := range []string{"/games/ttt/player/../../../api/games", "/games/ttt/player/%2e%2e/%2e%2e/healthz", "/games/ttt/player/nothing.js", "/games/tanks/player/index.html", "/games/ttt/player/"} {
		if res, body := get(path); res.StatusCode != http.StatusNotFound {
			t.Errorf("%s: %d %q", path, res.StatusCode, body)
		}
	}
	// A game the server does not offer lists no player.
	res, body = get("/api/games")
	if res.StatusCode != 200 || strings.Contains(body, `"player"`) {
		t.Errorf("a server whose games ship no player lists one: %s", body)
	}
}
