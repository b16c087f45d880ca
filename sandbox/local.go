package sandbox

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/containerd/cgroups/v3"
	"github.com/containerd/cgroups/v3/cgroup1"
	"github.com/containerd/cgroups/v3/cgroup2"
	specs "github.com/opencontainers/runtime-spec/specs-go"
	"go.uber.org/zap"
)

// LocalPrefix marks a bot that runs as a local process, for bot authors
// iterating without Docker: "exec:./mybot" or "exec:python3 bot.py".
const LocalPrefix = "exec:"

// IsLocalRef reports whether a bot reference names a local command.
func IsLocalRef(ref string) bool { return strings.HasPrefix(ref, LocalPrefix) }

// SplitCommand splits a command line into words: spaces separate words,
// single quotes keep everything literally, double quotes and backslashes
// work as in a POSIX shell. Nothing else of a shell applies.
func SplitCommand(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, errors.New("unterminated single quote")
			}
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case c == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte(`"\$`+"`", s[i+1]) >= 0 {
					i++
				}
				cur.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, errors.New("unterminated double quote")
			}
			inWord = true
		case c == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
			inWord = true
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

// Local runs bots as processes on this machine. Where it may create
// cgroups it puts each bot in its own, with the policy's memory, CPU and
// pids limits; otherwise the bot runs unconfined and a warning says so.
// It is for development: the process sees the machine as its user does.
type Local struct {
	policy   Policy
	log      *zap.Logger
	caps     StderrCaps
	root     string // cgroup mount
	mode     cgroups.CGMode
	isolated bool
	why      string // why bots are not isolated
	joiner   string // the static arena binary that joins a cgroup, then execs
	tag      string // this process in its cgroups' names: "<pid>-<start>"
	seq      atomic.Uint64
}

// NewLocal returns a local runner. It probes once whether cgroups can be
// created here. joiner is the static arena binary: a bot is started
// through it (JoinCommand), so that it is inside its cgroup before its
// first instruction; without one, bots run unconfined.
func NewLocal(p Policy, log *zap.Logger, joiner string) (*Local, error) {
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("sandbox policy: %w", err)
	}
	if log == nil {
		log = zap.NewNop()
	}
	self, err := Self()
	if err != nil {
		return nil, err
	}
	l := &Local{policy: p, log: log, caps: DefaultStderrCaps, root: LocalCgroupRoot, mode: cgroupMode(LocalCgroupRoot),
		joiner: joiner, tag: fmt.Sprintf("%d-%d", self.PID, self.Start)}
	if joiner == "" {
		l.why = "no launcher to put a bot in its cgroup before it starts"
		return l, nil
	}
	probe, err := l.newCgroup(l.tag+"-probe", l.policy.MemoryBytes)
	if err != nil {
		l.why = err.Error()
	} else {
		l.isolated = true
		probe.delete()
	}
	return l, nil
}

// Isolated reports whether local bots get their own cgroup, and if not,
// why.
func (l *Local) Isolated() (bool, string) { return l.isolated, l.why }

// Image resolves a local bot's command. Its id is the hash of the
// executable, so a replay records which build played.
func (l *Local) Image(ref string) (Image, error) {
	words, err := SplitCommand(strings.TrimPrefix(ref, LocalPrefix))
	if err != nil {
		return Image{}, fmt.Errorf("%w: %s: %v", ErrBadReference, ref, err)
	}
	if len(words) == 0 {
		return Image{}, fmt.Errorf("%w: %s names no command", ErrBadReference, ref)
	}
	path, err := exec.LookPath(words[0])
	if err != nil {
		return Image{}, fmt.Errorf("%w: %s: %v", ErrBadReference, ref, err)
	}
	f, err := os.Open(path)
	if err != nil {
		return Image{}, fmt.Errorf("%w: %s: %v", ErrBadReference, ref, err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return Image{}, fmt.Errorf("read %s: %w", path, err)
	}
	return Image{Ref: ref, ID: "exec:sha256:" + hex.EncodeToString(h.Sum(nil))}, nil
}

// LocalCgroupRoot is where the cgroup file systems local bots' cgroups
// are made in are mounted.
const LocalCgroupRoot = "/sys/fs/cgroup"

// localCgroupParent is where the local bots' cgroups are, in every
// hierarchy; each is named "<pid>-<start>-<n>" after the Arena process
// that made it, so that the janitor can tell those of processes that died.
const localCgroupParent = "arena-local"

// localControllers are the cgroup v1 controllers of a local bot's cgroup.
var localControllers = []string{"memory", "cpu", "cpuacct", "pids", "freezer"}

// localCgroup is a cgroup Arena created for one local bot.
type localCgroup struct {
	v1 cgroup1.Cgroup
	v2 *cgroup2.Manager
	// group is the cgroup's path in each hierarchy; procs are the
	// cgroup.procs files a process writes its pid into to join it.
	group string
	procs []string
}

// legacy is the group's path per v1 controller.
func (c *localCgroup) legacy() map[string]string {
	m := map[string]string{}
	for _, ctl := range localControllers {
		m[ctl] = c.group
	}
	return m
}

func (l *Local) newCgroup(name string, memoryBytes int64) (*localCgroup, error) {
	group := "/" + localCgroupParent + "/" + name
	switch l.mode {
	case cgroups.Unified:
		quota := l.policy.NanoCPUs / 10000 // per 100 ms period
		period := uint64(100000)
		swap := int64(0)
		m, err := cgroup2.NewManager(l.root, group, &cgroup2.Resources{
			Memory: &cgroup2.Memory{Max: &memoryBytes, Swap: &swap},
			Pids:   &cgroup2.Pids{Max: l.policy.PidsLimit},
			CPU:    &cgroup2.CPU{Max: cgroup2.NewCPUMax(&quota, &period)},
		})
		if err != nil {
			return nil, fmt.Errorf("create cgroup %s: %w", group, err)
		}
		return &localCgroup{v2: m, group: group, procs: []string{filepath.Join(l.root, group, "cgroup.procs")}}, nil
	case cgroups.Legacy, cgroups.Hybrid:
		quota := l.policy.NanoCPUs / 10000
		period := uint64(100000)
		hierarchy := func() ([]cgroup1.Subsystem, error) {
			return []cgroup1.Subsystem{
				cgroup1.NewMemory(l.root, cgroup1.OptionalSwap()),
				cgroup1.NewCpu(l.root),
				cgroup1.NewCpuacct(l.root),
				cgroup1.NewPids(l.root),
				cgroup1.NewFreezer(l.root),
			}, nil
		}
		cg, err := cgroup1.New(cgroup1.StaticPath(group), &specs.LinuxResources{
			Memory: &specs.LinuxMemory{Limit: &memoryBytes, Swap: &memoryBytes},
			CPU:    &specs.LinuxCPU{Quota: &quota, Period: &period},
			Pids:   &specs.LinuxPids{Limit: &l.policy.PidsLimit},
		}, cgroup1.WithHierarchy(hierarchy))
		if err != nil {
			return nil, fmt.Errorf("create cgroup %s: %w", group, err)
		}
		c := &localCgroup{v1: cg, group: group}
		for _, ctl := range localControllers {
			c.procs = append(c.procs, filepath.Join(l.root, ctl, group, "cgroup.procs"))
		}
		return c, nil
	default:
		return nil, errors.New("no cgroup filesystem is mounted")
	}
}

func (c *localCgroup) kill() {
	if c.v2 != nil {
		c.v2.Kill()
		return
	}
	procs, _ := c.v1.Processes(cgroup1.Memory, true)
	for _, p := range procs {
		syscall.Kill(p.Pid, syscall.SIGKILL)
	}
}

func (c *localCgroup) delete() {
	for i := 0; i < 50; i++ {
		var err error
		if c.v2 != nil {
			err = c.v2.Delete()
		} else {
			err = c.v1.Delete()
		}
		if err == nil {
			return
		}
		time.Sleep(10 * time.Millisecond) // the killed processes are still leaving
	}
}

// Start runs a local bot.
func (l *Local) Start(ctx context.Context, s Spec) (_ *Process, err error) {
	if err := checkSpec(s); err != nil {
		return nil, err
	}
	memory := l.policy.forSpec(s).MemoryBytes
	words, err := SplitCommand(strings.TrimPrefix(s.Image.Ref, LocalPrefix))
	if err != nil || len(words) == 0 {
		return nil, fmt.Errorf("%w: %s", ErrBadReference, s.Image.Ref)
	}
	p := &Process{log: l.log.With(zap.String("bot", s.BotID)), exited: make(chan struct{}), done: make(chan struct{})}
	if l.isolated {
		p.cg, err = l.newCgroup(fmt.Sprintf("%s-%d", l.tag, l.seq.Add(1)), memory)
		if err != nil {
			return nil, err
		}
		// The joiner enters the cgroup, then execs the bot: the bot and all
		// it ever starts are inside before its first instruction.
		words = append(append([]string{l.joiner, JoinCommand, strings.Join(p.cg.procs, ",")}, "--"), words...)
	} else {
		l.log.Warn("local bot runs without isolation: no memory, CPU or pids limits", zap.String("bot", s.BotID), zap.String("reason", l.why))
	}
	defer func() {
		if err != nil {
			p.Close(context.WithoutCancel(ctx))
		}
	}()

	cmd := exec.Command(words[0], words[1:]...)
	cmd.Env = append(os.Environ(), "ARENA_BOT_ID="+s.BotID)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	stdinR, stdinW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	stdoutR, stdoutW, err := os.Pipe()
	if err != nil {
		stdinR.Close()
		stdinW.Close()
		return nil, err
	}
	stderrR, stderrW, err := os.Pipe()
	if err != nil {
		stdinR.Close()
		stdinW.Close()
		stdoutR.Close()
		stdoutW.Close()
		return nil, err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdinR, stdoutW, stderrW
	p.stdin, p.stdout, p.stderrR = stdinW, stdoutR, stderrR
	startErr := cmd.Start()
	stdinR.Close()
	stdoutW.Close()
	stderrW.Close()
	if startErr != nil {
		return nil, fmt.Errorf("start %s: %w", s.BotID, startErr)
	}
	p.cmd = cmd
	p.started = time.Now()
	go p.wait()

	fr := newFramer(s.Framing, s.MaxMessageBytes, p.done)
	fr.answered = p.freezer.answered
	p.stdio = stdio{stdin: stdinW, deadline: stdinW.SetWriteDeadline, frames: fr.out, stderr: &stderrBuffer{caps: l.caps}}
	p.pumps.Add(2)
	go func() {
		defer p.pumps.Done()
		io.Copy(fr, stdoutR)
		fr.closeWith(ErrClosed)
	}()
	go func() {
		defer p.pumps.Done()
		io.Copy(p.stdio.stderr, stderrR)
	}()
	if p.cg != nil {
		p.acct = cgroupLocator{root: l.root, procRoot: "/proc", mode: l.mode}.forGroup(p.cg.legacy(), p.cg.group, memory)
	} else {
		p.acct = unavailable("the local bot runs without a cgroup: " + l.why)
	}
	p.freezer.acct = p.acct
	return p, nil
}

// Process is a bot running as a local process.
type Process struct {
	stdio
	log  *zap.Logger
	cmd  *exec.Cmd
	cg   *localCgroup
	acct *accounting
	freezer
	started time.Time

	stdin, stdout, stderrR *os.File

	exited    chan struct{}
	exit      Exit
	done      chan struct{}
	pumps     sync.WaitGroup
	closeOnce sync.Once
}

func (p *Process) wait() {
	defer close(p.exited)
	err := p.cmd.Wait()
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		p.exit.Code = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			p.exit.Code = 128 + int(ws.Signal())
		}
	default:
		p.exit.Err = err
	}
}

// StdioPath says how the bot's stdio travels: pipes.
func (p *Process) StdioPath() string { return "pipe" }

// Started is when the process was started.
func (p *Process) Started() time.Time { return p.started }

// CPUTime is the CPU time used so far; false without a cgroup.
func (p *Process) CPUTime() (time.Duration, bool) { return p.acct.cpu() }

// Usage reads the bot's figures from its cgroup.
func (p *Process) Usage() Usage { return p.acct.read() }

// Stop kills the bot (its whole process group and cgroup) and returns how
// it ended.
func (p *Process) Stop(ctx context.Context) Exit {
	p.acct.read()
	p.kill()
	return p.Exit(ctx)
}

func (p *Process) kill() {
	p.freezer.release() // a frozen process cannot die
	if p.cmd != nil && p.cmd.Process != nil {
		syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	}
	if p.cg != nil {
		p.cg.kill()
	}
}

// Exit waits for the process to end and returns how it ended.
func (p *Process) Exit(ctx context.Context) Exit {
	if p.cmd == nil {
		return Exit{Code: -1, Err: errors.New("not started")}
	}
	select {
	case <-p.exited:
	case <-ctx.Done():
		return Exit{Code: -1, Err: fmt.Errorf("process still running: %w", ctx.Err())}
	}
	e := p.exit
	e.OOMKilled = p.acct.oomKilled()
	return e
}

// Close kills the bot if needed and releases its pipes and cgroup.
func (p *Process) Close(ctx context.Context) error {
	p.closeOnce.Do(func() {
		close(p.done)
		p.kill()
		if p.cmd != nil {
			<-p.exited
		}
		for _, f := range []*os.File{p.stdin, p.stdout, p.stderrR} {
			if f != nil {
				f.Close()
			}
		}
		p.pumps.Wait()
		if p.acct != nil {
			p.acct.close()
		}
		if p.cg != nil {
			p.cg.delete()
		}
	})
	return nil
}
