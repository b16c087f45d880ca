package sandbox

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
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
		if err == nil {
			a.openTiming(filepath.Join(dir, "cgroup.procs"),
				filepath.Join(dir, "cpu.stat"), "throttled_usec", time.Microsecond, filepath.Join(dir, "cgroup.threads"), filepath.Join(dir, "cpu.pressure"))
			a.procRoot = l.procRoot
			a.openFreezer(filepath.Join(dir, "cgroup.freeze"), "1", "0")
		}
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
			a.openTiming(filepath.Join(l.root, "cpuacct", legacy["cpuacct"], "cgroup.procs"),
				filepath.Join(l.root, "cpu", legacy["cpu"], "cpu.stat"), "throttled_time", time.Nanosecond,
				filepath.Join(l.root, "cpuacct", legacy["cpuacct"], "tasks"), hybridPressure(l.root, unified))
			a.procRoot = l.procRoot
			if group, ok := legacy["freezer"]; ok {
				holdFreezerV1(l.root)
				a.openFreezer(filepath.Join(l.root, "freezer", group, "freezer.state"), "FROZEN", "THAWED")
			}
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

	// The freezer (see freeze): the cgroup's list of processes; empty,
	// with why, when the cgroup cannot be frozen from here. The lists of
	// processes and threads are opened afresh for every read: on cgroup v1
	// an open list is the one the kernel made at its first read, kept as
	// long as it is read again within a second (a bot's later processes
	// and threads would never be seen).
	procsPath         string
	freezeUnavailable string
	// freezeFile is the cgroup's freezer, written frozenWord and
	// thawedWord; nil where signals stop the bot instead. freezeMethod
	// says which, and why.
	freezeFile             *os.File
	frozenWord, thawedWord []byte
	freezeMethod           string
	// Waiting for a CPU: the cgroup's throttled time (cpu.stat), and the
	// time its runnable threads waited for a CPU: the cgroup's CPU
	// pressure on v2 (and on v1 where the host mounts the unified
	// hierarchy beside it, see hybridPressure), else the sum of its
	// threads' run delays (/proc/<tid>/schedstat of the threads in
	// tasks). The threads (tasks, cgroup.threads) also tell whether the
	// bot is runnable now.
	throttleFile  *os.File
	throttleKey   string
	throttleScale time.Duration
	tasksPath     string
	pressureFile  *os.File
	procRoot      string
	// sched are the open schedstat files of the threads, by id, listed
	// at tasksListed (see readRunDelay).
	sched       map[string]*os.File
	tasksListed time.Time
}

// Sample is what a bot had used at one moment: CPU time, and time it was
// runnable but waited for a CPU or was throttled by its quota (Wait).
type Sample struct {
	CPU, Wait time.Duration
	// WaitKnown is false when the waiting time cannot be read here.
	WaitKnown bool
}

func unavailable(reason string) *accounting {
	return &accounting{unavailable: reason, freezeUnavailable: reason}
}

// openTiming opens the freezer's list of processes and the waiting-time
// files; what cannot be opened is done without (the freezer's reason is
// kept).
func (a *accounting) openTiming(procs, cpuStat, throttleKey string, throttleScale time.Duration, tasks, pressure string) {
	if f, err := os.Open(procs); err == nil {
		f.Close()
		a.procsPath = procs
	} else {
		a.freezeUnavailable = fmt.Sprintf("the bot's processes cannot be listed from here: %v", err)
	}
	if f, err := os.Open(cpuStat); err == nil {
		a.throttleFile, a.throttleKey, a.throttleScale = f, throttleKey, throttleScale
	}
	if f, err := os.Open(tasks); tasks != "" && err == nil {
		f.Close()
		a.tasksPath = tasks
	}
	if pressure != "" {
		a.pressureFile, _ = os.Open(pressure)
	}
	if a.pressureFile != nil {
		if _, err := a.readPressure(); err != nil { // PSI off
			a.pressureFile.Close()
			a.pressureFile = nil
		}
	}
}

// hybridPressure is the cpu.pressure of a v1 bot's cgroup in the unified
// hierarchy that hybrid hosts mount beside v1 (root/unified, no
// controllers, but the kernel's pressure figures): one read where v1
// needs one per thread (readRunDelay). openTiming does without it where
// the host has none.
func hybridPressure(root, unified string) string {
	if unified == "" || unified == "/" {
		return ""
	}
	return filepath.Join(root, "unified", unified, "cpu.pressure")
}

// freeze stops every process of the cgroup where it is; thaw lets them
// run again. Where the cgroup's freezer can be written (freezer.state on
// cgroup v1, cgroup.freeze on v2) the kernel freezes the whole cgroup at
// once: a process forked while it freezes is born frozen, so no chain of
// forks outruns it. Elsewhere (a read-only cgroup file system) every
// process listed is sent SIGSTOP, which no process can catch or ignore,
// and the list is read again until it holds no new process; a process
// that keeps changing its pid can slip through that sweep, and the CPU
// it then uses is charged to the bot's next answer (orchestrator).
func (a *accounting) freeze() error {
	if a.freezeFile != nil {
		_, err := a.freezeFile.Write(a.frozenWord)
		return err
	}
	stopped := map[int]bool{}
	for round := 0; round < 8; round++ {
		pids, err := a.procs()
		if err != nil {
			return err
		}
		fresh := false
		for _, pid := range pids {
			if !stopped[pid] {
				unix.Kill(pid, unix.SIGSTOP)
				stopped[pid], fresh = true, true
			}
		}
		if !fresh {
			return nil
		}
	}
	return nil
}

func (a *accounting) thaw() error {
	if a.freezeFile != nil {
		_, err := a.freezeFile.Write(a.thawedWord)
		return err
	}
	return a.cont()
}

// cont sends SIGCONT to every process of the cgroup: the signal freezer's
// thaw, and the end of a stop no freeze of Arena's made.
func (a *accounting) cont() error {
	pids, err := a.procs()
	for _, pid := range pids {
		unix.Kill(pid, unix.SIGCONT)
	}
	return err
}

// openFreezer opens the cgroup's freezer file, if it can be written from
// here, with the words that freeze and thaw it; else the signals do.
func (a *accounting) openFreezer(path, frozen, thawed string) {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		a.freezeMethod = fmt.Sprintf("signals (the cgroup freezer cannot be written: %v)", err)
		return
	}
	a.freezeFile, a.frozenWord, a.thawedWord = f, []byte(frozen), []byte(thawed)
	a.freezeMethod = CgroupFreezer
}

// CgroupFreezer is how a bot frozen by the kernel's cgroup freezer is
// frozen (Container.Freezing).
const CgroupFreezer = "the cgroup freezer"

// freezerHold is the cgroup v1 freezer group Arena keeps frozen (it holds
// no process). The v1 freezer turns a kernel-wide switch (a static key)
// on when a first group starts freezing and off when the last thaws,
// patching the kernel's code each time: about 100 µs a freeze and as
// much a thaw, measured here. With one group always frozen the switch
// stays on, and a bot's freeze or thaw is a write of some 10 µs.
const freezerHold = "arena-freezer-hold"

var holdOnce sync.Once

// holdFreezerV1 makes and freezes the hold group, once per process; where
// it cannot (a read-only mount) freezes just cost more.
func holdFreezerV1(root string) {
	holdOnce.Do(func() {
		dir := filepath.Join(root, "freezer", freezerHold)
		if err := os.Mkdir(dir, 0o755); err != nil && !os.IsExist(err) {
			return
		}
		os.WriteFile(filepath.Join(dir, "freezer.state"), []byte("FROZEN"), 0)
	})
}

// procs lists the cgroup's processes.
func (a *accounting) procs() ([]int, error) {
	if a.procsPath == "" {
		return nil, errors.New(a.freezeUnavailable)
	}
	data, err := os.ReadFile(a.procsPath)
	if err != nil {
		return nil, err
	}
	var pids []int
	for _, f := range strings.Fields(string(data)) {
		if pid, err := strconv.Atoi(f); err == nil && pid > 0 {
			pids = append(pids, pid)
		}
	}
	return pids, nil
}

// noFreezing gives up freezing the cgroup, saying why.
func (a *accounting) noFreezing(why string) {
	a.procsPath = ""
	a.freezeUnavailable = why
	if a.freezeFile != nil {
		a.freezeFile.Close()
		a.freezeFile = nil
	}
	a.freezeMethod = ""
}

// canFreeze says whether the cgroup can be frozen, and if not why.
func (a *accounting) canFreeze() (bool, string) { return a.procsPath != "", a.freezeUnavailable }

// waitPerThread says whether the wait is read thread by thread (each
// thread's run delay): no pressure file, but the list of threads.
func (a *accounting) waitPerThread() bool {
	return a.pressureFile == nil && a.tasksPath != "" && a.procRoot != ""
}

// sample reads the CPU time and the waiting time.
func (a *accounting) sample() (Sample, bool) {
	cpu, ok := a.cpu()
	if !ok {
		return Sample{}, false
	}
	s := Sample{CPU: cpu}
	a.mu.Lock()
	defer a.mu.Unlock()
	var throttled time.Duration
	if a.throttleFile != nil {
		if v, err := a.readValue(a.throttleFile, a.throttleKey); err == nil {
			throttled = time.Duration(v) * a.throttleScale
			s.WaitKnown = true
		}
	}
	switch {
	case a.pressureFile != nil:
		if v, err := a.readPressure(); err == nil {
			s.Wait, s.WaitKnown = v, true
		}
	case a.tasksPath != "":
		if v, err := a.readRunDelay(); err == nil {
			s.Wait, s.WaitKnown = v, true
		}
	}
	s.Wait += throttled
	return s, true
}

// readPressure reads the total of "some" in a cpu.pressure file (µs):
// its first line, "some avg10=… total=N".
func (a *accounting) readPressure() (time.Duration, error) {
	n, err := a.pressureFile.ReadAt(a.buf[:], 0)
	if n == 0 && err != nil {
		return 0, err
	}
	line, _, _ := bytes.Cut(a.buf[:n], []byte("\n"))
	if !bytes.HasPrefix(line, []byte("some ")) {
		return 0, errors.New("no some line in cpu.pressure")
	}
	_, v, ok := bytes.Cut(line, []byte(" total="))
	if !ok {
		return 0, errors.New("no some total in cpu.pressure")
	}
	us, err := strconv.ParseInt(string(v), 10, 64)
	return time.Duration(us) * time.Microsecond, err
}

// readRunDelay sums the run delays of the cgroup's threads: the time each
// spent runnable on a run queue, waiting for a CPU. (Threads that ended
// take theirs with them: it is a lower bound.) It must be called with mu
// held. Listing the threads and opening their files costs tens of
// microseconds a thread, so the list is read again only every
// taskListEvery, and each thread's schedstat is kept open and re-read: a
// thread started since the last list counts from the next.
func (a *accounting) readRunDelay() (time.Duration, error) {
	if a.sched == nil || time.Since(a.tasksListed) > taskListEvery {
		if err := a.listTasks(); err != nil {
			return 0, err
		}
	}
	var total int64
	var stat [128]byte
	for tid, f := range a.sched {
		n, err := f.ReadAt(stat[:], 0)
		if n == 0 && err != nil {
			f.Close() // ended meanwhile
			delete(a.sched, tid)
			continue
		}
		total += runDelay(stat[:n])
	}
	return time.Duration(total), nil
}

// runDelay is the second figure of a schedstat line, "<on CPU>
// <run delay> <slices>" (ns): 0 where there is none.
func runDelay(line []byte) int64 {
	_, rest, _ := bytes.Cut(line, []byte(" "))
	field, _, _ := bytes.Cut(bytes.TrimSpace(rest), []byte(" "))
	var v int64
	for _, c := range field {
		if c < '0' || c > '9' {
			return 0
		}
		v = v*10 + int64(c-'0')
	}
	return v
}

// taskListEvery is how often readRunDelay lists the cgroup's threads.
const taskListEvery = 100 * time.Millisecond

// listTasks opens the schedstat of every thread of the cgroup not open
// yet, and closes those of threads gone.
func (a *accounting) listTasks() error {
	data, err := os.ReadFile(a.tasksPath)
	if err != nil {
		return err
	}
	if a.sched == nil {
		a.sched = map[string]*os.File{}
	}
	seen := map[string]bool{}
	for _, tid := range strings.Fields(string(data)) {
		seen[tid] = true
		if _, ok := a.sched[tid]; ok {
			continue
		}
		if f, err := os.Open(a.procRoot + "/" + tid + "/schedstat"); err == nil {
			a.sched[tid] = f
		}
	}
	for tid, f := range a.sched {
		if !seen[tid] {
			f.Close()
			delete(a.sched, tid)
		}
	}
	a.tasksListed = time.Now()
	return nil
}

// threads reports the states of the cgroup's threads now: whether one is
// kept at work by the host — on a CPU or waiting for one (R), or in an
// uninterruptible wait, the disk's (D) — and whether one is stopped (T).
// A wait in progress is in no run delay yet (the kernel adds it when the
// thread gets a CPU), so this tells a bot the host is keeping from its
// work right now from one that sleeps (S) of its own accord.
func (a *accounting) threads() (busy, stopped bool) {
	if a.tasksPath == "" || a.procRoot == "" {
		return false, false
	}
	data, err := os.ReadFile(a.tasksPath)
	if err != nil {
		return false, false
	}
	var stat [512]byte
	for _, tid := range strings.Fields(string(data)) {
		f, err := os.Open(a.procRoot + "/" + tid + "/stat")
		if err != nil {
			continue
		}
		n, _ := f.Read(stat[:])
		f.Close()
		line := string(stat[:n])
		if i := strings.LastIndexByte(line, ')'); i >= 0 && i+2 < len(line) {
			switch line[i+2] {
			case 'R', 'D':
				busy = true
			case 'T':
				stopped = true
			}
		}
	}
	return busy, stopped
}

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

// memPeak reads the figures of every turn, not read's four files: the
// memory peak, which it returns, and the forks the pids limit refused,
// kept for Usage (a bot that crashes takes its cgroup with it, and its
// counters: what a turn read is what is left of them).
func (a *accounting) memPeak() (int64, bool) {
	if a.memFile == nil {
		return 0, false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.readPidsLocked()
	v, err := a.readValue(a.memFile, "")
	if err != nil {
		return a.last.MemPeakBytes, a.last.MemPeakBytes > 0
	}
	a.last.MemPeakBytes = max(a.last.MemPeakBytes, v)
	return a.last.MemPeakBytes, true
}

// readPids reads the forks the pids limit refused so far, kept for
// Usage: the counter goes with the cgroup when the bot ends. Cgroup v1's
// pids.events sends no notification to wait on (neither inotify nor
// poll, kernel 6.18), so it is read at each answer (memPeak, or the
// freeze's read) and, when that read was not made, before the next
// input (freezer.thaw): a bot that forks at one turn and crashes at the
// next is counted.
func (a *accounting) readPids() {
	if a == nil {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.readPidsLocked()
}

func (a *accounting) readPidsLocked() {
	if a.pidsFile == nil {
		return
	}
	if v, err := a.readValue(a.pidsFile, "max"); err == nil {
		a.last.PidsLimitHits = max(a.last.PidsLimitHits, v)
	}
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
	for _, f := range []*os.File{a.cpuFile, a.memFile, a.oomFile, a.pidsFile, a.throttleFile, a.pressureFile, a.freezeFile} {
		if f != nil {
			f.Close()
		}
	}
	a.mu.Lock()
	for _, f := range a.sched {
		f.Close()
	}
	a.sched = nil
	a.mu.Unlock()
	if a.oomWatch != nil {
		a.oomWatch.Close()
		<-a.watchDone
	}
}
