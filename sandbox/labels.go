package sandbox

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Labels put on every container Arena starts.
const (
	// LabelPlatform marks a container as Arena's; its value is "arena".
	LabelPlatform = "io.arena.platform"
	// LabelMatch is the match id.
	LabelMatch = "io.arena.match"
	// LabelBot is the bot's id in its match.
	LabelBot = "io.arena.bot"
	// LabelOwner identifies the Arena process that started the container,
	// so that leftovers of a process that died can be told from the
	// containers of one still running.
	LabelOwner = "io.arena.owner"
)

// Owner identifies a running Arena process: its host name, process id,
// process start time (clock ticks since boot, which tells a reused pid
// apart) and the process-id space it lives in (the kernel's boot id and
// its pid namespace). Two Arena processes in the same space can tell
// whether the other runs, whatever their host names: a server in a
// container sharing the host's pid namespace and a command on the host.
type Owner struct {
	Host  string
	PID   int
	Start uint64
	// Space is "<boot id>.<pid namespace inode>"; empty in labels written
	// by older versions.
	Space string
}

func (o Owner) String() string {
	if o.Space == "" {
		return fmt.Sprintf("%s/%d/%d", o.Host, o.PID, o.Start)
	}
	return fmt.Sprintf("%s/%d/%d/%s", o.Host, o.PID, o.Start, o.Space)
}

// ParseOwner reads an owner label.
func ParseOwner(s string) (Owner, error) {
	parts := strings.Split(s, "/")
	if len(parts) != 3 && len(parts) != 4 {
		return Owner{}, fmt.Errorf("owner label %q is not host/pid/start/space", s)
	}
	pid, err1 := strconv.Atoi(parts[1])
	start, err2 := strconv.ParseUint(parts[2], 10, 64)
	if err1 != nil || err2 != nil {
		return Owner{}, fmt.Errorf("owner label %q is not host/pid/start/space", s)
	}
	o := Owner{Host: parts[0], PID: pid, Start: start}
	if len(parts) == 4 {
		o.Space = parts[3]
	}
	return o, nil
}

// Self is the calling process as an owner.
func Self() (Owner, error) {
	host, err := os.Hostname()
	if err != nil {
		return Owner{}, err
	}
	pid := os.Getpid()
	start, err := processStart("/proc", pid)
	if err != nil {
		return Owner{}, err
	}
	return Owner{Host: host, PID: pid, Start: start, Space: pidSpace("/proc")}, nil
}

// pidSpace names the space of process ids this process lives in; empty
// when it cannot be read.
func pidSpace(procRoot string) string {
	boot, err := os.ReadFile(procRoot + "/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	ns, err := os.Readlink(procRoot + "/self/ns/pid") // "pid:[4026531836]"
	if err != nil {
		return ""
	}
	ns = strings.TrimSuffix(strings.TrimPrefix(ns, "pid:["), "]")
	return strings.TrimSpace(string(boot)) + "." + ns
}

// processStart reads field 22 (starttime) of /proc/<pid>/stat.
func processStart(procRoot string, pid int) (uint64, error) {
	b, err := os.ReadFile(fmt.Sprintf("%s/%d/stat", procRoot, pid))
	if err != nil {
		return 0, err
	}
	return parseStatStart(b)
}

func parseStatStart(b []byte) (uint64, error) {
	// The command name (field 2) is in parentheses and may contain spaces
	// and parentheses: fields resume after the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("malformed stat line")
	}
	fields := strings.Fields(string(b[i+1:]))
	// fields[0] is field 3 (state); starttime is field 22.
	if len(fields) < 20 {
		return 0, fmt.Errorf("malformed stat line")
	}
	return strconv.ParseUint(fields[19], 10, 64)
}

// Liveness tells whether the process behind an owner label still runs.
type Liveness struct {
	Self     Owner
	ProcRoot string // "/proc"
}

// Alive reports whether o is a running process. An owner in another
// process-id space (another machine, or a container with a pid namespace
// of its own) cannot be checked and counts as alive; `arena cleanup --all`
// removes those too.
func (l Liveness) Alive(o Owner) bool {
	if o == l.Self {
		return true
	}
	sameSpace := o.Space != "" && o.Space == l.Self.Space
	if !sameSpace && (o.Space != "" || o.Host != l.Self.Host) {
		return true
	}
	start, err := processStart(l.ProcRoot, o.PID)
	return err == nil && start == o.Start
}
