package web

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"go.uber.org/zap"

	"arena/accounts"
	"arena/contest"
	"arena/internal/errs"
	"arena/ladder"
	"arena/matches"
	"arena/store"
)

// deniedByMarker is an error of another package that joins a class by
// its marker method alone.
type deniedByMarker struct{}

func (deniedByMarker) Error() string  { return "not yours, says its type" }
func (deniedByMarker) IsDenied() bool { return true }

// TestErrorClasses: an error of each class from a handler is answered
// (handleError) with the class's status, the error's message unchanged,
// and a Retry-After when an error of too many says how long to wait.
func TestErrorClasses(t *testing.T) {
	s := &Server{log: zap.NewNop()}
	_, contestInput := contest.LookupFormat("no-such-format")
	for _, tc := range []struct {
		name   string
		err    error
		status int
		retry  string
	}{
		{"not found", errs.Errorf(errs.ErrNotFound, "no thing %d", 1), 404, ""},
		{"invalid", errs.Errorf(errs.ErrInvalid, "bad thing"), 400, ""},
		{"conflict", errs.Errorf(errs.ErrConflict, "thing taken"), 409, ""},
		{"unauthenticated", errs.Errorf(errs.ErrUnauthenticated, "sign in"), 401, ""},
		{"denied", errs.Errorf(errs.ErrDenied, "not yours"), 403, ""},
		{"unavailable", errs.Errorf(errs.ErrUnavailable, "shutting down"), 503, ""},
		{"too many, no wait said", errs.Errorf(errs.ErrTooMany, "one at a time"), 429, ""},
		{"too many, with a wait", errs.TooMany(errors.New("slow down"), 7*time.Second), 429, "7"},
		{"too many, a wait rounded up", errs.TooMany(errors.New("slow down"), 1500*time.Millisecond), 429, "2"},
		{"wrapped", fmt.Errorf("outer: %w", errs.Errorf(errs.ErrConflict, "inner")), 409, ""},
		{"marked", errs.Mark(errs.ErrNotFound, errors.New("made elsewhere")), 404, ""},
		{"a marker method", fmt.Errorf("outer: %w", deniedByMarker{}), 403, ""},
		{"marked again: the outer mark", errs.Mark(errs.ErrInvalid, fmt.Errorf("x: %w", errs.Errorf(errs.ErrNotFound, "y"))), 400, ""},
		{"no class", errors.New("the platform broke"), 500, ""},
		{"no class, wrapped", fmt.Errorf("outer: %w", errors.New("the platform broke")), 500, ""},
		// The packages' sentinels, by their classes.
		{"a match", fmt.Errorf("%w: x", store.ErrNotFound), 404, ""},
		{"a ladder entry", store.ErrNoEntry, 404, ""},
		{"an unknown game", fmt.Errorf("%w: x", ladder.ErrUnknownGame), 404, ""},
		{"a name taken", fmt.Errorf("%w: x", store.ErrNameTaken), 409, ""},
		{"a full ladder", store.ErrLadderFull, 409, ""},
		{"a request", matches.Request{}.Check(), 400, ""},
		{"an absent image", fmt.Errorf("%w: x", matches.ErrImageNotFound), 400, ""},
		{"a closed queue", matches.ErrQueueClosed, 503, ""},
		{"a full queue", fmt.Errorf("%w: 3 matches are waiting", matches.ErrQueueFull), 429, "10"},
		{"sign-in limits", &accounts.TooManyError{Of: "account alice", RetryAfter: 41 * time.Second}, 429, "41"},
		{"no contest", fmt.Errorf("%w: x", store.ErrNoContest), 404, ""},
		{"a contest closed", fmt.Errorf("%w: x", store.ErrContestClosed), 409, ""},
		{"a contest's input", contestInput, 400, ""},
		{"not invited", fmt.Errorf("%w: x", contest.ErrNotInvited), 403, ""},
		{"an account's", accounts.Principal{Name: "bob", Role: accounts.RolePlayer}.MayChange("entry 1", "alice"), 403, ""},
		// Purely HTTP answers keep their own status.
		{"an HTTP answer", &apiError{http.StatusUnsupportedMediaType, "send JSON"}, 415, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := echo.New()
			e.HTTPErrorHandler = s.handleError
			e.Match([]string{http.MethodGet, http.MethodHead}, "/fake", func(echo.Context) error { return tc.err })
			for _, method := range []string{http.MethodGet, http.MethodHead} {
				rec := httptest.NewRecorder()
				e.ServeHTTP(rec, httptest.NewRequest(method, "/fake", nil))
				if rec.Code != tc.status {
					t.Errorf("%s: status %d, want %d", method, rec.Code, tc.status)
				}
				if got := rec.Header().Get("Retry-After"); got != tc.retry {
					t.Errorf("%s: Retry-After %q, want %q", method, got, tc.retry)
				}
				if method == http.MethodHead {
					if rec.Body.Len() != 0 {
						t.Errorf("HEAD: a body %q", rec.Body.String())
					}
					continue
				}
				var body map[string]string
				if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || body["error"] != tc.err.Error() {
					t.Errorf("body %q, want the error's message %q", rec.Body.String(), tc.err.Error())
				}
			}
		})
	}
}
