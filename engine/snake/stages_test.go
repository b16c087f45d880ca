package snake

import (
	"slices"
	"testing"
)

// The stages run in the order of the rules. Changing it changes the game:
// the golden replays catch that too, this test names the cause.
func TestStageOrder(t *testing.T) {
	want := []string{
		"check moves", "collide", "crush", "die", "move", "eat",
		"count down shields", "remove dead", "place pending", "end round", "shrink",
	}
	var got []string
	for _, st := range snakeStages {
		got = append(got, st.name)
	}
	if !slices.Equal(got, want) {
		t.Errorf("stages %q, want %q", got, want)
	}
}
