package layers

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// maxComplexity is the most cyclomatic complexity a function of the module
// may have, counted as gocyclo counts it (gocyclo -over 25 reports none). A
// //gocyclo:ignore directive excuses nothing here.
const maxComplexity = 25

// TestNoFunctionTooComplex keeps every function of the module, tests and test
// bots aside, at maxComplexity or less (issue #60).
func TestNoFunctionTooComplex(t *testing.T) {
	root := filepath.Join("..", "..", "..")
	files, err := sourceFiles(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 100 {
		t.Fatalf("found only %d source files under %s", len(files), root)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		f, err := parser.ParseFile(fset, filepath.Join(root, name), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, fn := range functions(f) {
			if n := complexity(fn.node); n > maxComplexity {
				t.Errorf("%s:%d: %s has complexity %d, above %d: cut it into named steps", name, fset.Position(fn.node.Pos()).Line, fn.name, n, maxComplexity)
			}
		}
	}
}

// sourceFiles lists the module's .go files under root, relative to it, leaving
// out tests, test bots, testdata, other modules and the folders the go tool
// ignores.
func sourceFiles(root string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel != "." && skipDir(path, rel, d.Name()) {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(rel, ".go") && !strings.HasSuffix(rel, "_test.go") {
			files = append(files, rel)
		}
		return nil
	})
	return files, err
}

// skipDir says whether the folder at path (rel under the module's root) holds
// no production code of this module.
func skipDir(path, rel, name string) bool {
	if name == "testdata" || name == "vendor" || rel == "internal/testsupport/testbots" ||
		strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
		return true
	}
	_, err := os.Stat(filepath.Join(path, "go.mod"))
	return err == nil // another module
}

// function is one function, method or function literal gocyclo reports.
type function struct {
	name string
	node ast.Node
}

// functions lists what gocyclo reports in f: every function and method, as
// Name or (Recv).Name, and every function literal a package-level variable is
// declared with, under the variable's name.
func functions(f *ast.File) []function {
	var fns []function
	for _, decl := range f.Decls {
		switch decl := decl.(type) {
		case *ast.FuncDecl:
			fns = append(fns, function{funcName(decl), decl})
		case *ast.GenDecl:
			for _, spec := range decl.Specs {
				value, ok := spec.(*ast.ValueSpec)
				if !ok {
					continue
				}
				for _, v := range value.Values {
					if lit, ok := v.(*ast.FuncLit); ok {
						fns = append(fns, function{value.Names[0].Name, lit})
					}
				}
			}
		}
	}
	return fns
}

// funcName names a function as gocyclo does: Name, or (T).Name, (*T).Name
// for a method.
func funcName(fn *ast.FuncDecl) string {
	if fn.Recv == nil || fn.Recv.NumFields() == 0 {
		return fn.Name.Name
	}
	return fmt.Sprintf("(%s).%s", recvString(fn.Recv.List[0].Type), fn.Name.Name)
}

// recvString writes a receiver's type, without its type parameters.
func recvString(x ast.Expr) string {
	switch t := x.(type) {
	case *ast.Ident:
		return t.Name
	case *ast.StarExpr:
		return "*" + recvString(t.X)
	case *ast.IndexExpr:
		return recvString(t.X)
	case *ast.IndexListExpr:
		return recvString(t.X)
	}
	return "BADRECV"
}

// complexity counts as gocyclo (github.com/fzipp/gocyclo, complexity.go)
// does: 1, plus one for each if, for and range, each case of a switch, type
// switch or select but default, and each && and ||, function literals inside
// counting toward the function that holds them.
func complexity(fn ast.Node) int {
	n := 1
	ast.Inspect(fn, func(node ast.Node) bool {
		switch node := node.(type) {
		case *ast.IfStmt, *ast.ForStmt, *ast.RangeStmt:
			n++
		case *ast.CaseClause:
			if node.List != nil {
				n++
			}
		case *ast.CommClause:
			if node.Comm != nil {
				n++
			}
		case *ast.BinaryExpr:
			if node.Op == token.LAND || node.Op == token.LOR {
				n++
			}
		}
		return true
	})
	return n
}

// TestComplexityCountsAsGocyclo checks the count on gocyclo's own kinds of
// branch.
func TestComplexityCountsAsGocyclo(t *testing.T) {
	const src = `package p

func one() {}

func ifs(a, b bool) {
	if a && b || a {
	} else if b {
	}
}

func loops(s []int) {
	for range s {
		for i := 0; i < 1; i++ {
		}
	}
}

func (s *S[T]) cases(x any, c chan int) {
	switch x.(type) {
	case int, string:
	default:
	}
	switch {
	case true:
	}
	select {
	case <-c:
	default:
	}
	f := func() {
		if true {
		}
	}
	f()
}

var lit = func() {
	if true {
	}
}
`
	f, err := parser.ParseFile(token.NewFileSet(), "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, fn := range functions(f) {
		got = append(got, fmt.Sprintf("%s %d", fn.name, complexity(fn.node)))
	}
	want := []string{"one 1", "ifs 5", "loops 3", "(*S).cases 5", "lit 2"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}
