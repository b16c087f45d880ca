package matches

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
	// MemoryBytes is each bot's memory limit (0: the sandbox policy's).
	MemoryBytes int64
}

// Record is the limits as a replay records them.
func (l Limits) Record() LimitsRecord {
	return LimitsRecord{AnswerTimeoutMS: Millis(l.AnswerTimeout), WarmUpMS: Millis(l.WarmUp), MaxMessageBytes: l.MaxMessageBytes, MemoryBytes: l.MemoryBytes}
}

// Millis is a duration in milliseconds, to the microsecond, as replays
// and results write durations.
func Millis(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// Limits is the limits a replay records.
func (r LimitsRecord) Limits() Limits {
	return Limits{AnswerTimeout: time.Duration(r.AnswerTimeoutMS * float64(time.Millisecond)),
		WarmUp: time.Duration(r.WarmUpMS * float64(time.Millisecond)), MaxMessageBytes: r.MaxMessageBytes, MemoryBytes: r.MemoryBytes}
}

// ForStep is the limits of one exchange: the step's answer time where
// the game sets one (a logic's round config).
func (l Limits) ForStep(st engine.Step) Limits {
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
