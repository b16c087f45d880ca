package sandbox

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/containerd/cgroups/v3"
	"github.com/containerd/cgroups/v3/cgroup1"
	"golang.org/x/sys/unix"
)

// Usage is what a bot consumed, read from its cgroup.
type Usage struct {
	// Source is "cgroup v1" or "cgroup v2"; empty when the figures could
	// not be read, and then Unavailable says why.
	Source      string
	Unavailable string
	CPU         time.Duration
	// MemPeakBytes is the highest memory use seen (the kernel's own peak
	// counter where it has one).
	MemPeakBytes int64
	// OOMKills counts processes the kernel killed for memory.
	OOMKills int64
	// PidsLimitHits counts forks refused at the pids limit.
	PidsLimitHits int64
}

// cgroupLocator finds a container's cgroup on this machine. Roots are
// injectable so the parsers can be tested on fixtures.
type cgroupLocator struct {
	root     string // the cgroup mount, normally /sys/fs/cgroup
	procRoot string // normally /proc
	mode     cgroups.CGMode
}

// hostCgroups finds cgroups under root, normally /sys/fs/cgroup; inside a
// container that shares the host's pid namespace it is where the host's
// cgroup filesystem is mounted.
func hostCgroups(root string) cgroupLocator {
	return cgroupLocator{root: root, procRoot: "/proc", mode: cgroupMode(root)}
}

// cgroupMode tells cgroup v2 (one unified hierarchy) from v1 by the file
// system at root.
func cgroupMode(root string) cgroups.CGMode {
	var st unix.Statfs_t
	if err := unix.Statfs(root, &st); err != nil {
		return cgroups.Unavailable
	}
	if st.Type == unix.CGROUP2_SUPER_MAGIC {
		return cgroups.Unified
	}
	return cgroups.Legacy
}

// forPID finds the cgroup of a process (a container's init). It never
// fails: when the cgroup cannot be read, the accounting says why.
//
// memLimit is the container's memory limit: a bot killed for memory used
// all of it, even if no sample caught the peak before the cgroup vanished.
func (l cgroupLocator) forPID(pid int, memLimit int64) *accounting {
	if l.mode == cgroups.Unavailable {
		return unavailable("no cgroup filesystem is mounted at " + l.root)
	}
	legacy, unified, err := cgroups.ParseCgroupFileUnified(fmt.Sprintf("%s/%d/cgroup", l.procRoot, pid))
	if err != nil {
		return unavailable(fmt.Sprintf("the bot's process is not visible here (%v); is the engine remote or Arena in a container without the host's pid namespace?", err))
	}
	return l.forGroup(legacy, unified, memLimit)
}

// forGroup opens the accounting of a cgroup known by its paths: per v1
// controller, or the v2 path.
func (l cgroupLocator) forGroup(legacy map[string]string, unified string, memLimit int64) *accounting {
	var err error
	a := &accounting{memLimit: memLimit}
	if l.mode == cgroups.Unified {
		dir := filepath.Join(l.root, unified)
		a.source = "cgroup v2"
		err = a.open(
			filepath.Join(dir, "cpu.stat"),
			firstExisting(filepath.Join(dir, "memory.peak"), filepath.Join(dir, "memory.current")),
			filepath.Join(dir, "memory.events"),
			filepath.Join(dir, "pids.events"))
		a.cpuKey, a.cpuScale = "usage_usec", time.Microsecond
	} else {
		a.source = "cgroup v1"
		memDir := filepath.Join(l.root, "memory", legacy["memory"])
		err = a.open(
			filepath.Join(l.root, "cpuacct", legacy["cpuacct"], "cpuacct.usage"),
			filepath.Join(memDir, "memory.max_usage_in_bytes"),
			filepath.Join(memDir, "memory.oom_control"),
			filepath.Join(l.root, "pids", legacy["pids"], "pids.events"))
		a.cpuScale = time.Nanosecond
		if err == nil {
			a.watchOOMv1(l.root, legacy["memory"], memDir)
		}
	}
	if err != nil {
		a.close()
		return unavailable(fmt.Sprintf("cannot read the bot's cgroup: %v", err))
	}
	a.read()
	return a
}

func firstExisting(paths ...string) string {
	for _, p := range paths {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return paths[len(paths)-1]
}

// accounting reads one bot's cgroup files. The files are kept open and
// re-read from offset 0, which the kernel regenerates.
type accounting struct {
	source      string
	unavailable string
	cpuKey      string // v2: the cpu.stat key; v1: the file is the value
	cpuScale    time.Duration
	memLimit    int64

	cpuFile, memFile, oomFile, pidsFile *os.File

	mu   sync.Mutex
	last Usage
	buf  [512]byte

	oomEvent  atomic.Bool
	oomWatch  *os.File
	watchDone chan struct{}
}

func unavailable(reason string) *accounting { return &accounting{unavailable: reason} }

func (a *accounting) open(cpu, mem, oom, pids string) error {
	var err error
	if a.cpuFile, err = os.Open(cpu); err != nil {
		return err
	}
	if a.memFile, err = os.Open(mem); err != nil {
		return err
	}
	if a.oomFile, err = os.Open(oom); err != nil {
		return err
	}
	// pids.events is missing on older kernels: the count is then 0.
	a.pidsFile, _ = os.Open(pids)
	return nil
}

// watchOOMv1 registers for the memory cgroup's OOM notification, which
// fires when the OOM killer runs — before the cgroup, and its counter,
// vanish with the container.
func (a *accounting) watchOOMv1(root, rel, dir string) {
	cg, err := cgroup1.Load(cgroup1.StaticPath(rel), cgroup1.WithHierarchy(func() ([]cgroup1.Subsystem, error) {
		return []cgroup1.Subsystem{cgroup1.NewMemory(root)}, nil
	}))
	if err != nil {
		return
	}
	fd, err := cg.OOMEventFD()
	if err != nil {
		return
	}
	if err := unix.SetNonblock(int(fd), true); err != nil {
		unix.Close(int(fd))
		return
	}
	a.oomWatch = os.NewFile(fd, "oom-eventfd")
	a.watchDone = make(chan struct{})
	go func() {
		defer close(a.watchDone)
		var b [8]byte
		for {
			if _, err := a.oomWatch.Read(b[:]); err != nil {
				return
			}
			// The eventfd also fires when the cgroup is removed; an OOM is
			// when the cgroup is still there.
			if _, err := os.Stat(dir); err == nil {
				a.oomEvent.Store(true)
			}
		}
	}()
}

// cpu reads the CPU time used so far.
func (a *accounting) cpu() (time.Duration, bool) {
	if a.cpuFile == nil {
		return 0, false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	v, err := a.readValue(a.cpuFile, a.cpuKey)
	if err != nil {
		return 0, false
	}
	d := time.Duration(v) * a.cpuScale
	a.last.CPU = d
	return d, true
}

// read samples every figure. When the cgroup is gone (the container
// ended), the last good sample is returned.
func (a *accounting) read() Usage {
	if a.cpuFile == nil {
		return Usage{Unavailable: a.unavailable}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	u := a.last
	u.Source = a.source
	if v, err := a.readValue(a.cpuFile, a.cpuKey); err == nil {
		u.CPU = time.Duration(v) * a.cpuScale
	}
	if v, err := a.readValue(a.memFile, ""); err == nil {
		u.MemPeakBytes = max(u.MemPeakBytes, v)
	}
	if v, err := a.readValue(a.oomFile, "oom_kill"); err == nil {
		u.OOMKills = max(u.OOMKills, v)
	}
	if a.pidsFile != nil {
		if v, err := a.readValue(a.pidsFile, "max"); err == nil {
			u.PidsLimitHits = max(u.PidsLimitHits, v)
		}
	}
	if a.oomEvent.Load() {
		u.OOMKills = max(u.OOMKills, 1)
	}
	if u.OOMKills > 0 {
		u.MemPeakBytes = max(u.MemPeakBytes, a.memLimit)
	}
	a.last = u
	return u
}

// oomKilled is the verdict of the cgroup: its oom_kill counter, or the
// kernel's OOM notification.
func (a *accounting) oomKilled() bool { return a.read().OOMKills > 0 }

// readValue reads a single-number file (key "") or the value of key in a
// "key value" file. It must be called with mu held.
func (a *accounting) readValue(f *os.File, key string) (int64, error) {
	n, err := f.ReadAt(a.buf[:], 0)
	if n == 0 && err != nil {
		return 0, err
	}
	data := a.buf[:n]
	if key == "" {
		return strconv.ParseInt(string(bytes.TrimSpace(data)), 10, 64)
	}
	return parseKeyValue(data, key)
}

func parseKeyValue(data []byte, key string) (int64, error) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		k, v, ok := bytes.Cut(sc.Bytes(), []byte{' '})
		if ok && string(k) == key {
			return strconv.ParseInt(string(bytes.TrimSpace(v)), 10, 64)
		}
	}
	return 0, errors.New("no " + key + " line")
}

func (a *accounting) close() {
	for _, f := range []*os.File{a.cpuFile, a.memFile, a.oomFile, a.pidsFile} {
		if f != nil {
			f.Close()
		}
	}
	if a.oomWatch != nil {
		a.oomWatch.Close()
		<-a.watchDone
	}
}
