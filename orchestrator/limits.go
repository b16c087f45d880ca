package orchestrator

import (
	"time"

	"arena/engine"
)

// Limits are the time and size limits of a match. A zero field means the
// game's own.
type Limits struct {
	AnswerTimeout   time.Duration
	WarmUp          time.Duration
	MaxMessageBytes int
}

// forStep is the limits of one exchange: the step's answer time where
// the game sets one (a logic's round config).
func (l Limits) forStep(st engine.Step) Limits {
	if st.AnswerTimeout > 0 {
		l.AnswerTimeout = st.AnswerTimeout
	}
	return l
}

// Resolve is the one place where a match's effective limits are worked
// out: the overrides where set, the game's protocol elsewhere. A message
// limit can only lower the game's.
func (l Limits) Resolve(p engine.Protocol) Limits {
	if l.AnswerTimeout <= 0 {
		l.AnswerTimeout = p.AnswerTimeout
	}
	if l.WarmUp <= 0 {
		l.WarmUp = p.WarmUp
	}
	if l.MaxMessageBytes <= 0 || l.MaxMessageBytes > p.MaxMessageBytes {
		l.MaxMessageBytes = p.MaxMessageBytes
	}
	return l
}
