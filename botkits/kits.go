// Package botkits holds the starter kits' sources: the base a bot built
// from its sources starts from, which counts for no one in the similarity
// report (Files), and each kit's starting project for each game
// (starters.go), which the page's editor starts a draft from.
//
// The Go kit is a module of its own (botkits/go), which the arena module
// cannot embed: gokit.go holds a copy of its sources, written by go
// generate, and TestGoKitIsBotkitsGo fails, naming the file, when the two
// differ.
package botkits

//go:generate go run gen_gokit.go

import (
	"embed"
	"io/fs"
	"slices"
)

//go:embed python/*.py javascript/*.js cpp/*.h cpp/*.cpp cpp/*/*.cpp cpp/*/*.h cpp/*/*.c
var files embed.FS

// File is a kit's file: its path and its content. For Files the path is
// under botkits/ (python/bot.py); for a Starter's it is relative to the
// project's root, as an upload has it (bot.py).
type File struct {
	Name string
	Data []byte
}

// Files are the kits' sources (Go, Python, JavaScript, C and C++).
func Files() []File {
	var out []File
	for _, name := range kitNames() {
		out = append(out, File{Name: name, Data: kitFile(name)})
	}
	return out
}

// kitNames are the paths of the kits' sources, under botkits/.
func kitNames() []string {
	var names []string
	for _, f := range goKit {
		names = append(names, f.Name)
	}
	fs.WalkDir(files, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			names = append(names, p)
		}
		return nil
	})
	return names
}

// kitFile is a kit's file by its path under botkits/ (a copy), nil when
// there is none.
func kitFile(name string) []byte {
	for _, f := range goKit {
		if f.Name == name {
			return slices.Clone(f.Data)
		}
	}
	data, err := files.ReadFile(name)
	if err != nil {
		return nil
	}
	return data
}
