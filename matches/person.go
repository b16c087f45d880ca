package matches

import (
	"context"
	"strings"
	"time"
)

// Person is a seat a person plays (Request.People). The match asks for
// their answer as it asks a bot's, and judges it alike: the same
// validation, the same faults. Only the time differs: Turn, not the
// bots' answer time.
type Person interface {
	// Turn is how long the person has for each answer.
	Turn() time.Duration
	// Ask shows the person a turn's question and waits for their answer
	// until ctx ends (its deadline is the answer's): then it returns
	// ctx's error.
	Ask(ctx context.Context, q Question) ([]byte, error)
}

// Question is what a person is asked in a turn: the seat's input since
// its last answer, as a bot would read it, and when the answer is due.
type Question struct {
	Turn     int
	Input    []byte
	Deadline time.Time
}

// HumanPrefix starts the image reference of a seat a person plays.
const HumanPrefix = "human:"

// HumanRef is the reference a person's seat has in a match and its
// replay: "human:NAME".
func HumanRef(name string) string { return HumanPrefix + name }

// IsHumanRef says whether a reference names a person's seat.
func IsHumanRef(ref string) bool { return strings.HasPrefix(ref, HumanPrefix) }
