package sandbox

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"

	"github.com/docker/docker/api/types"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/client"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"go.uber.org/zap"
)

// DockerAPI is the part of the Docker client the sandbox uses.
type DockerAPI interface {
	ImageInspect(ctx context.Context, ref string, opts ...client.ImageInspectOption) (image.InspectResponse, error)
	ImagePull(ctx context.Context, ref string, opts image.PullOptions) (io.ReadCloser, error)
	ImageList(ctx context.Context, opts image.ListOptions) ([]image.Summary, error)
	ContainerCreate(ctx context.Context, cfg *container.Config, host *container.HostConfig, net *network.NetworkingConfig, platform *ocispec.Platform, name string) (container.CreateResponse, error)
	ContainerAttach(ctx context.Context, id string, opts container.AttachOptions) (types.HijackedResponse, error)
	ContainerWait(ctx context.Context, id string, cond container.WaitCondition) (<-chan container.WaitResponse, <-chan error)
	ContainerStart(ctx context.Context, id string, opts container.StartOptions) error
	ContainerInspect(ctx context.Context, id string) (container.InspectResponse, error)
	ContainerKill(ctx context.Context, id, signal string) error
	ContainerRename(ctx context.Context, id, name string) error
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
	api     DockerAPI
	policy  Policy
	owner   Owner
	log     *zap.Logger
	caps    StderrCaps
	cg      cgroupLocator
	seq     atomic.Uint64 // names containers the caller did not name
	uids    uidPool
	pool    *pool // nil: no warm containers
	pull    bool
	runtime Runtime

	cgroupRoot string

	// The stdio path in use (see stream.go): the FIFO configuration, nil
	// for the attach stream, and how StdioPath describes it.
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

// WithRuntime describes the policy's runtime (see DescribeRuntime);
// without it the runtime is taken from its name.
func WithRuntime(r Runtime) Option { return func(d *Docker) { d.runtime = r } }

// WithAttachBecause records why the FIFO path is not used, for StdioPath
// (when no FIFO path is given).
func WithAttachBecause(why string) Option {
	return func(d *Docker) { d.stdioPath = "attach (" + why + ")" }
}

// WithCgroupRoot sets where the host's cgroup filesystem is mounted
// (default /sys/fs/cgroup), for Arena running in a container.
func WithCgroupRoot(root string) Option { return func(d *Docker) { d.cgroupRoot = root } }

// WithUIDFolder sets the folder of the uid locks that give every running
// bot a uid of its own; every Arena process on the machine must use the
// same one (default: the FIFO folder's, else /tmp/arena-stdio's).
func WithUIDFolder(dir string) Option { return func(d *Docker) { d.uids.dir = dir } }

// WithStderrCaps sets what is kept of each bot's stderr.
func WithStderrCaps(c StderrCaps) Option { return func(d *Docker) { d.caps = c } }

// Runtime is the runtime bots run under.
func (d *Docker) Runtime() Runtime { return d.runtime }

// NewDocker returns a runner that applies the policy to every container
// and labels each with the owner.
func NewDocker(api DockerAPI, p Policy, owner Owner, opts ...Option) (*Docker, error) {
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("sandbox policy: %w", err)
	}
	d := &Docker{api: api, policy: p, owner: owner, log: zap.NewNop(), caps: DefaultStderrCaps, cgroupRoot: "/sys/fs/cgroup",
		runtime: Runtime{Name: p.Runtime, GVisor: p.Runtime == "runsc", HostFIFO: true}}
	for _, o := range opts {
		o(d)
	}
	d.cg = hostCgroups(d.cgroupRoot)
	if d.pool != nil {
		go d.pool.run()
	}
	d.uids.first, d.uids.size, d.uids.list = p.FallbackUID, p.UIDRange, listArena(api)
	switch {
	case d.uids.dir != "":
	case d.fifo != nil:
		d.uids.dir = UIDFolder(d.fifo.Dir)
	default:
		d.uids.dir = UIDFolder(filepath.Join(os.TempDir(), "arena-stdio"))
	}
	switch {
	case d.fifo != nil:
		d.stdioPath = "fifo"
	case d.stdioPath == "":
		d.stdioPath = "attach"
	}
	return d, nil
}
