package botkits

import (
	"strings"
	"testing"
)

// The kits' sources are there, each language's.
func TestTheKitsSources(t *testing.T) {
	seen := map[string]int{}
	for _, f := range Files() {
		if len(f.Data) == 0 {
			t.Errorf("%s is empty", f.Name)
		}
		seen[strings.SplitN(f.Name, "/", 2)[0]]++
	}
	for _, kit := range []string{"go", "python", "javascript", "cpp"} {
		if seen[kit] < 3 {
			t.Errorf("%d files of the %s kit", seen[kit], kit)
		}
	}
}
