package store

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestStore(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, "test")
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	for i, id := range []string{"aaaaaaaaaaaa", "bbbbbbbbbbbb", "cccccccccccc"} {
		m := Match{ID: id, Status: "queued", Game: "tanks", Map: "classic", Seed: 1<<64 - 1, Bots: []string{"a", "b"}, CreatedAt: t0.Add(time.Duration(i) * time.Second)}
		if err := s.Insert(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Insert(ctx, Match{ID: "aaaaaaaaaaaa", Status: "queued", CreatedAt: t0}); err == nil {
		t.Error("a duplicate id was accepted")
	}
	if err := s.SetStatus(ctx, "bbbbbbbbbbbb", "running", t0.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	result := json.RawMessage(`{"winners":["a"]}`)
	if err := s.Finish(ctx, "aaaaaaaaaaaa", Outcome{Status: "finished", Result: result, Replay: []byte(`{"replay":1}`)}, t0.Add(2*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if f, err := s.OpenReplay("aaaaaaaaaaaa"); err != nil {
		t.Errorf("replay file: %v", err)
	} else if b, err := io.ReadAll(f); err != nil || string(b) != `{"replay":1}` {
		t.Errorf("replay file: %q, %v", b, err)
	} else {
		f.Close()
	}
	m, err := s.Get(ctx, "aaaaaaaaaaaa")
	if err != nil {
		t.Fatal(err)
	}
	if m.Status != "finished" || string(m.Result) != string(result) || !m.HasReplay || m.Seed != 1<<64-1 || !slices.Equal(m.Bots, []string{"a", "b"}) || !m.FinishedAt.Equal(t0.Add(2*time.Minute)) {
		t.Errorf("got %+v", m)
	}
	if _, err := s.Get(ctx, "dddddddddddd"); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown id: %v", err)
	}
	page, next, err := s.List(ctx, Filter{}, 0, 2)
	if err != nil || len(page) != 2 || page[0].ID != "cccccccccccc" || next == 0 {
		t.Fatalf("first page: %v %d %v", page, next, err)
	}
	page, next, err = s.List(ctx, Filter{}, next, 2)
	if err != nil || len(page) != 1 || page[0].ID != "aaaaaaaaaaaa" || next != 0 {
		t.Fatalf("second page: %v %d %v", page, next, err)
	}
	ids, err := s.Unfinished(ctx)
	slices.Sort(ids)
	if err != nil || !slices.Equal(ids, []string{"bbbbbbbbbbbb", "cccccccccccc"}) {
		t.Errorf("unfinished: %v %v", ids, err)
	}
	if err := s.Finish(ctx, "cccccccccccc", Outcome{Status: "failed", Error: "no bots"}, t0.Add(3*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if m, err := s.Get(ctx, "cccccccccccc"); err != nil || m.Status != "failed" || m.Error != "no bots" || m.HasReplay {
		t.Errorf("failed match: %+v %v", m, err)
	}
	s.Close()

	// History survives reopening.
	s, err = Open(dir, "test")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if m, err := s.Get(ctx, "bbbbbbbbbbbb"); err != nil || m.Status != "running" || !m.StartedAt.Equal(t0.Add(time.Minute)) {
		t.Errorf("after reopening: %+v %v", m, err)
	}
}

// A replay that cannot be written is reported, and the row says there is
// none; nothing half-written is left in the folder.
func TestFinishWithAnUnwritableReplay(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, "test")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := t.Context()
	if err := s.Insert(ctx, Match{ID: "aaaaaaaaaaaa", Status: "running", Game: "tanks", Map: "classic", CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	// A folder where the file should go makes the write fail.
	if err := os.Mkdir(s.ReplayPath("aaaaaaaaaaaa"), 0o755); err != nil {
		t.Fatal(err)
	}
	err = s.Finish(ctx, "aaaaaaaaaaaa", Outcome{Status: "finished", Result: json.RawMessage(`{}`), Replay: []byte("{}")}, time.Now())
	if err == nil || !strings.Contains(err.Error(), "save the replay of match aaaaaaaaaaaa") {
		t.Errorf("err = %v, want the replay's failure", err)
	}
	if m, err := s.Get(ctx, "aaaaaaaaaaaa"); err != nil || m.Status != "finished" || m.HasReplay {
		t.Errorf("row: %+v %v", m, err)
	}
	tmp, _ := filepath.Glob(filepath.Join(dir, "replays", ".*"))
	if len(tmp) > 0 {
		t.Errorf("left behind: %v", tmp)
	}
}

// One process at a time holds a data folder; the next one is told who.
func TestOpenLocksTheFolder(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, "arena serve (pid 42 on host h, http://127.0.0.1:5006)")
	if err != nil {
		t.Fatal(err)
	}
	_, err = Open(dir, "another")
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), "held by arena serve (pid 42 on host h, http://127.0.0.1:5006)") {
		t.Fatalf("second open: %v", err)
	}
	s.Close()
	s, err = Open(dir, "another")
	if err != nil {
		t.Fatalf("open after close: %v", err)
	}
	s.Close()
}
