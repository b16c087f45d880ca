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
	// MemoryBytes is each bot's memory limit (0: the sandbox policy's).
	MemoryBytes int64
}

// record is the limits as a replay records them.
func (l Limits) record() LimitsRecord {
	return LimitsRecord{AnswerTimeoutMS: ms(l.AnswerTimeout), WarmUpMS: ms(l.WarmUp), MaxMessageBytes: l.MaxMessageBytes, MemoryBytes: l.MemoryBytes}
}

// fromRecord is the limits a replay records.
func fromRecord(r LimitsRecord) Limits {
	return Limits{AnswerTimeout: time.Duration(r.AnswerTimeoutMS * float64(time.Millisecond)),
		WarmUp: time.Duration(r.WarmUpMS * float64(time.Millisecond)), MaxMessageBytes: r.MaxMessageBytes, MemoryBytes: r.MemoryBytes}
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
