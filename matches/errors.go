package matches

import (
	"errors"
	"time"

	"arena/internal/errs"
)

// Error kinds. Callers test them with errors.Is; the message of an error
// of a kind is its own (the kind adds nothing to it). Each kind but the
// last three is of a class of package errs. A request that cannot be
// played as given (unknown map, wrong number of bots, bad settings, a
// malformed bot reference) is of errs.ErrInvalid, with no kind of its
// own: the caller's mistake, found before any bot starts.
var (
	// ErrImageNotFound: a bot's image is not on the engine (and may not
	// be pulled). Of errs.ErrInvalid: the request names an image the
	// engine lacks, which is the caller's input to mend.
	ErrImageNotFound = errs.New(errs.ErrInvalid, "image not found")
	// ErrQueueClosed is returned by Enqueue once the queue shuts down
	// (errs.ErrUnavailable).
	ErrQueueClosed = errs.New(errs.ErrUnavailable, "the server is shutting down")
	// ErrQueueFull is returned by Enqueue when the line is at its limit
	// (errs.ErrTooMany: try again in 10 s).
	ErrQueueFull = errs.TooMany(errors.New("the queue is full"), 10*time.Second)
	// ErrOverBound: a replay, or a part of one (a frame, a string), is
	// larger than the bound it is read within (ReplayBounds): no replay
	// Arena writes is (errs.ErrInvalid). Its errors are *OverBound, which
	// say what is over which bound.
	ErrOverBound = errs.New(errs.ErrInvalid, "the replay is over its bounds")
	// ErrCancelled is the cause of a match cancelled on request.
	ErrCancelled = errors.New("cancelled on request")
	// ErrGameHost: the program that holds a game's rules (a logic) could
	// not start, crashed, hung or broke its protocol. The match failed;
	// no bot lost it (the platform's failure: of no class).
	ErrGameHost = errors.New("the game's logic failed")
	// ErrLogicFailed: a logic that started failed during the match (it
	// crashed, was killed for its memory, hung past its round time or
	// broke its protocol). Such an error is ErrGameHost too; the match
	// fails where it plays, it is not handed to another host.
	ErrLogicFailed = errors.New("the game's logic failed during the match")
)
