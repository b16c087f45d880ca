package orchestrator

import "errors"

// Error kinds. Callers test them with errors.Is; the message of an error
// of a kind is its own (the kind adds nothing to it).
var (
	// ErrInvalid: the request cannot be played as given (unknown map,
	// wrong number of bots, bad settings, a malformed bot reference). It
	// is the caller's mistake, found before any bot starts.
	ErrInvalid = errors.New("invalid request")
	// ErrImageNotFound: a bot's image is not on the engine (and may not
	// be pulled).
	ErrImageNotFound = errors.New("image not found")
	// ErrQueueClosed is returned by Enqueue once the queue shuts down.
	ErrQueueClosed = errors.New("the server is shutting down")
	// ErrQueueFull is returned by Enqueue when the line is at its limit.
	ErrQueueFull = errors.New("the queue is full")
	// ErrCancelled is the cause of a match cancelled on request.
	ErrCancelled = errors.New("cancelled on request")
	// ErrGameHost: the program that holds a game's rules (a logic) could
	// not start, crashed, hung or broke its protocol. The match failed;
	// no bot lost it.
	ErrGameHost = errors.New("the game's logic failed")
)

// kinded is an error of a kind: its message is err's, and errors.Is
// matches both the kind and whatever err wraps.
type kinded struct {
	kind, err error
}

func (k *kinded) Error() string   { return k.err.Error() }
func (k *kinded) Unwrap() []error { return []error{k.kind, k.err} }

// invalid marks err as the caller's mistake.
func invalid(err error) error { return &kinded{ErrInvalid, err} }
