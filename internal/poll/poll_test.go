package poll

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// fakeT records a failure instead of ending the test.
type fakeT struct {
	testing.TB
	failed string
}

func (f *fakeT) Helper() {}

func (f *fakeT) Fatalf(format string, args ...any) {
	f.failed = fmt.Sprintf(format, args...)
	panic(f)
}

func TestUntil(t *testing.T) {
	n := 0
	Until(t, time.Second, func() error {
		if n++; n < 3 {
			return errors.New("not yet")
		}
		return nil
	})
	if n != 3 {
		t.Errorf("asked %d times, want 3", n)
	}
	ft := &fakeT{TB: t}
	i := 0
	func() {
		defer func() { recover() }()
		Until(ft, 50*time.Millisecond, func() error {
			i++
			return fmt.Errorf("try %d", i)
		})
	}()
	if want := fmt.Sprintf("try %d", i); i < 2 || !strings.HasSuffix(ft.failed, want) {
		t.Errorf("the failure %q does not end with the last error, %q", ft.failed, want)
	}
}
