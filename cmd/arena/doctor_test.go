package main

import (
	"encoding/json"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/image"

	"arena/internal/testsupport/dockertest"
	"arena/sandbox"
	"arena/sandbox/probe"
)

// The doctor judges each rule of the policy from the probe's report, and
// its reasons carry what the probe saw.
func TestPolicyChecks(t *testing.T) {
	sandboxed := probe.Report{
		UID: 65534, GID: 65534, CapEff: "0000000000000000", NoNewPrivs: "1",
		Interfaces: []string{"lo"}, DialErr: "dial tcp 127.0.0.1:9: connect: connection refused",
		RootWriteErr: "open /.arena-probe: read-only file system",
	}
	leaky := probe.Report{
		UID: 0, GID: 0, CapEff: "00000000a80425fb", NoNewPrivs: "0",
		Interfaces:  []string{"lo", "eth0"},
		TmpWriteErr: "open /tmp/.arena-probe: read-only file system", DockerSockFound: []string{"/var/run/docker.sock"},
	}
	gvisor := sandboxed
	gvisor.RootWriteErr = "open /.arena-probe: permission denied"
	tests := []struct {
		give       probe.Report
		rt         sandbox.Runtime
		check      string
		wantPass   bool
		wantReason string
	}{
		{sandboxed, sandbox.Runtime{}, "no_capabilities", true, "effective capabilities 0000000000000000"},
		{sandboxed, sandbox.Runtime{}, "no_new_privileges", true, "NoNewPrivs 1"},
		{sandboxed, sandbox.Runtime{}, "no_network", true, "interfaces: lo; a loopback dial: dial tcp 127.0.0.1:9: connect: connection refused"},
		{sandboxed, sandbox.Runtime{}, "read_only_root", true, "writing to /: open /.arena-probe: read-only file system; writing to /tmp: allowed"},
		{sandboxed, sandbox.Runtime{}, "non_root_user", true, "uid 65534, gid 65534"},
		{sandboxed, sandbox.Runtime{}, "no_docker_socket", true, "Docker socket visible: none"},
		{leaky, sandbox.Runtime{}, "no_capabilities", false, "00000000a80425fb"},
		{leaky, sandbox.Runtime{}, "no_new_privileges", false, "NoNewPrivs 0"},
		{leaky, sandbox.Runtime{}, "no_network", false, "interfaces: lo, eth0; a loopback dial: connected"},
		{leaky, sandbox.Runtime{}, "read_only_root", false, "writing to /: allowed; writing to /tmp: open /tmp/.arena-probe: read-only file system"},
		{leaky, sandbox.Runtime{}, "non_root_user", false, "uid 0, gid 0"},
		{leaky, sandbox.Runtime{}, "no_docker_socket", false, "Docker socket visible: /var/run/docker.sock"},
		// gVisor refuses writes to its read-only root as a permission; runc
		// would not, so there it is no proof.
		{gvisor, sandbox.Runtime{Name: "runsc", GVisor: true}, "read_only_root", true, "permission denied"},
		{gvisor, sandbox.Runtime{}, "read_only_root", false, "permission denied"},
		{gvisor, sandbox.Runtime{Name: "runsc", GVisor: true}, "runtime", true, "gVisor"},
	}
	for _, tt := range tests {
		checks := map[string]check{}
		policyChecks(tt.give, tt.rt, checks)
		got, ok := checks[tt.check]
		if !ok || got.Pass != tt.wantPass || !strings.Contains(got.Reason, tt.wantReason) {
			t.Errorf("%s for %+v: %+v, want pass %v with %q", tt.check, tt.give, got, tt.wantPass, tt.wantReason)
		}
	}
}

// arena doctor leaves no image behind: the probe image it makes is
// removed when it is done (one it found is kept).
func TestDoctorLeavesNoImage(t *testing.T) {
	cli := dockertest.Client(t)
	bin := arenaBinary(t)
	probes := func() []string {
		list, err := cli.ImageList(t.Context(), image.ListOptions{Filters: filters.NewArgs(filters.Arg("reference", "arena/probe"))})
		if err != nil {
			t.Fatal(err)
		}
		var refs []string
		for _, img := range list {
			refs = append(refs, img.RepoTags...)
		}
		slices.Sort(refs)
		return refs
	}
	before := probes()
	out, err := exec.Command(bin, "doctor", "--rounds", "100", "--json").CombinedOutput()
	var rep struct{ Checks map[string]check }
	if jerr := json.Unmarshal(out, &rep); jerr != nil || !rep.Checks["no_network"].Pass || !rep.Checks["stdio"].Pass {
		t.Fatalf("arena doctor: %v, %v\n%s", err, jerr, out)
	}
	if after := probes(); !slices.Equal(before, after) {
		t.Errorf("probe images before arena doctor %v, after %v", before, after)
	}
}
