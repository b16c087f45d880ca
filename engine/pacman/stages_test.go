package pacman

import (
	"slices"
	"testing"
)

// The stages run in the order of the spec's steps. Changing it changes the
// game: the golden replays catch that too, this test names the cause.
func TestStageOrder(t *testing.T) {
	want := []string{
		"start", "count down skills", "move pac-man", "move ghosts", "sample paths",
		"eat", "detect catch", "resolve catch", "apply skills", "enter portal",
		"open portal", "all beans", "time limit",
	}
	var got []string
	for _, st := range pacmanStages {
		got = append(got, st.name)
	}
	if !slices.Equal(got, want) {
		t.Errorf("stages %q, want %q", got, want)
	}
}
