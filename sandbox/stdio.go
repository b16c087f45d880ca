package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"arena/framing"
)

// Errors a bot's stdio reports. They are the facts; the orchestrator
// decides what they mean for the match.
var (
	// ErrTimeout: the deadline passed before the message was read or
	// written.
	ErrTimeout = errors.New("deadline exceeded")
	// ErrClosed: the bot's output ended (it exited, crashed or closed
	// stdout) or the bot was stopped.
	ErrClosed = errors.New("output closed")
	// ErrOutputLimit: a message was longer than the cap. The rest of the
	// output is discarded.
	ErrOutputLimit = framing.ErrTooLong
)

// Stderr is what a bot wrote to stderr since the last time it was taken.
type Stderr struct {
	Text []byte
	// Dropped counts bytes over the caps, counted and discarded.
	Dropped int64
}

// StderrCaps bound what is kept of a bot's stderr.
type StderrCaps struct {
	// PerTake is kept between two takes (one turn); the rest is dropped.
	PerTake int
	// Total is kept over the bot's whole life.
	Total int64
}

// DefaultStderrCaps keep 4 KiB per turn and 256 KiB per bot.
var DefaultStderrCaps = StderrCaps{PerTake: 4 << 10, Total: 256 << 10}

// stderrBuffer keeps a bounded amount of a bot's stderr.
type stderrBuffer struct {
	caps    StderrCaps
	mu      sync.Mutex
	buf     []byte
	kept    int64
	dropped int64
}

func (s *stderrBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	room := min(int64(s.caps.PerTake-len(s.buf)), s.caps.Total-s.kept)
	n := int64(len(p))
	if room < n {
		s.dropped += n - max(room, 0)
		n = max(room, 0)
	}
	s.buf = append(s.buf, p[:n]...)
	s.kept += n
	return len(p), nil
}

func (s *stderrBuffer) take() Stderr {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := Stderr{Text: s.buf, Dropped: s.dropped}
	s.buf, s.dropped = nil, 0
	return out
}

// frame is one message from a bot, or the error that ended its output.
type frame struct {
	data []byte
	at   time.Time // when it arrived, to judge it against the deadline
	err  error
}

// framesQueued is how many complete messages may wait unread: a bot that
// answers ahead of time is buffered this far, then blocked.
const framesQueued = 4

// framer splits a bot's stdout into messages and queues them, stamped
// with their arrival time. It is an io.Writer so the output pump can feed
// it directly; it blocks while the queue is full and gives up when done is
// closed.
type framer struct {
	split  *framing.Splitter
	failed bool
	out    chan frame
	done   <-chan struct{}
	// answered, when set, runs as each message arrives, before it is
	// queued; what it returns, if anything, runs on its own (the runner
	// freezes the bot there), not before the message's reader.
	answered func() func()
}

func newFramer(f framing.Framing, max int, done <-chan struct{}) *framer {
	return &framer{split: framing.NewSplitter(f, max), out: make(chan frame, framesQueued), done: done}
}

func (f *framer) Write(p []byte) (int, error) {
	if f.failed {
		return len(p), nil // discard what follows an oversized message
	}
	f.split.Write(p)
	var now time.Time
	for {
		msg, ok, err := f.split.Next()
		if err != nil {
			f.failed = true
			f.emit(frame{err: err})
			return len(p), nil
		}
		if !ok {
			return len(p), nil
		}
		if now.IsZero() {
			now = time.Now()
		}
		if f.answered != nil {
			if freeze := f.answered(); freeze != nil {
				// Started before the message is queued: a goroutine
				// started after would take this thread's next turn
				// from the reader the message wakes, and the freezer's
				// write would come before the answer is read.
				go freeze()
			}
		}
		if !f.emit(frame{data: msg, at: now}) {
			return 0, ErrClosed
		}
	}
}

func (f *framer) emit(fr frame) bool {
	select {
	case f.out <- fr:
		return true
	case <-f.done:
		return false
	}
}

// closeWith ends the stream: readers get err after the queued messages.
func (f *framer) closeWith(err error) {
	if !f.failed {
		f.emit(frame{err: err})
	}
	close(f.out)
}

// stdio is the message-level view of a running bot, shared by every runner.
type stdio struct {
	stdin    io.Writer
	deadline func(time.Time) error // sets the write deadline of stdin
	frames   <-chan frame
	// late is a message that arrived after the deadline it was read
	// against: kept, since a later deadline (the wall-clock cap moved on
	// by the time the bot waited for a CPU) may still accept it.
	late   *frame
	stderr *stderrBuffer
	ended  error // sticky: once the output failed, it stays failed
}

// Send writes one message to the bot's stdin, giving up at the deadline
// (a bot that does not read its input cannot block the match).
func (s *stdio) Send(p []byte, deadline time.Time) error {
	if err := s.deadline(deadline); err != nil {
		return fmt.Errorf("%w: %v", ErrClosed, err)
	}
	if _, err := s.stdin.Write(p); err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return ErrTimeout
		}
		return fmt.Errorf("%w: stdin: %v", ErrClosed, err)
	}
	return nil
}

// Receive returns the bot's next message, waiting until the deadline or
// until ctx is done. Messages the bot sent early are returned first, in
// order. A message is judged by when it arrived, not by when this
// goroutine got to look at it: one that arrived in time counts even if the
// timer fired first, one that arrived late is a timeout — and is still
// the next message, for a caller that gives the bot a later deadline.
func (s *stdio) Receive(ctx context.Context, deadline time.Time) ([]byte, error) {
	if s.ended != nil {
		return nil, s.ended
	}
	if f := s.late; f != nil {
		s.late = nil
		return s.got(*f, true, deadline)
	}
	select {
	case f, ok := <-s.frames:
		return s.got(f, ok, deadline)
	default:
	}
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	select {
	case f, ok := <-s.frames:
		return s.got(f, ok, deadline)
	case <-timer.C:
		select {
		case f, ok := <-s.frames:
			return s.got(f, ok, deadline)
		default:
			return nil, ErrTimeout
		}
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (s *stdio) got(f frame, ok bool, deadline time.Time) ([]byte, error) {
	if !ok {
		s.ended = ErrClosed
		return nil, s.ended
	}
	if f.err != nil {
		s.ended = f.err
		return nil, s.ended
	}
	if f.at.After(deadline) {
		s.late = &f
		return nil, ErrTimeout
	}
	return f.data, nil
}

// TakeStderr returns what the bot wrote to stderr since the last call.
func (s *stdio) TakeStderr() Stderr { return s.stderr.take() }

// PeekStderr is what the bot wrote to stderr since the last take, left
// to be taken.
func (s *stdio) PeekStderr() []byte {
	s.stderr.mu.Lock()
	defer s.stderr.mu.Unlock()
	return bytes.Clone(s.stderr.buf)
}

// Unread is how many bytes of its input the bot has not read yet; false
// when that cannot be known (the engine's attach stream is a socket whose
// far end is the engine, not the bot). Where stdin is a pipe (the FIFO and
// local paths) the kernel says what the pipe holds (FIONREAD, alias
// TIOCINQ).
func (s *stdio) Unread() (int, bool) {
	f, ok := s.stdin.(*os.File)
	if !ok {
		return 0, false
	}
	if st, err := f.Stat(); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		return 0, false
	}
	raw, err := f.SyscallConn()
	if err != nil {
		return 0, false
	}
	n, ierr := 0, error(nil)
	if err := raw.Control(func(fd uintptr) { n, ierr = unix.IoctlGetInt(int(fd), unix.TIOCINQ) }); err != nil || ierr != nil {
		return 0, false
	}
	return n, true
}
