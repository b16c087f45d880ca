package sandbox

import (
	"context"
	"errors"
	"fmt"
	"net"

	"github.com/docker/docker/api/types"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/pkg/stdcopy"
	"go.uber.org/zap"
)

// The attach stdio path: the bot's stdin, stdout and stderr travel over
// the engine's attach stream (one hijacked connection, stdout and stderr
// multiplexed). It works with any engine, local or remote, at the cost of
// two daemon hops per message.

// createWithAttach creates the container with its stdio on the engine's
// attach stream, and attaches. On error the id is set if the container
// exists.
func (d *Docker) createWithAttach(ctx context.Context, b botContainer, s Spec) (string, stream, error) {
	cfg := b.cfg
	if s.Args != nil {
		acfg := *cfg
		acfg.Cmd = s.Args
		cfg = &acfg
	}
	created, err := d.api.ContainerCreate(ctx, cfg, b.host, nil, nil, s.Name)
	if err != nil {
		return "", nil, fmt.Errorf("create container for %s: %w", s.BotID, err)
	}
	hijack, err := d.api.ContainerAttach(ctx, created.ID, container.AttachOptions{Stream: true, Stdin: true, Stdout: true, Stderr: true})
	if err != nil {
		return created.ID, nil, fmt.Errorf("attach to %s: %w", s.BotID, err)
	}
	log := d.log.With(zap.String("bot", s.BotID), zap.String("container", shortID(created.ID)))
	return created.ID, &attachStream{hijack: hijack, log: log}, nil
}

// attachStream is a container's stdio on the engine's attach stream.
type attachStream struct {
	hijack types.HijackedResponse
	log    *zap.Logger
}

func (a *attachStream) input() deadlineWriter { return a.hijack.Conn }

func (a *attachStream) pump(fr *framer, stderr *stderrBuffer) {
	_, err := stdcopy.StdCopy(fr, stderr, a.hijack.Reader)
	if err != nil && !errors.Is(err, ErrClosed) && !errors.Is(err, net.ErrClosed) {
		a.log.Debug("output stream ended", zap.Error(err))
	}
	fr.closeWith(ErrClosed)
}

// syncStderr cannot do better: the engine interleaves stdout and stderr
// on its own, so a line written just before an answer may come after it
// (and be filed with the next turn).
func (a *attachStream) syncStderr() {}

// exited: the engine ends the stream when the container ends.
func (a *attachStream) exited() {}

func (a *attachStream) interrupt() { a.hijack.Close() }

func (a *attachStream) close() {}
