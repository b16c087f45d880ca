package sandbox

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"go.uber.org/zap"
)

// Container is a running bot.
type Container struct {
	stdio
	api        DockerAPI
	id         string
	log        *zap.Logger
	stream     stream // nil until the container is created with its stdio
	started    time.Time
	done       chan struct{} // closed by Close: stops the framer
	pumped     chan struct{} // closed when the pump has returned
	cancelWait context.CancelFunc
	exited     chan struct{} // closed when the wait returned
	exit       Exit
	acct       *accounting
	uid        *uidLease
	path       string // how its stdio travels (StdioPath)
	freezer
	// renamed is closed once a warm container handed to a bot carries the
	// bot's name (nil: named so from the start).
	renamed   chan struct{}
	closeOnce sync.Once
}

// Exit is how a container ended.
type Exit struct {
	Code      int
	OOMKilled bool
	// Err is set when the exit could not be observed.
	Err error
}

// startTimeout bounds the engine calls that start a container.
const startTimeout = 2 * time.Minute

// Start starts a bot: a warm container from the pool when one fits (see
// pool.go), else a new one. On error nothing is left behind.
func (d *Docker) Start(parent context.Context, s Spec) (*Container, error) {
	if err := checkSpec(s); err != nil {
		return nil, err
	}
	if c := d.pool.take(s); c != nil {
		if err := c.assign(s, d.caps); err == nil {
			return c, nil
		}
		c.Close(context.WithoutCancel(parent))
	}
	c, err := d.boot(parent, s)
	if err != nil {
		return nil, err
	}
	c.wire(s, d.caps)
	return c, nil
}

// boot creates the bot's container with its stdio, waits for its exit,
// starts it, and finds its cgroup; the bot's output is not read yet (see
// wire). On error nothing is left behind. The engine calls are not cut
// short by ctx: a create abandoned half-way could leave a container
// nobody knows of; instead a cancelled ctx is honoured once they returned.
func (d *Docker) boot(parent context.Context, s Spec) (_ *Container, err error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(parent), startTimeout)
	defer cancel()
	c := &Container{api: d.api, log: d.log.With(zap.String("bot", s.BotID)), done: make(chan struct{})}
	defer func() {
		if err != nil {
			c.Close(context.WithoutCancel(ctx))
		}
	}()
	if c.uid, err = d.uids.acquire(ctx); err != nil {
		return nil, fmt.Errorf("start %s: %w", s.BotID, err)
	}
	c.id, c.stream, err = d.create(ctx, d.botContainer(s, c.uid.uid), s)
	c.path = d.StdioPath()
	if c.id != "" {
		c.log = c.log.With(zap.String("container", shortID(c.id)))
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
	if err := d.api.ContainerStart(ctx, c.id, container.StartOptions{}); err != nil {
		return nil, fmt.Errorf("start %s: %w", s.BotID, err)
	}
	c.started = time.Now()
	c.acct = d.accounting(ctx, c.id, d.policy.forSpec(s).MemoryBytes)
	c.freezer.acct = c.acct
	if err := parent.Err(); err != nil {
		return nil, err
	}
	return c, nil
}

// wire frames the bot's output as the spec says and starts reading it.
func (c *Container) wire(s Spec, caps StderrCaps) {
	fr := newFramer(s.Framing, s.MaxMessageBytes, c.done)
	fr.answered = c.freezer.answered
	stderr := &stderrBuffer{caps: caps}
	in := c.stream.input()
	c.stdio = stdio{stdin: in, deadline: in.SetWriteDeadline, frames: fr.out, stderr: stderr}
	c.pumped = make(chan struct{})
	go func() {
		defer close(c.pumped)
		c.stream.pump(fr, stderr)
	}()
}

// accounting finds the started container's cgroup.
func (d *Docker) accounting(ctx context.Context, id string, memoryBytes int64) *accounting {
	info, err := d.api.ContainerInspect(ctx, id)
	switch {
	case err != nil:
		return unavailable(fmt.Sprintf("inspect: %v", err))
	case info.State == nil || info.State.Pid == 0:
		return unavailable("the bot ended before its cgroup could be found")
	}
	a := d.cg.forPID(info.State.Pid, memoryBytes)
	if d.runtime.GVisor && a.source != "" {
		// The cgroup holds the whole gVisor sandbox, and the bot's forks
		// are refused inside it, where the cgroup does not count them.
		a.source += ", gVisor's own use included; refused forks not counted"
		// Its processes are gVisor's, not the bot's: they are not stopped.
		a.noFreezing("under gVisor the bot's processes are not the host's to stop")
	}
	return a
}

func (c *Container) awaitExit(waitCh <-chan container.WaitResponse, errCh <-chan error) {
	defer close(c.exited)
	defer c.stream.exited()
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

// StdioPath says how the bot's stdio travels: "fifo", or "attach" with
// the reason the FIFO path was not used.
func (c *Container) StdioPath() string { return c.path }

// ID is the container id.
func (c *Container) ID() string { return c.id }

// Started is when the container was started.
func (c *Container) Started() time.Time { return c.started }

// TakeStderr returns what the bot wrote to stderr since the last call.
func (c *Container) TakeStderr() Stderr {
	c.stream.syncStderr()
	return c.stdio.TakeStderr()
}

// PeekStderr is what the bot wrote to stderr since the last TakeStderr,
// left to be taken.
func (c *Container) PeekStderr() []byte {
	c.stream.syncStderr()
	return c.stdio.PeekStderr()
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
	c.freezer.release()
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
// it. It is safe to call more than once, and on a container that Start
// left half-way.
func (c *Container) Close(ctx context.Context) error {
	var err error
	c.closeOnce.Do(func() {
		c.freezer.release()
		close(c.done)
		if c.stream != nil {
			c.stream.interrupt()
		}
		if c.acct != nil {
			c.acct.close()
		}
		if c.renamed != nil {
			<-c.renamed // else the rename might race the removal
		}
		if c.id != "" {
			err = c.api.ContainerRemove(ctx, c.id, container.RemoveOptions{Force: true, RemoveVolumes: true})
			if cerrdefs.IsNotFound(err) {
				err = nil
			}
		}
		if c.cancelWait != nil {
			c.cancelWait()
			<-c.exited
		}
		if c.pumped != nil {
			<-c.pumped
		}
		if c.stream != nil {
			c.stream.close()
		}
		if err == nil {
			// Gone: its uid may serve another bot. (A container that could
			// not be removed keeps it, labelled, until it is.)
			c.uid.release()
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
