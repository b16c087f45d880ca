package imageref

import (
	"errors"
	"testing"

	"arena/internal/errs"
)

func TestCheck(t *testing.T) {
	for _, ok := range []string{"alice/bot", "arena/tanks-hunter:latest", "localhost:5000/a/b@sha256:" + sixtyFour} {
		if err := Check(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "Bad Name", "a//b", "-lead/x", "x@sha256:short"} {
		err := Check(bad)
		if !errors.Is(err, ErrBad) || !errs.IsInvalid(err) {
			t.Errorf("%q: %v, want ErrBad of class invalid", bad, err)
		}
	}
}

const sixtyFour = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
