package botkits

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Every kit's draw helper writes the same annotation line for the same
// shapes, and nothing on a turn that drew none: Python, JavaScript, C++
// (g++) and Go (go test inside botkits/go, a module of its own).
func TestEveryKitDrawsTheSameLine(t *testing.T) {
	want := `#arena {"draw":[{"circle":[3,4],"text":"me"},{"line":[[3,4],[7,4]],"color":"#e33"}]}`
	run := func(name string, cmd *exec.Cmd) {
		t.Helper()
		cmd.Stdout = nil
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("%s: %v\n%s", name, err, stderr.String())
		}
		if got := strings.TrimSpace(stderr.String()); got != want {
			t.Errorf("%s writes\n%s\nwant\n%s", name, got, want)
		}
	}
	need := func(bin string) string {
		t.Helper()
		p, err := exec.LookPath(bin)
		if err != nil {
			t.Fatalf("%s is needed to test its kit: %v", bin, err)
		}
		return p
	}
	py := exec.Command(need("python3"), "-c", `import draw
draw.circle(3, 4, text="me"); draw.line((3, 4), (7, 4), "#e33"); draw.flush(); draw.flush()`)
	py.Dir = "python"
	run("python", py)
	js := exec.Command(need("node"), "-e", `const draw = require("./draw.js");
draw.circle(3, 4, undefined, "me"); draw.line([3, 4], [7, 4], "#e33"); draw.flush(); draw.flush();`)
	js.Dir = "javascript"
	run("javascript", js)
	dir := t.TempDir()
	src := filepath.Join(dir, "draw.cpp")
	if err := os.WriteFile(src, []byte(`#include "draw.h"
int main() { draw::circle(3, 4, "", "me"); draw::line(3, 4, 7, 4, "#e33"); draw::flush(); draw::flush(); }
`), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "draw")
	if out, err := exec.Command(need("g++"), "-std=c++17", "-I", "cpp", src, "-o", bin).CombinedOutput(); err != nil {
		t.Fatalf("g++: %v\n%s", err, out)
	}
	run("c++", exec.Command(bin))
	goTest := exec.Command(need("go"), "test", "-count=1", "-run", "^TestFlushWritesOneLine$", "./draw")
	goTest.Dir = "go"
	if out, err := goTest.CombinedOutput(); err != nil {
		t.Errorf("the Go kit's draw: %v\n%s", err, out)
	}
}
