package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/containerd/cgroups/v3"
)

// localLeftovers finds the local bots' cgroups (see local.go) of Arena
// processes that died, kills what still runs in each (a bot's children
// outlive the bot, but not its cgroup) and removes them. The names say
// whose they are: "<pid>-<start>-<n>".
func sweepLocalCgroups(root string, self Owner, alive func(Owner) bool) ([]string, error) {
	mode := cgroupMode(root)
	var dirs func(group string) []string // the group's folder in each hierarchy
	var base string
	switch mode {
	case cgroups.Unified:
		base = filepath.Join(root, localCgroupParent)
		dirs = func(g string) []string { return []string{filepath.Join(base, g)} }
	case cgroups.Legacy, cgroups.Hybrid:
		base = filepath.Join(root, "memory", localCgroupParent)
		dirs = func(g string) []string {
			var out []string
			for _, ctl := range localControllers {
				out = append(out, filepath.Join(root, ctl, localCgroupParent, g))
			}
			return out
		}
	default:
		return nil, nil
	}
	entries, err := os.ReadDir(base)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list the local bots' cgroups: %w", err)
	}
	var removed []string
	var errs []error
	for _, e := range entries {
		o, ok := localOwner(e.Name(), self)
		if !e.IsDir() || !ok || alive(o) {
			continue
		}
		ds := dirs(e.Name())
		thawCgroup(ds)
		if err := killCgroup(ds[0]); err != nil {
			errs = append(errs, err)
			continue
		}
		for _, d := range ds {
			if err := os.Remove(d); err != nil && !errors.Is(err, os.ErrNotExist) {
				errs = append(errs, fmt.Errorf("remove cgroup %s: %w", d, err))
			}
		}
		removed = append(removed, ds[0])
	}
	return removed, errors.Join(errs...)
}

// localOwner reads the owner from a local cgroup's name; it is on this
// machine, in this process's pid space.
func localOwner(name string, self Owner) (Owner, bool) {
	parts := strings.SplitN(name, "-", 3)
	if len(parts) != 3 {
		return Owner{}, false
	}
	pid, err1 := strconv.Atoi(parts[0])
	start, err2 := strconv.ParseUint(parts[1], 10, 64)
	if err1 != nil || err2 != nil {
		return Owner{}, false
	}
	return Owner{Host: self.Host, PID: pid, Start: start, Space: self.Space}, true
}

// thawCgroup thaws a cgroup its owner left frozen, so that its processes
// can be killed: the group's freezer file, whichever of its folders has
// one.
func thawCgroup(dirs []string) {
	for _, d := range dirs {
		os.WriteFile(filepath.Join(d, "freezer.state"), []byte("THAWED"), 0)
		os.WriteFile(filepath.Join(d, "cgroup.freeze"), []byte("0"), 0)
	}
}

// killCgroup kills every process in the cgroup at dir until none is left
// (a process may fork while it is being killed).
func killCgroup(dir string) error {
	for i := 0; i < 100; i++ {
		data, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("processes of cgroup %s: %w", dir, err)
		}
		pids := strings.Fields(string(data))
		if len(pids) == 0 {
			return nil
		}
		for _, p := range pids {
			if n, err := strconv.Atoi(p); err == nil {
				syscall.Kill(n, syscall.SIGKILL)
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	return fmt.Errorf("cgroup %s: its processes do not end", dir)
}
