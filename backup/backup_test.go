package backup

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

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

// forged writes a backup by hand into a new folder: a manifest listing
// entries (path → content) with their sizes and SHA-256, and no file: the
// test puts them, or what an attacker would put instead.
func forged(t *testing.T, entries map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	m := Manifest{Format: Format, Schema: store.SchemaVersion(), Registry: "none"}
	for p, content := range entries {
		sum := sha256.Sum256([]byte(content))
		m.Files = append(m.Files, File{Path: p, Size: int64(len(content)), SHA256: hex.EncodeToString(sum[:])})
	}
	if err := writeManifest(dir, &m); err != nil {
		t.Fatal(err)
	}
	return dir
}

// put writes a regular file into a forged backup.
func put(t *testing.T, dir, rel, content string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// restoreWithin runs Restore with a deadline and fails the test if it has
// not returned a few seconds after it (a restore that hangs on a FIFO).
func restoreWithin(t *testing.T, src, data string) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := Restore(ctx, src, data)
		done <- err
	}()
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		t.Fatalf("the restore of %s still runs after 10 s", src)
		return nil
	}
}

// A crafted backup cannot make restore read outside it, wait on a FIFO or
// read without end: a replays folder that is a symlink to a folder
// outside (the attack copied /etc/hostname), a listed file that is a
// symlink to a file outside, a FIFO in place of a listed file, a symlink
// to /dev/zero, a file larger than its manifest entry and a manifest
// larger than a manifest may be are each refused, naming the path and
// what it is, promptly, and leave the data folder empty. The same backup
// with regular files restores.
func TestRestoreRefusesWhatIsNotARegularFile(t *testing.T) {
	outside := t.TempDir()
	secret := "the host's name\n"
	put(t, outside, "hostname", secret)

	cases := []struct {
		name    string
		entries map[string]string
		plant   func(t *testing.T, backup string)
		want    string
	}{
		{"regular files (the control)", map[string]string{"arena.db": "a database", "replays/hostname": secret},
			func(t *testing.T, b string) { put(t, b, "replays/hostname", secret) }, ""},
		{"(a) replays a symlink to a folder outside", map[string]string{"arena.db": "a database", "replays/hostname": secret},
			func(t *testing.T, b string) { symlink(t, outside, filepath.Join(b, "replays")) }, "replays is a symlink, not a folder"},
		{"(b) a listed file a symlink to a file outside", map[string]string{"arena.db": "a database", "nats-trust/operator.nk": secret},
			func(t *testing.T, b string) {
				os.Mkdir(filepath.Join(b, "nats-trust"), 0o700)
				symlink(t, filepath.Join(outside, "hostname"), filepath.Join(b, "nats-trust/operator.nk"))
			}, "nats-trust/operator.nk is a symlink, not a regular file"},
		{"(c) a FIFO in place of a listed file", map[string]string{"arena.db": "a database", "replays/aaaaaaaaaaa1.json.zst": "a replay"},
			func(t *testing.T, b string) {
				os.Mkdir(filepath.Join(b, "replays"), 0o700)
				if err := unix.Mkfifo(filepath.Join(b, "replays/aaaaaaaaaaa1.json.zst"), 0o600); err != nil {
					t.Fatal(err)
				}
			}, "replays/aaaaaaaaaaa1.json.zst is a FIFO, not a regular file"},
		{"(d) a symlink to /dev/zero", map[string]string{"arena.db": "a database", "replays/aaaaaaaaaaa1.json.zst": "a replay"},
			func(t *testing.T, b string) {
				os.Mkdir(filepath.Join(b, "replays"), 0o700)
				symlink(t, "/dev/zero", filepath.Join(b, "replays/aaaaaaaaaaa1.json.zst"))
			}, "replays/aaaaaaaaaaa1.json.zst is a symlink, not a regular file"},
		{"(e) a file larger than its manifest entry", map[string]string{"arena.db": "a database", "replays/aaaaaaaaaaa1.json.zst": "a replay"},
			func(t *testing.T, b string) {
				put(t, b, "replays/aaaaaaaaaaa1.json.zst", "a replay, and much more besides")
			},
			"replays/aaaaaaaaaaa1.json.zst is 31 bytes, larger than the manifest says (8)"},
		{"a manifest too large", map[string]string{"arena.db": "a database"},
			func(t *testing.T, b string) {
				if err := os.Truncate(filepath.Join(b, "manifest.json"), MaxManifest+1); err != nil {
					t.Fatal(err)
				}
			}, "more than the 67108864 a manifest may have"},
		{"a manifest that is a FIFO", map[string]string{"arena.db": "a database"},
			func(t *testing.T, b string) {
				os.Remove(filepath.Join(b, "manifest.json"))
				if err := unix.Mkfifo(filepath.Join(b, "manifest.json"), 0o600); err != nil {
					t.Fatal(err)
				}
			}, "manifest.json is a FIFO, not a regular file"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := forged(t, c.entries)
			if c.entries["arena.db"] != "" {
				put(t, b, "arena.db", c.entries["arena.db"])
			}
			c.plant(t, b)
			data := filepath.Join(t.TempDir(), "data")
			err := restoreWithin(t, b, data)
			if c.want == "" {
				if err != nil {
					t.Fatalf("a backup of regular files: %v", err)
				}
				if got, _ := os.ReadFile(filepath.Join(data, "replays/hostname")); string(got) != secret {
					t.Errorf("restored: %q", got)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want an error saying %q", err, c.want)
			}
			if left, _ := os.ReadDir(data); len(left) > 0 {
				t.Errorf("a refused restore left %d entries in the data folder", len(left))
			}
		})
	}
	if got, _ := os.ReadFile(filepath.Join(outside, "hostname")); string(got) != secret {
		t.Errorf("the file outside: %q", got)
	}
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// A copy stops when its context ends (SIGINT, SIGTERM: cmd/arena's
// context), even amid a file that does not end.
func TestACopyStopsWhenItsContextEnds(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	endless := readerFunc(func(p []byte) (int, error) {
		cancel()
		return len(p), nil
	})
	dst := filepath.Join(t.TempDir(), "f")
	if _, err := copyTo(ctx, endless, dst, "f", -1); !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want the context's end", err)
	}
	if _, err := os.Stat(dst); !os.IsNotExist(err) {
		t.Errorf("the half copy is left: %v", err)
	}
}

type readerFunc func([]byte) (int, error)

func (f readerFunc) Read(p []byte) (int, error) { return f(p) }

// A backup and a restored data folder are the server user's alone,
// whatever the umask: folders 0700, files 0600 (the data folder's own
// files as an earlier release left them 0644 included).
func TestBackupsArePrivate(t *testing.T) {
	old := unix.Umask(0)
	t.Cleanup(func() { unix.Umask(old) })
	ctx := t.Context()
	data := t.TempDir()
	st, err := store.Open(data, "arena serve (test)")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	id := "aaaaaaaaaaa1"
	if err := st.Insert(ctx, store.Match{ID: id, Status: "queued", Game: "tanks", Map: "classic", CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if err := st.Finish(ctx, id, store.Outcome{Status: "finished", Result: json.RawMessage(`{}`), Replay: []byte(`{"match_id":"` + id + `"}`)}, time.Now()); err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string]string{"registry/docker/registry/v2/blobs/sha256/ab/abcd/data": "a blob", "nats-trust/operator.nk": "a key", "players/ttt/index.html": "a page"} {
		p := filepath.Join(data, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(content), 0o644)
	}
	private := func(root string) {
		t.Helper()
		n := 0
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				t.Error(err)
				return nil
			}
			fi, _ := d.Info()
			want := os.FileMode(0o600)
			if d.IsDir() {
				want = 0o700
			} else {
				n++
			}
			if fi.Mode().Perm() != want {
				rel, _ := filepath.Rel(root, p)
				t.Errorf("%s: mode %04o, want %04o", rel, fi.Mode().Perm(), want)
			}
			return nil
		})
		if n < 5 {
			t.Errorf("%d files in %s", n, root)
		}
	}
	dest := filepath.Join(t.TempDir(), "b")
	if _, err := Take(ctx, data, dest, Options{}); err != nil {
		t.Fatal(err)
	}
	private(dest)
	restored := filepath.Join(t.TempDir(), "data")
	if _, err := Restore(ctx, dest, restored); err != nil {
		t.Fatal(err)
	}
	private(restored)
	// An empty folder given for one is made so too.
	empty := t.TempDir()
	os.Chmod(empty, 0o755)
	if _, err := Restore(ctx, dest, empty); err != nil {
		t.Fatal(err)
	}
	private(empty)
}
