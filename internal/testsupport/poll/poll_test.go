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

func TestWaitAndEvery(t *testing.T) {
	n := 0
	if err := Wait(time.Second, func() error {
		if n++; n < 3 {
			return errors.New("not yet")
		}
		return nil
	}); err != nil || n != 3 {
		t.Errorf("Wait = %v after %d asks, want nil after 3", err, n)
	}
	i := 0
	if err := Wait(50*time.Millisecond, func() error {
		i++
		return fmt.Errorf("try %d", i)
	}); err == nil || err.Error() != fmt.Sprintf("try %d", i) || i < 2 {
		t.Errorf("Wait = %v after %d asks, want the last error", err, i)
	}
	// Every asks at its own pace: 10 ms apart, about 30 times in 300 ms
	// (Wait's doubling waits would ask 5 times).
	asks := 0
	err := Every(10*time.Millisecond, 300*time.Millisecond, func() error {
		asks++
		return fmt.Errorf("ask %d", asks)
	})
	if err == nil || err.Error() != fmt.Sprintf("ask %d", asks) || asks < 8 {
		t.Errorf("Every = %v after %d asks, want the last error of 8 or more", err, asks)
	}
}
