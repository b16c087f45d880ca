package store

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Replays are saved compressed and read back as JSON; the replays of the
// kinds that expire go after their time, their rows staying; the others
// stay whatever their age.
func TestReplaysAreCompressedAndExpire(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, "test")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := t.Context()
	old := time.Now().Add(-40 * 24 * time.Hour)
	replay := []byte(`{"format":"arena-replay/2","frames":[]}`)
	for _, m := range []struct {
		id, kind string
		at       time.Time
	}{
		{"ladderold000", "ladder", old}, {"laddernew000", "ladder", time.Now()}, {"checkold0000", "check", old},
		{"handold00000", "hand", old}, {"contestold00", "contest", old}, {"challengeold", "challenge", old},
	} {
		if err := s.Insert(ctx, Match{ID: m.id, Status: "queued", Game: "tanks", Map: "classic", CreatedAt: m.at, Kind: m.kind}); err != nil {
			t.Fatal(err)
		}
		if err := s.Finish(ctx, m.id, Outcome{Status: "finished", Result: json.RawMessage(`{"turns":3}`), Replay: replay}, m.at); err != nil {
			t.Fatal(err)
		}
	}
	// Saved compressed; read back as written.
	if b, err := os.ReadFile(s.ReplayPath("handold00000")); err != nil || string(b[:4]) != "\x28\xb5\x2f\xfd" {
		t.Fatalf("the replay on disk: %q %v", b, err)
	}
	f, err := s.OpenReplay("handold00000")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(f)
	f.Close()
	if string(b) != string(replay) {
		t.Errorf("read back %q", b)
	}
	// A replay an earlier release wrote, plain, is found too.
	os.Remove(s.ReplayPath("ladderold000"))
	os.WriteFile(filepath.Join(dir, "replays", "ladderold000.json"), replay, 0o644)
	before, _ := s.Usage()

	n, freed, err := s.ExpireReplays(ctx, []string{"ladder", "check", "practice", "challenge"}, time.Now().Add(-30*24*time.Hour), 2)
	if err != nil || n != 2 || freed == 0 {
		t.Fatalf("the first batch: %d removed, %d bytes, %v", n, freed, err)
	}
	n, _, err = s.ExpireReplays(ctx, []string{"ladder", "check", "practice", "challenge"}, time.Now().Add(-30*24*time.Hour), 2)
	if err != nil || n != 1 {
		t.Fatalf("the second batch: %d removed, %v", n, err)
	}
	for id, expired := range map[string]bool{"ladderold000": true, "checkold0000": true, "challengeold": true, "laddernew000": false, "handold00000": false, "contestold00": false} {
		m, err := s.Get(ctx, id)
		if err != nil || m.ReplayExpired != expired || m.HasReplay == expired || string(m.Result) != `{"turns":3}` {
			t.Errorf("%s: expired %v, has %v, result %s (%v); want expired %v", id, m.ReplayExpired, m.HasReplay, m.Result, err, expired)
		}
		_, err = s.ReplayFile(id)
		if gone := os.IsNotExist(err) || err != nil; gone != expired {
			t.Errorf("%s: its file: %v", id, err)
		}
	}
	after, _ := s.Usage()
	if after.Files != before.Files-3 || after.Replays >= before.Replays || after.Database == 0 {
		t.Errorf("usage before %+v, after %+v", before, after)
	}
}
