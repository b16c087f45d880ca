package sandbox

import (
	"context"
	"errors"
	"io"
	"time"

	"go.uber.org/zap"
)

// stream is Arena's end of one container's stdio. There are two stdio
// paths, each with its own way to create the container: FIFOs shared with
// the bot (fifo.go, the default when they can work) and the engine's
// attach stream (attach.go). The container's lifecycle (container.go)
// only sees this interface.
type stream interface {
	// input is the bot's stdin.
	input() deadlineWriter
	// pump copies the bot's stdout to fr and its stderr to stderr until
	// the output ends, then closes fr. It runs on its own goroutine,
	// from the container's start.
	pump(fr *framer, stderr *stderrBuffer)
	// syncStderr returns once what the bot wrote to stderr so far is in
	// the buffer (or after a short wait), so that it is filed with the
	// turn it belongs to.
	syncStderr()
	// exited is told that the container has exited: from then on the
	// end of its output is the end of the pump.
	exited()
	// interrupt makes the pump return soon, whatever the bot does.
	interrupt()
	// close releases what is left once the pump returned and the
	// container is removed.
	close()
}

// deadlineWriter is a bot's stdin: writes give up at the deadline.
type deadlineWriter interface {
	io.Writer
	SetWriteDeadline(time.Time) error
}

// create creates a bot's container on the stdio path in use and returns
// its id (empty when none was created) and its stream. The FIFO path
// falls back to the attach stream here, and only here: when it could not
// create the container (the engine cannot mount the FIFO folder, say) and
// the attach stream works instead, every later bot uses the attach stream
// too, and StdioPath says why.
func (d *Docker) create(ctx context.Context, b botContainer, s Spec) (string, stream, error) {
	fifo := d.fifoPath()
	if fifo == nil {
		return d.createWithAttach(ctx, b, s)
	}
	id, st, err := d.createWithFIFO(ctx, *fifo, b, s)
	if err == nil || id != "" || errors.Is(err, errNoCommand) {
		// Started, half-way (the caller removes it), or hopeless on any path.
		return id, st, err
	}
	id, st, attachErr := d.createWithAttach(ctx, b, s)
	if attachErr == nil {
		d.disableFIFO(err)
	}
	return id, st, attachErr
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
		d.log.Warn("the FIFO stdio path does not work with this engine; using the attach stream from now on", zap.Error(err))
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
