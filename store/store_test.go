package store

import (
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"
)

func TestStore(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir)
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
	if err := s.Finish(ctx, "aaaaaaaaaaaa", "finished", "", result, true, t0.Add(2*time.Minute)); err != nil {
		t.Fatal(err)
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
	page, next, err := s.List(ctx, 0, 2)
	if err != nil || len(page) != 2 || page[0].ID != "cccccccccccc" || next == 0 {
		t.Fatalf("first page: %v %d %v", page, next, err)
	}
	page, next, err = s.List(ctx, next, 2)
	if err != nil || len(page) != 1 || page[0].ID != "aaaaaaaaaaaa" || next != 0 {
		t.Fatalf("second page: %v %d %v", page, next, err)
	}
	ids, err := s.Unfinished(ctx)
	slices.Sort(ids)
	if err != nil || !slices.Equal(ids, []string{"bbbbbbbbbbbb", "cccccccccccc"}) {
		t.Errorf("unfinished: %v %v", ids, err)
	}
	s.Close()

	// History survives reopening.
	s, err = Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if m, err := s.Get(ctx, "bbbbbbbbbbbb"); err != nil || m.Status != "running" || !m.StartedAt.Equal(t0.Add(time.Minute)) {
		t.Errorf("after reopening: %+v %v", m, err)
	}
}
