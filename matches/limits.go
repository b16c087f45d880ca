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

// DefaultReplayBudget is what a match's answers may add up to unless set
// otherwise (ARENA_REPLAY_BUDGET; orchestrator.DefaultReplayBudget is the
// same number, a test holds them equal).
const DefaultReplayBudget = 32 << 20

// DefaultAnswerCap is the longest message a replay records when its game
// is not known: a logic game's bot's answer at most (judger.MaxLength), and
// its logic's message by default (judger.MaxLogicMessage); a built-in
// game caps an answer lower (Tanks and Snake 4 KiB, Pac-Man 1 KiB).
const DefaultAnswerCap = 1 << 20

// ReplayBounds are the sizes a replay is read within, its JSON as
// written (decompressed): no replay Arena writes is larger, so a file that
// is (a forged one, a zstd bomb) is refused as soon as it passes one,
// having cost no more memory than the bound.
type ReplayBounds struct {
	// File bounds the whole replay.
	File int64
	// Frame bounds each frame, and each value of the replay's header and
	// its result (the map file among them).
	Frame int64
	// String bounds each string of a frame: an answer, what a bot wrote
	// to stderr in the turn, a string of the state.
	String int64
}

// The margins of the replay bounds (BoundsFor).
const (
	// escapeGrowth is how much a string grows at most as encoding/json
	// writes it: a control byte takes 6 (\u001f).
	escapeGrowth = 6
	// stderrPerTurn is what a bot's stderr adds to a frame at most
	// (sandbox.DefaultStderrCaps.PerTake).
	stderrPerTurn = 4 << 10
	// replayMargin is the whole replay's bound over its budget: the
	// answers (at most the budget) escaped at worst (6×), and as much
	// again for the states, stderr (256 KiB a bot) and figures.
	replayMargin = 8
)

// BoundsFor is the one place a replay's bounds are worked out, from the
// replay budget of its match (what the recorder lets its answers add up
// to, orchestrator.WithReplayBudget) and its game's cap on one message
// (AnswerCap):
//
//   - String: one answer or one turn's stderr, every byte escaped at
//     worst (6×), and 1 KiB over;
//   - File: 8× the budget (see replayMargin), the default budget's when a
//     lower one is given: the budget counts answers, not the states a long
//     match records (a 2,000-turn Snake match on a 30×60 board is 6 MB);
//   - Frame: a sixteenth of that (16 MiB by default: a 200×200 Tanks map
//     full of walls has 2.4 MB states), and at least 4 strings (a logic's
//     frame holds the messages of its round).
func BoundsFor(budget int64, answerCap int) ReplayBounds {
	if budget < DefaultReplayBudget {
		budget = DefaultReplayBudget
	}
	if answerCap <= 0 {
		answerCap = DefaultAnswerCap
	}
	file := replayMargin * budget
	str := min(int64(escapeGrowth)*int64(max(answerCap, stderrPerTurn))+1<<10, file)
	return ReplayBounds{File: file, Frame: min(max(file/16, 4*str), file), String: str}
}

// DefaultReplayBounds bound a replay whose match is not known: the
// default budget, and the longest message any game records by default.
var DefaultReplayBounds = BoundsFor(DefaultReplayBudget, DefaultAnswerCap)

// AnswerCap is the longest message a match of g records: a bot's answer
// (its protocol's cap) or, for a game its own program plays, that
// program's message.
func AnswerCap(g engine.Game) int {
	c := g.Protocol().MaxMessageBytes
	if h, ok := g.(engine.Hosted); ok {
		c = max(c, h.HostLimits().MaxMessageBytes)
	}
	if c <= 0 {
		return DefaultAnswerCap
	}
	return c
}

// ReplayBounds are the bounds of a replay of the request's match, played
// under the replay budget budget.
func (req Request) ReplayBounds(budget int64) ReplayBounds {
	if req.Game == nil {
		return BoundsFor(budget, DefaultAnswerCap)
	}
	return BoundsFor(budget, AnswerCap(req.Game))
}
