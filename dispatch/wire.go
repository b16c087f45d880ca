package dispatch

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"arena/orchestrator"
)

// Version is the version of every message this package writes. A reader
// refuses any other.
const Version = 1

// ErrVersion is the kind of error for a message of an unknown version.
var ErrVersion = errors.New("unknown message version")

// Subjects and names on the NATS side.
const (
	// MatchesStream is the work queue of matches to play.
	MatchesStream  = "ARENA_MATCHES"
	matchesSubject = "arena.matches"
	// EventsStream holds what workers report: starts, frames, hand-backs
	// and results, under arena.ev.KIND.MATCH.
	EventsStream = "ARENA_EVENTS"
	eventsPrefix = "arena.ev."
	cancelPrefix = "arena.cancel."
	// supersededPrefix+MATCH carries a delivery number N: the deliveries
	// of the match before N are over (a later one started).
	supersededPrefix = "arena.superseded."
	ConsumerName     = "workers"
	// serverConsumer is the server's durable consumer of the events.
	serverConsumer = "server"
	ReplayBucket   = "arena-replays"
	maxDeliveries  = "$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES." + MatchesStream + "." + ConsumerName
)

// Job is a match as the work queue carries it: everything a worker needs
// to play it, bots pinned to image ids.
type Job struct {
	V        int      `json:"v"`
	Match    string   `json:"match"`
	Game     string   `json:"game"`
	Map      string   `json:"map"`
	Seed     uint64   `json:"seed"`
	Images   []string `json:"images"`
	ImageIDs []string `json:"image_ids"`
	// ImageDigests are registry digests of the pinned images ("" where
	// none is known), by which a worker that lacks one may pull it.
	ImageDigests []string        `json:"image_digests,omitempty"`
	Settings     json.RawMessage `json:"settings,omitempty"`
	// Limits are the request's overrides (zero: the game's).
	AnswerTimeout   time.Duration `json:"answer_timeout,omitempty"`
	WarmUp          time.Duration `json:"warm_up,omitempty"`
	MaxMessageBytes int           `json:"max_message_bytes,omitempty"`
}

// Event kinds.
const (
	kindStart    = "start"
	kindFrame    = "frame"
	kindHandback = "handback"
	kindResult   = "result"
	// kindStopped: a match cancelled by the server is stopped on its
	// worker, its containers removed.
	kindStopped = "stopped"
)

// Event is what a worker reports about one delivery (attempt) of a match.
type Event struct {
	V       int    `json:"v"`
	Kind    string `json:"kind"`
	Match   string `json:"match"`
	Attempt int    `json:"attempt"`
	Worker  string `json:"worker"`
	// Seq numbers frames from 0 within an attempt; Frame is one.
	Seq   int             `json:"seq,omitempty"`
	Frame json.RawMessage `json:"frame,omitempty"`
	// Reason says why a match was handed back, or failed (a result
	// without a replay).
	Reason string `json:"reason,omitempty"`
	// Replay is the finished match's replay inline, or Object names it in
	// the replay bucket when it is larger than a message.
	Replay json.RawMessage `json:"replay,omitempty"`
	Object string          `json:"object,omitempty"`
}

// decode reads a message of this package, refusing unknown versions
// before reading anything else.
func decode(data []byte, v any) error {
	var head struct {
		V int `json:"v"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return fmt.Errorf("not a message of arena: %w", err)
	}
	if head.V != Version {
		return fmt.Errorf("%w %d (this build reads %d)", ErrVersion, head.V, Version)
	}
	return json.Unmarshal(data, v)
}

// jobOf is the work queue's form of a request.
func jobOf(req orchestrator.Request) Job {
	return Job{
		V: Version, Match: req.MatchID, Game: req.Game.Name(), Map: req.Map.Info().Name, Seed: req.Seed,
		Images: req.Images, ImageIDs: req.ImageIDs, ImageDigests: req.ImageDigests, Settings: req.Settings,
		AnswerTimeout: req.Limits.AnswerTimeout, WarmUp: req.Limits.WarmUp, MaxMessageBytes: req.Limits.MaxMessageBytes,
	}
}
