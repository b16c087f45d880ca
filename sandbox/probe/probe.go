// Package probe looks at a bot's sandbox from inside: who the bot runs
// as, its privileges, its network, what it may write, whether the Docker
// socket is in reach. Two programs run it in a container under the
// policy: the arena binary (`arena doctor` starts it with
// sandbox.ProbeCommand and checks the report) and the hostile test bot
// (internal/testsupport/testbots/tankbot, mode "probe"). It uses the standard library
// only, so a bot's static binary links nothing else of Arena.
package probe

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Report is the sandbox as a bot sees it. It travels as JSON with the
// field names as keys (the hostile-bot tests decode it by them).
type Report struct {
	UID, GID int
	// PID is the bot's process id: small in a pid namespace of its own.
	PID      int
	Hostname string
	// BotID is the bot's ARENA_BOT_ID.
	BotID string
	// CapEff and NoNewPrivs are the lines of /proc/self/status.
	CapEff     string
	NoNewPrivs string
	// Interfaces are the network interfaces the bot sees.
	Interfaces []string
	// DialErr is why a TCP connection to a loopback port nobody listens
	// on failed (empty if it succeeded).
	DialErr string
	// RootWriteErr and TmpWriteErr are why writing a file to / and to
	// /tmp failed (empty when it worked).
	RootWriteErr string
	TmpWriteErr  string
	// DockerSockFound are the usual Docker socket paths that exist.
	DockerSockFound []string
}

// DockerSockets are the paths where a Docker socket is usually mounted.
var DockerSockets = []string{"/var/run/docker.sock", "/run/docker.sock", "/docker.sock"}

// prGetNoNewPrivs is prctl's PR_GET_NO_NEW_PRIVS.
const prGetNoNewPrivs = 39

// Run looks at the sandbox from inside. The files it manages to write it
// removes.
func Run() Report { return run("/", "/tmp") }

// run is Run with the folders it tries to write to.
func run(root, tmp string) Report {
	r := Report{UID: os.Getuid(), GID: os.Getgid(), PID: os.Getpid(), BotID: os.Getenv("ARENA_BOT_ID")}
	r.Hostname, _ = os.Hostname()
	if status, err := os.ReadFile("/proc/self/status"); err == nil {
		for _, line := range strings.Split(string(status), "\n") {
			if v, ok := strings.CutPrefix(line, "CapEff:"); ok {
				r.CapEff = strings.TrimSpace(v)
			}
			if v, ok := strings.CutPrefix(line, "NoNewPrivs:"); ok {
				r.NoNewPrivs = strings.TrimSpace(v)
			}
		}
	}
	if r.NoNewPrivs == "" {
		// Some kernels (gVisor's) do not show it in the status file.
		if v, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prGetNoNewPrivs, 0, 0); errno == 0 {
			r.NoNewPrivs = fmt.Sprint(v)
		}
	}
	if ifs, err := net.Interfaces(); err == nil {
		for _, i := range ifs {
			r.Interfaces = append(r.Interfaces, i.Name)
		}
	}
	// A loopback port nobody listens on: with only lo, no route leaves the
	// container, so no real address is ever contacted.
	if c, err := net.DialTimeout("tcp", "127.0.0.1:9", 200*time.Millisecond); err != nil {
		r.DialErr = err.Error()
	} else {
		c.Close()
	}
	r.RootWriteErr = tryWrite(filepath.Join(root, ".arena-probe"))
	r.TmpWriteErr = tryWrite(filepath.Join(tmp, ".arena-probe"))
	for _, s := range DockerSockets {
		if _, err := os.Stat(s); err == nil {
			r.DockerSockFound = append(r.DockerSockFound, s)
		}
	}
	return r
}

// tryWrite writes and removes a small file; it returns why that failed.
func tryWrite(path string) string {
	if err := os.WriteFile(path, []byte("x"), 0o600); err != nil {
		return err.Error()
	}
	os.Remove(path)
	return ""
}
