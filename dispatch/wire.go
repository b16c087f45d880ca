package dispatch

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"time"

	"arena/dispatch/trust"
	"arena/engine"
	"arena/judger"
	"arena/matches"
)

// Version is the version of every message this package writes
// (trust.Version). A reader refuses any other.
const Version = trust.Version

// ErrVersion is the kind of error for a message of an unknown version.
var ErrVersion = trust.ErrVersion

// Subjects and names on the NATS side. Those a worker's permissions name
// are package trust's.
const (
	// MatchesStream is the work queue of matches to play.
	MatchesStream = trust.MatchesStream
	// matchesSubject+"."+MATCH carries a match's job: one subject per
	// match, so a match given up is purged from the queue by its id.
	matchesSubject = "arena.matches"
	// EventsStream holds what workers report: starts, frames, hand-backs
	// and results, under arena.ev.WORKER.KIND.MATCH (NATS lets a worker
	// publish under its own name only).
	EventsStream = "ARENA_EVENTS"
	eventsPrefix = trust.EventsPrefix
	// livePrefix begins the subjects of live frames: plain NATS messages,
	// not stored (the replay has every frame), so that a match's frames
	// cost the server no stream; and of the workers' slots (slotsKind).
	livePrefix   = trust.LivePrefix
	cancelPrefix = trust.CancelPrefix
	// supersededPrefix+MATCH carries a round and a delivery, R:N: the
	// deliveries of the match before delivery N of round R are over (a
	// later one started).
	supersededPrefix = trust.SupersededPrefix
	ConsumerName     = trust.ConsumerName
	// serverConsumer is the server's durable consumer of the events.
	serverConsumer = "server"
	ReplayBucket   = trust.ReplayBucket
	maxDeliveries  = "$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES." + MatchesStream + "." + ConsumerName
)

// Job is a match as the work queue carries it: everything a worker needs
// to play it, bots pinned to image ids.
type Job struct {
	V     int    `json:"v"`
	Match string `json:"match"`
	// Round counts the times the server queued the match: once, and once
	// more for each result it refused.
	Round int `json:"round"`
	// Key is the match's secret, known to the server and the workers the
	// match was delivered to: their events carry proofs made with it.
	Key string `json:"key"`
	// Owner names the dispatcher that queued it: a delivery of a match it
	// has no record of (a server's that restarted) is stopped.
	Owner    string   `json:"owner"`
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
	MemoryBytes     int64         `json:"memory_bytes,omitempty"`
	// Logic is a logic game's logic (nil for the built-in games).
	Logic *JobLogic `json:"logic,omitempty"`
}

// JobLogic is a logic game's logic as a job carries it: pinned to its
// image id (a worker that lacks it asks the server for it, as for a
// pushed bot), with the bots a match takes and its limits.
type JobLogic struct {
	Image   string        `json:"image"`
	ImageID string        `json:"image_id"`
	Players int           `json:"players"`
	Limits  judger.Limits `json:"limits"`
}

// images are the ids of the images a job plays: its bots', and its
// logic's.
func (j Job) images() []string {
	if j.Logic == nil {
		return j.ImageIDs
	}
	return append(slices.Clone(j.ImageIDs), j.Logic.ImageID)
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
	Round   int    `json:"round"`
	Attempt int    `json:"attempt"`
	Worker  string `json:"worker"`
	// Proof shows the worker was handed the match: see proofOf.
	Proof string `json:"proof"`
	// Owner is the job's.
	Owner string `json:"owner,omitempty"`
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

// slotsKind ends the subject of a worker's report of its slots,
// livePrefix+WORKER+"."+slotsKind: a plain NATS message, not stored.
const slotsKind = "slots"

// slotsReport is what a worker says of its slots: as it starts, at every
// change of the matches it plays, every slotsEvery, and (with none) as it
// stops.
type slotsReport struct {
	V      int    `json:"v"`
	Worker string `json:"worker"`
	// Slots is how many matches it takes at once (its concurrency; 0 once
	// it takes no more), Playing how many it plays now.
	Slots   int `json:"slots"`
	Playing int `json:"playing"`
}

// slotsEvery is how often a worker says how many matches it takes, at
// least; slotsKept how long the dispatcher believes it: a worker not
// heard from for that long counts for none.
const (
	slotsEvery = time.Second
	slotsKept  = 3 * time.Second
)

// slotsSubject is the subject of a worker's report of its slots.
func slotsSubject(worker string) string { return livePrefix + worker + "." + slotsKind }

// Version is the version the job says it is (trust.Versioned).
func (j Job) Version() int { return j.V }

// Version is the version the event says it is (trust.Versioned).
func (e Event) Version() int { return e.V }

func (r slotsReport) Version() int { return r.V }

// encodeEvent is json.Marshal(ev), but the frame or the replay it carries
// is written as it is: json.Marshal would check and compact it again, a
// pass over the whole replay on every result. Both are JSON already
// (json.Marshal's, matches.EncodeReplay's).
func encodeEvent(ev Event) ([]byte, error) {
	var key string
	var raw json.RawMessage
	switch {
	case len(ev.Replay) > 0:
		key, raw, ev.Replay = "replay", bytes.TrimSpace(ev.Replay), nil
	case len(ev.Frame) > 0:
		key, raw, ev.Frame = "frame", bytes.TrimSpace(ev.Frame), nil
	}
	head, err := json.Marshal(ev)
	if err != nil || key == "" {
		return head, err
	}
	// The event's object without its closing brace, the raw field, the
	// brace.
	data := make([]byte, 0, len(head)+len(key)+len(raw)+4)
	data = append(data, head[:len(head)-1]...)
	data = append(data, `,"`+key+`":`...)
	data = append(data, raw...)
	return append(data, '}'), nil
}

// jobSubject is the subject of a match's job.
func jobSubject(match string) string { return matchesSubject + "." + match }

// eventSubject is the subject of a worker's event.
func eventSubject(worker, kind, match string) string {
	return eventsPrefix + worker + "." + kind + "." + match
}

// liveSubject is the subject of a worker's live frame of a match.
func liveSubject(worker, match string) string {
	return livePrefix + worker + "." + kindFrame + "." + match
}

// parseEventSubject reads the worker, the kind and the match from an
// event's subject (or a live frame's): the worker's name there is the
// one NATS checked.
func parseEventSubject(s string) (worker, kind, match string, ok bool) {
	rest, ok := strings.CutPrefix(s, eventsPrefix)
	if !ok {
		if rest, ok = strings.CutPrefix(s, livePrefix); !ok {
			return "", "", "", false
		}
	}
	parts := strings.Split(rest, ".")
	if len(parts) != 3 || parts[0] == "" || parts[1] == "" || parts[2] == "" {
		return "", "", "", false
	}
	return parts[0], parts[1], parts[2], true
}

// proofOf is the proof an event of a delivery carries: an HMAC, keyed
// with the match's secret, of the match, the round, the delivery and the
// worker. Only a worker the match was delivered to knows the key, so no
// other can report on it, and the proof of one worker's delivery is not
// another's.
func proofOf(key, match string, round, attempt int, worker string) string {
	mac := hmac.New(sha256.New, []byte(key))
	mac.Write([]byte(match + "|" + strconv.Itoa(round) + "|" + strconv.Itoa(attempt) + "|" + worker))
	return hex.EncodeToString(mac.Sum(nil))
}

// supersededData is what supersededPrefix+MATCH carries.
func supersededData(round, attempt int) []byte {
	return []byte(strconv.Itoa(round) + ":" + strconv.Itoa(attempt))
}

func parseSuperseded(data []byte) (round, attempt int, ok bool) {
	r, a, found := strings.Cut(string(data), ":")
	if !found {
		return 0, 0, false
	}
	round, err1 := strconv.Atoi(r)
	attempt, err2 := strconv.Atoi(a)
	return round, attempt, err1 == nil && err2 == nil
}

// jobOf is the work queue's form of a request.
func jobOf(req matches.Request) Job {
	return Job{
		V: Version, Match: req.MatchID, Game: req.Game.Name(), Map: req.Map.Info().Name, Seed: req.Seed,
		Images: req.Images, ImageIDs: req.ImageIDs, ImageDigests: req.ImageDigests, Settings: req.Settings,
		AnswerTimeout: req.Limits.AnswerTimeout, WarmUp: req.Limits.WarmUp, MaxMessageBytes: req.Limits.MaxMessageBytes, MemoryBytes: req.Limits.MemoryBytes,
		Logic: logicOf(req.Game),
	}
}

// logicOf is a logic game's logic for its jobs (nil: a built-in game).
func logicOf(g engine.Game) *JobLogic {
	lg, ok := g.(*judger.Game)
	if !ok {
		return nil
	}
	ref, id := lg.HostImage()
	return &JobLogic{Image: ref, ImageID: id, Players: lg.Players(), Limits: lg.Limits()}
}
