package sourcebuild

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"
)

// globalHeaders is a .tar.gz of n PAX global headers of about size
// bytes each, then one file: tiny packed, as large unpacked as wanted.
func globalHeaders(t *testing.T, n, size int) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	tw := tar.NewWriter(gz)
	comment := strings.Repeat("x", size)
	for range n {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeXGlobalHeader, PAXRecords: map[string]string{"comment": comment}}); err != nil {
			t.Fatal(err)
		}
	}
	tw.WriteHeader(&tar.Header{Name: "bot.py", Mode: 0o644, Size: 7, Typeflag: tar.TypeReg})
	tw.Write([]byte("print()"))
	tw.Close()
	gz.Close()
	return buf.Bytes()
}

// A .tar.gz of PAX global headers (a few hundred KB packed, hundreds of
// MB unpacked) is refused once its gzip stream has unpacked the limit of
// bytes and tar's room, naming it, not read to its end; so is one of
// more global headers than the limit of files.
func TestReadStopsATarBomb(t *testing.T) {
	bomb := globalHeaders(t, 100, 1<<20-64)
	start := time.Now()
	_, err := Read(bomb, DefaultLimits)
	took := time.Since(start)
	max := DefaultLimits.Bytes + int64(DefaultLimits.Files+1)*tarRoom
	if want := fmt.Sprintf("more than %d bytes unpacked, tar's own records included (67108864 of files, 8196096 for tar's headers and padding)", max); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("%d bytes of global headers: %v, want %q", len(bomb), err, want)
	}
	if took > 10*time.Second {
		t.Errorf("refused after %v", took)
	}
	t.Logf("%d bytes packed, refused in %v", len(bomb), took)

	many := globalHeaders(t, DefaultLimits.Files+1, 10)
	if _, err := Read(many, DefaultLimits); err == nil || !strings.Contains(err.Error(), "more than 2000 entries (files, folders and tar's global headers)") {
		t.Errorf("%d global headers: %v", DefaultLimits.Files+1, err)
	}

	// What tar adds to an upload at its limits (long names, in PAX
	// headers) is within its room.
	var files []File
	for i := range 3 {
		files = append(files, File{Name: strings.Repeat("d", 200) + "/" + strings.Repeat("n", 200) + "/" + strings.Repeat("f", 200) + fmt.Sprint(i), Data: bytes.Repeat([]byte("x"), 1000)})
	}
	var up bytes.Buffer
	if err := TarGz(files, &up); err != nil {
		t.Fatal(err)
	}
	if s, err := Read(up.Bytes(), Limits{Files: 3, Bytes: 3000}); err != nil || len(s.Files) != 3 {
		t.Errorf("an upload at its limits: %v", err)
	}
}

// overlapping is a zip of n entries that all name the same packed data:
// a deflate stream of empty stored blocks, size bytes long, which
// unpacks to nothing after all its blocks are read.
func overlapping(n, size int) []byte {
	blob := bytes.Repeat([]byte{0, 0, 0, 0xff, 0xff}, size/5)
	blob = append(blob, 1, 0, 0, 0xff, 0xff)
	var b bytes.Buffer
	le := func(v ...any) {
		for _, x := range v {
			binary.Write(&b, binary.LittleEndian, x)
		}
	}
	// Its one local header and data: "a", deflated, 0 bytes unpacked.
	le(uint32(0x04034b50), uint16(20), uint16(0), uint16(zip.Deflate), uint32(0), uint32(0), uint32(len(blob)), uint32(0), uint16(1), uint16(0))
	b.WriteString("a")
	b.Write(blob)
	dir := b.Len()
	for i := range n {
		name := fmt.Sprintf("f%d", i)
		le(uint32(0x02014b50), uint16(20), uint16(20), uint16(0), uint16(zip.Deflate), uint32(0), uint32(0), uint32(len(blob)), uint32(0),
			uint16(len(name)), uint16(0), uint16(0), uint16(0), uint16(0), uint32(0), uint32(0))
		b.WriteString(name)
	}
	le(uint32(0x06054b50), uint16(0), uint16(0), uint16(n), uint16(n), uint32(b.Len()-dir), uint32(dir), uint16(0))
	return b.Bytes()
}

// A zip is checked whole before any entry is unpacked: entries that
// share their packed data (each would unpack all of it again), more
// entries than the limit, more bytes than it as declared.
func TestReadChecksAZipFirst(t *testing.T) {
	bomb := overlapping(200, 1<<20)
	start := time.Now()
	_, err := Read(bomb, DefaultLimits)
	if want := `entry "f1": its packed data overlaps another's`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("entries that share their data: %v, want %q", err, want)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("refused after %v", took)
	}

	// A first entry that is not what it says, then what the limits
	// refuse: the limits are checked first.
	broken := func(more ...*zip.FileHeader) []byte {
		var buf bytes.Buffer
		zw := zip.NewWriter(&buf)
		w, _ := zw.CreateRaw(&zip.FileHeader{Name: "a", Method: zip.Store, CRC32: 1, CompressedSize64: 5, UncompressedSize64: 5})
		w.Write([]byte("hello"))
		for _, h := range more {
			w, _ := zw.CreateRaw(h)
			w.Write([]byte("x"))
		}
		zw.Close()
		return buf.Bytes()
	}
	lim := Limits{Files: 2, Bytes: 100}
	if _, err := Read(broken(&zip.FileHeader{Name: "b", Method: zip.Store, CompressedSize64: 1, UncompressedSize64: 1 << 40}), lim); err == nil || !strings.Contains(err.Error(), "more than 100 bytes unpacked") {
		t.Errorf("an entry that declares 1 TiB: %v", err)
	}
	many := broken(&zip.FileHeader{Name: "b", Method: zip.Store, CompressedSize64: 1, UncompressedSize64: 1}, &zip.FileHeader{Name: "c", Method: zip.Store, CompressedSize64: 1, UncompressedSize64: 1})
	if _, err := Read(many, lim); err == nil || !strings.Contains(err.Error(), "more than 2 files and folders") {
		t.Errorf("3 entries: %v", err)
	}
}

// noSandbox fails a build that reaches the sandbox.
type noSandbox struct{}

func (noSandbox) Run(context.Context, string, Step, string, []byte, io.Writer) ([]byte, error) {
	return nil, errors.New("the build reached the sandbox")
}

// g++ is handed the sources as ./NAME.cpp, and a C++ upload with a file
// or folder named -… or @… (an option, or a response file: @opts.cpp
// holding -wrapper) is refused before it reaches the sandbox; other kits
// keep such names (a JavaScript upload's node_modules/@scope/…).
func TestCppNamesAreNoOptions(t *testing.T) {
	cpp, _ := FindKit("cpp", Source{})
	if s := cpp.Build.Script; !strings.Contains(s, "for f in ./*.cpp ./*.c; do") || !strings.Contains(s, `"./$BOT"`) || strings.Contains(s, " *.c") {
		t.Errorf("the C++ step hands g++ its sources as they are named:\n%s", s)
	}
	// Were such a name to reach the step, g++ would get it as ./NAME
	// (the step run here, its g++ a stand-in that writes back its
	// arguments).
	var log strings.Builder
	names := Source{Files: []File{{Name: "-wrapper.cpp"}, {Name: "@opts.c"}, {Name: "@dir/-main.cpp"}}}
	args, err := (&Builder{Steps: localSteps{t: t, bin: fakeGpp(t)}}).step(t.Context(), Request{ID: "t", Source: names}, cpp, "@dir/-main.cpp", &log)
	if got := strings.Fields(string(args)); err != nil || len(got) < 3 || !slices.Equal(got[len(got)-3:], []string{"./-wrapper.cpp", "./@opts.c", "./@dir/-main.cpp"}) {
		t.Errorf("g++ %q (%v)\n%s", got, err, log.String())
	}
	b := &Builder{Steps: noSandbox{}}
	for _, name := range []string{"@opts.cpp", "-wrapper.cpp", "src/@x/a.h", "-I/x/a.h"} {
		src := Source{Files: []File{{Name: "bot.cpp", Data: []byte("int main(){}")}, {Name: name, Data: []byte("-wrapper /bin/sh,-c,id")}}}
		_, err := b.Build(t.Context(), Request{ID: "t", Source: src}, io.Discard)
		if want := fmt.Sprintf("file %q: a name starting with - or @ is refused by the C++ kit", name); !errors.Is(err, ErrBuild) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", name, err, want)
		}
	}
	js, _ := FindKit("javascript", Source{})
	scoped := Source{Files: []File{{Name: "bot.js"}, {Name: "package.json", Data: []byte(`{"dependencies":{"@scope/pkg":"1"}}`)}, {Name: "node_modules/@scope/pkg/index.js"}}}
	if _, err := js.mainOf(scoped, ""); err != nil {
		t.Errorf("node_modules/@scope: %v", err)
	}
	py, _ := FindKit("python", Source{})
	if _, err := py.mainOf(Source{Files: []File{{Name: "bot.py"}, {Name: "@notes.py"}}}, ""); err != nil {
		t.Errorf("a Python upload's @notes.py: %v", err)
	}
}
