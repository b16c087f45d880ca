package botkits

import (
	"bytes"
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// drawHelper is each kit's drawing helper, which every starter holds
// (a bot draws its annotations with it, docs/bots.md).
var drawHelper = map[string]string{"go": "draw/draw.go", "cpp": "draw.h", "python": "draw.py", "javascript": "draw.js"}

// Every kit has a starter for every game, in a fixed order, each its
// files at plain relative paths, its main among them and its kit's
// drawing helper; StarterOf finds each, and names the kits and games
// when there is none; what a caller does to a starter's files changes
// no other's.
func TestStarters(t *testing.T) {
	all := Starters()
	var order []string
	for _, st := range all {
		order = append(order, st.Kit+"/"+st.Game)
	}
	want := "go/tanks go/snake go/pacman cpp/tanks cpp/snake cpp/pacman python/tanks python/snake python/pacman javascript/tanks javascript/snake javascript/pacman"
	if got := strings.Join(order, " "); got != want {
		t.Fatalf("the starters:\n%s\nwant\n%s", got, want)
	}
	for _, st := range all {
		names := map[string]bool{}
		for _, f := range st.Files {
			switch {
			case names[f.Name]:
				t.Errorf("%s/%s: %s twice", st.Kit, st.Game, f.Name)
			case f.Name != path.Clean(f.Name) || path.IsAbs(f.Name) || strings.HasPrefix(f.Name, "../"):
				t.Errorf("%s/%s: %q is no plain relative path", st.Kit, st.Game, f.Name)
			case len(f.Data) == 0:
				t.Errorf("%s/%s: %s is empty", st.Kit, st.Game, f.Name)
			}
			for _, part := range strings.Split(f.Name, "/") {
				if strings.HasPrefix(part, "-") || strings.HasPrefix(part, "@") {
					t.Errorf("%s/%s: %s starts with - or @, which the C++ build refuses", st.Kit, st.Game, f.Name)
				}
			}
			names[f.Name] = true
		}
		main := st.Main
		if st.Kit == "go" {
			main = st.Main + "/main.go"
		}
		if !names[main] {
			t.Errorf("%s/%s: its main %s is not among its files", st.Kit, st.Game, main)
		}
		if !names[drawHelper[st.Kit]] {
			t.Errorf("%s/%s: no %s, the kit's drawing helper", st.Kit, st.Game, drawHelper[st.Kit])
		}
		got, err := StarterOf(st.Kit, st.Game)
		if err != nil || got.Main != st.Main || len(got.Files) != len(st.Files) {
			t.Errorf("StarterOf(%q, %q): %+v, %v", st.Kit, st.Game, got.Main, err)
		}
	}
	_, err := StarterOf("rust", "tanks")
	if err == nil || !strings.Contains(err.Error(), "the kits are go, cpp, python, javascript, the games tanks, snake, pacman") {
		t.Errorf("StarterOf of no kit: %v", err)
	}
	if _, err := StarterOf("python", "chess"); err == nil {
		t.Error("StarterOf of no game: no error")
	}
	// The first starter's first file is the Go kit's go.mod.
	orig := kitFile("go/" + all[0].Files[0].Name)
	all[0].Files[0].Data[0] ^= 0xff
	all[0].Files = nil
	if again := Starters(); len(again[0].Files) == 0 || !bytes.Equal(again[0].Files[0].Data, orig) {
		t.Error("a caller's change to a starter reached the next caller")
	}
}

// Each starter's files are exactly what its main needs: every local
// import (Python, JavaScript), #include "…" (C and C++, from the
// including file's folder, then the root as -I. makes it) and package
// of the module (Go) resolves within the files, and every file is
// needed, the kit's drawing helper and Go's go.mod aside. The C++ build
// compiles every top-level .cpp and .c file and the main source; a Go
// starter imports only its module's packages and the standard library's
// (its build has no network).
func TestStartersHoldWhatTheirMainNeeds(t *testing.T) {
	for _, st := range Starters() {
		t.Run(st.Kit+"/"+st.Game, func(t *testing.T) {
			files := map[string][]byte{}
			for _, f := range st.Files {
				files[f.Name] = f.Data
			}
			n := needs{files: files, seen: map[string]bool{}}
			switch st.Kit {
			case "python":
				n.visit(st.Main, n.python)
			case "javascript":
				n.visit(st.Main, n.javascript)
			case "cpp":
				n.visit(st.Main, n.cpp)
				for name := range files {
					if !strings.Contains(name, "/") && (strings.HasSuffix(name, ".cpp") || strings.HasSuffix(name, ".c")) {
						n.visit(name, n.cpp)
					}
				}
			case "go":
				n.seen["go.mod"] = true
				n.seen["go.sum"] = true
				n.goPackage(st.Main, "the main package")
			default:
				t.Fatalf("no test of the %s kit's imports", st.Kit)
			}
			n.seen[drawHelper[st.Kit]] = true
			for _, e := range n.errs {
				t.Error(e)
			}
			for name := range files {
				if !n.seen[name] {
					t.Errorf("%s is in the starter, but %s does not need it", name, st.Main)
				}
			}
		})
	}
}

// needs follows what a starter's files need.
type needs struct {
	files map[string][]byte
	seen  map[string]bool
	errs  []string
}

// visit follows a file once, with the kit's way of reading what it needs.
func (n *needs) visit(name string, follow func(string)) {
	if n.seen[name] {
		return
	}
	n.seen[name] = true
	follow(name)
}

var pythonImport = regexp.MustCompile(`(?m)^\s*(?:from\s+(\.*[\w.]*)\s+import|import\s+([\w., ]+))`)

// python follows a Python file's imports of modules the kit has.
func (n *needs) python(name string) {
	for _, m := range pythonImport.FindAllStringSubmatch(string(n.files[name]), -1) {
		mods := strings.Split(m[2], ",")
		if m[1] != "" {
			mods = []string{m[1]}
		}
		for _, mod := range mods {
			mod = strings.TrimLeft(strings.Fields(strings.TrimSpace(mod) + " ")[0], ".")
			file := strings.SplitN(mod, ".", 2)[0] + ".py"
			switch {
			case n.files[file] != nil:
				n.visit(file, n.python)
			case kitFile("python/"+file) != nil:
				n.errs = append(n.errs, fmt.Sprintf("%s imports %s, which the kit has and the starter lacks", name, mod))
			}
		}
	}
}

var jsRequire = regexp.MustCompile(`require\(\s*["']([^"']+)["']\s*\)`)

// javascript follows a JavaScript file's requires of files.
func (n *needs) javascript(name string) {
	for _, m := range jsRequire.FindAllStringSubmatch(string(n.files[name]), -1) {
		if !strings.HasPrefix(m[1], "./") && !strings.HasPrefix(m[1], "../") {
			continue // Node's own module
		}
		p := path.Join(path.Dir(name), m[1])
		if file := firstOf(n.files, p, p+".js", p+"/index.js"); file != "" {
			n.visit(file, n.javascript)
		} else {
			n.errs = append(n.errs, fmt.Sprintf("%s requires %s, not in the starter", name, m[1]))
		}
	}
}

var cppInclude = regexp.MustCompile(`(?m)^\s*#\s*include\s*"([^"]+)"`)

// cpp follows a C or C++ file's #include "…", as g++ -I. finds them.
func (n *needs) cpp(name string) {
	for _, m := range cppInclude.FindAllStringSubmatch(string(n.files[name]), -1) {
		if file := firstOf(n.files, path.Join(path.Dir(name), m[1]), path.Clean(m[1])); file != "" {
			n.visit(file, n.cpp)
		} else {
			n.errs = append(n.errs, fmt.Sprintf("%s includes %q, not in the starter", name, m[1]))
		}
	}
}

// goPackage follows a Go package of the module: all its files, and the
// packages they import.
func (n *needs) goPackage(dir, what string) {
	module := ""
	if m := regexp.MustCompile(`(?m)^module\s+(\S+)`).FindSubmatch(n.files["go.mod"]); m != nil {
		module = string(m[1])
	} else {
		n.errs = append(n.errs, "no module line in go.mod")
		return
	}
	var own []string
	for name := range n.files {
		if path.Dir(name) == dir && strings.HasSuffix(name, ".go") {
			own = append(own, name)
		}
	}
	if len(own) == 0 {
		n.errs = append(n.errs, fmt.Sprintf("%s (%s) has no Go file in the starter", dir, what))
		return
	}
	slices.Sort(own)
	for _, name := range own {
		if n.seen[name] {
			continue
		}
		n.seen[name] = true
		f, err := parser.ParseFile(token.NewFileSet(), name, n.files[name], parser.ImportsOnly)
		if err != nil {
			n.errs = append(n.errs, err.Error())
			continue
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			switch rest, ok := strings.CutPrefix(p, module+"/"); {
			case ok:
				n.goPackage(rest, name+"'s import")
			case strings.Contains(strings.SplitN(p, "/", 2)[0], "."):
				n.errs = append(n.errs, fmt.Sprintf("%s imports %s, a module the build cannot download (it has no network): vendor it", name, p))
			}
		}
	}
}

func firstOf(files map[string][]byte, names ...string) string {
	for _, name := range names {
		if files[name] != nil {
			return name
		}
	}
	return ""
}

// gokit.go holds botkits/go's sources byte for byte: go.mod, go.sum and
// every .go file but the tests (as gen_gokit.go copies them).
func TestGoKitIsBotkitsGo(t *testing.T) {
	const fix = "run go generate ./botkits (gen_gokit.go rewrites gokit.go)"
	kit := map[string][]byte{}
	err := filepath.WalkDir("go", func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && (d.Name() == "testdata" || p != "go" && strings.HasPrefix(d.Name(), ".")):
			return filepath.SkipDir
		case d.IsDir():
			return nil
		}
		name := d.Name()
		if name == "go.mod" || name == "go.sum" || strings.HasSuffix(name, ".go") && !strings.HasSuffix(name, "_test.go") {
			data, err := os.ReadFile(p)
			kit[filepath.ToSlash(p)] = data
			return err
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if kit["go/go.mod"] == nil || len(kit) < 10 {
		t.Fatalf("botkits/go holds only %d sources", len(kit))
	}
	copied := map[string]bool{}
	for _, f := range goKit {
		copied[f.Name] = true
		switch data, ok := kit[f.Name]; {
		case !ok:
			t.Errorf("gokit.go holds %s, which botkits/go no longer has: %s", f.Name, fix)
		case !bytes.Equal(data, f.Data):
			t.Errorf("botkits/%s differs from its copy in gokit.go: %s", f.Name, fix)
		}
	}
	for name := range kit {
		if !copied[name] {
			t.Errorf("botkits/%s is not in gokit.go: %s", name, fix)
		}
	}
}
