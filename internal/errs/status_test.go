package errs

import (
	"errors"
	"fmt"
	"net/http"
	"testing"
)

// TestHTTPStatus: each class's status, as net/http names it, whether
// the error is marked, wrapped or joins its class by a marker method; an
// error of no class is the platform's failure.
func TestHTTPStatus(t *testing.T) {
	for _, tt := range []struct {
		give error
		want int
	}{
		{Errorf(ErrNotFound, "no thing"), http.StatusNotFound},
		{Errorf(ErrInvalid, "bad thing"), http.StatusBadRequest},
		{Errorf(ErrConflict, "thing taken"), http.StatusConflict},
		{Errorf(ErrUnauthenticated, "sign in"), http.StatusUnauthorized},
		{Errorf(ErrDenied, "not yours"), http.StatusForbidden},
		{Errorf(ErrUnavailable, "down"), http.StatusServiceUnavailable},
		{Errorf(ErrTooMany, "slow down"), http.StatusTooManyRequests},
		{TooMany(errors.New("slow down"), 0), http.StatusTooManyRequests},
		{fmt.Errorf("outer: %w", typedDenied{}), http.StatusForbidden},
		{Mark(ErrInvalid, fmt.Errorf("x: %w", Errorf(ErrNotFound, "y"))), http.StatusBadRequest},
		{errors.New("the platform broke"), http.StatusInternalServerError},
		{notReally{}, http.StatusInternalServerError},
		{nil, http.StatusOK},
	} {
		if got := HTTPStatus(tt.give); got != tt.want {
			t.Errorf("HTTPStatus(%v) = %d, want %d", tt.give, got, tt.want)
		}
	}
}
