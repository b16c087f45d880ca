package snake

import (
	"encoding/json"
	"strings"
	"testing"

	"arena/engine"
)

func TestRenderText(t *testing.T) {
	g := New()
	m, err := g.Map("open10")
	if err != nil {
		t.Fatal(err)
	}
	match, err := g.NewMatch(engine.Config{Map: m, Seed: 1, Players: []string{"one", "two"}})
	if err != nil {
		t.Fatal(err)
	}
	text := g.RenderText([]json.RawMessage{match.Frame()}, 0, []string{"one", "two"})
	lines := strings.Split(text, "\n")
	if !strings.HasPrefix(lines[0], "round 0") || len(lines) < 13 || len(lines[1]) != 10 {
		t.Fatalf("text:\n%s", text)
	}
	board := strings.Join(lines[1:11], "\n")
	if strings.Count(board, "A") != 1 || strings.Count(board, "B") != 1 {
		t.Errorf("heads not drawn once each:\n%s", board)
	}
	if !strings.Contains(text, "A one: score") || !strings.Contains(text, "B two: score") {
		t.Errorf("text:\n%s", text)
	}
}
