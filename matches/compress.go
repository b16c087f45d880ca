package matches

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/klauspost/compress/zstd"
)

// Replays are kept compressed: a replay file whose name ends in .zst is
// zstd-compressed JSON (about a hundredth of the JSON for a Tanks match,
// see docs/operations.md); readers take either form, so the replays of
// earlier releases, and files a user wrote as plain JSON, still open.

// Compressed is the suffix of a compressed replay file's name.
const Compressed = ".zst"

// replayWindow is the largest zstd window a replay is read with: the one
// its writer uses (the encoder's default, 8 MiB; zstd's own, up to level
// 19).
const replayWindow = 8 << 20

// zstdMagic opens every zstd frame.
var zstdMagic = []byte{0x28, 0xb5, 0x2f, 0xfd}

// OpenReplay opens a replay file as JSON, decompressing it as it is read
// when it is compressed (whatever its name).
func OpenReplay(path string) (io.ReadCloser, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	r, err := Decompressed(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return r, nil
}

// Decompressed reads a replay's JSON from f, plain or compressed; closing
// it closes f.
func Decompressed(f io.ReadCloser) (io.ReadCloser, error) {
	br := bufio.NewReaderSize(f, 64<<10)
	head, _ := br.Peek(len(zstdMagic))
	if !bytes.Equal(head, zstdMagic) {
		return readCloser{br, f.Close}, nil
	}
	// The window is bounded so a forged file cannot make a reader hold
	// more memory than a replay's writer ever asks for; what it
	// decompresses to is bounded by its reader (ReplayBounds.File).
	d, err := zstd.NewReader(br, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxWindow(replayWindow), zstd.WithDecoderMaxMemory(replayWindow))
	if err != nil {
		return nil, fmt.Errorf("read the compressed replay: %w", err)
	}
	return readCloser{d, func() error { d.Close(); return f.Close() }}, nil
}

type readCloser struct {
	io.Reader
	close func() error
}

func (r readCloser) Close() error { return r.close() }

// writeFile writes a file atomically through write: a reader never sees
// half of it, and a failure leaves none behind. A path ending in .zst is
// written compressed.
func writeFile(path string, write func(w io.Writer) error) (err error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	w := bufio.NewWriterSize(tmp, 64<<10)
	if strings.HasSuffix(path, Compressed) {
		z, err := zstd.NewWriter(w, zstd.WithEncoderLevel(zstd.SpeedBetterCompression), zstd.WithEncoderConcurrency(1))
		if err != nil {
			return err
		}
		if err := write(z); err != nil {
			z.Close()
			return err
		}
		if err := z.Close(); err != nil {
			return err
		}
	} else if err := write(w); err != nil {
		return err
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// copyReplay writes the replay file src at path (compressed if its name
// says so), atomically.
func copyReplay(path, src string) error {
	in, err := OpenReplay(src)
	if err != nil {
		return err
	}
	defer in.Close()
	return writeFile(path, func(w io.Writer) error {
		_, err := io.Copy(w, in)
		return err
	})
}

// WriteReplayBytes saves a replay's JSON at path (compressed if its name
// says so), atomically.
func WriteReplayBytes(path string, data []byte) error {
	return writeFile(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}
