package compose

import (
	"strings"
	"testing"

	"arena/internal/testsupport/dockertest"
)

// The deploy files are valid compose files and say what docs/deploy.md
// says: the public override turns accounts on and trusts exactly the
// gateway of the network it fixes; the worker's runs arena worker with
// the server's NATS, which it requires.
func TestTheDeployComposeFiles(t *testing.T) {
	dockertest.Client(t)
	compose := composeCommand(t)
	config := func(env []string, files ...string) string {
		args := []string{}
		for _, f := range files {
			args = append(args, "-f", f)
		}
		args = append(append(compose[1:], args...), "config")
		return runIn(t, dockertest.Root(), env, compose[0], args...)
	}
	public := config(nil, "docker-compose.yml", "deploy/docker-compose.public.yml")
	for _, want := range []string{"ARENA_AUTH: accounts", "ARENA_TRUSTED_PROXIES: 172.30.66.1", "gateway: 172.30.66.1", "subnet: 172.30.66.0/24"} {
		if !strings.Contains(public, want) {
			t.Errorf("the public server's compose configuration lacks %q:\n%s", want, public)
		}
	}
	worker := config([]string{"ARENA_NATS=nats://arena.example.org:4222", "ARENA_JOIN=ARENA-1-x"}, "deploy/worker/docker-compose.yml")
	for _, want := range []string{"ARENA_NATS: nats://arena.example.org:4222", "ARENA_JOIN: ARENA-1-x", "/var/run/docker.sock", "worker"} {
		if !strings.Contains(worker, want) {
			t.Errorf("the worker's compose configuration lacks %q:\n%s", want, worker)
		}
	}
}
