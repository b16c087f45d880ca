package web

import (
	"testing"

	"arena/platform"
)

// The bot field's suggestions: the game's own images first, then the
// unlabelled ones; other games' images and images the server does not
// allow are left out; a missing or unknown game is a 400 naming it.
func TestListImages(t *testing.T) {
	ts := newTestServer(t, Config{}, 1, with(platform.Config{Allow: []string{"arena/*", "bots/slow"}}))
	status, body := ts.do(t, "GET", "/api/images?game=tanks", "")
	if status != 200 {
		t.Fatalf("status %d: %v", status, body)
	}
	var got []string
	for _, v := range body["images"].([]any) {
		img := v.(map[string]any)
		if img["id"] == "" || img["created_at"] == "" {
			t.Errorf("image without id or age: %v", img)
		}
		got = append(got, img["image"].(string))
	}
	want := []string{"arena/tanks-hunter", "arena/tanks-random", "bots/slow"}
	if len(got) != len(want) {
		t.Fatalf("images = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("images = %v, want %v", got, want)
		}
	}
	for _, tt := range []struct{ give, want string }{
		{"/api/images", "game: missing (e.g. /api/images?game=tanks)"},
		{"/api/images?game=chess", `game: unknown game "chess" (games: [tanks])`},
	} {
		status, body := ts.do(t, "GET", tt.give, "")
		if status != 400 || body["error"] != tt.want {
			t.Errorf("%s: %d %v, want 400 %q", tt.give, status, body, tt.want)
		}
	}
}
