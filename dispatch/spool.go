package dispatch

import (
	"bufio"
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"arena/matches"
)

// spoolPrefix begins the name of every replay a worker spools.
const spoolPrefix = "arena-replay-"

// spooled is a played match's replay, encoded in a file of the worker's
// spool until it is reported: its size and SHA-256 digest, taken as it
// was written.
type spooled struct {
	f    *os.File
	size int64
	sum  []byte
}

// spool encodes a replay into a new file of the spool, a frame at a
// time.
func (w *Worker) spool(rep *matches.Replay) (_ *spooled, err error) {
	f, err := os.CreateTemp(w.cfg.Spool, spoolPrefix+"*")
	if err != nil {
		return nil, fmt.Errorf("spool the replay: %w", err)
	}
	s := &spooled{f: f}
	defer func() {
		if err != nil {
			s.remove()
		}
	}()
	h := sha256.New()
	bw := bufio.NewWriterSize(io.MultiWriter(f, h), 64<<10)
	if err := matches.EncodeReplayTo(bw, rep); err != nil {
		return nil, err
	}
	if err := bw.Flush(); err != nil {
		return nil, fmt.Errorf("spool the replay: %w", err)
	}
	if s.size, err = f.Seek(0, io.SeekCurrent); err != nil {
		return nil, fmt.Errorf("spool the replay: %w", err)
	}
	s.sum = h.Sum(nil)
	return s, nil
}

// bytes reads the whole replay (a small one, sent inline).
func (s *spooled) bytes() ([]byte, error) {
	if _, err := s.f.Seek(0, io.SeekStart); err != nil {
		return nil, fmt.Errorf("read the spooled replay: %w", err)
	}
	data := make([]byte, s.size)
	if _, err := io.ReadFull(s.f, data); err != nil {
		return nil, fmt.Errorf("read the spooled replay: %w", err)
	}
	return data, nil
}

// remove deletes the file; it may be called more than once.
func (s *spooled) remove() {
	if s.f == nil {
		return
	}
	s.f.Close()
	os.Remove(s.f.Name())
	s.f = nil
}

// clearSpool removes the replays a killed worker left in the spool. A
// spool shared by several workers (the system's temporary folder) is
// left alone: another may be reporting from it.
func clearSpool(dir string) {
	if dir == "" {
		return
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), spoolPrefix) {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}
