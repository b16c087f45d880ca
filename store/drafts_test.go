package store

import (
	"errors"
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	"arena/internal/errs"
)

// weight is what files weigh kept.
func weight(files map[string]string) int64 {
	_, n, _ := draftFiles(files)
	return n
}

func openDrafts(t *testing.T) *Store {
	t.Helper()
	s, err := Open(t.TempDir(), "test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// A draft is made with its first save (version 1); each save names its
// base and becomes the next version; a base that is not the newest is
// refused with the draft as it is, nothing written; only the last
// History saves are kept; names are the owner's own; what the saves kept
// weigh (names and texts, as stored) is the owner's usage, and leaves it
// with the deleted draft.
func TestDrafts(t *testing.T) {
	s := openDrafts(t)
	ctx := t.Context()
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	lim := DraftLimits{History: 3}
	first := map[string]string{"bot.py": "print()", "tanks.py": "x = 1"}
	d, err := s.CreateDraft(ctx, Draft{Owner: "alice", Name: "bot", Game: "tanks", Kit: "python", CreatedBy: "alice", CreatedAt: t0},
		DraftSave{Main: "bot.py", Files: first, SavedBy: "alice", SavedAt: t0}, lim)
	if err != nil || d.ID == 0 || d.Version != 1 || d.Size != int64(len(`{"bot.py":"print()","tanks.py":"x = 1"}`)) || d.Main != "bot.py" || d.UpdatedBy != "alice" {
		t.Fatalf("create: %+v %v", d, err)
	}
	if _, err := s.CreateDraft(ctx, Draft{Owner: "alice", Name: "bot", Game: "tanks", Kit: "go"}, DraftSave{Files: map[string]string{"a": "b"}}, lim); !errors.Is(err, ErrDraftName) || !errs.IsConflict(err) {
		t.Errorf("a second draft of the name: %v", err)
	}
	// Bob's of the same name is his own.
	if _, err := s.CreateDraft(ctx, Draft{Owner: "bob", Name: "bot", Game: "tanks", Kit: "go", CreatedAt: t0}, DraftSave{Main: "main.go", Files: map[string]string{"main.go": "package main"}, SavedAt: t0}, lim); err != nil {
		t.Fatal(err)
	}
	for v := int64(1); v <= 4; v++ {
		files := map[string]string{"bot.py": fmt.Sprintf("print(%d)", v+1)}
		got, err := s.SaveDraft(ctx, d.ID, v, DraftSave{Main: "bot.py", Files: files, SavedBy: "carol", SavedAt: t0.Add(time.Duration(v) * time.Minute)}, lim)
		if err != nil || got.Version != v+1 || got.UpdatedBy != "carol" || got.Size != weight(files) {
			t.Fatalf("save on %d: %+v %v", v, got, err)
		}
	}
	// A stale base: refused, the draft as it is given back.
	cur, err := s.SaveDraft(ctx, d.ID, 3, DraftSave{Main: "bot.py", Files: map[string]string{"bot.py": "lost?"}}, lim)
	if !errors.Is(err, ErrDraftStale) || !errs.IsConflict(err) || cur.Version != 5 || cur.UpdatedBy != "carol" || !cur.UpdatedAt.Equal(t0.Add(4*time.Minute)) {
		t.Errorf("a stale base: %+v %v", cur, err)
	}
	got, files, saves, err := s.DraftWhole(ctx, d.ID)
	if err != nil || got.Version != 5 || files["bot.py"] != "print(5)" || len(files) != 1 {
		t.Fatalf("the draft: %+v %v %v", got, files, err)
	}
	var versions []int64
	for _, v := range saves {
		versions = append(versions, v.Version)
		if v.Files != nil {
			t.Errorf("a save listed with its files: %+v", v)
		}
	}
	if fmt.Sprint(versions) != "[5 4 3]" {
		t.Errorf("saves kept: %v, want the last 3, newest first", versions)
	}
	if v, err := s.DraftSaveOf(ctx, d.ID, 3); err != nil || v.Files["bot.py"] != "print(3)" || v.SavedBy != "carol" {
		t.Errorf("version 3: %+v %v", v, err)
	}
	if _, err := s.DraftSaveOf(ctx, d.ID, 2); !errors.Is(err, ErrNoDraft) || !errs.IsNotFound(err) {
		t.Errorf("a save dropped: %v", err)
	}
	list, err := s.Drafts(ctx, "alice", "red")
	if err != nil || len(list) != 1 || list[0].Name != "bot" || list[0].Owner != "alice" {
		t.Errorf("alice's drafts: %+v %v", list, err)
	}
	if all, _ := s.Drafts(ctx); len(all) != 2 || all[0].Owner != "alice" {
		t.Errorf("every draft, the last saved first: %+v", all)
	}
	u, err := s.RegistryUsage(ctx, "alice")
	if err != nil || u.Drafts != 3*weight(map[string]string{"bot.py": "print(5)"}) || u.Bytes != u.Drafts {
		t.Errorf("alice's usage: %+v %v", u, err)
	}
	// Renamed: not onto another of hers.
	if _, err := s.CreateDraft(ctx, Draft{Owner: "alice", Name: "other", Game: "tanks", Kit: "python"}, DraftSave{Files: map[string]string{"a": ""}}, lim); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RenameDraft(ctx, d.ID, "other"); !errors.Is(err, ErrDraftName) {
		t.Errorf("renamed onto another: %v", err)
	}
	if r, err := s.RenameDraft(ctx, d.ID, "tank"); err != nil || r.Name != "tank" || r.Version != 5 {
		t.Errorf("rename: %+v %v", r, err)
	}
	if err := s.DeleteDraft(ctx, d.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.DraftOf(ctx, d.ID); !errors.Is(err, ErrNoDraft) {
		t.Errorf("a deleted draft: %v", err)
	}
	if err := s.DeleteDraft(ctx, d.ID); !errors.Is(err, ErrNoDraft) {
		t.Errorf("deleted twice: %v", err)
	}
	var left int
	s.db.QueryRow(`SELECT COUNT(*) FROM draft_saves WHERE draft_id = ?`, d.ID).Scan(&left)
	if u, _ := s.RegistryUsage(ctx, "alice"); left != 0 || u.Drafts != weight(map[string]string{"a": ""}) {
		t.Errorf("a deleted draft's saves: %d left, usage %+v", left, u)
	}
}

// A save is one transaction: when it fails part way (here, dropping the
// saves past the history, after the new one is written and the draft's
// row moved on), nothing of it stays: the draft's version, files and
// saves are those of before, and the next save on that base succeeds.
func TestADraftSaveIsWholeOrAbsent(t *testing.T) {
	s := openDrafts(t)
	ctx := t.Context()
	lim := DraftLimits{History: 2}
	d, err := s.CreateDraft(ctx, Draft{Owner: "alice", Name: "bot", Game: "tanks", Kit: "python"}, DraftSave{Main: "bot.py", Files: map[string]string{"bot.py": "v1"}}, lim)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.SaveDraft(ctx, d.ID, 1, DraftSave{Main: "bot.py", Files: map[string]string{"bot.py": "v2"}}, lim); err != nil {
		t.Fatal(err)
	}
	before, files, saves, _ := s.DraftWhole(ctx, d.ID)
	if _, err := s.db.Exec(`CREATE TRIGGER the_disk_fails BEFORE DELETE ON draft_saves BEGIN SELECT RAISE(ABORT, 'the disk failed'); END`); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SaveDraft(ctx, d.ID, 2, DraftSave{Main: "bot.py", Files: map[string]string{"bot.py": "v3", "half.py": "x"}}, lim); err == nil || !strings.Contains(err.Error(), "the disk failed") {
		t.Fatalf("the failed save: %v", err)
	}
	after, filesAfter, savesAfter, err := s.DraftWhole(ctx, d.ID)
	if err != nil || after != before || !maps.Equal(files, filesAfter) || fmt.Sprint(saves) != fmt.Sprint(savesAfter) {
		t.Errorf("after a failed save:\n%+v %v %+v\nwant\n%+v %v %+v (%v)", after, filesAfter, savesAfter, before, files, saves, err)
	}
	if _, err := s.db.Exec(`DROP TRIGGER the_disk_fails`); err != nil {
		t.Fatal(err)
	}
	if got, err := s.SaveDraft(ctx, d.ID, 2, DraftSave{Main: "bot.py", Files: map[string]string{"bot.py": "v3"}}, lim); err != nil || got.Version != 3 {
		t.Errorf("the save again: %+v %v", got, err)
	}
}

// The quota counts the registry's images and the drafts' saves (as
// stored: their files' names too) together, in the transaction that
// saves: a save or a draft that would take the owner past it is refused
// (denied), counting what the save drops from the history.
func TestDraftsCountAgainstTheQuota(t *testing.T) {
	s := openDrafts(t)
	ctx := t.Context()
	if err := s.RecordTag(ctx, Tag{Repository: "alice/bot", Tag: "v1", Owner: "alice", Digest: "sha256:1", ImageID: "sha256:c1", Size: 60, PushedBy: "alice", PushedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	text := func(c string, n int) map[string]string { return map[string]string{"bot.py": strings.Repeat(c, n)} }
	// A name, its text and JSON's quotes: 13 bytes and the text.
	if w := weight(text("x", 30)); w != 43 {
		t.Fatalf("30 bytes of text weigh %d kept", w)
	}
	lim := DraftLimits{History: 1, MaxBytes: 160}
	d, err := s.CreateDraft(ctx, Draft{Owner: "alice", Name: "bot", Game: "tanks", Kit: "python"}, DraftSave{Files: text("x", 30)}, lim)
	if err != nil {
		t.Fatal(err)
	}
	// 60 and 43 held, 57 left: 45 bytes of text weigh 58 kept.
	if _, err := s.CreateDraft(ctx, Draft{Owner: "alice", Name: "big", Game: "tanks", Kit: "python"}, DraftSave{Files: text("x", 45)}, lim); !errs.IsDenied(err) {
		t.Errorf("a draft past the quota: %v", err)
	}
	// One save kept: 87 bytes drop 43, 60+87 = 147 of 160 held.
	if _, err := s.SaveDraft(ctx, d.ID, 1, DraftSave{Files: text("y", 74)}, lim); err != nil {
		t.Fatal(err)
	}
	var qe *QuotaError
	if _, err := s.SaveDraft(ctx, d.ID, 2, DraftSave{Files: text("z", 88)}, lim); !errors.As(err, &qe) || !errs.IsDenied(err) ||
		qe.Bytes != 147 || qe.Drafts != 87 || qe.Adding != 14 || qe.Max != 160 {
		t.Errorf("a save past the quota: %v %+v", err, qe)
	}
	lim.History = 2
	if _, err := s.SaveDraft(ctx, d.ID, 2, DraftSave{Files: text("s", 1)}, lim); !errs.IsDenied(err) {
		t.Errorf("a save kept beside the last past the quota: %v", err)
	}
	if u, _ := s.RegistryUsage(ctx, "alice"); u.Bytes != 147 || u.Drafts != 87 {
		t.Errorf("usage after refused saves: %+v", u)
	}
}
