package layers

import (
	"fmt"
	"go/ast"
	"go/types"
	"slices"
	"strings"
	"testing"

	"golang.org/x/tools/go/packages"
)

// The web front end reaches the data only through the platform's
// services (docs/architecture.md): it calls no function or method of
// package store or accounts (their types, a store.Match or an
// accounts.Principal, pass through it as values, their fields read), and
// nothing of platform.Platform, whose services it is given. Go's imports
// cannot say this (web imports store for its types): the calls are read
// from web's own code, by their types. A second front end follows the
// same rule.
func TestWebCallsOnlyTheServices(t *testing.T) {
	for _, front := range []string{"arena/web"} {
		calls := callsOf(t, front)
		if len(calls) == 0 {
			t.Fatalf("%s: no calls read", front)
		}
		for _, c := range calls {
			switch {
			case c.pkg == "arena/store" || c.pkg == "arena/accounts":
				t.Errorf("%s calls %s (%s): %s reaches the data through a service of package platform", c.at, c.name, c.pkg, front)
			case c.pkg == "arena/platform" && c.recv == "Platform":
				t.Errorf("%s calls %s: %s is given the platform's services, not the platform", c.at, c.name, front)
			}
		}
	}
	// The rule reads what it should: web calls the services.
	if !slices.ContainsFunc(callsOf(t, "arena/web"), func(c call) bool { return c.pkg == "arena/platform" && c.recv == "Matches" }) {
		t.Error("no call of the platform's Matches service found in arena/web: the rule reads nothing")
	}
}

// call is a function or method a package's code calls: the package that
// defines it, its receiver's type name (none for a function), its name
// and where the call is.
type call struct {
	pkg, recv, name, at string
}

// callsOf lists the calls of Arena's functions and methods in a
// package's non-test files.
func callsOf(t *testing.T, path string) []call {
	t.Helper()
	cfg := &packages.Config{Mode: packages.NeedName | packages.NeedFiles | packages.NeedSyntax | packages.NeedTypes | packages.NeedTypesInfo, Tests: false}
	pkgs, err := packages.Load(cfg, path)
	if err != nil {
		t.Fatalf("load %s: %v", path, err)
	}
	if packages.PrintErrors(pkgs) > 0 || len(pkgs) != 1 {
		t.Fatalf("load %s: errors above", path)
	}
	p := pkgs[0]
	var out []call
	for _, f := range p.Syntax {
		ast.Inspect(f, func(n ast.Node) bool {
			ce, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			var id *ast.Ident
			switch fun := ast.Unparen(ce.Fun).(type) {
			case *ast.Ident:
				id = fun
			case *ast.SelectorExpr:
				id = fun.Sel
			default:
				return true
			}
			fn, ok := p.TypesInfo.Uses[id].(*types.Func)
			if !ok || fn.Pkg() == nil || !strings.HasPrefix(fn.Pkg().Path(), "arena/") {
				return true
			}
			c := call{pkg: fn.Pkg().Path(), name: fn.Name(), at: p.Fset.Position(ce.Pos()).String()}
			if recv := fn.Signature().Recv(); recv != nil {
				rt := recv.Type()
				if ptr, ok := rt.(*types.Pointer); ok {
					rt = ptr.Elem()
				}
				if named, ok := rt.(*types.Named); ok {
					c.recv = named.Obj().Name()
					c.name = fmt.Sprintf("%s.%s", c.recv, c.name)
				}
			}
			out = append(out, c)
			return true
		})
	}
	return out
}
