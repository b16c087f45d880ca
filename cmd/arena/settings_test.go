package main

import (
	"flag"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"arena/internal/testsupport/dockertest"
)

// envName is an environment variable of Arena's; streams are NATS
// streams' names, which look like one.
var (
	envName = regexp.MustCompile(`^ARENA_[A-Z0-9_]+$`)
	streams = map[string]bool{"ARENA_MATCHES": true, "ARENA_EVENTS": true}
)

// Every ARENA_* variable is read through the settings table (config.go)
// and nowhere else: a setting has one name, one default and one place
// that reads it (TestTheDocsListEverySetting: and one row in the docs).
func TestSettingsAreReadOnlyFromTheTable(t *testing.T) {
	root := dockertest.Root()
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			switch rel {
			// Another module; the test bots; what a bot runs (its own
			// environment, ARENA_BOT_ID, is not a setting).
			case "botkits", "internal/testsupport/testbots", "sandbox/probe", ".git", "build":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || rel == filepath.Join("cmd", "arena", "config.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		// A variable's name handed to a function (os.Getenv, a helper of
		// one's own) is a read, but for settingValue's.
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) == 0 {
				return true
			}
			if id, ok := call.Fun.(*ast.Ident); ok && id.Name == "settingValue" {
				return true
			}
			lit, ok := call.Args[0].(*ast.BasicLit)
			if !ok {
				return true
			}
			if v, _ := strconv.Unquote(lit.Value); envName.MatchString(v) && !streams[v] {
				t.Errorf("%s: reads %s itself: read it through the settings table (settingValue, or a flag of register*)", fset.Position(call.Pos()), v)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, s := range settings {
		if seen[s.env] {
			t.Errorf("%s is in the table twice", s.env)
		}
		seen[s.env] = true
	}
}

// Every set of settings a command registers has each flag once: a name
// taken twice panics the command (two settings named alike for different
// commands, such as the worker's and arena nats's --name).
func TestEveryCommandsFlagsRegister(t *testing.T) {
	// As the commands register them (run, bench and doctor as run does).
	sets := map[string]func(fs *flag.FlagSet){
		"run":          func(fs *flag.FlagSet) { register(fs, false) },
		"serve":        func(fs *flag.FlagSet) { register(fs, true) },
		"replay rerun": func(fs *flag.FlagSet) { rerunFlags(io.Discard) },
		"replay":       func(fs *flag.FlagSet) { registerIf(fs, replaySetting) },
		"worker": func(fs *flag.FlagSet) {
			register(fs, false)
			registerOnly(fs, workerSettings...)
			registerFor(fs, "worker")
		},
		"nats": func(fs *flag.FlagSet) { registerFor(fs, "nats") },
	}
	for name, reg := range sets {
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("%s: %v", name, r)
				}
			}()
			fs := flag.NewFlagSet(name, flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			reg(fs)
		}()
	}
}
