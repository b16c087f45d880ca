package compose

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"arena/internal/testsupport/dockertest"
)

// Every setting .env.example offers reaches the container: docker
// compose passes it in docker-compose.yml (a setting missing there would
// be silently ignored), with the default .env.example shows.
func TestEverySettingOfEnvExampleReachesTheContainer(t *testing.T) {
	read := func(name string) string {
		data, err := os.ReadFile(filepath.Join(dockertest.Root(), name))
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	example, compose := read(".env.example"), read("docker-compose.yml")
	settings := regexp.MustCompile(`(?m)^(ARENA_\w+)=(.*)$`).FindAllStringSubmatch(example, -1)
	if len(settings) < 20 {
		t.Fatalf("only %d settings in .env.example", len(settings))
	}
	for _, m := range settings {
		key, def := m[1], strings.TrimSpace(m[2])
		if !strings.Contains(compose, "${"+key+":-"+def+"}") {
			t.Errorf("docker-compose.yml does not pass %s with the default %q of .env.example", key, def)
		}
	}
}

// The platform image is built from the folders .dockerignore lets in:
// every package of the module the arena command is built from is there.
func TestThePlatformImageHasEveryPackage(t *testing.T) {
	root := dockertest.Root()
	ignore, err := os.ReadFile(filepath.Join(root, ".dockerignore"))
	if err != nil {
		t.Fatal(err)
	}
	allowed := map[string]bool{}
	for _, line := range strings.Split(string(ignore), "\n") {
		if dir, ok := strings.CutPrefix(strings.TrimSpace(line), "!"); ok {
			allowed[dir] = true
		}
	}
	cmd := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", "./cmd/arena")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		rest, ok := strings.CutPrefix(pkg, "arena/")
		if !ok {
			continue
		}
		top, _, _ := strings.Cut(rest, "/")
		if !allowed[top] {
			t.Errorf("package %s is left out of the platform image's build: add !%s to .dockerignore", pkg, top)
		}
	}
}
