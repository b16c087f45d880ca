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
