package sandbox

import (
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// Launcher copies: bots on the FIFO path run the arena binary as their
// launcher, from a copy in the stdio folder (never the binary itself,
// which a new build may replace while bots run). A copy is named after the
// build's content, so every process of the same build shares it; each
// process holds its copy open with a shared flock for as long as it lives,
// and the janitor removes only the copies it can lock exclusively: none is
// removed while a live process uses it, and none stays once nobody does.

// launcherPrefix starts the name of every launcher copy.
const launcherPrefix = "launch-"

// launcherCopy is the copy's path for the launcher binary: named by its Go
// build id (a hash of the build), or by a hash of its bytes without one.
func launcherCopy(dir, launcher string) (string, error) {
	id, err := buildID(launcher)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(id))
	return filepath.Join(dir, launcherPrefix+hex.EncodeToString(sum[:8])), nil
}

// buildID is the Go build id of an executable, or the hash of its bytes.
func buildID(path string) (string, error) {
	if f, err := elf.Open(path); err == nil {
		defer f.Close()
		if s := f.Section(".note.go.buildid"); s != nil {
			if data, err := s.Data(); err == nil && len(data) > 16 {
				return string(data), nil
			}
		}
	}
	in, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer in.Close()
	h := sha256.New()
	if _, err := io.Copy(h, in); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// holdLauncherCopy makes sure the launcher's copy is in dir and holds it:
// the returned file keeps a shared flock on it.
func holdLauncherCopy(dir, launcher string) (string, *os.File, error) {
	path, err := launcherCopy(dir, launcher)
	if err != nil {
		return "", nil, err
	}
	for attempt := 0; attempt < 5; attempt++ {
		f, err := os.Open(path)
		if errors.Is(err, os.ErrNotExist) {
			f, err = newLauncherCopy(launcher, path)
		}
		if err != nil {
			return "", nil, err
		}
		if err := unix.Flock(int(f.Fd()), unix.LOCK_SH); err != nil {
			f.Close()
			return "", nil, err
		}
		// A janitor may have removed the copy between the open and the
		// lock: then it is made again.
		if same(f, path) {
			return path, f, nil
		}
		f.Close()
	}
	return "", nil, fmt.Errorf("%s keeps being removed", path)
}

// same reports whether f is still the file at path.
func same(f *os.File, path string) bool {
	a, err1 := f.Stat()
	b, err2 := os.Stat(path)
	return err1 == nil && err2 == nil && os.SameFile(a, b)
}

// newLauncherCopy copies the launcher to path and returns it open and
// share-locked before it appears under its name, so no janitor can take
// it in between.
func newLauncherCopy(launcher, path string) (*os.File, error) {
	in, err := os.Open(launcher)
	if err != nil {
		return nil, err
	}
	defer in.Close()
	tmp, err := os.CreateTemp(filepath.Dir(path), launcherPrefix+"tmp-*")
	if err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err := unix.Flock(int(tmp.Fd()), unix.LOCK_SH); err != nil {
		return nil, err
	}
	if _, err := io.Copy(tmp, in); err != nil {
		return nil, err
	}
	if err := tmp.Chmod(0o755); err != nil {
		return nil, err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return nil, err
	}
	ok = true
	// Reopen read-only, so that the copy has no writer when it is run
	// (exec refuses a file open for writing); the lock moves to it.
	f, err := os.Open(path)
	if err == nil {
		err = unix.Flock(int(f.Fd()), unix.LOCK_SH)
	}
	tmp.Close()
	if err != nil {
		if f != nil {
			f.Close()
		}
		return nil, err
	}
	return f, nil
}

// unusedLauncherCopy reports whether the launcher copy (or one being
// made) at path is held by no process, and if so removes it.
func removeUnusedLauncherCopy(path string) (bool, error) {
	if !strings.HasPrefix(filepath.Base(path), launcherPrefix) {
		return false, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return false, nil
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		return false, nil // held
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return false, err
	}
	return true, nil
}
