package sandbox

import (
	"errors"
	"strconv"
	"strings"
	"testing"
)

func TestContainerConfigAppliesThePolicy(t *testing.T) {
	p := DefaultPolicy()
	p.CPUSet = "1"
	cfg, host := containerConfig(p, containerSpec{image: "sha256:abc", env: []string{"ARENA_BOT_ID=x"}, user: "20001:20001", labels: map[string]string{LabelPlatform: "arena"}, volumes: []string{"/data"}})
	checks := []struct {
		name string
		ok   bool
	}{
		{"image by id", cfg.Image == "sha256:abc"},
		{"stdin open once", cfg.OpenStdin && cfg.StdinOnce && cfg.AttachStdin && !cfg.Tty},
		{"network off", cfg.NetworkDisabled && host.NetworkMode == "none"},
		{"user", cfg.User == "20001:20001"},
		{"labels", cfg.Labels[LabelPlatform] == "arena"},
		{"read-only root", host.ReadonlyRootfs},
		{"tmpfs", strings.Contains(host.Tmpfs["/tmp"], "size=16777216") && strings.Contains(host.Tmpfs["/tmp"], "nosuid")},
		{"a tmpfs over each of the image's volumes", host.Tmpfs["/data"] == host.Tmpfs["/tmp"] && len(host.Tmpfs) == 2},
		{"bounded /dev/shm", host.ShmSize == 16<<20},
		{"no capabilities", len(host.CapDrop) == 1 && host.CapDrop[0] == "ALL" && len(host.CapAdd) == 0},
		{"no new privileges", len(host.SecurityOpt) == 1 && host.SecurityOpt[0] == "no-new-privileges"},
		{"no log driver", host.LogConfig.Type == "none"},
		{"init", host.Init != nil && *host.Init},
		{"private ipc", host.IpcMode == "private"},
		{"not privileged, no mounts", !host.Privileged && len(host.Binds) == 0 && len(host.Mounts) == 0},
		{"memory without swap", host.Memory == 256<<20 && host.MemorySwap == host.Memory},
		{"one cpu", host.NanoCPUs == 1e9 && host.CpusetCpus == "1"},
		{"pids", host.PidsLimit != nil && *host.PidsLimit == 64},
		{"ulimits", len(host.Ulimits) == 3 && host.Ulimits[2].Name == "core" && host.Ulimits[2].Hard == 0},
	}
	for _, c := range checks {
		if !c.ok {
			t.Errorf("policy not applied: %s", c.name)
		}
	}
}

func TestPolicyValidate(t *testing.T) {
	tests := []struct {
		name   string
		change func(*Policy)
		want   string
	}{
		{"tiny memory", func(p *Policy) { p.MemoryBytes = 1 << 20 }, "memory limit"},
		{"too little cpu", func(p *Policy) { p.NanoCPUs = 1e6 }, "cpu quota"},
		{"no pids", func(p *Policy) { p.PidsLimit = 0 }, "pids limit"},
		{"bad cpuset", func(p *Policy) { p.CPUSet = "two" }, "cpuset"},
		{"reversed cpuset", func(p *Policy) { p.CPUSet = "3-1" }, "cpuset"},
		{"few files", func(p *Policy) { p.NoFile = 3 }, "open-files"},
		{"root uid", func(p *Policy) { p.FallbackUID = 0 }, "fallback uid"},
	}
	if err := DefaultPolicy().Validate(); err != nil {
		t.Fatalf("the default policy is invalid: %v", err)
	}
	for _, tt := range tests {
		p := DefaultPolicy()
		tt.change(&p)
		if err := p.Validate(); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v, want it to mention %q", tt.name, err, tt.want)
		}
	}
	p := DefaultPolicy()
	p.CPUSet = "0-1,3"
	if err := p.Validate(); err != nil {
		t.Errorf("cpuset 0-1,3: %v", err)
	}
}

// A spec's memory limit replaces the policy's in the bot's container,
// swap still equal to it (none), and nothing else of the policy changes;
// a spec without one gets the policy's. A limit below the engine's
// minimum is refused, naming it.
func TestASpecsMemoryLimit(t *testing.T) {
	p := DefaultPolicy()
	d := &Docker{policy: p}
	for _, tc := range []struct{ give, want int64 }{{0, p.MemoryBytes}, {64 << 20, 64 << 20}, {1 << 30, 1 << 30}} {
		bc := d.botContainer(Spec{Image: Image{ID: "sha256:abc"}, BotID: "b", MemoryBytes: tc.give}, 20001)
		r := bc.host.Resources
		if r.Memory != tc.want || r.MemorySwap != tc.want {
			t.Errorf("spec memory %d: container memory %d, swap %d, want both %d", tc.give, r.Memory, r.MemorySwap, tc.want)
		}
		if r.NanoCPUs != p.NanoCPUs || *r.PidsLimit != p.PidsLimit || !bc.host.ReadonlyRootfs {
			t.Errorf("spec memory %d: the rest of the policy changed: %+v", tc.give, r)
		}
	}
	for give, ok := range map[int64]bool{0: true, MinMemoryBytes: true, 64 << 20: true, MinMemoryBytes - 1: false, 1 << 20: false, -1: false} {
		err := checkSpec(Spec{MemoryBytes: give})
		switch {
		case ok && err != nil:
			t.Errorf("memory %d refused: %v", give, err)
		case !ok && (!errors.Is(err, ErrBadSpec) || !strings.Contains(err.Error(), strconv.FormatInt(give, 10))):
			t.Errorf("memory %d: %v, want ErrBadSpec naming it", give, err)
		}
	}
}
