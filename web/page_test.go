package web

import (
	"io/fs"
	"path"
	"regexp"
	"slices"
	"testing"
)

// The page lists every module it imports at its start (the static
// imports from its module script), and nothing else, as a modulepreload:
// the browser then fetches them all at once, not one level of imports
// after another (a round trip each before the board shows). What app.js
// imports later, with import(), is left out.
func TestThePagePreloadsItsModules(t *testing.T) {
	page, err := fs.Sub(staticFiles, "static")
	if err != nil {
		t.Fatal(err)
	}
	read := func(name string) string {
		b, err := fs.ReadFile(page, name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return string(b)
	}
	imports := regexp.MustCompile(`(?m)^import [^;]*? from "(\./[^"]+)";`)
	graph := map[string]bool{}
	var walk func(name string)
	walk = func(name string) {
		if graph[name] {
			return
		}
		graph[name] = true
		for _, m := range imports.FindAllStringSubmatch(read(name), -1) {
			walk(path.Join(path.Dir(name), m[1]))
		}
	}
	html := read("index.html")
	entry := regexp.MustCompile(`<script type="module" src="([^"]+)">`).FindStringSubmatch(html)
	if entry == nil {
		t.Fatal("index.html has no module script")
	}
	walk(entry[1])
	var want, got []string
	for m := range graph {
		want = append(want, m)
	}
	for _, m := range regexp.MustCompile(`<link rel="modulepreload" href="([^"]+)">`).FindAllStringSubmatch(html, -1) {
		got = append(got, m[1])
	}
	slices.Sort(want)
	slices.Sort(got)
	if len(want) < 10 {
		t.Fatalf("the module graph from %s has %d modules: the import pattern no longer reads the page's imports", entry[1], len(want))
	}
	if !slices.Equal(got, want) {
		t.Errorf("index.html preloads\n%v\nthe page imports\n%v", got, want)
	}
}
