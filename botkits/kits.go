// Package botkits holds the starter kits' sources that a bot built from
// its sources may start from: what every student starts from counts for
// no one in the similarity report. (The Go kit is a module of its own,
// which the arena module cannot embed: its files count for no one only
// when half the bots compared carry them.)
package botkits

import (
	"embed"
	"io/fs"
)

//go:embed python/*.py javascript/*.js cpp/*.h cpp/*.cpp cpp/*/*.cpp cpp/*/*.h cpp/*/*.c
var files embed.FS

// File is a kit's file: its path under botkits/ and its content.
type File struct {
	Name string
	Data []byte
}

// Files are the kits' sources (Python, JavaScript, C and C++).
func Files() []File {
	var out []File
	fs.WalkDir(files, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			data, _ := files.ReadFile(p)
			out = append(out, File{Name: p, Data: data})
		}
		return nil
	})
	return out
}
