// Package sourcebuild turns a bot's source, uploaded as a folder's archive,
// into a bot image: the starter kit's fixed build steps run in the same
// sandbox as a match (no network, limits of their own), and the image is
// assembled from their output with go-containerregistry, never by the
// engine running the uploader's Dockerfile.
//
//   - archive.go: reading an upload (zip or tar.gz), and what is refused.
//   - kits.go: the kits' recipes (Go, Python, C++, JavaScript).
//   - build.go: the build in the sandbox and the image's assembly.
package sourcebuild

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"path"
	"sort"
	"strings"

	"arena/internal/errs"
)

// Limits bound an upload.
type Limits struct {
	// Files is how many files and folders it may hold, Bytes what they
	// may weigh unpacked.
	Files int
	Bytes int64
}

// DefaultLimits are an upload's bounds: a bot's source, not its data.
var DefaultLimits = Limits{Files: 2000, Bytes: 64 << 20}

// File is one file of an upload.
type File struct {
	Name string // a clean relative path, with slashes
	Data []byte
	Exec bool // executable
}

// Source is an upload's files, by name.
type Source struct {
	Files []File
}

// Has says whether the source holds a file of that name.
func (s Source) Has(name string) bool { return s.file(name) != nil }

func (s Source) file(name string) *File {
	for i := range s.Files {
		if s.Files[i].Name == name {
			return &s.Files[i]
		}
	}
	return nil
}

// Any says whether a file's name matches a pattern (path.Match).
func (s Source) Any(pattern string) bool {
	for _, f := range s.Files {
		if ok, _ := path.Match(pattern, f.Name); ok {
			return true
		}
	}
	return false
}

// under says whether the source holds a file in that folder, at any
// depth.
func (s Source) under(dir string) bool {
	for _, f := range s.Files {
		if strings.HasPrefix(f.Name, dir+"/") {
			return true
		}
	}
	return false
}

// ErrArchive is the kind of every error about an upload's archive.
var ErrArchive = errs.New(errs.ErrInvalid, "the archive is refused")

// ErrFiles is the kind of every error about files given by name, not
// in an archive (Check): a draft's, written in the page.
var ErrFiles = errs.New(errs.ErrInvalid, "the files are refused")

func refuse(format string, args ...any) error {
	return refuseAs(ErrArchive, format, args...)
}

// refuseAs is an error of kind (ErrArchive or ErrFiles) saying why.
func refuseAs(kind error, format string, args ...any) error {
	return fmt.Errorf("%w: %s", kind, fmt.Sprintf(format, args...))
}

// Read reads an upload: a zip or a gzipped tar (told by their first
// bytes). Only regular files and folders are taken; a link, a device, an
// absolute path or one that climbs out (..) refuses the whole archive,
// naming the entry, as do more files or bytes than the limits. The work
// is bounded as it goes: a tar's every entry counts (its global headers
// too), and what its gzip stream unpacks to, headers and padding
// included, stops at the limit of bytes and tarRoom a file; a zip's
// entries, and what they declare, are checked before any is unpacked. A
// single folder holding everything (a folder zipped whole) is stepped
// into.
func Read(data []byte, lim Limits) (Source, error) {
	var files []File
	var err error
	switch {
	case bytes.HasPrefix(data, []byte("PK\x03\x04")), bytes.HasPrefix(data, []byte("PK\x05\x06")):
		files, err = readZip(data, lim)
	case bytes.HasPrefix(data, []byte{0x1f, 0x8b}):
		files, err = readTarGz(data, lim)
	default:
		return Source{}, refuse("not a zip or a .tar.gz archive")
	}
	if err != nil {
		return Source{}, err
	}
	if len(files) == 0 {
		return Source{}, refuse("it holds no file")
	}
	files = stepIn(files)
	sort.Slice(files, func(i, j int) bool { return files[i].Name < files[j].Name })
	return Source{Files: files}, nil
}

// entry checks one entry's name; "" for a folder's or the root's own.
func entry(name string) (string, error) { return entryAs(ErrArchive, name) }

// entryAs is entry, its errors of kind.
func entryAs(kind error, name string) (string, error) {
	if strings.ContainsRune(name, 0) || strings.Contains(name, `\`) {
		return "", refuseAs(kind, "entry %q: not a plain path", name)
	}
	if strings.HasPrefix(name, "/") {
		return "", refuseAs(kind, "entry %q: an absolute path", name)
	}
	for _, part := range strings.Split(name, "/") {
		if part == ".." {
			return "", refuseAs(kind, "entry %q: a path that climbs out of the folder (..)", name)
		}
	}
	clean := path.Clean(name)
	if clean == "." {
		return "", nil
	}
	return clean, nil
}

// counter enforces the limits as entries come.
type counter struct {
	lim   Limits
	files int
	bytes int64
	seen  map[string]bool
	// kind is its errors' (nil: ErrArchive).
	kind error
}

func (c *counter) refuse(format string, args ...any) error {
	if c.kind == nil {
		return refuse(format, args...)
	}
	return refuseAs(c.kind, format, args...)
}

func (c *counter) add(name string, size int64) error {
	if err := c.count("files and folders"); err != nil {
		return err
	}
	c.bytes += size
	if size < 0 || c.bytes > c.lim.Bytes {
		return c.refuse("more than %d bytes unpacked", c.lim.Bytes)
	}
	if c.seen == nil {
		c.seen = map[string]bool{}
	}
	if c.seen[name] {
		return c.refuse("entry %q: twice", name)
	}
	c.seen[name] = true
	return nil
}

// count counts one entry against the limit on files.
func (c *counter) count(what string) error {
	c.files++
	if c.files > c.lim.Files {
		return c.refuse("more than %d %s", c.lim.Files, what)
	}
	return nil
}

// Check checks files given by name (a draft's, written in the page) as
// Read checks an archive's entries: each name a clean relative path
// (none absolute, none that climbs out with .., no NUL or backslash),
// none twice once cleaned, none empty, none both a file and another's
// folder, and no more files or bytes than the limits. (Files given by
// name are regular files: there is no link to refuse.) It returns the
// files under their clean names, sorted; its errors are of ErrFiles.
func Check(src Source, lim Limits) (Source, error) {
	if len(src.Files) == 0 {
		return Source{}, refuseAs(ErrFiles, "there is no file")
	}
	c := &counter{lim: lim, kind: ErrFiles}
	files := make([]File, 0, len(src.Files))
	for _, f := range src.Files {
		name, err := entryAs(ErrFiles, f.Name)
		if err != nil {
			return Source{}, err
		}
		if name == "" || strings.HasSuffix(f.Name, "/") {
			return Source{}, refuseAs(ErrFiles, "entry %q: a file without a name", f.Name)
		}
		if err := c.add(name, int64(len(f.Data))); err != nil {
			return Source{}, err
		}
		files = append(files, File{Name: name, Data: f.Data, Exec: f.Exec})
	}
	for _, f := range files {
		for dir := path.Dir(f.Name); dir != "."; dir = path.Dir(dir) {
			if c.seen[dir] {
				return Source{}, refuseAs(ErrFiles, "entry %q: %s is a file, not a folder", f.Name, dir)
			}
		}
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Name < files[j].Name })
	return Source{Files: files}, nil
}

// readAll reads an entry's data, at most size bytes as it declared.
func (c *counter) readAll(name string, r io.Reader, size int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, size+1))
	if errors.Is(err, ErrArchive) {
		return nil, err
	}
	if err != nil {
		return nil, refuse("entry %q: %v", name, err)
	}
	if int64(len(data)) != size {
		return nil, refuse("entry %q: not the size it declares", name)
	}
	return data, nil
}

func readZip(data []byte, lim Limits) ([]File, error) {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, refuse("not a zip archive: %v", err)
	}
	// Before anything is unpacked: not more entries than files, not more
	// bytes than the limit as they declare them (an entry is then read up
	// to its declared size, no further), and no packed data read twice
	// (entries that share it would make each unpack it all).
	if len(zr.File) > lim.Files {
		return nil, refuse("more than %d files and folders", lim.Files)
	}
	var packed, unpacked uint64
	for _, f := range zr.File {
		if f.CompressedSize64 > uint64(len(data))-packed {
			return nil, refuse("entry %q: its packed data overlaps another's (more than the archive's %d bytes in all)", f.Name, len(data))
		}
		packed += f.CompressedSize64
		if f.UncompressedSize64 > uint64(lim.Bytes)-unpacked {
			return nil, refuse("more than %d bytes unpacked", lim.Bytes)
		}
		unpacked += f.UncompressedSize64
	}
	c := &counter{lim: lim}
	var files []File
	for _, f := range zr.File {
		name, err := entry(f.Name)
		if err != nil {
			return nil, err
		}
		mode := f.Mode()
		switch {
		case mode.IsDir():
			if err := c.add(name+"/", 0); err != nil {
				return nil, err
			}
			continue
		case !mode.IsRegular():
			return nil, refuse("entry %q: not a regular file or a folder (%v)", f.Name, mode.Type())
		case name == "":
			return nil, refuse("entry %q: a file without a name", f.Name)
		}
		size := int64(f.UncompressedSize64)
		if err := c.add(name, size); err != nil {
			return nil, err
		}
		rc, err := f.Open()
		if err != nil {
			return nil, refuse("entry %q: %v", f.Name, err)
		}
		body, err := c.readAll(f.Name, rc, size)
		rc.Close()
		if err != nil {
			return nil, err
		}
		files = append(files, File{Name: name, Data: body, Exec: mode&0o111 != 0})
	}
	return files, nil
}

func readTarGz(data []byte, lim Limits) ([]File, error) {
	gz, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, refuse("not a gzip stream: %v", err)
	}
	max := lim.Bytes + int64(lim.Files+1)*tarRoom
	tr := tar.NewReader(&capped{r: gz, left: max,
		err: refuse("more than %d bytes unpacked, tar's own records included (%d of files, %d for tar's headers and padding)", max, lim.Bytes, max-lim.Bytes)})
	c := &counter{lim: lim}
	var files []File
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files, nil
		}
		if errors.Is(err, ErrArchive) {
			return nil, err
		}
		if err != nil {
			return nil, refuse("not a tar archive: %v", err)
		}
		name, err := entry(h.Name)
		if err != nil {
			return nil, err
		}
		switch h.Typeflag {
		case tar.TypeDir:
			if err := c.add(name+"/", 0); err != nil {
				return nil, err
			}
		case tar.TypeReg:
			if name == "" {
				return nil, refuse("entry %q: a file without a name", h.Name)
			}
			if err := c.add(name, h.Size); err != nil {
				return nil, err
			}
			body, err := c.readAll(h.Name, tr, h.Size)
			if err != nil {
				return nil, err
			}
			files = append(files, File{Name: name, Data: body, Exec: h.Mode&0o111 != 0})
		case tar.TypeXGlobalHeader:
			if err := c.count("entries (files, folders and tar's global headers)"); err != nil {
				return nil, err
			}
		default:
			return nil, refuse("entry %q: not a regular file or a folder (a link, a device…)", h.Name)
		}
	}
}

// tarRoom is what tar's own records may add to a file's bytes: its
// header (512 bytes), a long name's or PAX attributes' blocks (a
// header and a few blocks more), and its data's padding to a block (at
// most 511 bytes). 4 KiB leaves room for names past a thousand bytes and
// macOS's extended attributes; with the default limits, a .tar.gz then
// unpacks to at most 64 MiB and 8 MiB more (2,001 times 4 KiB).
const tarRoom = 4 << 10

// capped reads at most left bytes of r; past them it fails with err.
type capped struct {
	r    io.Reader
	left int64
	err  error
}

func (c *capped) Read(p []byte) (int, error) {
	if c.left < 0 {
		return 0, c.err
	}
	// One byte more than is left says whether the stream goes on.
	if int64(len(p)) > c.left+1 {
		p = p[:c.left+1]
	}
	n, err := c.r.Read(p)
	if int64(n) > c.left {
		c.left = -1
		return 0, c.err
	}
	c.left -= int64(n)
	return n, err
}

// stepIn removes the folder every file is in, when there is one.
func stepIn(files []File) []File {
	for {
		top, _, ok := strings.Cut(files[0].Name, "/")
		if !ok {
			return files
		}
		for _, f := range files {
			if !strings.HasPrefix(f.Name, top+"/") {
				return files
			}
		}
		for i := range files {
			files[i].Name = strings.TrimPrefix(files[i].Name, top+"/")
		}
	}
}

// TarGz packs a folder's files as Read takes them back (arena submit):
// regular files only, skipping version control's folders; links are
// refused, naming them.
func TarGz(files []File, w io.Writer) error {
	gz := gzip.NewWriter(w)
	tw := tar.NewWriter(gz)
	for _, f := range files {
		mode := int64(0o644)
		if f.Exec {
			mode = 0o755
		}
		if err := tw.WriteHeader(&tar.Header{Name: f.Name, Mode: mode, Size: int64(len(f.Data)), Typeflag: tar.TypeReg}); err != nil {
			return err
		}
		if _, err := tw.Write(f.Data); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return gz.Close()
}
