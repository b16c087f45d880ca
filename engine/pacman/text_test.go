package pacman

import (
	"encoding/json"
	"strings"
	"testing"

	"arena/engine"
)

func TestRenderText(t *testing.T) {
	g := New()
	m, err := g.Map("saiblo")
	if err != nil {
		t.Fatal(err)
	}
	match, err := g.NewMatch(engine.Config{Map: m, Seed: 1, Players: []string{"p", "g"}})
	if err != nil {
		t.Fatal(err)
	}
	text := g.RenderText([]json.RawMessage{match.Frame()}, 0, []string{"p", "g"})
	lines := strings.Split(text, "\n")
	if !strings.HasPrefix(lines[0], "level 1, round 0") || len(lines) < 43 || len(lines[1]) != 41 || lines[1] != strings.Repeat("#", 41) {
		t.Fatalf("text:\n%s", text)
	}
	board := strings.Join(lines[1:42], "\n")
	if strings.Count(board, "P") != 1 || strings.Count(board, "G") < 1 || strings.Count(board, ".") < 100 {
		t.Errorf("board:\n%s", board)
	}
}

// A frame is drawn from itself alone: the one that ends level 1 shows
// level 1's board, not the next level's that its init carries.
func TestRenderTextOfALevelEnd(t *testing.T) {
	g := newMatch(1)
	frames := record(t, g, shortLevels(g, 2), scripted(0, nil, nil))
	end := decodeFrame(t, frames[2])
	if end.Level != 1 || end.Init == nil || end.Init.Level != 2 {
		t.Fatalf("frame 2: level %d, init %v; want the end of level 1", end.Level, end.Init)
	}
	text := New().RenderText(frames[2:3], 0, nil)
	lines := strings.Split(text, "\n")
	if !strings.HasPrefix(lines[0], "level 1, round 2") || len(lines) < 43 || len(lines[1]) != 41 || lines[41] != strings.Repeat("#", 41) || lines[42] == strings.Repeat("#", 41) {
		t.Fatalf("text:\n%s", text)
	}
	// Row x is line 41−x; the rows without a mover are the frame's.
	for x, row := range end.Board {
		if got := lines[41-x]; !strings.ContainsAny(got, "PG") && got != row {
			t.Errorf("row %d: %q, want %q", x, got, row)
		}
	}
}
