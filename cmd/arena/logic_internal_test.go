package main

import (
	"archive/tar"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// entry is a file of an image's file system as a tar stream holds it.
type entry struct {
	name string
	kind byte
	body string
	link string
}

func tarOf(t *testing.T, entries ...entry) *bytes.Buffer {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		h := &tar.Header{Name: e.name, Typeflag: e.kind, Mode: 0o644, Size: int64(len(e.body)), Linkname: e.link}
		if e.kind != tar.TypeReg {
			h.Size = 0
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if e.kind == tar.TypeReg {
			tw.Write([]byte(e.body))
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return &buf
}

// A logic's player is its folder's regular files, and nothing else: a
// link (that could point at the image's other files), too many files, too
// many bytes or no index.html is refused, saying why.
func TestAPlayerOutOfAnImage(t *testing.T) {
	reg := func(name, body string) entry { return entry{name: name, kind: tar.TypeReg, body: body} }
	files, err := readPlayer(tarOf(t,
		entry{name: "player/", kind: tar.TypeDir},
		reg("player/index.html", "<p>hi"),
		reg("./player/js/view.js", "draw()"),
		reg("etc/passwd", "root:x:0:0"),
		reg("player-not/index.html", "not it"),
	), "player")
	if err != nil || len(files) != 2 || string(files["index.html"]) != "<p>hi" || string(files["js/view.js"]) != "draw()" {
		t.Fatalf("the player: %v, %q", err, files)
	}

	many := []entry{reg("player/index.html", "x")}
	for i := range maxPlayerFiles {
		many = append(many, reg(fmt.Sprintf("player/f%d.js", i), "x"))
	}
	for name, c := range map[string]struct {
		entries []entry
		want    string
	}{
		"a symbolic link":  {[]entry{reg("player/index.html", "x"), {name: "player/secret", kind: tar.TypeSymlink, link: "/etc/shadow"}}, "secret is not a regular file"},
		"a hard link":      {[]entry{{name: "player/index.html", kind: tar.TypeLink, link: "etc/passwd"}}, "index.html is not a regular file"},
		"a device":         {[]entry{reg("player/index.html", "x"), {name: "player/zero", kind: tar.TypeChar}}, "zero is not a regular file"},
		"too many files":   {many, fmt.Sprintf("more than %d files", maxPlayerFiles)},
		"too many bytes":   {[]entry{reg("player/index.html", "x"), reg("player/a.bin", strings.Repeat("a", maxPlayerBytes/2)), reg("player/b.bin", strings.Repeat("b", maxPlayerBytes/2))}, "16 MiB"},
		"no index.html":    {[]entry{reg("player/main.html", "x")}, "no index.html in /player"},
		"index.html a dir": {[]entry{{name: "player/index.html/", kind: tar.TypeDir}, reg("player/index.html/x", "x")}, "no index.html"},
	} {
		t.Run(name, func(t *testing.T) {
			files, err := readPlayer(tarOf(t, c.entries...), "player")
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%d files, error %v, want one saying %q", len(files), err, c.want)
			}
		})
	}
}

// The saved images a server keeps to read players from are those of the
// games it registers now: others, and half-written saves, are removed;
// other files are not touched.
func TestPruneSaves(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{saveName("sha256:aaa"), saveName("sha256:bbb"), "saving-123", "notes.txt"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	pruneSaves(dir, map[string]bool{saveName("sha256:aaa"): true})
	var left []string
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		left = append(left, e.Name())
	}
	if strings.Join(left, " ") != "base-aaa.tar notes.txt" {
		t.Errorf("left %v", left)
	}
	pruneSaves(filepath.Join(dir, "none"), nil) // no folder yet: nothing to do
}
