package errs

// The HTTP statuses of the classes, as net/http names them. They are
// numbers here so that this package, which the pure packages import,
// brings net/http into none of them (TestHTTPStatus holds them to
// net/http's).
const (
	statusOK                  = 200 // http.StatusOK
	statusBadRequest          = 400 // http.StatusBadRequest
	statusUnauthorized        = 401 // http.StatusUnauthorized
	statusForbidden           = 403 // http.StatusForbidden
	statusNotFound            = 404 // http.StatusNotFound
	statusConflict            = 409 // http.StatusConflict
	statusTooManyRequests     = 429 // http.StatusTooManyRequests
	statusInternalServerError = 500 // http.StatusInternalServerError
	statusServiceUnavailable  = 503 // http.StatusServiceUnavailable
)

// HTTPStatus is the HTTP status an edge answers err with: its class's
// (Class): 404 not found, 400 invalid, 409 conflict, 401
// unauthenticated, 403 denied, 503 unavailable, 429 too many (with
// RetryAfter for the Retry-After header); 500 for an error of no class,
// the platform's failure (200 for nil). It is the one map from a class
// to a status: the web API and the registry both answer by it.
func HTTPStatus(err error) int {
	if err == nil {
		return statusOK
	}
	switch Class(err) {
	case ErrNotFound:
		return statusNotFound
	case ErrInvalid:
		return statusBadRequest
	case ErrConflict:
		return statusConflict
	case ErrUnauthenticated:
		return statusUnauthorized
	case ErrDenied:
		return statusForbidden
	case ErrUnavailable:
		return statusServiceUnavailable
	case ErrTooMany:
		return statusTooManyRequests
	}
	return statusInternalServerError
}
