// Package bytesize writes byte counts as people read them.
package bytesize

import "fmt"

// String is n in MiB or KiB when whole, else in bytes: 8 MiB, 512 KiB,
// 100 bytes.
func String(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
