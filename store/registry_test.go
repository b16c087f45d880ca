package store

import (
	"testing"
	"time"
)

// A pushed version is pending until its check decides; a verdict lands
// only on the digest it checked; pushing the same image again keeps the
// verdict, another image starts over.
func TestTagChecks(t *testing.T) {
	s, err := Open(t.TempDir(), "test")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := t.Context()
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	v1 := Tag{Repository: "alice/bot", Tag: "latest", Owner: "alice", Digest: "sha256:1", ImageID: "sha256:c1", Size: 10, Game: "tanks", PushedBy: "alice", PushedAt: t0}
	if err := s.RecordTag(ctx, v1); err != nil {
		t.Fatal(err)
	}
	one := func() Tag {
		t.Helper()
		tags, err := s.Tags(ctx, "alice")
		if err != nil || len(tags) != 1 {
			t.Fatalf("tags: %+v %v", tags, err)
		}
		return tags[0]
	}
	if got := one(); got.State != TagPending || got.CheckMatch != "" {
		t.Fatalf("a new push: %+v", got)
	}
	if got, ok, err := s.TagOf(ctx, "alice/bot", "latest"); !ok || err != nil || got.Digest != "sha256:1" {
		t.Errorf("TagOf: %+v %v %v", got, ok, err)
	}
	if _, ok, err := s.TagOf(ctx, "alice/bot", "v9"); ok || err != nil {
		t.Errorf("TagOf a tag never pushed: %v %v", ok, err)
	}
	if got, err := s.TagsOfImage(ctx, "sha256:c1"); err != nil || len(got) != 1 || got[0].Digest != "sha256:1" {
		t.Errorf("TagsOfImage: %+v %v", got, err)
	}
	if got, err := s.TagsOfImage(ctx, "sha256:c9"); err != nil || len(got) != 0 {
		t.Errorf("TagsOfImage of an image never pushed: %+v %v", got, err)
	}
	if pending, _ := s.PendingTags(ctx); len(pending) != 1 {
		t.Errorf("pending: %+v", pending)
	}
	// A verdict for another digest (an older push) changes nothing.
	if ok, err := s.CheckTag(ctx, "alice/bot", "latest", "sha256:0", Tag{State: TagReady, CheckedAt: t0}); ok || err != nil {
		t.Errorf("a verdict for another digest: %v %v", ok, err)
	}
	if ok, err := s.CheckTag(ctx, "alice/bot", "latest", "sha256:1", Tag{State: TagRejected, CheckMatch: "m1", Reason: "crashed at turn 1", Stderr: "panic", CheckedAt: t0.Add(time.Second)}); !ok || err != nil {
		t.Fatalf("the verdict: %v %v", ok, err)
	}
	if got := one(); got.State != TagRejected || got.CheckMatch != "m1" || got.Reason != "crashed at turn 1" || got.Stderr != "panic" || !got.CheckedAt.Equal(t0.Add(time.Second)) {
		t.Errorf("after the verdict: %+v", got)
	}
	if pending, _ := s.PendingTags(ctx); len(pending) != 0 {
		t.Errorf("pending after the verdict: %+v", pending)
	}
	// The same image pushed again keeps its verdict.
	v1.PushedAt = t0.Add(time.Minute)
	if err := s.RecordTag(ctx, v1); err != nil {
		t.Fatal(err)
	}
	if got := one(); got.State != TagRejected || !got.PushedAt.Equal(v1.PushedAt) {
		t.Errorf("the same image pushed again: %+v", got)
	}
	// Another image under the tag starts over.
	v2 := v1
	v2.Digest, v2.PushedAt = "sha256:2", t0.Add(2*time.Minute)
	if err := s.RecordTag(ctx, v2); err != nil {
		t.Fatal(err)
	}
	if got := one(); got.State != TagPending || got.Digest != "sha256:2" || got.Reason != "" || got.Stderr != "" || got.CheckMatch != "" || !got.CheckedAt.IsZero() {
		t.Errorf("another image under the tag: %+v", got)
	}
}
