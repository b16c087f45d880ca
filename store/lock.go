package store

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// ErrLocked is wrapped by the error of Open when another process holds
// the data folder.
var ErrLocked = errors.New("the data folder is in use")

// lockName is the lock file in the data folder. Its content says who holds
// it, for the error the next one gets.
const lockName = "arena.lock"

// lock takes the data folder's lock (an flock, released by the kernel
// when the holder dies, however it dies) and writes holder into it.
func lock(dir, holder string) (*os.File, error) {
	path := filepath.Join(dir, lockName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock the data folder: %w", err)
	}
	// An earlier release made it 0644.
	if fi, err := f.Stat(); err == nil && fi.Mode().Perm()&0o077 != 0 {
		f.Chmod(0o600)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			who, _ := os.ReadFile(path)
			if s := strings.TrimSpace(string(who)); s != "" {
				return nil, fmt.Errorf("%w: data folder %s is held by %s", ErrLocked, dir, s)
			}
			return nil, fmt.Errorf("%w: data folder %s is held by another process", ErrLocked, dir)
		}
		return nil, fmt.Errorf("lock the data folder %s: %w", dir, err)
	}
	if err := f.Truncate(0); err == nil {
		f.WriteAt([]byte(holder+"\n"), 0)
	}
	return f, nil
}
