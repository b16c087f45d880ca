package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"arena/framing"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/distribution/reference"
	"github.com/docker/docker/api/types"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/api/types/mount"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/client"
	"github.com/docker/docker/pkg/stdcopy"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"go.uber.org/zap"
)

// DockerAPI is the part of the Docker client the sandbox uses.
type DockerAPI interface {
	ImageInspect(ctx context.Context, ref string, opts ...client.ImageInspectOption) (image.InspectResponse, error)
	ImagePull(ctx context.Context, ref string, opts image.PullOptions) (io.ReadCloser, error)
	ContainerCreate(ctx context.Context, cfg *container.Config, host *container.HostConfig, net *network.NetworkingConfig, platform *ocispec.Platform, name string) (container.CreateResponse, error)
	ContainerAttach(ctx context.Context, id string, opts container.AttachOptions) (types.HijackedResponse, error)
	ContainerWait(ctx context.Context, id string, cond container.WaitCondition) (<-chan container.WaitResponse, <-chan error)
	ContainerStart(ctx context.Context, id string, opts container.StartOptions) error
	ContainerInspect(ctx context.Context, id string) (container.InspectResponse, error)
	ContainerKill(ctx context.Context, id, signal string) error
	ContainerRemove(ctx context.Context, id string, opts container.RemoveOptions) error
	ContainerList(ctx context.Context, opts container.ListOptions) ([]container.Summary, error)
}

// Connect opens a client for the engine named by the environment
// (DOCKER_HOST etc.), negotiating the API version so an older daemon works.
func Connect() (*client.Client, error) {
	return client.NewClientWithOpts(client.FromEnv, client.WithAPIVersionNegotiation())
}

// Docker runs bots as hardened containers.
type Docker struct {
	api    DockerAPI
	policy Policy
	owner  Owner
	log    *zap.Logger
	caps   StderrCaps
	cg     cgroupLocator
	uids   atomic.Uint64
	pull   bool

	cgroupRoot string

	mu        sync.Mutex
	fifo      *FIFO
	stdioPath string
}

// Option configures a Docker runner.
type Option func(*Docker)

// WithLogger sets the logger (default: none).
func WithLogger(l *zap.Logger) Option { return func(d *Docker) { d.log = l } }

// WithPullMissing lets Image pull an image that is not present locally.
// By default Arena never pulls.
func WithPullMissing() Option { return func(d *Docker) { d.pull = true } }

// WithFIFO makes bots' stdio travel through FIFOs (see FIFO) instead of
// the engine's attach stream. If the engine cannot mount them, Arena
// falls back to the attach stream and StdioPath says why.
func WithFIFO(f FIFO) Option { return func(d *Docker) { d.fifo = &f } }

// WithCgroupRoot sets where the host's cgroup filesystem is mounted
// (default /sys/fs/cgroup), for Arena running in a container.
func WithCgroupRoot(root string) Option { return func(d *Docker) { d.cgroupRoot = root } }

// WithStderrCaps sets what is kept of each bot's stderr.
func WithStderrCaps(c StderrCaps) Option { return func(d *Docker) { d.caps = c } }

// NewDocker returns a runner that applies the policy to every container
// and labels each with the owner.
func NewDocker(api DockerAPI, p Policy, owner Owner, opts ...Option) (*Docker, error) {
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("sandbox policy: %w", err)
	}
	d := &Docker{api: api, policy: p, owner: owner, log: zap.NewNop(), caps: DefaultStderrCaps, cgroupRoot: "/sys/fs/cgroup"}
	for _, o := range opts {
		o(d)
	}
	d.cg = hostCgroups(d.cgroupRoot)
	d.stdioPath = "attach"
	if d.fifo != nil {
		d.stdioPath = "fifo"
	}
	return d, nil
}

// Image is a local image ready to run.
type Image struct {
	Ref  string
	ID   string
	User string // the image's configured user
	// Entrypoint and Cmd are the image's.
	Entrypoint, Cmd []string
}

// ImageNotFoundError reports an image that is not present locally.
type ImageNotFoundError struct{ Ref string }

func (e *ImageNotFoundError) Error() string {
	return fmt.Sprintf("image %s not found locally (build it with docker build -t %s . or pull it first)", e.Ref, e.Ref)
}

func (e *ImageNotFoundError) Unwrap() error { return errNoImage }

// ErrBadReference is wrapped by errors about a bot reference that is not
// well formed: the caller's input is wrong.
var ErrBadReference = errors.New("bad bot reference")

// ParseImageRef checks that ref is a well-formed Docker image reference.
func ParseImageRef(ref string) error {
	if ref == "" {
		return fmt.Errorf("%w: empty image name", ErrBadReference)
	}
	if _, err := reference.ParseNormalizedNamed(ref); err != nil {
		return fmt.Errorf("%w: %q is not an image name: %v", ErrBadReference, ref, err)
	}
	return nil
}

// Image looks an image up locally. Arena never pulls on its own.
func (d *Docker) Image(ctx context.Context, ref string) (Image, error) {
	if err := ParseImageRef(ref); err != nil {
		return Image{}, err
	}
	info, err := d.api.ImageInspect(ctx, ref)
	if err != nil && cerrdefs.IsNotFound(err) && d.pull {
		if err := d.pullImage(ctx, ref); err != nil {
			return Image{}, err
		}
		info, err = d.api.ImageInspect(ctx, ref)
	}
	if err != nil {
		if cerrdefs.IsNotFound(err) {
			return Image{}, &ImageNotFoundError{Ref: ref}
		}
		return Image{}, fmt.Errorf("inspect image %s: %w", ref, err)
	}
	img := Image{Ref: ref, ID: info.ID}
	if info.Config != nil {
		img.User = info.Config.User
		img.Entrypoint, img.Cmd = info.Config.Entrypoint, info.Config.Cmd
	}
	return img, nil
}

// pullImage pulls ref and reports the registry's error, if any.
func (d *Docker) pullImage(ctx context.Context, ref string) error {
	d.log.Info("pulling image", zap.String("image", ref))
	body, err := d.api.ImagePull(ctx, ref, image.PullOptions{})
	if err != nil {
		return fmt.Errorf("image %s not found locally and the pull failed: %w", ref, err)
	}
	defer body.Close()
	dec := json.NewDecoder(body)
	for {
		var msg struct {
			Error string `json:"error"`
		}
		if err := dec.Decode(&msg); errors.Is(err, io.EOF) {
			return nil
		} else if err != nil {
			return fmt.Errorf("pull %s: %w", ref, err)
		}
		if msg.Error != "" {
			return fmt.Errorf("image %s not found locally and the pull failed: %s", ref, msg.Error)
		}
	}
}

// Spec is one bot to start.
type Spec struct {
	Image   Image
	Name    string // container name; empty lets the engine choose
	MatchID string
	BotID   string
	Env     []string // extra environment, KEY=value
	Framing framing.Framing
	// MaxMessageBytes caps one message on stdout.
	MaxMessageBytes int
	// Args, when set, replace the image's command (CMD); its entrypoint
	// stays.
	Args []string
}

// startTimeout bounds the engine calls that start a container.
const startTimeout = 2 * time.Minute

// Start creates, attaches and starts a bot's container. On error nothing
// is left behind. The engine calls are not cut short by ctx: a create
// abandoned half-way could leave a container nobody knows of; instead a
// cancelled ctx is honoured once they returned.
func (d *Docker) Start(parent context.Context, s Spec) (_ *Container, err error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(parent), startTimeout)
	defer cancel()
	user := ""
	if runsAsRoot(s.Image.User) {
		uid := d.policy.FallbackUID + int(d.uids.Add(1)%uint64(d.policy.UIDRange))
		user = fmt.Sprintf("%d:%d", uid, uid)
	}
	cfg, host := containerConfig(d.policy, containerSpec{
		image: s.Image.ID,
		env:   append([]string{"ARENA_BOT_ID=" + s.BotID}, s.Env...),
		labels: map[string]string{
			LabelPlatform: "arena",
			LabelMatch:    s.MatchID,
			LabelBot:      s.BotID,
			LabelOwner:    d.owner.String(),
		},
		user:    user,
		runtime: d.policy.Runtime,
	})
	c := &Container{api: d.api, log: d.log.With(zap.String("bot", s.BotID))}
	defer func() {
		if err != nil {
			c.Close(context.WithoutCancel(ctx))
		}
	}()
	c.done = make(chan struct{})
	fr := newFramer(s.Framing, s.MaxMessageBytes, c.done)
	stderr := &stderrBuffer{caps: d.caps}
	if fifo := d.fifoPath(); fifo != nil {
		err = d.createWithFIFO(ctx, c, fifo, cfg, host, s, user)
		if err != nil && !errors.Is(err, errNoCommand) && c.id == "" {
			// Perhaps the engine cannot mount the FIFOs (the folder is not
			// shared with it): if the attach stream works, it is used from
			// now on.
			fifoErr := err
			if err = d.createWithAttach(ctx, c, cfg, host, s); err == nil {
				d.disableFIFO(fifoErr)
			}
		}
	} else {
		err = d.createWithAttach(ctx, c, cfg, host, s)
	}
	if err != nil {
		return nil, err
	}
	// Wait before start, so the exit cannot be missed.
	waitCtx, cancelWait := context.WithCancel(context.WithoutCancel(ctx))
	c.cancelWait = cancelWait
	waitCh, waitErr := d.api.ContainerWait(waitCtx, c.id, container.WaitConditionNextExit)
	c.exited = make(chan struct{})
	go c.awaitExit(waitCh, waitErr)

	if c.pipes != nil {
		c.stdio = stdio{stdin: c.pipes.in, deadline: c.pipes.in.SetWriteDeadline, frames: fr.out, stderr: stderr}
	} else {
		c.stdio = stdio{stdin: c.hijack.Conn, deadline: c.hijack.Conn.SetWriteDeadline, frames: fr.out, stderr: stderr}
	}
	if err := d.api.ContainerStart(ctx, c.id, container.StartOptions{}); err != nil {
		return nil, fmt.Errorf("start %s: %w", s.BotID, err)
	}
	c.started = time.Now()
	c.pumped = make(chan struct{})
	if c.pipes != nil {
		go c.pumpFIFO(fr, stderr)
	} else {
		go c.pump(c.hijack.Reader, fr)
	}

	c.acct = d.accounting(ctx, c.id)
	if err := parent.Err(); err != nil {
		return nil, err
	}
	return c, nil
}

func (d *Docker) accounting(ctx context.Context, id string) *accounting {
	info, err := d.api.ContainerInspect(ctx, id)
	switch {
	case err != nil:
		return unavailable(fmt.Sprintf("inspect: %v", err))
	case info.State == nil || info.State.Pid == 0:
		return unavailable("the bot ended before its cgroup could be found")
	}
	return d.cg.forPID(info.State.Pid, d.policy.MemoryBytes)
}

// createWithAttach creates the container with its stdio on the engine's
// attach stream, and attaches.
func (d *Docker) createWithAttach(ctx context.Context, c *Container, cfg *container.Config, host *container.HostConfig, s Spec) error {
	if s.Args != nil {
		acfg := *cfg
		acfg.Cmd = s.Args
		cfg = &acfg
	}
	created, err := d.api.ContainerCreate(ctx, cfg, host, nil, nil, s.Name)
	if err != nil {
		return fmt.Errorf("create container for %s: %w", s.BotID, err)
	}
	c.id = created.ID
	c.log = c.log.With(zap.String("container", shortID(c.id)))
	hijack, err := d.api.ContainerAttach(ctx, c.id, container.AttachOptions{Stream: true, Stdin: true, Stdout: true, Stderr: true})
	if err != nil {
		return fmt.Errorf("attach to %s: %w", s.BotID, err)
	}
	c.hijack = &hijack
	return nil
}

var errNoCommand = errors.New("the image has no entrypoint or command")

// createWithFIFO creates the container with its stdio on FIFOs: the
// launcher as entrypoint, the image's entrypoint and command as its
// arguments, the bot's FIFO folder and the launcher mounted.
func (d *Docker) createWithFIFO(ctx context.Context, c *Container, fifo *FIFO, cfg *container.Config, host *container.HostConfig, s Spec, user string) error {
	args := s.Image.Cmd
	if s.Args != nil {
		args = s.Args
	}
	command := append(slices.Clone(s.Image.Entrypoint), args...)
	if len(command) == 0 {
		return fmt.Errorf("%s: %w", s.Image.Ref, errNoCommand)
	}
	uid := -1
	if user != "" {
		uid, _ = strconv.Atoi(strings.Split(user, ":")[0])
	} else if n, err := strconv.Atoi(strings.Split(s.Image.User, ":")[0]); err == nil {
		uid = n
	}
	name := s.Name
	if name == "" {
		name = fmt.Sprintf("bot-%d-%d", os.Getpid(), d.uids.Add(1))
	}
	pipes, err := newBotPipes(fifo.Dir, name, uid)
	if err != nil {
		return fmt.Errorf("stdio FIFOs for %s: %w", s.BotID, err)
	}
	c.pipes = pipes
	fcfg, fhost := *cfg, *host
	fcfg.AttachStdin, fcfg.AttachStdout, fcfg.AttachStderr, fcfg.OpenStdin, fcfg.StdinOnce = false, false, false, false, false
	fcfg.Entrypoint = []string{containerLauncher, LaunchCommand}
	fcfg.Cmd = command
	fhost.Mounts = append(slices.Clone(host.Mounts),
		mount.Mount{Type: mount.TypeBind, Source: pipes.dir, Target: containerIODir},
		mount.Mount{Type: mount.TypeBind, Source: fifo.Launcher, Target: containerLauncher, ReadOnly: true})
	created, err := d.api.ContainerCreate(ctx, &fcfg, &fhost, nil, nil, s.Name)
	if err != nil {
		pipes.close()
		c.pipes = nil
		return fmt.Errorf("create container for %s: %w", s.BotID, err)
	}
	c.id = created.ID
	c.log = c.log.With(zap.String("container", shortID(c.id)))
	return nil
}

// pumpFIFO feeds the bot's stdout to the framer and its stderr to the
// buffer. The keep-alive ends are released at the first answer or at the
// exit, whichever comes first.
func (c *Container) pumpFIFO(fr *framer, stderr *stderrBuffer) {
	defer close(c.pumped)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		c.pipes.pumpStderr(stderr)
	}()
	io.Copy(fr, &firstRead{r: c.pipes.out, then: c.pipes.release})
	fr.closeWith(ErrClosed)
	wg.Wait()
}

// TakeStderr returns what the bot wrote to stderr since the last call.
func (c *Container) TakeStderr() Stderr {
	if c.pipes != nil {
		c.pipes.syncStderr(50 * time.Millisecond)
	}
	return c.stdio.TakeStderr()
}

// fifoPath is the FIFO configuration in use, nil for the attach stream.
func (d *Docker) fifoPath() *FIFO {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.fifo
}

func (d *Docker) disableFIFO(err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.fifo != nil {
		d.log.Warn("the FIFO stdio path does not work with this engine; using the attach stream", zap.Error(err))
		d.fifo = nil
		d.stdioPath = "attach (the FIFO path failed: " + err.Error() + ")"
	}
}

// StdioPath says how bots' stdio travels: "fifo", or "attach" with the
// reason the FIFO path is not used.
func (d *Docker) StdioPath() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.stdioPath
}

// Lifecycle creates, starts and removes one container of img under the
// policy, with no stdio: the bare cost a match's bot cannot go below.
func (d *Docker) Lifecycle(ctx context.Context, img Image, matchID string) error {
	cfg, host := containerConfig(d.policy, containerSpec{
		image:   img.ID,
		labels:  map[string]string{LabelPlatform: "arena", LabelMatch: matchID, LabelOwner: d.owner.String()},
		user:    "65534:65534",
		runtime: d.policy.Runtime,
	})
	cfg.AttachStdin, cfg.AttachStdout, cfg.AttachStderr, cfg.OpenStdin, cfg.StdinOnce = false, false, false, false, false
	created, err := d.api.ContainerCreate(ctx, cfg, host, nil, nil, "")
	if err != nil {
		return err
	}
	startErr := d.api.ContainerStart(ctx, created.ID, container.StartOptions{})
	removeErr := d.api.ContainerRemove(context.WithoutCancel(ctx), created.ID, container.RemoveOptions{Force: true})
	return errors.Join(startErr, removeErr)
}

// Container is a running bot.
type Container struct {
	stdio
	api        DockerAPI
	id         string
	log        *zap.Logger
	hijack     *types.HijackedResponse
	pipes      *botPipes
	started    time.Time
	done       chan struct{} // closed by Close: stops the pump
	pumped     chan struct{} // closed when the pump has returned
	cancelWait context.CancelFunc
	exited     chan struct{} // closed when the wait returned
	exit       Exit
	acct       *accounting
	closeOnce  sync.Once
}

// Exit is how a container ended.
type Exit struct {
	Code      int
	OOMKilled bool
	// Err is set when the exit could not be observed.
	Err error
}

// ID is the container id.
func (c *Container) ID() string { return c.id }

// Started is when the container was started.
func (c *Container) Started() time.Time { return c.started }

func (c *Container) pump(r io.Reader, fr *framer) {
	defer close(c.pumped)
	_, err := stdcopy.StdCopy(fr, c.stderr, r)
	if err != nil && !errors.Is(err, ErrClosed) && !errors.Is(err, net.ErrClosed) {
		c.log.Debug("output stream ended", zap.Error(err))
	}
	fr.closeWith(ErrClosed)
}

func (c *Container) awaitExit(waitCh <-chan container.WaitResponse, errCh <-chan error) {
	defer close(c.exited)
	if c.pipes != nil {
		// Once the bot is gone its output can end.
		defer c.pipes.release()
	}
	select {
	case r := <-waitCh:
		c.exit.Code = int(r.StatusCode)
		if r.Error != nil && r.Error.Message != "" {
			c.exit.Err = errors.New(r.Error.Message)
		}
	case err := <-errCh:
		c.exit.Err = err
	}
}

// Usage reads the bot's resource figures from its cgroup.
func (c *Container) Usage() Usage { return c.acct.read() }

// CPUTime is the CPU time the bot used so far; false when the cgroup
// cannot be read.
func (c *Container) CPUTime() (time.Duration, bool) { return c.acct.cpu() }

// Stop kills the bot if it still runs and returns how it ended. It waits
// at most until ctx is done.
func (c *Container) Stop(ctx context.Context) Exit {
	c.acct.read() // last figures while the cgroup still exists
	select {
	case <-c.exited:
	default:
		if err := c.api.ContainerKill(ctx, c.id, "KILL"); err != nil && !cerrdefs.IsNotFound(err) && !cerrdefs.IsConflict(err) {
			c.log.Debug("kill", zap.Error(err))
		}
	}
	return c.Exit(ctx)
}

// Exit waits for the container to end (until ctx is done) and returns how
// it ended, with the OOM verdict from the cgroup and the engine.
func (c *Container) Exit(ctx context.Context) Exit {
	select {
	case <-c.exited:
	case <-ctx.Done():
		if c.acct.oomKilled() {
			// The kernel killed it for memory; the engine has not told yet.
			return Exit{Code: 137, OOMKilled: true}
		}
		return Exit{Code: -1, Err: fmt.Errorf("container still running: %w", ctx.Err())}
	}
	e := c.exit
	e.OOMKilled = c.acct.oomKilled()
	if !e.OOMKilled {
		if info, err := c.api.ContainerInspect(ctx, c.id); err == nil && info.State != nil {
			e.OOMKilled = info.State.OOMKilled
		}
	}
	return e
}

// Close stops and removes the container and releases everything held for
// it. It is safe to call more than once.
func (c *Container) Close(ctx context.Context) error {
	var err error
	c.closeOnce.Do(func() {
		if c.done != nil {
			close(c.done)
		}
		if c.hijack != nil {
			c.hijack.Close()
		}
		if c.pipes != nil {
			c.pipes.release()
			c.pipes.out.Close()
			c.pipes.errOut.Close()
		}
		if c.acct != nil {
			c.acct.close()
		}
		err = c.api.ContainerRemove(ctx, c.id, container.RemoveOptions{Force: true, RemoveVolumes: true})
		if cerrdefs.IsNotFound(err) {
			err = nil
		}
		if c.cancelWait != nil {
			c.cancelWait()
			<-c.exited
		}
		if c.pumped != nil {
			<-c.pumped
		}
		if c.pipes != nil {
			c.pipes.close()
		}
	})
	if err != nil {
		return fmt.Errorf("remove container %s: %w", shortID(c.id), err)
	}
	return nil
}

func shortID(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}
