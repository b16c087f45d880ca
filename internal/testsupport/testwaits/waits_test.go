// Package testwaits checks that the tests wait for a condition through
// internal/testsupport/poll alone (docs/tests.md): no loop of a test sleeps, and a
// test sleeps only where a comment says why, starting with Marker.
package testwaits

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// Marker starts the comment that lets a test sleep: on the line of the
// time.Sleep, or the comment just above it. It is for a sleep that waits
// for no condition: one proving that something does not happen
// meanwhile, or one pacing what the test drives.
const Marker = "Sleeps on purpose:"

// root is the module's folder: the nearest one above with a go.mod.
func root(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		up := filepath.Dir(dir)
		if up == dir {
			t.Fatal("no go.mod above the test's folder")
		}
		dir = up
	}
}

// testFiles lists the module's test files, but internal/testsupport/poll's (the one
// loop that sleeps) and those of other modules (a folder of its own
// go.mod) or of testdata.
func testFiles(t *testing.T, root string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != root {
				if strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "node_modules" ||
					path == filepath.Join(root, "internal", "testsupport", "poll") {
					return filepath.SkipDir
				}
				if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
					return filepath.SkipDir
				}
			}
			return nil
		}
		if strings.HasSuffix(path, "_test.go") {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// sleeps finds what a file does wrong: each loop that sleeps, and each
// sleep without the marker.
func sleeps(fset *token.FileSet, f *ast.File) []string {
	timePkg := ""
	for _, imp := range f.Imports {
		if p, _ := strconv.Unquote(imp.Path.Value); p == "time" {
			timePkg = "time"
			if imp.Name != nil {
				timePkg = imp.Name.Name
			}
		}
	}
	if timePkg == "" || timePkg == "_" {
		return nil
	}
	isSleep := func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok || sel.Sel.Name != "Sleep" {
			return false
		}
		id, ok := sel.X.(*ast.Ident)
		return ok && id.Name == timePkg
	}
	// The lines a comment starting with the marker covers: its own, and
	// the line after the comment's block.
	marked := map[int]bool{}
	for _, g := range f.Comments {
		for i, c := range g.List {
			text := strings.TrimSpace(strings.TrimPrefix(strings.TrimPrefix(c.Text, "//"), "/*"))
			if !strings.HasPrefix(text, Marker) {
				continue
			}
			marked[fset.Position(c.Pos()).Line] = true
			if i == 0 {
				marked[fset.Position(g.End()).Line+1] = true
			}
		}
	}
	var bad []string
	at := func(n ast.Node) token.Position { return fset.Position(n.Pos()) }
	// A loop is a hand-written wait if its post statement sleeps, or its
	// body does without the marker (a marked sleep in a table's loop, or
	// one pacing a benchmark's rounds, waits for nothing), outside the
	// loops and the functions it holds, whose sleeps are their own. Its
	// sleeps are told once, as the loop's.
	inLoop := map[token.Pos]bool{}
	sleepsIn := func(n ast.Node, evenMarked bool) (line int) {
		if n == nil {
			return 0
		}
		ast.Inspect(n, func(m ast.Node) bool {
			switch m.(type) {
			case *ast.FuncLit, *ast.ForStmt, *ast.RangeStmt:
				return m == n
			}
			if isSleep(m) && (evenMarked || !marked[at(m).Line]) {
				inLoop[m.Pos()] = true
				if line == 0 {
					line = at(m).Line
				}
			}
			return true
		})
		return line
	}
	loop := func(n ast.Node, line int) {
		bad = append(bad, fmt.Sprintf("%s: a loop sleeps (line %d): wait for its condition with poll.Until", at(n), line))
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.ForStmt:
			if line := sleepsIn(n.Post, true); line != 0 {
				loop(n, line)
			} else if line := sleepsIn(n.Body, false); line != 0 {
				loop(n, line)
			}
		case *ast.RangeStmt:
			if line := sleepsIn(n.Body, false); line != 0 {
				loop(n, line)
			}
		case *ast.SelectorExpr:
			if isSleep(n) && !inLoop[n.Pos()] && !marked[at(n).Line] {
				bad = append(bad, fmt.Sprintf("%s: time.Sleep without a comment starting %q on its line or just above it (a wait is poll.Until's)", at(n), "// "+Marker))
			}
		}
		return true
	})
	return bad
}

// TestNoHandWrittenWaits fails for each loop of a test that sleeps (a
// hand-written wait: poll.Until is the tests' one) and each time.Sleep
// of a test that does not say, with the marker, why it sleeps.
func TestNoHandWrittenWaits(t *testing.T) {
	root := root(t)
	files := testFiles(t, root)
	if len(files) < 100 {
		t.Fatalf("found only %d test files under %s", len(files), root)
	}
	found := make([][]string, len(files))
	var wg sync.WaitGroup
	for i, path := range files {
		wg.Go(func() {
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, path, nil, parser.ParseComments|parser.SkipObjectResolution)
			if err != nil {
				found[i] = []string{err.Error()}
				return
			}
			for _, b := range sleeps(fset, f) {
				found[i] = append(found[i], strings.TrimPrefix(b, root+string(filepath.Separator)))
			}
		})
	}
	wg.Wait()
	for _, bad := range found {
		for _, b := range bad {
			t.Error(b)
		}
	}
}

// The check itself, on a file of every kind of sleep.
func TestTheCheckTellsWaitsFromMarkedSleeps(t *testing.T) {
	const src = `package p

import (
	clock "time"
	"testing"
)

func TestX(t *testing.T) {
	for start := clock.Now(); clock.Since(start) < clock.Second; clock.Sleep(clock.Millisecond) { // line 9: a wait
	}
	for i := 0; i < 3; i++ { // line 11: a wait
		if i > 1 {
			clock.Sleep(clock.Millisecond)
		}
	}
	for range 3 { // line 16: marked, a table's loop
		clock.Sleep(clock.Millisecond) // Sleeps on purpose: paces the rounds.
	}
	for range 3 { // line 19: its function's sleep is not the loop's
		go func() {
			clock.Sleep(clock.Millisecond) // line 21: unmarked
		}()
	}
	clock.Sleep(clock.Millisecond) // line 24: unmarked
	// Sleeps on purpose: proves nothing happens meanwhile,
	// the comment just above.
	clock.Sleep(clock.Millisecond)
	// Not the marker.
	// Sleeps on purpose: too far down the comment.
	clock.Sleep(clock.Millisecond) // line 30: unmarked
	for ; ; clock.Sleep(clock.Millisecond) { // Sleeps on purpose: line 31, a wait all the same.
		break
	}
}
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p_test.go", src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, b := range sleeps(fset, f) {
		pos, what, _ := strings.Cut(b, ": ")
		line := strings.Split(pos, ":")[1]
		got = append(got, line+" "+strings.Fields(what)[0])
	}
	want := []string{"9 a", "11 a", "21 time.Sleep", "24 time.Sleep", "30 time.Sleep", "31 a"}
	if strings.Join(got, ", ") != strings.Join(want, ", ") {
		t.Errorf("found %q, want %q (line, then a for a loop or time.Sleep for a sleep)", got, want)
	}
}
