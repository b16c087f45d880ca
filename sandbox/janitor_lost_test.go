package sandbox

import (
	"os"
	"path/filepath"
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

// A warm container handed to a bot of the match keeps the pool's labels
// but carries the bot's name: it goes with the match, and so does its
// FIFO folder, named after its first name; warm containers not handed
// over, and another match's whose id merely contains this one's, stay.
func TestJanitorRemoveLostMatchTakesItsWarmContainers(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"arena-pool-9-1", "arena-pool-9-2", "arena-pool-9-3"} {
		if err := os.Mkdir(filepath.Join(dir, f), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	warm := func(id, name, folder string) container.Summary {
		c := arenaContainer(id, "pool", liveOwner.String())
		c.Names = []string{"/" + name}
		c.Mounts = []container.MountPoint{{Type: "bind", Source: filepath.Join(dir, folder), Destination: "/.arena/io"}}
		return c
	}
	engine := &fakeEngine{containers: []container.Summary{
		arenaContainer("a", "m1", deadOwner.String()),
		warm("b", "arena-m1-2-1", "arena-pool-9-1"), // handed to seat 1 of m1's second attempt
		warm("c", "arena-pool-9-2", "arena-pool-9-2"),
		warm("d", "arena-xm1-1", "arena-pool-9-3"),
	}}
	j := NewJanitor(engine, alive, WithStdioFolder(dir, filepath.Join(t.TempDir(), "arena")))
	if _, err := j.RemoveLostMatch(t.Context(), "m1"); err != nil {
		t.Fatal(err)
	}
	got := slices.Sorted(slices.Values(engine.removed))
	if want := []string{"a", "b"}; !slices.Equal(got, want) {
		t.Errorf("removed %v, want %v", got, want)
	}
	for folder, kept := range map[string]bool{"arena-pool-9-1": false, "arena-pool-9-2": true, "arena-pool-9-3": true} {
		if _, err := os.Stat(filepath.Join(dir, folder)); (err == nil) != kept {
			t.Errorf("folder %s: kept %v, want %v", folder, err == nil, kept)
		}
	}
}
