package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// The launcher: inside a bot's container on the FIFO path (fifo.go), the
// arena binary, mounted read-only and given LaunchCommand, is the
// entrypoint. Nothing else of Arena runs in a bot's container.

// Launch runs inside a bot's container as its entrypoint: it opens the
// bot's FIFOs as standard input, output and error, and execs the image's
// own command (args). It returns only on failure.
func Launch(args []string) error {
	if len(args) == 0 {
		return errors.New("launch: the image has no entrypoint or command")
	}
	for fd, f := range []struct {
		name string
		flag int
	}{{"in", unix.O_RDONLY}, {"out", unix.O_WRONLY}, {"err", unix.O_WRONLY}} {
		opened, err := unix.Open(containerIODir+"/"+f.name, f.flag, 0)
		if err != nil {
			return fmt.Errorf("launch: open %s: %w", f.name, err)
		}
		if opened != fd {
			if err := unix.Dup3(opened, fd, 0); err != nil {
				return fmt.Errorf("launch: dup %s: %w", f.name, err)
			}
			unix.Close(opened)
		}
	}
	env := os.Environ()
	if slices.Contains(env, PoolEnv) {
		// A warm container: wait for the bot to run (see pool.go).
		line, err := readLine(0, 64<<10)
		if err != nil {
			return fmt.Errorf("launch: the control line: %w", err)
		}
		var ctl poolControl
		if err := json.Unmarshal(line, &ctl); err != nil {
			return fmt.Errorf("launch: the control line: %w", err)
		}
		env = mergeEnv(slices.DeleteFunc(env, func(e string) bool { return e == PoolEnv }), ctl.Env)
	}
	path := args[0]
	if !strings.Contains(path, "/") {
		found, err := lookPath(path)
		if err != nil {
			return fmt.Errorf("launch: %s: %w", path, err)
		}
		path = found
	}
	err := syscall.Exec(path, args, env)
	return fmt.Errorf("launch: exec %s: %w", path, err)
}

// LaunchExitCode is the exit code of a launcher (Launch, Join, and the
// engine's init, tini) that could not start the bot's command; its reason
// is its last line on stderr, after "launch: " or "join: " (or tini's
// "[FATAL tini (N)] ").
const LaunchExitCode = 127

// LaunchFailure tells a bot whose command could not be started (a missing
// entrypoint, an exec format error, a bad user) from one that ran: its
// launcher exited with LaunchExitCode and said why on stderr. It is the
// engine's reason, without the launcher's prefix. A bot could say the same
// itself; the orchestrator believes it only of a bot that has not read its
// first input (it knows nothing of the match then).
func LaunchFailure(exit Exit, stderr []byte) (string, bool) {
	if exit.Err != nil || exit.Code != LaunchExitCode {
		return "", false
	}
	line := strings.TrimRight(string(stderr), "\r\n")
	if i := strings.LastIndexByte(line, '\n'); i >= 0 {
		line = line[i+1:]
	}
	for _, prefix := range []string{"launch: ", "join: "} {
		if why, ok := strings.CutPrefix(line, prefix); ok && why != "" {
			return why, true
		}
	}
	// The engine's init (docker run --init, the attach path) says
	// "[FATAL tini (8)] exec /bot failed: No such file or directory".
	if rest, ok := strings.CutPrefix(line, "[FATAL tini ("); ok {
		if _, why, ok := strings.Cut(rest, "] "); ok && strings.HasPrefix(why, "exec ") {
			return why, true
		}
	}
	return "", false
}

// readLine reads fd up to and without the first newline, one byte at a
// time: what follows is the bot's.
func readLine(fd, limit int) ([]byte, error) {
	var line []byte
	b := make([]byte, 1)
	for len(line) < limit {
		n, err := unix.Read(fd, b)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, err
		}
		if n == 0 {
			return nil, errors.New("end of input")
		}
		if b[0] == '\n' {
			return line, nil
		}
		line = append(line, b[0])
	}
	return nil, errors.New("too long")
}

// mergeEnv sets the KEY=value pairs of set in env, replacing those keys.
func mergeEnv(env, set []string) []string {
	for _, kv := range set {
		key, _, _ := strings.Cut(kv, "=")
		env = slices.DeleteFunc(env, func(e string) bool { return strings.HasPrefix(e, key+"=") })
		env = append(env, kv)
	}
	return env
}

// lookPath finds an executable in $PATH (the image's).
func lookPath(name string) (string, error) {
	for _, dir := range filepath.SplitList(os.Getenv("PATH")) {
		if dir == "" {
			dir = "."
		}
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", errors.New("not found in PATH")
}

// JoinCommand is the argument that makes the arena binary start a local
// bot inside its cgroup (see Join).
const JoinCommand = "__join"

// Join runs as a local bot's first process: it writes its own pid into
// the cgroup.procs files given, comma-separated, in args[0] (so it, and
// every process the bot will start, is in the bot's cgroup), then execs
// the bot's command, which follows "--". It returns only on failure.
func Join(args []string) error {
	if len(args) < 3 || args[1] != "--" {
		return errors.New("join: usage: " + JoinCommand + " PROCS[,PROCS...] -- COMMAND [ARG...]")
	}
	pid := []byte(fmt.Sprint(os.Getpid()))
	for _, procs := range strings.Split(args[0], ",") {
		if err := os.WriteFile(procs, pid, 0); err != nil {
			return fmt.Errorf("join: enter the cgroup: %w", err)
		}
	}
	path := args[2]
	if !strings.Contains(path, "/") {
		found, err := lookPath(path)
		if err != nil {
			return fmt.Errorf("join: %s: %w", path, err)
		}
		path = found
	}
	err := syscall.Exec(path, args[2:], os.Environ())
	return fmt.Errorf("join: exec %s: %w", path, err)
}
