// Package layers checks the import rules between Arena's packages: the
// layers the architecture (docs/architecture.md) promises; and that no
// function grows past a complexity one can read (complexity_test.go).
package layers

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// deps lists the Arena packages pkg depends on, directly or not.
func deps(t *testing.T, pkg string) []string {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", pkg).Output()
	if err != nil {
		t.Fatalf("go list -deps %s: %v", pkg, err)
	}
	var own []string
	for _, p := range strings.Fields(string(out)) {
		if strings.HasPrefix(p, "arena/") && p != pkg {
			own = append(own, p)
		}
	}
	return own
}

func TestLayers(t *testing.T) {
	for _, rule := range []struct {
		pkg    string
		not    []string // packages pkg must not depend on
		reason string
	}{
		{"arena/web", []string{"arena/sandbox", "arena/orchestrator", "arena/dispatch", "arena/sourcebuild/sandboxed"},
			"the HTTP layer is given the runner, the dispatcher and the builder"},
		{"arena/platform", []string{"arena/web", "arena/sandbox", "arena/orchestrator", "arena/dispatch", "arena/sourcebuild/sandboxed"},
			"the use cases are given the runner, the dispatcher and the builder, and are served by web"},
		{"arena/matches", []string{"arena/sandbox", "arena/orchestrator"}, "what a match is starts nothing"},
		{"arena/contest", []string{"arena/sandbox", "arena/orchestrator", "arena/web"}, "contests are played through a queue"},
		{"arena/ladder", []string{"arena/sandbox", "arena/orchestrator", "arena/web"}, "ladders are played through a queue"},
		{"arena/sandbox", []string{"arena/engine", "arena/matches", "arena/orchestrator"}, "the sandbox knows nothing of games"},
		{"arena/engine", []string{"arena/sandbox", "arena/matches", "arena/orchestrator", "arena/store"}, "the engine is pure"},
	} {
		got := deps(t, rule.pkg)
		if rule.pkg != "arena/engine" && !slices.Contains(got, "arena/internal/errs") {
			t.Fatalf("%s: go list found none of its dependencies: %v", rule.pkg, got)
		}
		for _, no := range rule.not {
			if slices.Contains(got, no) {
				t.Errorf("%s depends on %s, but %s", rule.pkg, no, rule.reason)
			}
		}
	}
}

// The use cases know nothing of HTTP: web decodes a request, calls the
// platform and encodes its answer. (The registry the platform holds is an
// HTTP handler itself, which web serves.)
func TestThePlatformKnowsNothingOfHTTP(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{join .Imports " "}}`, "arena/platform").Output()
	if err != nil {
		t.Fatalf("go list arena/platform: %v", err)
	}
	imports := strings.Fields(string(out))
	if !slices.Contains(imports, "arena/matches") {
		t.Fatalf("go list found none of arena/platform's imports: %v", imports)
	}
	for _, no := range []string{"net/http", "github.com/labstack/echo/v4", "github.com/alexedwards/scs/v2"} {
		if slices.Contains(imports, no) {
			t.Errorf("arena/platform imports %s", no)
		}
	}
}

// No production code imports the tests' support (internal/testsupport):
// only tests, and the support itself, do.
func TestProductionImportsNoTestSupport(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, "arena/...").Output()
	if err != nil {
		t.Fatalf("go list arena/...: %v", err)
	}
	const support = "arena/internal/testsupport/"
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) < 30 {
		t.Fatalf("go list found only %d packages", len(lines))
	}
	for _, line := range lines {
		fields := strings.Fields(line)
		if strings.HasPrefix(fields[0], support) {
			continue
		}
		for _, imp := range fields[1:] {
			if strings.HasPrefix(imp, support) {
				t.Errorf("%s imports %s: test support is for tests only", fields[0], imp)
			}
		}
	}
}
