package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"arena/internal/testsupport/dockertest"
)

// The platform image is built from the folders .dockerignore lets in:
// every package the arena command is made of must be one of them, or the
// image (docker compose) does not build.
func TestTheDockerignoreLetsInEveryPackage(t *testing.T) {
	root := dockertest.Root()
	data, err := os.ReadFile(filepath.Join(root, ".dockerignore"))
	if err != nil {
		t.Fatal(err)
	}
	allowed := map[string]bool{}
	for _, line := range strings.Split(string(data), "\n") {
		if name, ok := strings.CutPrefix(strings.TrimSpace(line), "!"); ok {
			allowed[name] = true
		}
	}
	cmd := exec.Command("go", "list", "-deps", "./cmd/arena")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		rest, ok := strings.CutPrefix(pkg, "arena/")
		if !ok {
			continue
		}
		if top := strings.SplitN(rest, "/", 2)[0]; !allowed[top] {
			t.Errorf("the arena command needs %s, but .dockerignore leaves %s/ out of the platform image", pkg, top)
		}
	}
}
