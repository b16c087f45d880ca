package web

import (
	"errors"
	"fmt"
	"mime"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
	"golang.org/x/time/rate"

	"arena/internal/errs"
)

// The server's defences against hostile web clients. Each is a middleware,
// one decision each:
//
//   - allowHost: a request naming a host the server is not known by is
//     refused (a page on another site rebinding its name to this address
//     cannot talk to the server).
//   - sameOrigin: a request that changes something must come from the
//     page itself: with a JSON body (a cross-site form or no-cors fetch
//     cannot send one without a CORS preflight, which is refused) and, if
//     the browser says where it comes from, from this origin.
//   - limitStarts: each user (each client in local mode) may start only
//     so many matches a minute; limitAnonymousReads and admitSignUp
//     bound what an anonymous client may ask (a sign-up that brings a
//     valid invitation is admitted by it: a class behind one address
//     signs up at once).

func (s *Server) allowHost(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if s.svc.Site.ServesHost(c.Request().Host) {
			return next(c)
		}
		return errs.Errorf(errs.ErrDenied, "host %q is not one this server answers to (ARENA_HOSTS)", c.Request().Host)
	}
}

// isUpload says whether a request is an upload to build (POST
// /api/builds), whose body is an archive, not JSON.
func isUpload(c echo.Context) bool {
	r := c.Request()
	return r.Method == http.MethodPost && r.URL.Path == "/api/builds"
}

// changes reports whether a method may change something.
func changes(method string) bool {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return false
	}
	return true
}

func (s *Server) sameOrigin(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		if !changes(r.Method) {
			return next(c)
		}
		if r.Header.Get("Sec-Fetch-Site") == "cross-site" {
			return errs.Errorf(errs.ErrDenied, "cross-site requests may not change anything here")
		}
		if origin := r.Header.Get("Origin"); origin != "" && origin != "http://"+r.Host && origin != "https://"+r.Host {
			return errs.Errorf(errs.ErrDenied, "requests from %s may not change anything here", origin)
		}
		if isUpload(c) || isRoster(c) {
			// An archive, whose Content-Type (none a form can send) the
			// handler checks.
			return next(c)
		}
		if r.ContentLength != 0 || r.Method == http.MethodPost || r.Method == http.MethodPut || r.Method == http.MethodPatch {
			if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
				return &apiError{http.StatusUnsupportedMediaType, "the request body must be JSON, sent with Content-Type: application/json"}
			}
		}
		return next(c)
	}
}

// limitStarts allows each user (in local mode, each client address)
// perMinute starts a minute, in bursts of up to burst.
func (s *Server) limitStarts(perMinute, burst int) echo.MiddlewareFunc {
	return s.limit(float64(perMinute), burst, func(c echo.Context) string {
		if p := who(c); s.accountsMode() && p.Name != "" {
			return "user " + p.Name
		}
		return s.client(c)
	}, func(id string) string {
		return fmt.Sprintf("too many matches started by %s: at most %d a minute", id, perMinute)
	}, nil)
}

// limitAnonymousReads allows each anonymous client perMinute API
// requests a minute in accounts mode, in bursts of a fifth of it; signed-
// in users are not limited here.
func (s *Server) limitAnonymousReads(perMinute int) echo.MiddlewareFunc {
	return s.limit(float64(perMinute), max(1, perMinute/5), s.client, func(id string) string {
		return fmt.Sprintf("too many requests from %s: at most %d a minute without signing in", id, perMinute)
	}, signedIn)
}

// admitSignUp holds a sign-up to the limit of sign-ups one client may
// make without an invitation (SignupsPerHour).
// An invitation that can still be used admits it (it is checked first:
// a guessed code is no invitation); an admin is not limited.
func (s *Server) admitSignUp(c echo.Context, invite string) error {
	if s.signups == nil || s.svc.People.Staff(who(c)) == nil {
		return nil
	}
	if invite != "" {
		ok, err := s.svc.People.InviteUsable(c.Request().Context(), invite)
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
	}
	id := s.client(c)
	if ok, _ := s.signups.Allow(id); !ok {
		return errs.TooMany(fmt.Errorf("too many sign-ups from %s without an invitation: at most %d an hour (ARENA_SIGNUP_RATE)", id, s.cfg.SignupsPerHour),
			time.Duration(max(1, 3600/s.cfg.SignupsPerHour))*time.Second)
	}
	return nil
}

// limit is a rate limiter of perMinute requests a minute, in bursts of
// burst, per key; skip, when set, exempts requests.
func (s *Server) limit(perMinute float64, burst int, key func(echo.Context) string, deny func(id string) string, skip func(echo.Context) bool) echo.MiddlewareFunc {
	store := middleware.NewRateLimiterMemoryStoreWithConfig(middleware.RateLimiterMemoryStoreConfig{
		Rate: rate.Limit(perMinute / 60), Burst: burst, ExpiresIn: 10 * time.Minute,
	})
	retry := time.Duration(max(1, int(60/perMinute))) * time.Second
	cfg := middleware.RateLimiterConfig{
		Store:               store,
		IdentifierExtractor: func(c echo.Context) (string, error) { return key(c), nil },
		DenyHandler: func(c echo.Context, id string, _ error) error {
			return errs.TooMany(errors.New(deny(id)), retry)
		},
	}
	if skip != nil {
		cfg.Skipper = skip
	}
	return middleware.RateLimiterWithConfig(cfg)
}
