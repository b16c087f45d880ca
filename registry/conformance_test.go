package registry

import (
	"context"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/distribution/distribution/v3/configuration"
	"github.com/distribution/distribution/v3/registry/handlers"
	"gopkg.in/yaml.v3"

	"arena/accounts"
	"arena/internal/errs"
	"arena/internal/testsupport/dockertest"
)

// conformance runs the OCI distribution-spec conformance suite (the tool
// named in go.mod) against a registry, as a user, and returns its verdict
// per test ("Pass", "FAIL", "Skip", "Disabled"), API's and data's.
func conformance(t *testing.T, tool, url, user, pass string) map[string]string {
	t.Helper()
	results := t.TempDir()
	cmd := exec.Command(tool)
	cmd.Dir = results
	cmd.Env = append(os.Environ(), "OCI_REGISTRY="+strings.TrimPrefix(url, "http://"), "OCI_TLS=disabled",
		"OCI_REPO1="+user+"/repo1", "OCI_REPO2="+user+"/repo2", "OCI_USERNAME="+user, "OCI_PASSWORD="+pass, "OCI_RESULTS_DIR="+results)
	if out, err := cmd.CombinedOutput(); err != nil && !strings.Contains(string(out), "Conformance test detected a failure") {
		t.Fatalf("the conformance suite: %v\n%s", err, out)
	}
	b, err := os.ReadFile(filepath.Join(results, "results.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		APIs map[string]string `yaml:"apis"`
		Data map[string]string `yaml:"data"`
	}
	if err := yaml.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for k, v := range r.APIs {
		out["api: "+k] = v
	}
	for k, v := range r.Data {
		out["data: "+k] = v
	}
	return out
}

// The embedded registry, with accounts, passes every test of the OCI
// conformance suite that the reference implementation alone passes (run
// here side by side, without auth), as alice with her token, but the
// nested index it refuses on purpose.
func TestConformance(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the OCI conformance suite (skipped with -short)")
	}
	tool := dockertest.GoBinary(t, dockertest.Root(), "github.com/opencontainers/distribution-spec/conformance")

	ref := &configuration.Configuration{Storage: configuration.Storage{"filesystem": configuration.Parameters{"rootdirectory": t.TempDir()}, "delete": configuration.Parameters{"enabled": true}}}
	ref.HTTP.Secret = "reference"
	reference := httptest.NewServer(handlers.NewApp(context.Background(), ref))
	defer reference.Close()
	want := conformance(t, tool, reference.URL, "alice", "unused")

	reg, err := New(t.Context(), Config{Dir: t.TempDir()}, Deps{Authenticate: func(_ context.Context, name, token string) (accounts.Principal, error) {
		if name == "alice" && token == "alices-token" {
			return accounts.Principal{Name: "alice", Role: accounts.RolePlayer}, nil
		}
		return accounts.Anonymous, errs.Errorf(errs.ErrUnauthenticated, "no")
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Close()
	arena := httptest.NewServer(reg)
	defer arena.Close()
	got := conformance(t, tool, arena.URL, "alice", "alices-token")

	// Refused here on purpose: an index that lists another index (it
	// would hide what it stores from the quotas; see checkManifest).
	refused := map[string]bool{"data: Nested Index": true}
	var passed, refPassed []string
	for test, verdict := range want {
		if refused[test] {
			if got[test] == "Pass" {
				t.Errorf("%s passes here: the registry should refuse it", test)
			}
			continue
		}
		if verdict == "Pass" {
			refPassed = append(refPassed, test)
			if got[test] != "Pass" {
				t.Errorf("%s: %s here, Pass with the reference implementation", test, got[test])
			}
		}
	}
	for test, verdict := range got {
		if verdict == "Pass" {
			passed = append(passed, test)
		}
	}
	slices.Sort(passed)
	t.Logf("%d tests pass here, %d with the reference implementation: %s", len(passed), len(refPassed), strings.Join(passed, "; "))
	if len(refPassed) < 20 {
		t.Errorf("only %d tests pass with the reference implementation: the suite did not run as it should", len(refPassed))
	}
	// Without credentials nothing passes but the version check.
	anonymous := conformance(t, tool, arena.URL, "alice", "")
	if anonymous["data: Image"] == "Pass" {
		t.Error("an image was pushed and pulled without credentials")
	}
}
