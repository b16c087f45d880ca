// Package backup copies a data folder while its server runs, and
// restores the copy into an empty one.
//
// A backup is a folder: a consistent snapshot of the database (SQLite's
// VACUUM INTO), the replays that snapshot names, the registry's blobs
// (when they are on this disk), the NATS trust material and the logic
// games' player pages, and manifest.json, written last, with each file's
// size and SHA-256. Restore checks every file against the manifest.
package backup

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"arena/store"
)

// Format names the backup's layout.
const Format = "arena-backup/1"

// Folders are the data folder's parts a backup keeps beside the database
// and the replays: the registry's blobs, the NATS trust material (the
// operator's keys: workers keep joining with their tokens) and the logic
// games' player pages. The rest (the NATS queue's store, the spool,
// build caches) is remade by a server that starts.
var Folders = []string{"registry", "nats-trust", "players"}

// Manifest describes a backup.
type Manifest struct {
	Format    string    `json:"format"`
	CreatedAt time.Time `json:"created_at"`
	// From is the data folder it was taken of.
	From string `json:"from"`
	// Schema is the database's schema version.
	Schema int `json:"schema"`
	// Matches and Replays count the matches in the database and the
	// replays kept; Missing are the replays the database named that were
	// gone by the time they were copied (expired meanwhile): the copy
	// marks them expired.
	Matches int      `json:"matches"`
	Replays int      `json:"replays"`
	Missing []string `json:"missing_replays,omitempty"`
	// Registry says where the registry's blobs are: "folder" (in the
	// backup), "none", or "storage": an object store (ARENA_REGISTRY_STORAGE),
	// which the operator backs up with the store itself.
	Registry string `json:"registry"`
	Files    []File `json:"files"`
}

// File is one file of a backup.
type File struct {
	Path   string `json:"path"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// Options say what Take copies.
type Options struct {
	// RegistryElsewhere: the registry's blobs are in an object store,
	// not in the data folder's registry/.
	RegistryElsewhere bool
	Now               func() time.Time
}

// Take backs up the data folder data into dest, which must not exist or
// be empty. A failed backup leaves no manifest: it is not a backup.
func Take(ctx context.Context, data, dest string, o Options) (*Manifest, error) {
	if o.Now == nil {
		o.Now = time.Now
	}
	if err := emptyFolder(dest); err != nil {
		return nil, err
	}
	m := &Manifest{Format: Format, CreatedAt: o.Now().UTC(), From: data, Registry: "none"}
	// The database first: what it says is what the backup holds.
	db := filepath.Join(dest, "arena.db")
	var err error
	if m.Schema, err = store.SnapshotDatabase(ctx, data, db); err != nil {
		return nil, err
	}
	if err := copyReplays(ctx, data, dest, m); err != nil {
		return nil, err
	}
	f, err := hashFile(db, "arena.db")
	if err != nil {
		return nil, err
	}
	m.Files = append(m.Files, f)
	for _, folder := range Folders {
		if folder == "registry" && o.RegistryElsewhere {
			m.Registry = "storage"
			continue
		}
		files, err := copyTree(ctx, filepath.Join(data, folder), filepath.Join(dest, folder), folder)
		if err != nil {
			return nil, err
		}
		if folder == "registry" && len(files) > 0 {
			m.Registry = "folder"
		}
		m.Files = append(m.Files, files...)
	}
	if err := writeManifest(dest, m); err != nil {
		return nil, err
	}
	return m, nil
}

// copyReplays copies the replays the backup's database names; those gone
// meanwhile (expired) are marked so there.
func copyReplays(ctx context.Context, data, dest string, m *Manifest) error {
	st, err := store.OpenSnapshot(filepath.Join(dest, "arena.db"))
	if err != nil {
		return err
	}
	defer st.Close()
	ids, err := st.SavedReplays(ctx)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(dest, "replays"), 0o755); err != nil {
		return err
	}
	for _, id := range ids {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		copied := false
		for _, name := range store.ReplayNames(id) {
			f, err := copyFile(filepath.Join(data, "replays", name), filepath.Join(dest, "replays", name), "replays/"+name)
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err != nil {
				return err
			}
			m.Files = append(m.Files, f)
			copied = true
			break
		}
		if !copied {
			m.Missing = append(m.Missing, id)
		}
	}
	if err := st.MarkExpired(ctx, m.Missing); err != nil {
		return err
	}
	m.Replays = len(ids) - len(m.Missing)
	m.Matches, err = st.CountMatches(ctx)
	if err != nil {
		return err
	}
	return st.Close()
}

// Restore copies the backup in src into the data folder data, which must
// not exist or be empty, checking every file against the manifest. On
// any failure it removes what it restored.
func Restore(ctx context.Context, src, data string) (m *Manifest, err error) {
	raw, err := os.ReadFile(filepath.Join(src, "manifest.json"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s is not a backup: it has no manifest.json (a backup that did not finish has none)", src)
	}
	if err != nil {
		return nil, err
	}
	m = &Manifest{}
	if err := json.Unmarshal(raw, m); err != nil {
		return nil, fmt.Errorf("%s: manifest.json: %w", src, err)
	}
	if m.Format != Format {
		return nil, fmt.Errorf("%s: backup format %q, want %q", src, m.Format, Format)
	}
	if m.Schema > store.SchemaVersion() {
		return nil, fmt.Errorf("%s: its database is at schema version %d, newer than this arena's %d: restore it with a newer arena", src, m.Schema, store.SchemaVersion())
	}
	for _, f := range m.Files {
		if !filepath.IsLocal(f.Path) || filepath.ToSlash(filepath.Clean(f.Path)) != f.Path {
			return nil, fmt.Errorf("%s: manifest.json names %q, outside the backup", src, f.Path)
		}
	}
	if err := emptyFolder(data); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			clear(data)
		}
	}()
	for _, f := range m.Files {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		got, err := copyFile(filepath.Join(src, f.Path), filepath.Join(data, f.Path), f.Path)
		if err != nil {
			return nil, err
		}
		if got.Size != f.Size || got.SHA256 != f.SHA256 {
			return nil, fmt.Errorf("%s: %s is not the file the backup made (size %d, want %d; or its SHA-256 differs): the backup is damaged", src, f.Path, got.Size, f.Size)
		}
	}
	os.MkdirAll(filepath.Join(data, "replays"), 0o755)
	return m, nil
}

// emptyFolder makes dir, or checks that it is an empty folder.
func emptyFolder(dir string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return os.MkdirAll(dir, 0o755)
	}
	if err != nil {
		return err
	}
	if len(entries) > 0 {
		return fmt.Errorf("%s is not empty: give a new folder", dir)
	}
	return nil
}

// clear removes what is in dir (left itself).
func clear(dir string) {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		os.RemoveAll(filepath.Join(dir, e.Name()))
	}
}

// copyFile copies src to dst (its folders made), as name in a manifest,
// hashing it on the way; a vanished src is fs.ErrNotExist.
func copyFile(src, dst, name string) (File, error) {
	in, err := os.Open(src)
	if err != nil {
		return File{}, err
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return File{}, err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return File{}, err
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fi.Mode().Perm()|0o600)
	if err != nil {
		return File{}, err
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(out, h), in)
	if err == nil {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(dst)
		return File{}, fmt.Errorf("copy %s: %w", name, err)
	}
	return File{Path: name, Size: n, SHA256: hex.EncodeToString(h.Sum(nil))}, nil
}

// hashFile describes a file already in place.
func hashFile(path, name string) (File, error) {
	f, err := os.Open(path)
	if err != nil {
		return File{}, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return File{}, err
	}
	return File{Path: name, Size: n, SHA256: hex.EncodeToString(h.Sum(nil))}, nil
}

// copyTree copies the regular files under src (none: nothing), skipping
// those that vanish meanwhile (a registry's upload finishing, say) and
// temporary files (dot files).
func copyTree(ctx context.Context, src, dst, name string) ([]File, error) {
	var files []File
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if !d.Type().IsRegular() || strings.HasPrefix(d.Name(), ".") {
			return nil
		}
		rel, _ := filepath.Rel(src, p)
		f, err := copyFile(p, filepath.Join(dst, rel), filepath.ToSlash(filepath.Join(name, rel)))
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		files = append(files, f)
		return nil
	})
	return files, err
}

// writeManifest writes manifest.json last, atomically.
func writeManifest(dest string, m *Manifest) error {
	slices.SortFunc(m.Files, func(a, b File) int { return strings.Compare(a.Path, b.Path) })
	data, err := json.MarshalIndent(m, "", " ")
	if err != nil {
		return err
	}
	tmp := filepath.Join(dest, ".manifest.json")
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dest, "manifest.json"))
}
