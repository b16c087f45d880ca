package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/containerd/cgroups/v3"
)

// writeTree creates files under root: path → content.
func writeTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for p, content := range files {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestAccountingV1(t *testing.T) {
	root, proc := t.TempDir(), t.TempDir()
	writeTree(t, proc, map[string]string{
		"42/cgroup": "12:pids:/docker/abc\n4:memory:/docker/abc\n2:cpu,cpuacct:/docker/abc\n1:name=systemd:/docker/abc\n0::/docker/abc\n",
	})
	writeTree(t, root, map[string]string{
		"cpuacct/docker/abc/cpuacct.usage":            "1500000000\n",
		"memory/docker/abc/memory.max_usage_in_bytes": "7340032\n",
		"memory/docker/abc/memory.oom_control":        "oom_kill_disable 0\nunder_oom 0\noom_kill 0\n",
		"memory/docker/abc/cgroup.event_control":      "",
		"pids/docker/abc/pids.events":                 "max 5\n",
	})
	l := cgroupLocator{root: root, procRoot: proc, mode: cgroups.Legacy}
	a := l.forPID(42, 256<<20)
	defer a.close()
	u := a.read()
	want := Usage{Source: "cgroup v1", CPU: 1500 * time.Millisecond, MemPeakBytes: 7340032, PidsLimitHits: 5}
	if u != want {
		t.Errorf("usage = %+v, want %+v", u, want)
	}
	if cpu, ok := a.cpu(); !ok || cpu != 1500*time.Millisecond {
		t.Errorf("cpu = %v, %v", cpu, ok)
	}
	// The counter says OOM: the peak is the limit even if no sample saw it.
	writeTree(t, root, map[string]string{"memory/docker/abc/memory.oom_control": "oom_kill_disable 0\nunder_oom 0\noom_kill 1\n"})
	if !a.oomKilled() || a.read().MemPeakBytes != 256<<20 {
		t.Errorf("after an OOM kill: %+v", a.read())
	}
	// Once the cgroup is gone, the last sample stands.
	if err := os.RemoveAll(filepath.Join(root, "cpuacct")); err != nil {
		t.Fatal(err)
	}
	if u := a.read(); u.CPU != 1500*time.Millisecond {
		t.Errorf("after removal: %+v", u)
	}
}

// A v1 host that mounts the unified hierarchy beside it (hybrid) keeps
// each cgroup's CPU pressure there: the wait is read from it, one file,
// not from every thread's run delay; without it (or with PSI off) the
// run delays stay the source.
func TestAccountingV1ReadsAHybridHostsPressure(t *testing.T) {
	root, proc := t.TempDir(), t.TempDir()
	writeTree(t, proc, map[string]string{
		"42/cgroup": "4:memory:/docker/abc\n2:cpu,cpuacct:/docker/abc\n0::/docker/abc\n",
	})
	v1 := map[string]string{
		"cpuacct/docker/abc/cpuacct.usage":            "1500000000\n",
		"cpuacct/docker/abc/cgroup.procs":             "",
		"cpuacct/docker/abc/tasks":                    "",
		"cpu/docker/abc/cpu.stat":                     "nr_periods 9\nnr_throttled 1\nthrottled_time 2000000\n",
		"memory/docker/abc/memory.max_usage_in_bytes": "7340032\n",
		"memory/docker/abc/memory.oom_control":        "oom_kill 0\n",
		"memory/docker/abc/cgroup.event_control":      "",
	}
	writeTree(t, root, v1)
	l := cgroupLocator{root: root, procRoot: proc, mode: cgroups.Legacy}
	a := l.forPID(42, 256<<20)
	if s, ok := a.sample(); !ok || !s.WaitKnown || s.Wait != 2*time.Millisecond {
		t.Errorf("without the unified hierarchy: %+v %v, want the throttled 2ms and no run delay", s, ok)
	}
	a.close()

	writeTree(t, root, map[string]string{
		"unified/docker/abc/cpu.pressure": "some avg10=0.00 avg60=0.00 avg300=0.00 total=1234\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=99\n",
	})
	a = l.forPID(42, 256<<20)
	defer a.close()
	if a.pressureFile == nil {
		t.Fatal("the unified hierarchy's cpu.pressure is not read")
	}
	if s, ok := a.sample(); !ok || !s.WaitKnown || s.Wait != 2*time.Millisecond+1234*time.Microsecond {
		t.Errorf("sample = %+v %v, want 2ms throttled + 1234µs of pressure", s, ok)
	}

	writeTree(t, root, map[string]string{"unified/docker/abc/cpu.pressure": "garbage\n"})
	b := l.forPID(42, 256<<20)
	defer b.close()
	if b.pressureFile != nil {
		t.Error("an unreadable cpu.pressure is kept as the wait's source")
	}
}

func TestAccountingV2(t *testing.T) {
	root, proc := t.TempDir(), t.TempDir()
	writeTree(t, proc, map[string]string{"7/cgroup": "0::/system.slice/docker-abc.scope\n"})
	writeTree(t, root, map[string]string{
		"system.slice/docker-abc.scope/cpu.stat":      "usage_usec 2500\nuser_usec 2000\nsystem_usec 500\n",
		"system.slice/docker-abc.scope/memory.peak":   "1048576\n",
		"system.slice/docker-abc.scope/memory.events": "low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\n",
		"system.slice/docker-abc.scope/pids.events":   "max 0\n",
	})
	l := cgroupLocator{root: root, procRoot: proc, mode: cgroups.Unified}
	a := l.forPID(7, 64<<20)
	defer a.close()
	u := a.read()
	want := Usage{Source: "cgroup v2", CPU: 2500 * time.Microsecond, MemPeakBytes: 64 << 20, OOMKills: 1}
	if u != want {
		t.Errorf("usage = %+v, want %+v", u, want)
	}
}

func TestAccountingUnavailable(t *testing.T) {
	tests := []struct {
		name string
		l    cgroupLocator
		want string
	}{
		{"no cgroup fs", cgroupLocator{root: "/nonexistent", procRoot: t.TempDir(), mode: cgroups.Unavailable}, "no cgroup filesystem"},
		{"pid not visible", cgroupLocator{root: t.TempDir(), procRoot: t.TempDir(), mode: cgroups.Legacy}, "not visible here"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := tt.l.forPID(99, 1)
			u := a.read()
			if u.Source != "" || !strings.Contains(u.Unavailable, tt.want) {
				t.Errorf("usage = %+v, want unavailable mentioning %q", u, tt.want)
			}
			if _, ok := a.cpu(); ok {
				t.Error("cpu reported without a cgroup")
			}
			a.close()
		})
	}
	proc := t.TempDir()
	writeTree(t, proc, map[string]string{"5/cgroup": "4:memory:/docker/gone\n"})
	a := cgroupLocator{root: t.TempDir(), procRoot: proc, mode: cgroups.Legacy}.forPID(5, 1)
	if u := a.read(); !strings.Contains(u.Unavailable, "cannot read the bot's cgroup") {
		t.Errorf("missing cgroup files: %+v", u)
	}
}

func TestParseStatStart(t *testing.T) {
	line := "1234 (my (odd) bot) S 1 1234 1234 0 -1 4194560 100 0 0 0 5 3 0 0 20 0 1 0 987654 12345 67 18446744073709551615\n"
	if got, err := parseStatStart([]byte(line)); err != nil || got != 987654 {
		t.Errorf("start = %d, %v; want 987654", got, err)
	}
	if _, err := parseStatStart([]byte("garbage")); err == nil {
		t.Error("garbage parsed")
	}
}

func TestOwnerAndLiveness(t *testing.T) {
	for _, o := range []Owner{{Host: "box", PID: 42, Start: 777}, {Host: "box", PID: 42, Start: 777, Space: "b00t.4026531836"}} {
		back, err := ParseOwner(o.String())
		if err != nil || back != o {
			t.Fatalf("round trip: %+v, %v", back, err)
		}
	}
	for _, bad := range []string{"", "box/42", "box/x/1", "box/1/y", "box/1/2/s/t"} {
		if _, err := ParseOwner(bad); err == nil {
			t.Errorf("ParseOwner(%q) accepted", bad)
		}
	}
	proc := t.TempDir()
	writeTree(t, proc, map[string]string{"42/stat": "42 (arena) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 777 0 0\n"})
	live := Liveness{Self: Owner{Host: "box", PID: 1, Start: 1, Space: "b00t.1"}, ProcRoot: proc}
	tests := []struct {
		give Owner
		want bool
	}{
		{Owner{Host: "box", PID: 42, Start: 777}, true},
		{Owner{Host: "box", PID: 42, Start: 778}, false}, // the pid was reused
		{Owner{Host: "box", PID: 43, Start: 777}, false}, // gone
		{Owner{Host: "elsewhere", PID: 43, Start: 1}, true},
		// The same pid space under another host name (a server in a
		// container with the host's pids) is checked.
		{Owner{Host: "container", PID: 42, Start: 777, Space: "b00t.1"}, true},
		{Owner{Host: "container", PID: 43, Start: 777, Space: "b00t.1"}, false},
		// Another pid space cannot be checked.
		{Owner{Host: "box", PID: 43, Start: 777, Space: "b00t.2"}, true},
		{Owner{Host: "box", PID: 43, Start: 777, Space: "other.1"}, true},
		{live.Self, true},
	}
	for _, tt := range tests {
		if got := live.Alive(tt.give); got != tt.want {
			t.Errorf("Alive(%v) = %v, want %v", tt.give, got, tt.want)
		}
	}
}

func TestSelf(t *testing.T) {
	o, err := Self()
	if err != nil {
		t.Fatal(err)
	}
	if o.PID != os.Getpid() || o.Start == 0 || o.Host == "" || !strings.Contains(o.Space, ".") {
		t.Errorf("self = %+v", o)
	}
	if !(Liveness{Self: Owner{Host: "other", Space: o.Space}, ProcRoot: "/proc"}).Alive(o) {
		t.Error("this process is not alive")
	}
	gone := o
	gone.Start++
	if (Liveness{Self: Owner{Host: "other", Space: o.Space}, ProcRoot: "/proc"}).Alive(gone) {
		t.Error("a process with another start time is alive")
	}
}
