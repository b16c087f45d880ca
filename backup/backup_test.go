package backup

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"arena/store"
)

// A backup taken while the data folder is in use (its store open, its
// lock held, writes going on) restores into an empty folder with every
// match, replay and registry file; a replay gone before it was copied is
// marked expired in the copy; a damaged backup is refused and leaves
// nothing behind.
func TestTakeAndRestore(t *testing.T) {
	ctx := t.Context()
	data := t.TempDir()
	st, err := store.Open(data, "arena serve (test)")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ids := []string{"aaaaaaaaaaa1", "aaaaaaaaaaa2", "aaaaaaaaaaa3"}
	for i, id := range ids {
		if err := st.Insert(ctx, store.Match{ID: id, Status: "queued", Game: "tanks", Map: "classic", CreatedAt: time.Now(), Kind: "ladder"}); err != nil {
			t.Fatal(err)
		}
		replay := []byte(`{"format":"arena-replay/2","match_id":"` + id + `","frames":[]}`)
		if err := st.Finish(ctx, id, store.Outcome{Status: "finished", Result: json.RawMessage(`{"turns":` + string(rune('1'+i)) + `}`), Replay: replay}, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	// The first replay as an earlier release wrote it; the third gone
	// (expired between the database's copy and the replays').
	os.Rename(st.ReplayPath(ids[0]), filepath.Join(data, "replays", ids[0]+".json"))
	os.Remove(st.ReplayPath(ids[2]))
	for name, content := range map[string]string{"registry/docker/registry/v2/blobs/sha256/ab/abcd/data": "a blob", "nats-trust/operator.nk": "a key", "builds/cache/x": "not kept"} {
		p := filepath.Join(data, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(content), 0o600)
	}

	dest := filepath.Join(t.TempDir(), "b")
	m, err := Take(ctx, data, dest, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// The server goes on meanwhile.
	if err := st.Insert(ctx, store.Match{ID: "bbbbbbbbbbb1", Status: "queued", Game: "tanks", Map: "classic", CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if m.Matches != 3 || m.Replays != 2 || len(m.Missing) != 1 || m.Missing[0] != ids[2] || m.Registry != "folder" || m.Schema != store.SchemaVersion() {
		t.Errorf("manifest: %+v", m)
	}
	if _, err := os.Stat(filepath.Join(dest, "builds")); !os.IsNotExist(err) {
		t.Errorf("the build caches were copied: %v", err)
	}
	if _, err := Take(ctx, data, dest, Options{}); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Errorf("a backup into a used folder: %v", err)
	}

	restored := filepath.Join(t.TempDir(), "data")
	if _, err := Restore(ctx, dest, restored); err != nil {
		t.Fatal(err)
	}
	got, err := store.Open(restored, "test")
	if err != nil {
		t.Fatal(err)
	}
	defer got.Close()
	all, _, _ := got.List(ctx, store.Filter{}, 0, 10)
	if len(all) != 3 {
		t.Errorf("%d matches restored, want 3", len(all))
	}
	for _, id := range ids[:2] {
		f, err := got.OpenReplay(id)
		if err != nil {
			t.Errorf("the replay of %s: %v", id, err)
			continue
		}
		b, _ := io.ReadAll(f)
		f.Close()
		if !strings.Contains(string(b), id) {
			t.Errorf("the replay of %s: %s", id, b)
		}
	}
	if m, _ := got.Get(ctx, ids[2]); !m.ReplayExpired || m.HasReplay || string(m.Result) != `{"turns":3}` {
		t.Errorf("the match whose replay was gone: %+v", m)
	}
	if b, _ := os.ReadFile(filepath.Join(restored, "registry/docker/registry/v2/blobs/sha256/ab/abcd/data")); string(b) != "a blob" {
		t.Errorf("the registry's blob: %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(restored, "nats-trust/operator.nk")); string(b) != "a key" {
		t.Errorf("the trust material: %q", b)
	}

	// Restoring over a data folder in use is refused.
	if _, err := Restore(ctx, dest, data); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Errorf("a restore over a used folder: %v", err)
	}
	// A damaged file is found, and nothing is left.
	os.WriteFile(filepath.Join(dest, "nats-trust/operator.nk"), []byte("a forged key"), 0o600)
	again := filepath.Join(t.TempDir(), "again")
	if _, err := Restore(ctx, dest, again); err == nil || !strings.Contains(err.Error(), "damaged") {
		t.Errorf("a damaged backup: %v", err)
	}
	if left, _ := os.ReadDir(again); len(left) > 0 {
		t.Errorf("a failed restore left %d entries", len(left))
	}
	// A manifest naming a file outside the backup is refused.
	var forged Manifest
	raw, _ := os.ReadFile(filepath.Join(dest, "manifest.json"))
	json.Unmarshal(raw, &forged)
	forged.Files = append(forged.Files, File{Path: "../../etc/passwd"})
	raw, _ = json.Marshal(forged)
	os.WriteFile(filepath.Join(dest, "manifest.json"), raw, 0o644)
	if _, err := Restore(ctx, dest, filepath.Join(t.TempDir(), "x")); err == nil || !strings.Contains(err.Error(), "outside the backup") {
		t.Errorf("a manifest naming ../../etc/passwd: %v", err)
	}
	// Without a manifest it is no backup.
	os.Remove(filepath.Join(dest, "manifest.json"))
	if _, err := Restore(ctx, dest, filepath.Join(t.TempDir(), "y")); err == nil || !strings.Contains(err.Error(), "no manifest.json") {
		t.Errorf("a backup without its manifest: %v", err)
	}
}
