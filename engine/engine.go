// Package engine defines the contract between a game's rules and the
// orchestrator that plays it against bots.
//
// A game is pure and deterministic: it does no I/O, reads no clock and uses
// no global random source. Randomness comes from the match seed. The
// orchestrator drives a Match as a sequence of exchanges: it asks the match
// what to deliver and whose answers to wait for (Step), delivers, collects
// the answers or the faults, and hands them back (Submit). Simultaneous games
// (every seat answers at once) and sequential ones (seat 0, then seat 1) are
// both expressed this way.
package engine

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"arena/framing"
	"arena/internal/errs"
)

// Game is one game's catalogue entry and match factory.
type Game interface {
	// Name is the game's identifier on the command line and in the API.
	Name() string
	// Maps lists the maps the game ships; the first is the default.
	Maps() []MapInfo
	// Map returns a shipped map; an unknown name wraps ErrUnknownMap.
	Map(name string) (Map, error)
	// ParseMap parses and validates a map file's content. The name is used
	// in messages and recorded in the replay.
	ParseMap(name string, data []byte) (Map, error)
	// Protocol describes how bots talk to this game.
	Protocol() Protocol
	// NewMatch prepares a match. It rejects a configuration that cannot be
	// played (wrong number of players for the map, bad settings) with an
	// error that names the problem.
	NewMatch(cfg Config) (Match, error)
}

// Map is a parsed, validated map.
type Map interface {
	Info() MapInfo
	// Data is the map file's content, stored in the replay so that a replay
	// is self-contained.
	Data() []byte
}

// MapInfo describes a map for listings and validation.
type MapInfo struct {
	Name       string `json:"name"`
	Width      int    `json:"width"`
	Height     int    `json:"height"`
	MinPlayers int    `json:"min_players"`
	MaxPlayers int    `json:"max_players"`
}

// CheckPlayers is the one check of a match's player count against its
// map: every game's NewMatch calls it.
func (m MapInfo) CheckPlayers(n int) error {
	if n >= m.MinPlayers && n <= m.MaxPlayers {
		return nil
	}
	if m.MinPlayers == m.MaxPlayers {
		return fmt.Errorf("map %s takes %d bots, got %d", m.Name, m.MinPlayers, n)
	}
	return fmt.Errorf("map %s takes %d to %d bots, got %d", m.Name, m.MinPlayers, m.MaxPlayers, n)
}

// DecodeSettings is the one decoder of a game's settings: JSON into dst,
// with the same strictness for every game. No settings (empty, blank or
// null) leave dst as it is; an unknown field, a value of the wrong type or
// anything after the object is an error naming the problem.
func DecodeSettings(raw json.RawMessage, dst any) error {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || bytes.Equal(t, []byte("null")) {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(t))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("unexpected content after the settings object")
	}
	return nil
}

// Protocol is what the orchestrator needs to know about a game's wire
// format and its default time limits.
type Protocol struct {
	// Framing is how bots delimit their answers.
	Framing framing.Framing
	// MaxMessageBytes caps one message from a bot; a longer one is an
	// output-limit fault.
	MaxMessageBytes int
	// AnswerTimeout is the default time a bot has to answer one request.
	AnswerTimeout time.Duration
	// WarmUp is the default window from container start to the deadline
	// of the bot's first answer.
	WarmUp time.Duration
}

// Config is everything a match depends on. The same Config always yields
// the same match given the same answers.
type Config struct {
	Map Map
	// Seed drives every random choice of the match. Zero is a valid seed.
	Seed uint64
	// Players are the bots' ids, one per seat, in seat order.
	Players []string
	// Settings are game-specific options as JSON; nil means defaults. A
	// game rejects unknown fields.
	Settings json.RawMessage
}

// Message is data to deliver to one seat.
type Message struct {
	Seat int
	Data []byte
}

// Step is the next exchange of a match.
type Step struct {
	// Done is true when the match is over. Send may then carry final
	// messages, delivered best effort (the bots are stopped once they have
	// read them, or after a second); Await is empty.
	Done bool
	// Send is delivered first, in order.
	Send []Message
	// Await lists the seats whose next message is awaited, all at once.
	// Each seat is awaited at most once per turn.
	Await []int
	// AnswerTimeout, when set, is this exchange's answer time instead of
	// the protocol's (a logic's round config, see package judger).
	AnswerTimeout time.Duration
}

// Status is a bot's standing in a match: ok until its first fault.
type Status string

// The bot status words (docs/bots.md, "Time limits").
const (
	StatusOK          Status = "ok"
	StatusTimeout     Status = "timeout"
	StatusBadOutput   Status = "bad_output"
	StatusCrashed     Status = "crashed"
	StatusOOM         Status = "oom"
	StatusOutputLimit Status = "output_limit"
	StatusStartFailed Status = "start_failed"
	// StatusIllegal is a game's verdict on a seat whose answer broke its
	// rules (a logic's "IA", see package judger).
	StatusIllegal Status = "illegal"
)

// Known reports whether s is one of the status words above.
func (s Status) Known() bool {
	switch s {
	case StatusOK, StatusTimeout, StatusBadOutput, StatusCrashed, StatusOOM, StatusOutputLimit, StatusStartFailed, StatusIllegal:
		return true
	}
	return false
}

// Reply is an awaited seat's answer, or the fault that prevented it.
type Reply struct {
	Seat int
	Data []byte
	// Fault is set when the bot did not give a usable answer; the game
	// applies its own rule for a faulted seat. A seat that faulted earlier
	// keeps being reported with its fault.
	Fault Status
	// Time is what the answer counted against its limit (its CPU time
	// where counted, else its wall-clock time). The built-in games ignore
	// it; a logic is told it (see package judger).
	Time time.Duration
}

// Rejection is an answer the game could not understand: the orchestrator
// records it as bad output and disables the bot.
type Rejection struct {
	Seat   int
	Reason string
}

// Match is one game in progress.
type Match interface {
	// Step tells what to do next. It does not change the match. The
	// messages' bytes are valid until the next Submit.
	Step() Step
	// Submit hands over the replies to the seats awaited by the last Step,
	// one per awaited seat, and advances the match.
	Submit(replies []Reply) []Rejection
	// Turn is the number of completed turns; the exchanges in progress
	// belong to turn Turn()+1.
	Turn() int
	// Frame is the state after the last completed turn (turn 0 is the
	// initial state), as recorded in the replay and drawn by the viewer.
	Frame() json.RawMessage
	// Out reports whether a seat takes no further part (its tank or snake
	// is gone); the orchestrator may stop that bot.
	Out(seat int) bool
	// Settings are the effective settings, defaults filled in.
	Settings() json.RawMessage
	// Result is final once Step reports Done.
	Result() Result
}

// Result is how a match ended.
type Result struct {
	// Winners are seats; several seats share a win, none is a draw or no
	// result.
	Winners []int        `json:"winners"`
	Seats   []SeatResult `json:"seats"`
}

// SeatResult is one seat's outcome.
type SeatResult struct {
	Score int `json:"score"`
	// DeathReason is empty for a seat still in the game at the end.
	DeathReason string `json:"death_reason,omitempty"`
	DeathTurn   int    `json:"death_turn,omitempty"`
	// Status, when set, is the game's own verdict on the seat (a logic's
	// end_state), which the result shows instead of the status Arena's
	// judgement gave it.
	Status Status `json:"status,omitempty"`
}

// Host is a running program that holds a game's rules (a logic, see
// package judger), as the match sees it: messages to it and from it,
// each within its deadline. The orchestrator starts it in the sandbox,
// as it starts a bot.
type Host interface {
	Send(p []byte, deadline time.Time) error
	Receive(deadline time.Time) ([]byte, error)
}

// Hosted is a game whose rules run in a program of their own: its
// image is started before the bots, and its matches are HostedMatches.
type Hosted interface {
	Game
	// HostImage is the image of the program to start, as named, and the
	// engine id it is pinned to ("": whatever ref names when it starts).
	HostImage() (ref, id string)
	// HostLimits are the program's resources.
	HostLimits() HostLimits
	// CheckHost checks the image's labels against the game as named (the
	// number of bots, the protocol it says it speaks).
	CheckHost(labels map[string]string) error
}

// HostLimits are the resources of a hosted game's program (zero: the
// sandbox policy's).
type HostLimits struct {
	MemoryBytes int64
	NanoCPUs    int64
	// MaxMessageBytes caps one message the program writes.
	MaxMessageBytes int
}

// HostedMatch is a match of a Hosted game. Attach comes before anything
// else; Err, once set, says the match cannot go on for a reason that is
// no bot's (the program crashed, hung or broke the protocol): the match
// fails, it is not a result.
type HostedMatch interface {
	Match
	Attach(h Host) error
	Err() error
}

// TextRenderer is implemented by games that can draw a frame as text, for
// the terminal viewer. frames are a match's frames so far and i the one to
// draw; players are the bots' ids by seat.
type TextRenderer interface {
	RenderText(frames []json.RawMessage, i int, players []string) string
}

// ErrUnknownMap is returned (wrapped) for a map name a game does not ship.
var ErrUnknownMap = errs.New(errs.ErrInvalid, "unknown map")

// Find returns the game with the given name.
func Find(games []Game, name string) (Game, error) {
	for _, g := range games {
		if g.Name() == name {
			return g, nil
		}
	}
	names := make([]string, len(games))
	for i, g := range games {
		names[i] = g.Name()
	}
	return nil, fmt.Errorf("unknown game %q (games: %v)", name, names)
}
