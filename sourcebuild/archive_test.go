package sourcebuild

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"errors"
	"strings"
	"testing"

	"arena/internal/errs"
)

type entryOf struct {
	name, body string
	kind       byte // tar type; 0 a file
}

func tarGz(t *testing.T, entries ...entryOf) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, e := range entries {
		h := &tar.Header{Name: e.name, Mode: 0o644, Size: int64(len(e.body)), Typeflag: tar.TypeReg}
		switch e.kind {
		case tar.TypeSymlink, tar.TypeLink:
			h.Typeflag, h.Linkname, h.Size = e.kind, e.body, 0
		case tar.TypeDir:
			h.Typeflag, h.Size = tar.TypeDir, 0
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Size > 0 {
			tw.Write([]byte(e.body))
		}
	}
	tw.Close()
	gz.Close()
	return buf.Bytes()
}

func zipOf(t *testing.T, entries ...entryOf) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range entries {
		w, err := zw.Create(e.name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(e.body))
	}
	zw.Close()
	return buf.Bytes()
}

// An upload is read from a zip or a .tar.gz, stepping into the folder
// that holds it all; whatever could write outside the build's folder, or
// is no plain file, refuses the whole archive, naming the entry.
func TestRead(t *testing.T) {
	for name, data := range map[string][]byte{
		"tar.gz": tarGz(t, entryOf{"mybot/", "", tar.TypeDir}, entryOf{"mybot/bot.py", "print()", 0}, entryOf{"mybot/lib/x.py", "x = 1", 0}),
		"zip":    zipOf(t, entryOf{"mybot/bot.py", "print()", 0}, entryOf{"mybot/lib/x.py", "x = 1", 0}),
	} {
		s, err := Read(data, DefaultLimits)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(s.Files) != 2 || !s.Has("bot.py") || !s.Has("lib/x.py") || string(s.file("bot.py").Data) != "print()" {
			t.Errorf("%s: %+v", name, s.Files)
		}
	}
	for name, c := range map[string]struct {
		data []byte
		want string
	}{
		"zip slip":         {zipOf(t, entryOf{"bot.py", "", 0}, entryOf{"../../etc/cron.d/x", "evil", 0}), `entry "../../etc/cron.d/x": a path that climbs out of the folder (..)`},
		"tar slip":         {tarGz(t, entryOf{"a/../../x", "evil", 0}), "climbs out"},
		"absolute":         {tarGz(t, entryOf{"/etc/passwd", "evil", 0}), `entry "/etc/passwd": an absolute path`},
		"symlink":          {tarGz(t, entryOf{"bot.py", "", 0}, entryOf{"link", "/etc/shadow", tar.TypeSymlink}), `entry "link": not a regular file or a folder`},
		"hard link":        {tarGz(t, entryOf{"bot.py", "", 0}, entryOf{"link", "bot.py", tar.TypeLink}), `entry "link": not a regular file or a folder`},
		"too many files":   {tarGz(t, entryOf{"a", "1", 0}, entryOf{"b", "2", 0}, entryOf{"c", "3", 0}), "more than 2 files and folders"},
		"too many bytes":   {tarGz(t, entryOf{"a", strings.Repeat("x", 101), 0}), "more than 100 bytes unpacked"},
		"twice":            {tarGz(t, entryOf{"a", "1", 0}, entryOf{"./a", "2", 0}), `entry "a": twice`},
		"not an archive":   {[]byte("print('hello')"), "not a zip or a .tar.gz archive"},
		"empty":            {tarGz(t, entryOf{"d/", "", tar.TypeDir}), "it holds no file"},
		"a backslash name": {zipOf(t, entryOf{`..\evil`, "x", 0}), "not a plain path"},
	} {
		lim := Limits{Files: 2, Bytes: 100}
		if name != "too many files" && name != "too many bytes" {
			lim = DefaultLimits
		}
		if _, err := Read(c.data, lim); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", name, err, c.want)
		}
	}
}

// Files given by name (a draft's) are checked as an archive's entries
// are, by the same checks: a name that climbs out, an absolute one, one
// twice, a file that is another's folder, too many files or bytes: each
// refused, naming the entry, as invalid input of ErrFiles. Good names are
// cleaned and sorted.
func TestCheck(t *testing.T) {
	files := func(names ...string) Source {
		var s Source
		for _, n := range names {
			s.Files = append(s.Files, File{Name: n, Data: []byte("x = 1")})
		}
		return s
	}
	s, err := Check(files("lib/x.py", "./bot.py"), DefaultLimits)
	if err != nil || len(s.Files) != 2 || s.Files[0].Name != "bot.py" || s.Files[1].Name != "lib/x.py" {
		t.Fatalf("good files: %+v %v", s.Files, err)
	}
	for name, c := range map[string]struct {
		src  Source
		want string
	}{
		"climbs out":      {files("bot.py", "../x"), `entry "../x": a path that climbs out of the folder (..)`},
		"climbs out deep": {files("a/../../x"), "climbs out"},
		"absolute":        {files("/etc/passwd"), `entry "/etc/passwd": an absolute path`},
		"a backslash":     {files(`..\x`), "not a plain path"},
		"twice":           {files("a", "./a"), `entry "a": twice`},
		"no name":         {files("."), "a file without a name"},
		"a folder":        {files("lib/"), "a file without a name"},
		"file and folder": {files("lib", "lib/x.py"), `entry "lib/x.py": lib is a file, not a folder`},
		"none":            {Source{}, "there is no file"},
		"too many files":  {files("a", "b", "c"), "more than 2 files"},
		"too many bytes":  {Source{Files: []File{{Name: "a", Data: make([]byte, 101)}}}, "more than 100 bytes"},
	} {
		_, err := Check(c.src, Limits{Files: 2, Bytes: 100})
		if err == nil || !strings.Contains(err.Error(), c.want) || !errors.Is(err, ErrFiles) || !errs.IsInvalid(err) {
			t.Errorf("%s: %v, want %q", name, err, c.want)
		}
		if err != nil && strings.Contains(err.Error(), "archive") {
			t.Errorf("%s: %v speaks of an archive", name, err)
		}
	}
}

// The kit is told from the files, or named; what a kit cannot build
// offline is refused, saying why.
func TestKits(t *testing.T) {
	src := func(names ...string) Source {
		var s Source
		for _, n := range names {
			s.Files = append(s.Files, File{Name: n})
		}
		return s
	}
	for files, want := range map[string]string{
		"go.mod bot/main.go":      "go",
		"bot.cpp json.h":          "cpp",
		"bot.py tanks.py":         "python",
		"bot.js tanks.js":         "javascript",
		"README.md":               "",
		"go.mod main.go x.py":     "go",
		"examples/a.c README.txt": "",
		"my_algo.c playerbase.h snake/snake_main.cpp": "cpp",
		"pacman/runner.cpp pacman/pacman.h json.h":    "cpp",
		"bot.py ext/speedup.cpp":                      "python",
		"bot.js addon/native.cpp":                     "javascript",
		"bot.py fast.c":                               "python",
	} {
		k, err := FindKit("", src(strings.Fields(files)...))
		if k.Name != want || (want == "") != (err != nil) {
			t.Errorf("%s: kit %q (%v), want %q", files, k.Name, err, want)
		}
	}
	if _, err := FindKit("rust", src("main.rs")); err == nil || !strings.Contains(err.Error(), `unknown kit "rust": one of go, cpp, python, javascript`) {
		t.Errorf("an unknown kit: %v", err)
	}
	py, _ := FindKit("python", Source{})
	withReqs := Source{Files: []File{{Name: "bot.py"}, {Name: "requirements.txt", Data: []byte("numpy\n")}}}
	if _, err := py.mainOf(withReqs, ""); err == nil || !strings.Contains(err.Error(), "requirements.txt cannot be installed") {
		t.Errorf("requirements.txt: %v", err)
	}
	if _, err := py.mainOf(src("main.py"), ""); err == nil || !strings.Contains(err.Error(), "no bot.py in the upload") {
		t.Errorf("no bot.py: %v", err)
	}
	if m, err := py.mainOf(src("main.py"), "main.py"); err != nil || m != "main.py" {
		t.Errorf("main.py named: %q %v", m, err)
	}
	if _, err := py.mainOf(src("bot.py"), "../x.py"); err == nil {
		t.Error("a main file outside the upload")
	}
	gok, _ := FindKit("go", Source{})
	if m, err := gok.mainOf(src("go.mod", "main.go"), ""); err != nil || m != "." {
		t.Errorf("a Go module with its main package at the root: %q %v", m, err)
	}
	if _, err := gok.mainOf(src("go.mod", "README.md"), ""); err == nil {
		t.Error("a Go module without Go files")
	}
}
