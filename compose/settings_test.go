package compose

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"arena/internal/dockertest"
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
