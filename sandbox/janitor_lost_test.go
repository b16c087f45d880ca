package sandbox

import (
	"slices"
	"testing"

	"github.com/docker/docker/api/types/container"
)

// A match handed to another player after its first one lost it: every
// container of that match goes, a live owner's too, and no other match's.
func TestJanitorRemoveLostMatch(t *testing.T) {
	engine := &fakeEngine{containers: []container.Summary{
		arenaContainer("a", "m1", liveOwner.String()),
		arenaContainer("b", "m1", deadOwner.String()),
		arenaContainer("c", "m2", liveOwner.String()),
	}}
	j := NewJanitor(engine, alive)
	if _, err := j.RemoveLostMatch(t.Context(), "m1"); err != nil {
		t.Fatal(err)
	}
	got := slices.Sorted(slices.Values(engine.removed))
	if want := []string{"a", "b"}; !slices.Equal(got, want) {
		t.Errorf("removed %v, want %v", got, want)
	}
	if _, err := j.RemoveLostMatch(t.Context(), ""); err == nil {
		t.Error("RemoveLostMatch of no match id removed every match")
	}
}
