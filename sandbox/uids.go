package sandbox

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"golang.org/x/sys/unix"
)

// Every running bot has a uid of its own, whatever its image says, so
// that one bot cannot use up another's per-user kernel limits (inotify
// instances, processes, message queues, keys). The uids are allocated
// across every Arena process on the machine: a uid is held by an flock
// on a file in a folder they all share (the stdio folder, which a server
// in a container shares with the host), and a uid still labelled on a
// running Arena container (a leftover of a process that died, whose locks
// the kernel dropped) is not handed out again.

// LabelUID is the uid a bot's container runs as.
const LabelUID = "io.arena.uid"

// uidFolder is the lock folder's name in the stdio folder; the janitor
// leaves dot-names alone.
const uidFolder = ".uids"

// UIDFolder is the folder of uid leases in the stdio folder dir.
func UIDFolder(dir string) string { return filepath.Join(dir, uidFolder) }

// uidPool hands out the uids of a range.
type uidPool struct {
	dir         string // the lock files
	first, size int
	// list lists the Arena containers, for the uids they are labelled with.
	list func(ctx context.Context) ([]container.Summary, error)
}

// uidLease is a uid held until release.
type uidLease struct {
	uid  int
	lock *os.File
}

func (l *uidLease) release() {
	if l != nil && l.lock != nil {
		l.lock.Close() // drops the flock
		l.lock = nil
	}
}

// errNoUID is returned when every uid of the range is held.
var errNoUID = errors.New("every uid of the bots' range is in use")

// acquire finds a uid no running bot has and holds it.
func (p *uidPool) acquire(ctx context.Context) (*uidLease, error) {
	if err := os.MkdirAll(p.dir, 0o700); err != nil {
		return nil, fmt.Errorf("uid lock folder: %w", err)
	}
	labelled := map[int]bool{}
	if p.list != nil {
		list, err := p.list(ctx)
		if err != nil {
			return nil, fmt.Errorf("list the uids of running bots: %w", err)
		}
		for _, c := range list {
			if n, err := strconv.Atoi(c.Labels[LabelUID]); err == nil {
				labelled[n] = true
			}
		}
	}
	start := rand.IntN(p.size)
	for i := 0; i < p.size; i++ {
		uid := p.first + (start+i)%p.size
		if labelled[uid] {
			continue
		}
		f, err := os.OpenFile(filepath.Join(p.dir, strconv.Itoa(uid)), os.O_RDWR|os.O_CREATE|unix.O_CLOEXEC, 0o600)
		if err != nil {
			return nil, fmt.Errorf("uid lock: %w", err)
		}
		if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
			f.Close()
			if errors.Is(err, unix.EWOULDBLOCK) {
				continue
			}
			return nil, fmt.Errorf("uid lock: %w", err)
		}
		return &uidLease{uid: uid, lock: f}, nil
	}
	return nil, errNoUID
}

// listArena lists Arena's containers (running or not).
func listArena(api DockerAPI) func(ctx context.Context) ([]container.Summary, error) {
	return func(ctx context.Context) ([]container.Summary, error) {
		return api.ContainerList(ctx, container.ListOptions{All: true, Filters: filters.NewArgs(filters.Arg("label", LabelPlatform+"=arena"))})
	}
}
