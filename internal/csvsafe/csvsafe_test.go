package csvsafe

import (
	"bytes"
	"encoding/csv"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestNeutralise(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", ""},
		{"alice", "alice"},
		{"alice@uni.example", "alice@uni.example"},
		{"=cmd|'/Ccalc'!A0@x.org", "'=cmd|'/Ccalc'!A0@x.org"},
		{"=1+1", "'=1+1"},
		{"+1", "'+1"},
		{"-3.5", "'-3.5"}, // as text: a person's name, not a number
		{"-", "'-"},
		{"@SUM(A1)", "'@SUM(A1)"},
		{"\tx", "'\tx"},
		{"\rx", "'\rx"},
		{"＝1+1", "'＝1+1"},
		{"＋1", "'＋1"},
		{"－1", "'－1"},
		{"＠x", "'＠x"},
		{"a=b", "a=b"},
		{" =1", " =1"},
		{"'quoted", "'quoted"},
		{"1e3", "1e3"},
		{"héllo", "héllo"},
	} {
		if got := Neutralise(c.in); got != c.want {
			t.Errorf("Neutralise(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// Numbers go out as they are, negative ones too; text is neutralised,
// the header as well.
func TestWriterTypesItsCells(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	w.Header("name", "rating", "=gate")
	w.Write(Text("-3.5"), Float(-3.5, 'f', -1), Int(-7), Int(uint64(18446744073709551615)), Int(int8(-128)),
		Float(-0.125, 'f', 3), Bool(true), Time(time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC), time.RFC3339), None, Text("=x"), Text("\r=x"))
	w.Flush()
	if err := w.Error(); err != nil {
		t.Fatal(err)
	}
	r := csv.NewReader(&buf)
	r.FieldsPerRecord = -1
	recs, err := r.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{
		{"name", "rating", "'=gate"},
		{"'-3.5", "-3.5", "-7", "18446744073709551615", "-128", "-0.125", "true", "2026-12-06T10:00:00Z", "", "'=x", "'\r=x"},
	}
	if len(recs) != 2 || !slices.Equal(recs[0], want[0]) || !slices.Equal(recs[1], want[1]) {
		t.Errorf("got %q, want %q", recs, want)
	}
}

// Every CSV the module writes goes through this package: no file of
// the module's (tests aside) makes an encoding/csv Writer of its own.
func TestNoCSVWriterOutsideThisPackage(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("the module's root: %v", err)
	}
	here, _ := filepath.Abs(".")
	fset := token.NewFileSet()
	scanned := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "node_modules") {
				return filepath.SkipDir
			}
			if path == here {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		scanned++
		name := ""
		for _, imp := range f.Imports {
			if p, _ := strconv.Unquote(imp.Path.Value); p == "encoding/csv" {
				name = "csv"
				if imp.Name != nil {
					name = imp.Name.Name
				}
			}
		}
		if name == "" {
			return nil
		}
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if x, ok := sel.X.(*ast.Ident); ok && (x.Name == name || name == ".") && (sel.Sel.Name == "NewWriter" || sel.Sel.Name == "Writer") {
				rel, _ := filepath.Rel(root, path)
				t.Errorf("%s:%d: %s.%s: write CSV with arena/internal/csvsafe, whose text cells are neutralised", rel, fset.Position(sel.Pos()).Line, x.Name, sel.Sel.Name)
			}
			return true
		})
		if name == "." {
			t.Errorf("%s: encoding/csv imported with a dot: import it by name", path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if scanned < 100 {
		t.Errorf("only %d files scanned: is %s the module's root?", scanned, root)
	}
}
