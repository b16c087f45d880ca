package sandbox

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
)

// fakeEngine holds containers for the janitor: it lists them by label
// and removes them, failing the removals it is told to.
type fakeEngine struct {
	containers []container.Summary
	listErr    error
	removeErr  map[string]error // by container id
	removed    []string
}

func (f *fakeEngine) ContainerList(_ context.Context, opts container.ListOptions) ([]container.Summary, error) {
	if f.listErr != nil {
		return nil, f.listErr
	}
	if !opts.All {
		panic("the janitor must list stopped containers too")
	}
	var out []container.Summary
	for _, c := range f.containers {
		matches := true
		for _, l := range opts.Filters.Get("label") {
			k, v, _ := strings.Cut(l, "=")
			matches = matches && c.Labels[k] == v
		}
		for _, n := range opts.Filters.Get("name") { // anywhere in a name, as the engine's
			matches = matches && slices.ContainsFunc(c.Names, func(name string) bool { return strings.Contains(name, n) })
		}
		if matches {
			out = append(out, c)
		}
	}
	return out, nil
}

func (f *fakeEngine) ContainerRemove(_ context.Context, id string, opts container.RemoveOptions) error {
	if !opts.Force {
		panic("the janitor must remove running containers too")
	}
	if err := f.removeErr[id]; err != nil && !cerrdefs.IsNotFound(err) && !cerrdefs.IsConflict(err) {
		return err
	}
	f.removed = append(f.removed, id)
	return f.removeErr[id]
}

var (
	now       = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	liveOwner = Owner{Host: "box", PID: 10, Start: 100}
	deadOwner = Owner{Host: "box", PID: 11, Start: 100}
)

// alive is the owner check: only liveOwner runs.
func alive(o Owner) bool { return o == liveOwner }

// arenaContainer is an Arena container of a match, named like the
// orchestrator names them.
func arenaContainer(id, match string, owner string) container.Summary {
	return container.Summary{ID: id, Names: []string{"/arena-" + match + "-" + id}, Labels: map[string]string{
		LabelPlatform: "arena", LabelMatch: match, LabelOwner: owner,
	}}
}

// stdioFolder makes a FIFO folder with the named entries (a trailing /
// makes a folder), each modified age ago, and a launcher binary whose
// copy, held by this process, is the entry CURRENT. It returns the folder
// and the launcher.
func stdioFolder(t *testing.T, entries map[string]time.Duration) (dir, launcher string) {
	t.Helper()
	dir = t.TempDir()
	launcher = filepath.Join(t.TempDir(), "arena")
	if err := os.WriteFile(launcher, []byte("binary"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, age := range entries {
		var p string
		var err error
		switch {
		case name == "CURRENT":
			var held *os.File
			p, held, err = holdLauncherCopy(dir, launcher)
			if err == nil {
				t.Cleanup(func() { held.Close() })
			}
		case strings.HasSuffix(name, "/"):
			p = filepath.Join(dir, strings.TrimSuffix(name, "/"))
			err = os.Mkdir(p, 0o700)
		default:
			p = filepath.Join(dir, name)
			err = os.WriteFile(p, nil, 0o600)
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, now.Add(-age), now.Add(-age)); err != nil {
			t.Fatal(err)
		}
	}
	return dir, launcher
}

func names(paths []string) []string {
	var out []string
	for _, p := range paths {
		out = append(out, filepath.Base(p))
	}
	slices.Sort(out)
	return out
}

func TestJanitorSweep(t *testing.T) {
	var dir, launcher string
	// Warm containers handed to bots: renamed, their folders named after
	// their first names.
	handed := func(id, name, folder, owner string) container.Summary {
		c := arenaContainer(id, "pool", owner)
		c.Names = []string{"/" + name}
		c.Mounts = []container.MountPoint{{Type: "bind", Source: filepath.Join(dir, folder)}}
		return c
	}
	dir, launcher = stdioFolder(t, map[string]time.Duration{
		"arena-m1-a/":     10 * time.Second, // its container is removed
		"arena-m1-b/":     time.Hour,        // its container runs
		"arena-pool-7-1/": time.Hour,        // its renamed container runs
		"arena-pool-7-2/": time.Hour,        // its renamed container is removed
		"arena-m3-0/":     2 * time.Minute,  // no container: a leftover
		"arena-m3-1/":     10 * time.Second, // no container yet: its bot is starting
		"CURRENT":         48 * time.Hour,   // this build's launcher
		"launch-1-2":      25 * time.Hour,   // another build's, nobody's
		"launch-3-4":      time.Second,      // another build's, nobody's, recent
		"notes.txt":       48 * time.Hour,   // not Arena's to judge
		"launch-folder/":  10 * time.Second, // not a launcher copy, and too young
		".uids/":          48 * time.Hour,   // the uid leases
	})
	engine := &fakeEngine{containers: []container.Summary{
		arenaContainer("a", "m1", deadOwner.String()),
		arenaContainer("b", "m1", liveOwner.String()),
		arenaContainer("c", "m2", "not an owner"),
		handed("d", "arena-m4-1", "arena-pool-7-1", liveOwner.String()),
		handed("e", "arena-m5-1", "arena-pool-7-2", deadOwner.String()),
	}}
	j := NewJanitor(engine, alive, WithStdioFolder(dir, launcher), WithClock(func() time.Time { return now }))
	rep, err := j.Sweep(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"a", "c", "e"}; !slices.Equal(engine.removed, want) {
		t.Errorf("removed containers %v, want %v (dead owners, unreadable owner)", engine.removed, want)
	}
	if want := []string{"arena-m1-a", "arena-m2-c", "arena-m5-1"}; !slices.Equal(rep.Removed, want) || rep.Kept != 2 {
		t.Errorf("report %+v, want removed %v and 2 kept", rep, want)
	}
	if want := []string{"arena-m1-a", "arena-m3-0", "arena-pool-7-2", "launch-1-2", "launch-3-4"}; !slices.Equal(names(rep.Swept), want) {
		t.Errorf("swept %v, want %v", names(rep.Swept), want)
	}
	left, _ := os.ReadDir(dir)
	if len(left) != 12-5 {
		t.Errorf("%d entries left in the folder, want 7", len(left))
	}
}

// Removing a match takes its containers whose owner is gone and their
// folders, and nothing else: a live owner's containers and other
// matches' stay, and so do the folder's leftovers (the janitor did not
// list every container, so cannot tell a leftover).
func TestJanitorRemoveMatch(t *testing.T) {
	engine := &fakeEngine{containers: []container.Summary{
		arenaContainer("a", "m1", liveOwner.String()),
		arenaContainer("b", "m1", deadOwner.String()),
		arenaContainer("c", "m2", deadOwner.String()),
	}}
	dir, launcher := stdioFolder(t, map[string]time.Duration{
		"arena-m1-a/": time.Hour,
		"arena-m1-b/": time.Hour,
		"arena-m2-c/": time.Hour,
		"arena-m3-0/": time.Hour,
		"launch-1-2":  48 * time.Hour,
	})
	j := NewJanitor(engine, alive, WithStdioFolder(dir, launcher), WithClock(func() time.Time { return now }))
	rep, err := j.RemoveMatch(t.Context(), "m1")
	if err != nil {
		t.Fatal(err)
	}
	// A live owner's container is not a leftover, whatever the caller
	// believes.
	if want := []string{"b"}; !slices.Equal(engine.removed, want) || rep.Kept != 1 {
		t.Errorf("removed %v (report %+v), want %v", engine.removed, rep, want)
	}
	if want := []string{"arena-m1-b"}; !slices.Equal(names(rep.Swept), want) {
		t.Errorf("swept %v, want %v", names(rep.Swept), want)
	}
	if _, err := j.RemoveMatch(t.Context(), ""); err == nil {
		t.Error("RemoveMatch of no match id removed every match")
	}
}

// Removing everything takes the containers of running Arena processes too,
// and sweeps the folder.
func TestJanitorRemoveAll(t *testing.T) {
	engine := &fakeEngine{containers: []container.Summary{
		arenaContainer("a", "m1", liveOwner.String()),
		arenaContainer("b", "m2", deadOwner.String()),
	}}
	dir, launcher := stdioFolder(t, map[string]time.Duration{
		"arena-m1-a/": time.Second,
		"arena-m3-0/": time.Hour,
	})
	j := NewJanitor(engine, alive, WithStdioFolder(dir, launcher), WithClock(func() time.Time { return now }))
	rep, err := j.RemoveAll(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"a", "b"}; !slices.Equal(engine.removed, want) || rep.Kept != 0 {
		t.Errorf("removed %v (report %+v), want %v", engine.removed, rep, want)
	}
	if want := []string{"arena-m1-a", "arena-m3-0"}; !slices.Equal(names(rep.Swept), want) {
		t.Errorf("swept %v, want %v", names(rep.Swept), want)
	}
}

// A container already gone or being removed counts as removed; one the
// engine would not remove is reported, and its folder stays.
func TestJanitorRemoveErrors(t *testing.T) {
	refused := errors.New("driver failed to remove root filesystem")
	engine := &fakeEngine{
		containers: []container.Summary{
			arenaContainer("a", "m1", deadOwner.String()),
			arenaContainer("b", "m1", deadOwner.String()),
			arenaContainer("c", "m1", deadOwner.String()),
		},
		removeErr: map[string]error{"a": cerrdefs.ErrNotFound, "b": cerrdefs.ErrConflict, "c": refused},
	}
	dir, launcher := stdioFolder(t, map[string]time.Duration{"arena-m1-a/": time.Hour, "arena-m1-c/": time.Hour})
	j := NewJanitor(engine, alive, WithStdioFolder(dir, launcher), WithClock(func() time.Time { return now }))
	rep, err := j.Sweep(t.Context())
	if !errors.Is(err, refused) || !strings.Contains(err.Error(), "remove container c") {
		t.Errorf("err = %v, want the refusal naming c", err)
	}
	if want := []string{"arena-m1-a", "arena-m1-b"}; !slices.Equal(rep.Removed, want) {
		t.Errorf("removed %v, want %v", rep.Removed, want)
	}
	if want := []string{"arena-m1-a"}; !slices.Equal(names(rep.Swept), want) {
		t.Errorf("swept %v, want %v (c still exists)", names(rep.Swept), want)
	}
}

// Without a folder, or with one that does not exist (yet), only containers
// are cleaned; an engine that cannot list is an error, and nothing is
// removed.
func TestJanitorWithoutFolder(t *testing.T) {
	engine := &fakeEngine{containers: []container.Summary{arenaContainer("a", "m1", deadOwner.String())}}
	for _, opts := range [][]JanitorOption{nil, {WithStdioFolder(filepath.Join(t.TempDir(), "absent"), "/no/launcher")}} {
		rep, err := NewJanitor(engine, alive, opts...).Sweep(t.Context())
		if err != nil || len(rep.Removed) != 1 || len(rep.Swept) != 0 {
			t.Errorf("report %+v, %v", rep, err)
		}
	}
	engine = &fakeEngine{listErr: errors.New("engine gone"), containers: []container.Summary{arenaContainer("a", "m1", deadOwner.String())}}
	dir, launcher := stdioFolder(t, map[string]time.Duration{"arena-m3-0/": time.Hour})
	rep, err := NewJanitor(engine, alive, WithStdioFolder(dir, launcher), WithClock(func() time.Time { return now })).Sweep(t.Context())
	if err == nil || len(engine.removed) != 0 || len(rep.Swept) != 0 {
		t.Errorf("with a failing engine: report %+v, %v; removed %v", rep, err, engine.removed)
	}
}
