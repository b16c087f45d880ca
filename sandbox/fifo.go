package sandbox

import (
	"context"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/docker/docker/api/types/mount"
	"golang.org/x/sys/unix"
)

// The FIFO stdio path: instead of the engine's attach stream (two daemon
// hops per message), Arena and the bot share kernel pipes. Each bot gets a
// directory of its own with three FIFOs, bind-mounted into its container
// with a static launcher (the arena binary itself) set as the entrypoint;
// the launcher (Launch, launch.go) opens the FIFOs as fds 0, 1 and 2 and
// execs the image's own entrypoint and command.

// In the container: the bot's FIFOs and the launcher.
const (
	containerIODir    = "/.arena/io"
	containerLauncher = "/.arena/launch"
	// LaunchCommand is the argument that makes the arena binary act as a
	// bot's launcher (see Launch).
	LaunchCommand = "__launch"
)

// FIFO configures the FIFO stdio path.
type FIFO struct {
	// Dir holds the bots' FIFO folders. It must be the same path for
	// Arena and for the engine (when Arena runs in a container, a host
	// folder mounted at the same path).
	Dir string
	// Launcher is a static binary that runs Launch when given
	// LaunchCommand: normally the arena binary itself.
	Launcher string
	// held is the launcher copy, open and share-locked for as long as this
	// process lives: the janitor removes only copies nobody holds.
	held *os.File
}

// IsStatic reports whether an executable needs no dynamic loader, so it
// can run in any container.
func IsStatic(path string) (bool, error) {
	f, err := elf.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return false, nil
		}
	}
	return true, nil
}

// PrepareFIFO checks that the FIFO path can work here and puts a copy of
// the launcher in the folder (bots must not see a binary that is replaced
// while they run), held by this process for as long as it lives. It
// returns the ready configuration, or why the path cannot be used.
func PrepareFIFO(dir, launcher string) (FIFO, error) {
	static, err := IsStatic(launcher)
	if err != nil {
		return FIFO{}, fmt.Errorf("launcher %s: %w", launcher, err)
	}
	if !static {
		return FIFO{}, fmt.Errorf("the launcher %s is not a static binary (build arena with CGO_ENABLED=0, as make build does)", launcher)
	}
	if err := os.MkdirAll(dir, 0o711); err != nil {
		return FIFO{}, fmt.Errorf("stdio folder: %w", err)
	}
	copyPath, held, err := holdLauncherCopy(dir, launcher)
	if err != nil {
		return FIFO{}, fmt.Errorf("copy the launcher into %s: %w", dir, err)
	}
	return FIFO{Dir: dir, Launcher: copyPath, held: held}, nil
}

var errNoCommand = errors.New("the image has no entrypoint or command")

// createWithFIFO creates the container with its stdio on FIFOs: the
// launcher as entrypoint, the image's entrypoint and command as its
// arguments, the bot's FIFO folder and the launcher mounted. On error no
// container exists and the folder is removed.
func (d *Docker) createWithFIFO(ctx context.Context, fifo FIFO, b botContainer, s Spec) (string, stream, error) {
	args := s.Image.Cmd
	if s.Args != nil {
		args = s.Args
	}
	command := append(slices.Clone(s.Image.Entrypoint), args...)
	if len(command) == 0 {
		return "", nil, fmt.Errorf("%s: %w", s.Image.Ref, errNoCommand)
	}
	name := s.Name
	if name == "" {
		name = fmt.Sprintf("bot-%d-%d", os.Getpid(), d.seq.Add(1))
	}
	pipes, err := newBotPipes(fifo.Dir, name, b.uid)
	if err != nil {
		return "", nil, fmt.Errorf("stdio FIFOs for %s: %w", s.BotID, err)
	}
	cfg, host := *b.cfg, *b.host
	cfg.AttachStdin, cfg.AttachStdout, cfg.AttachStderr, cfg.OpenStdin, cfg.StdinOnce = false, false, false, false, false
	cfg.Entrypoint = []string{containerLauncher, LaunchCommand}
	cfg.Cmd = command
	host.Mounts = append(slices.Clone(b.host.Mounts),
		// Read-only: opening a FIFO for writing needs no write access to
		// its file system, and nothing else may be written there. (gVisor
		// refuses a FIFO on a read-only mount; there the folder's owner and
		// mode alone keep the bot from writing in it.)
		mount.Mount{Type: mount.TypeBind, Source: pipes.dir, Target: containerIODir, ReadOnly: !d.runtime.GVisor},
		mount.Mount{Type: mount.TypeBind, Source: fifo.Launcher, Target: containerLauncher, ReadOnly: true})
	created, err := d.api.ContainerCreate(ctx, &cfg, &host, nil, nil, s.Name)
	if err != nil {
		pipes.close()
		return "", nil, fmt.Errorf("create container for %s: %w", s.BotID, err)
	}
	return created.ID, pipes, nil
}

// inputPipeBytes is the size asked for a bot's input pipe.
const inputPipeBytes = 1 << 20

// botPipes is Arena's side of one bot's FIFOs.
type botPipes struct {
	dir string
	// in is opened read-write, so opening never blocks and a bot that is
	// slow to start cannot make a write fail.
	in *os.File
	// out and errOut are read; their keep-alive write ends stop a read
	// from seeing end-of-file before the bot has opened its end. They are
	// closed once the bot wrote something or exited: from then on an
	// end-of-file means the bot closed its output.
	out, errOut      *os.File
	outKeep, errKeep *os.File
	keepOnce         sync.Once
	synced           chan struct{} // the stderr pump's acknowledgement
}

// newBotPipes makes a bot's folder and FIFOs, owned by uid when Arena may
// give them away (the bot runs as uid), else open to everyone in a folder
// only the bot's container sees.
func newBotPipes(root, name string, uid int) (_ *botPipes, err error) {
	dir := filepath.Join(root, name)
	if err := os.Mkdir(dir, 0o700); err != nil {
		return nil, err
	}
	p := &botPipes{dir: dir}
	defer func() {
		if err != nil {
			p.close()
		}
	}()
	// The folder is not the bot's: it may open its FIFOs, never create a
	// file there (and the folder is mounted read-only besides).
	if err := os.Chmod(dir, 0o755); err != nil {
		return nil, err
	}
	owned := uid >= 0 && os.Geteuid() == 0
	mode := uint32(0o666)
	if owned {
		mode = 0o600
	}
	for _, f := range []string{"in", "out", "err"} {
		path := filepath.Join(dir, f)
		if err := unix.Mkfifo(path, mode); err != nil {
			return nil, fmt.Errorf("mkfifo %s: %w", path, err)
		}
		if err := os.Chmod(path, os.FileMode(mode)); err != nil { // past the umask
			return nil, err
		}
		if owned {
			if err := os.Chown(path, uid, uid); err != nil {
				return nil, err
			}
		}
	}
	open := func(name string, flag int) (*os.File, error) {
		fd, err := unix.Open(filepath.Join(dir, name), flag|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
		if err != nil {
			return nil, fmt.Errorf("open %s: %w", name, err)
		}
		return os.NewFile(uintptr(fd), filepath.Join(dir, name)), nil
	}
	if p.in, err = open("in", unix.O_RDWR); err != nil {
		return nil, err
	}
	// A frozen bot reads nothing: its input waits in the pipe, which is
	// made large enough for any state (the kernel allows up to
	// /proc/sys/fs/pipe-max-size, 1 MiB by default, or more as root).
	unix.FcntlInt(p.in.Fd(), unix.F_SETPIPE_SZ, inputPipeBytes)
	if p.out, err = open("out", unix.O_RDONLY); err != nil {
		return nil, err
	}
	if p.outKeep, err = open("out", unix.O_WRONLY); err != nil {
		return nil, err
	}
	if p.errOut, err = open("err", unix.O_RDONLY); err != nil {
		return nil, err
	}
	if p.errKeep, err = open("err", unix.O_WRONLY); err != nil {
		return nil, err
	}
	p.synced = make(chan struct{}, 1)
	return p, nil
}

func (p *botPipes) input() deadlineWriter { return p.in }

// pump feeds the bot's stdout to the framer and its stderr to the
// buffer. The keep-alive ends are released at the first answer or at the
// exit, whichever comes first.
func (p *botPipes) pump(fr *framer, stderr *stderrBuffer) {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		p.pumpStderr(stderr)
	}()
	io.Copy(fr, &firstRead{r: p.out, then: p.release})
	fr.closeWith(ErrClosed)
	wg.Wait()
}

// exited: once the bot is gone its output can end.
func (p *botPipes) exited() { p.release() }

// interrupt ends the pump's reads.
func (p *botPipes) interrupt() {
	p.release()
	p.out.Close()
	p.errOut.Close()
}

// release closes the keep-alive write ends (once).
func (p *botPipes) release() {
	p.keepOnce.Do(func() {
		p.outKeep.Close()
		p.errKeep.Close()
	})
}

// pumpStderr copies the bot's stderr into buf until it ends. A sync
// request (see syncStderr) interrupts the blocking read through a read
// deadline; the pump then reads, without blocking, everything the pipe
// holds, and acknowledges: what the bot wrote before the request is then
// in buf.
func (p *botPipes) pumpStderr(buf io.Writer) {
	chunk := make([]byte, 32<<10)
	raw, err := p.errOut.SyscallConn()
	if err != nil {
		io.Copy(buf, p.errOut)
		return
	}
	for {
		n, err := p.errOut.Read(chunk)
		if n > 0 {
			buf.Write(chunk[:n])
		}
		if errors.Is(err, os.ErrDeadlineExceeded) {
			p.errOut.SetReadDeadline(time.Time{})
			for drained := 0; drained < 1<<20; {
				var k int
				var rerr error
				if err := raw.Read(func(fd uintptr) bool {
					k, rerr = unix.Read(int(fd), chunk)
					return true
				}); err != nil || rerr != nil || k <= 0 {
					break
				}
				buf.Write(chunk[:k])
				drained += k
			}
			select {
			case p.synced <- struct{}{}:
			default:
			}
			continue
		}
		if err != nil {
			return
		}
	}
}

// stderrSyncWait bounds how long syncStderr waits for the stderr pump.
const stderrSyncWait = 50 * time.Millisecond

// syncStderr makes sure what the bot wrote to stderr so far has been read
// into the buffer, so that it is filed with the turn it belongs to.
func (p *botPipes) syncStderr() {
	select {
	case <-p.synced: // a stale acknowledgement
	default:
	}
	if p.errOut.SetReadDeadline(time.Now()) != nil {
		return
	}
	select {
	case <-p.synced:
	case <-time.After(stderrSyncWait):
	}
}

// close closes every end and removes the bot's folder.
func (p *botPipes) close() {
	for _, f := range []*os.File{p.in, p.out, p.errOut, p.outKeep, p.errKeep} {
		if f != nil {
			f.Close()
		}
	}
	if p.dir != "" {
		os.RemoveAll(p.dir)
	}
}

// firstRead calls once after the first successful read.
type firstRead struct {
	r    io.Reader
	once sync.Once
	then func()
}

func (f *firstRead) Read(b []byte) (int, error) {
	n, err := f.r.Read(b)
	if n > 0 {
		f.once.Do(f.then)
	}
	return n, err
}
