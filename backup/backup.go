// Package backup copies a data folder while its server runs, and
// restores the copy into an empty one.
//
// A backup is a folder: a consistent snapshot of the database (SQLite's
// VACUUM INTO), the replays that snapshot names, the registry's blobs
// (when they are on this disk), the NATS trust material and the logic
// games' player pages, and manifest.json, written last, with each file's
// size and SHA-256. Restore checks every file against the manifest.
//
// A backup is the server user's alone: its folders 0700, its files 0600
// (it holds the sessions and the webhooks' signing secrets). Restore
// trusts nothing in the folder it is given: it opens only folders and
// regular files, never through a symlink, never waiting on a FIFO, reads
// no file past the size the manifest gives it, and stops when ctx ends.
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

	"golang.org/x/sys/unix"

	"arena/store"
)

// Format names the backup's layout.
const Format = "arena-backup/1"

// MaxManifest bounds the manifest.json Restore reads: some 400,000 files.
const MaxManifest = 64 << 20

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
	if err := os.MkdirAll(filepath.Join(dest, "replays"), 0o700); err != nil {
		return err
	}
	for _, id := range ids {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		copied := false
		for _, name := range store.ReplayNames(id) {
			f, err := copyFile(ctx, filepath.Join(data, "replays"), name, filepath.Join(dest, "replays", name), "replays/"+name)
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
// any failure it removes what it restored. src itself may be a symlink
// (the operator's); nothing in it is followed (see openInside). The data
// folder is made 0700, its files 0600.
func Restore(ctx context.Context, src, data string) (m *Manifest, err error) {
	m, err = readManifest(src)
	if err != nil {
		return nil, err
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
		if f.Size < 0 {
			return nil, fmt.Errorf("%s: manifest.json gives %s a size of %d", src, f.Path, f.Size)
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
		got, err := restoreFile(ctx, src, data, f)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", src, err)
		}
		if got.Size != f.Size || got.SHA256 != f.SHA256 {
			return nil, fmt.Errorf("%s: %s is not the file the backup made (size %d, want %d; or its SHA-256 differs): the backup is damaged", src, f.Path, got.Size, f.Size)
		}
	}
	if err := os.MkdirAll(filepath.Join(data, "replays"), 0o700); err != nil {
		return nil, err
	}
	return m, nil
}

// readManifest reads src's manifest.json, a regular file of at most
// MaxManifest bytes.
func readManifest(src string) (*Manifest, error) {
	f, fi, err := openInside(src, "manifest.json")
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s is not a backup: it has no manifest.json (a backup that did not finish has none)", src)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", src, err)
	}
	defer f.Close()
	if fi.Size() > MaxManifest {
		return nil, fmt.Errorf("%s: manifest.json is %d bytes, more than the %d a manifest may have: refused", src, fi.Size(), MaxManifest)
	}
	raw, err := io.ReadAll(io.LimitReader(f, MaxManifest+1))
	if err != nil {
		return nil, fmt.Errorf("%s: manifest.json: %w", src, err)
	}
	if len(raw) > MaxManifest {
		return nil, fmt.Errorf("%s: manifest.json is more than the %d bytes a manifest may have: refused", src, MaxManifest)
	}
	m := &Manifest{}
	if err := json.Unmarshal(raw, m); err != nil {
		return nil, fmt.Errorf("%s: manifest.json: %w", src, err)
	}
	return m, nil
}

// restoreFile copies the backup's file f from src into data: a regular
// file of the size the manifest gives, read no further than that.
func restoreFile(ctx context.Context, src, data string, f File) (File, error) {
	in, fi, err := openInside(src, f.Path)
	if err != nil {
		return File{}, err
	}
	defer in.Close()
	if fi.Size() > f.Size {
		return File{}, fmt.Errorf("%s is %d bytes, larger than the manifest says (%d): the backup is damaged", f.Path, fi.Size(), f.Size)
	}
	if fi.Size() != f.Size {
		return File{}, fmt.Errorf("%s is %d bytes, not the %d the manifest says: the backup is damaged", f.Path, fi.Size(), f.Size)
	}
	return copyTo(ctx, in, filepath.Join(data, filepath.FromSlash(f.Path)), f.Path, f.Size)
}

// emptyFolder makes dir, or checks that it is an empty folder; either way
// it is made 0700 (store.PrivateFolder).
func emptyFolder(dir string) error {
	fi, err := os.Stat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return store.PrivateFolder(dir)
	}
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a folder", dir)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	if len(entries) > 0 {
		return fmt.Errorf("%s is not empty: give a new folder", dir)
	}
	return store.PrivateFolder(dir)
}

// clear removes what is in dir (left itself).
func clear(dir string) {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		os.RemoveAll(filepath.Join(dir, e.Name()))
	}
}

// errNotRegular is what openInside's error wraps for anything but a
// regular file (and folders on the way): a symlink, a FIFO, a device, a
// socket. Take skips those, as its walk does; Restore refuses them.
var errNotRegular = errors.New("refused: a backup holds only folders and regular files")

// openInside opens the regular file rel (slash-separated, local) under the
// folder root, opening nothing it has not checked and following no
// symlink: each folder on the way is Lstat'ed (fstatat, no follow) and
// opened relative to the one before with O_NOFOLLOW|O_DIRECTORY, so none
// is a symlink even one swapped in after the check; the file is Lstat'ed,
// opened with O_NOFOLLOW|O_NONBLOCK (a FIFO's open does not wait for a
// writer) and Fstat'ed again: a regular file, or an error naming the path
// and what it is. root itself is followed (the operator's argument).
func openInside(root, rel string) (*os.File, fs.FileInfo, error) {
	dir, err := unix.Open(root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, nil, &fs.PathError{Op: "open", Path: root, Err: err}
	}
	parts := strings.Split(rel, "/")
	for i, part := range parts {
		at := strings.Join(parts[:i+1], "/")
		last := i == len(parts)-1
		want, flags := uint32(unix.S_IFDIR), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC
		if last {
			want, flags = unix.S_IFREG, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC
		}
		var st unix.Stat_t
		if err := unix.Fstatat(dir, part, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			unix.Close(dir)
			return nil, nil, &fs.PathError{Op: "lstat", Path: at, Err: err}
		}
		if st.Mode&unix.S_IFMT != want {
			unix.Close(dir)
			return nil, nil, fmt.Errorf("%s is %s, not %s: %w", at, kind(st.Mode), kind(want), errNotRegular)
		}
		fd, err := unix.Openat(dir, part, flags, 0)
		unix.Close(dir)
		if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) {
			return nil, nil, fmt.Errorf("%s was swapped for something other than %s: %w", at, kind(want), errNotRegular)
		}
		if err != nil {
			return nil, nil, &fs.PathError{Op: "open", Path: at, Err: err}
		}
		dir = fd
	}
	var st unix.Stat_t
	if err := unix.Fstat(dir, &st); err != nil {
		unix.Close(dir)
		return nil, nil, &fs.PathError{Op: "fstat", Path: rel, Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		unix.Close(dir)
		return nil, nil, fmt.Errorf("%s is %s, not a regular file: %w", rel, kind(st.Mode), errNotRegular)
	}
	// Reads of a regular file never wait: blocking is what os.File expects.
	if err := unix.SetNonblock(dir, false); err != nil {
		unix.Close(dir)
		return nil, nil, &fs.PathError{Op: "fcntl", Path: rel, Err: err}
	}
	f := os.NewFile(uintptr(dir), filepath.Join(root, filepath.FromSlash(rel)))
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}

// kind says what a file of mode (st_mode) is.
func kind(mode uint32) string {
	switch mode & unix.S_IFMT {
	case unix.S_IFREG:
		return "a regular file"
	case unix.S_IFDIR:
		return "a folder"
	case unix.S_IFLNK:
		return "a symlink"
	case unix.S_IFIFO:
		return "a FIFO"
	case unix.S_IFSOCK:
		return "a socket"
	case unix.S_IFCHR:
		return "a character device"
	case unix.S_IFBLK:
		return "a block device"
	}
	return fmt.Sprintf("of type %#o", mode&unix.S_IFMT)
}

// copyFile copies the regular file rel under the folder root to dst (see
// openInside; its folders made), as name in a manifest, hashing it on the
// way; a vanished file is fs.ErrNotExist, anything but a regular file
// errNotRegular.
func copyFile(ctx context.Context, root, rel, dst, name string) (File, error) {
	in, _, err := openInside(root, rel)
	if err != nil {
		return File{}, err
	}
	defer in.Close()
	return copyTo(ctx, in, dst, name, -1)
}

// copyTo copies in to dst, a new file of mode 0600 (its folders made,
// 0700), as name in a manifest, hashing it on the way. It reads no more
// than limit bytes (none when negative): one more is an error. It stops
// when ctx ends. On error dst is removed.
func copyTo(ctx context.Context, in io.Reader, dst, name string, limit int64) (File, error) {
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		return File{}, err
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL|unix.O_NOFOLLOW, 0o600)
	if err != nil {
		return File{}, err
	}
	r := io.Reader(ctxReader{ctx, in})
	if limit >= 0 {
		r = io.LimitReader(r, limit+1)
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(out, h), r)
	if err == nil && limit >= 0 && n > limit {
		err = fmt.Errorf("larger than the manifest says (%d bytes): the backup is damaged", limit)
	}
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

// ctxReader stops reading once its context ends (SIGINT, SIGTERM).
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
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
// those that vanish meanwhile (a registry's upload finishing, say),
// temporary files (dot files) and anything else than folders and regular
// files (the walk follows no symlink; a file is opened by openInside, so
// one swapped for a symlink or a FIFO after the walk is skipped too).
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
		f, err := copyFile(ctx, src, filepath.ToSlash(rel), filepath.Join(dst, rel), filepath.ToSlash(filepath.Join(name, rel)))
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, errNotRegular) {
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
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dest, "manifest.json"))
}
