// Package framing is the one definition of how a bot delimits the
// messages it writes: one per line, or each after a 4-byte big-endian
// length (and, for a game's logic, a target). A game names its framing in its protocol (engine.Protocol); the
// sandbox splits a bot's stdout with a Splitter. It is pure: bytes in,
// messages out, no I/O and no clock.
package framing

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
)

// Framing is how a bot delimits its messages on stdout.
type Framing string

const (
	// Lines: each message ends with '\n', which is not part of it. The
	// zero Framing means Lines.
	Lines Framing = "lines"
	// LengthPrefixed: each message is a 4-byte big-endian length, then
	// that many bytes.
	LengthPrefixed Framing = "length-prefixed"
	// Targeted: each message is a 4-byte big-endian length, a 4-byte
	// big-endian target, then that many bytes (a Saiblo logic's output);
	// the message cut is the target's 4 bytes, then the data.
	Targeted Framing = "targeted"
)

// ErrTooLong is wrapped by the error for a message over the size limit.
var ErrTooLong = errors.New("message over the size limit")

// Splitter cuts complete messages off a stream fed to it in chunks of any
// size. Once a message is over the limit the stream is broken for good:
// Next keeps returning that error and Write discards what follows, so the
// memory held stays bounded by the limit.
type Splitter struct {
	framing Framing
	max     int
	buf     []byte
	scanned int // bytes of buf already searched for '\n'
	err     error
}

// NewSplitter returns a splitter for messages of at most max bytes.
func NewSplitter(f Framing, max int) *Splitter {
	return &Splitter{framing: f, max: max}
}

// Write appends a chunk of the stream. It never fails.
func (s *Splitter) Write(p []byte) (int, error) {
	if s.err == nil {
		s.buf = append(s.buf, p...)
	}
	return len(p), nil
}

// Buffered is how many bytes wait for the rest of their message.
func (s *Splitter) Buffered() int { return len(s.buf) }

// Next returns the next complete message (a copy), or ok false when none
// is complete yet. err is set, for good, once a message is over the limit.
func (s *Splitter) Next() (msg []byte, ok bool, err error) {
	if s.err != nil {
		return nil, false, s.err
	}
	msg, ok = s.cut()
	if s.err != nil {
		s.buf = nil
		return nil, false, s.err
	}
	if !ok && len(s.buf) == 0 && cap(s.buf) > 2*s.max+64<<10 {
		s.buf = nil // let a large backing array go
	}
	return msg, ok, nil
}

func (s *Splitter) cut() ([]byte, bool) {
	switch s.framing {
	case LengthPrefixed, Targeted:
		head := 4
		if s.framing == Targeted {
			head = 8
		}
		if len(s.buf) < head {
			return nil, false
		}
		n := binary.BigEndian.Uint32(s.buf)
		if n > uint32(s.max) {
			s.err = fmt.Errorf("%w: a %d-byte message, limit %d", ErrTooLong, n, s.max)
			return nil, false
		}
		end := head + int(n)
		if len(s.buf) < end {
			return nil, false
		}
		msg := append([]byte(nil), s.buf[4:end]...)
		s.consume(end)
		return msg, true
	default:
		i := bytes.IndexByte(s.buf[s.scanned:], '\n')
		if i < 0 {
			s.scanned = len(s.buf)
			if len(s.buf) > s.max {
				s.err = fmt.Errorf("%w: a line longer than %d bytes", ErrTooLong, s.max)
			}
			return nil, false
		}
		end := s.scanned + i
		if end > s.max {
			s.err = fmt.Errorf("%w: a line longer than %d bytes", ErrTooLong, s.max)
			return nil, false
		}
		msg := append([]byte(nil), s.buf[:end]...)
		s.consume(end + 1)
		return msg, true
	}
}

// consume drops the first n bytes. The rest moves to the front once the
// consumed part would pin a large backing array.
func (s *Splitter) consume(n int) {
	s.scanned = 0
	s.buf = s.buf[n:]
	if cap(s.buf) > 2*s.max+64<<10 {
		s.buf = append([]byte(nil), s.buf...)
	}
}
