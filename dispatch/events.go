package dispatch

import (
	"context"
	"crypto/hmac"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"go.uber.org/zap"

	"arena/dispatch/trust"
	"arena/matches"
)

// goneMatch is a match the dispatcher is done with: until when it is
// remembered, and when a worker was last told to stop it.
type goneMatch struct{ until, told time.Time }

// event handles one message of the events stream: it is admitted (see
// admitLocked), then handled by its kind's method, all under d.mu; what
// must not run under it (passing a frame on, reading and checking a
// result's replay, telling workers) runs after.
func (d *Dispatcher) event(subject string, data []byte) {
	worker, kind, match, ok := parseEventSubject(subject)
	if !ok {
		d.log.Warn("event refused: not an event's subject", zap.String("subject", subject))
		return
	}
	ev, rep, err := readEvent(kind, data)
	if err != nil {
		d.log.Warn("event refused", zap.String("subject", subject), zap.Error(err))
		return
	}
	var then []func()
	d.mu.Lock()
	if ev.Kind != kind || ev.Match != match || ev.Worker != worker {
		then = d.refuseLocked(worker, match, "its event names another worker, kind or match than its subject", then)
	} else {
		if d.unknownLocked(ev) || d.retellLocked(ev) {
			then = append(then, func() { d.tellStop(ev.Match) })
		}
		var w *wait
		if w, then = d.admitLocked(ev, then); w != nil {
			switch ev.Kind {
			case kindStart:
				then = d.startLocked(w, ev, then)
			case kindFrame:
				then = d.frameLocked(w, ev, then)
			case kindStopped:
				d.stoppedLocked(w)
			case kindHandback:
				d.handbackLocked(w, ev)
			case kindResult:
				then = d.resultLocked(w, ev, rep, then)
			default:
				d.log.Warn("event of an unknown kind refused", zap.String("kind", ev.Kind), zap.String("worker", worker))
			}
		}
	}
	d.mu.Unlock()
	for _, f := range then {
		f()
	}
}

// liveFrame handles a live frame, a plain NATS message: it is passed on
// if it is believed as an event of the stream is (see admitLocked). One
// that comes before its delivery's start was handled (the start travels
// through the events stream, the frame does not) waits for it, a few at
// most; one of a delivery no longer current is dropped without a word.
func (d *Dispatcher) liveFrame(subject string, data []byte) {
	worker, kind, match, ok := parseEventSubject(subject)
	if !ok || kind != kindFrame {
		return
	}
	ev, _, err := readEvent(kind, data)
	if err != nil {
		d.log.Warn("live frame refused", zap.String("subject", subject), zap.Error(err))
		return
	}
	var then []func()
	d.mu.Lock()
	w, known := d.waits[match]
	switch {
	case ev.Kind != kind || ev.Match != match || ev.Worker != worker:
		then = d.refuseLocked(worker, match, "its live frame names another worker, kind or match than its subject", then)
	case d.unknownLocked(ev) || d.retellLocked(ev):
		then = append(then, func() { d.tellStop(ev.Match) })
	case !known || w.over:
	case ev.Round == w.round && w.holders[ev.Attempt] == "" && hmac.Equal([]byte(ev.Proof), []byte(proofOf(w.key, ev.Match, ev.Round, ev.Attempt, ev.Worker))):
		// Its start is not handled yet.
		if len(w.early) < earlyFrames {
			w.early = append(w.early, ev)
		}
	case ev.Round == w.round && ev.Attempt == w.attempt && w.holders[ev.Attempt] == ev.Worker:
		if w, then = d.admitLocked(ev, then); w != nil {
			then = d.frameLocked(w, ev, then)
		}
	}
	d.mu.Unlock()
	for _, f := range then {
		f()
	}
}

// earlyFrames bounds the live frames of a match kept until its start is
// handled.
const earlyFrames = 64

// readEvent decodes an event. A result's inline replay is decoded in the
// same pass (rep): a second pass over it would cost as much again. One
// that does not decode as a replay is left raw in ev.Replay, for the
// check to refuse.
func readEvent(kind string, data []byte) (ev Event, rep *matches.Replay, err error) {
	if kind == kindResult {
		var in struct {
			Event
			Replay *matches.Replay `json:"replay,omitempty"`
		}
		if trust.Decode(data, &in) == nil {
			return in.Event, in.Replay, nil
		}
	}
	err = trust.Decode(data, &ev)
	return ev, nil, err
}

// admitLocked is the match an event is about, if it is to be believed:
// the match is waited for; the worker is not quarantined; its proof
// shows it was handed the match; it is of the current round and
// delivery; and it is from the worker that took that delivery.
func (d *Dispatcher) admitLocked(ev Event, then []func()) (*wait, []func()) {
	w, ok := d.waits[ev.Match]
	if !ok || w.over {
		return nil, then // not ours, or over: a late or repeated report
	}
	log := d.log.With(zap.String("match", ev.Match), zap.Int("attempt", ev.Attempt), zap.String("worker", ev.Worker))
	if s := d.workers[ev.Worker]; s != nil && s.quarantined {
		log.Warn("report of a quarantined worker refused", zap.String("kind", ev.Kind))
		if ev.Kind == kindStart && ev.Round == w.round {
			// It holds the match's delivery: queue the match again
			// rather than wait for its lease to run out.
			then = append(then, d.requeueLocked(w, ev, errors.New("taken by a quarantined worker"))...)
		}
		return nil, then
	}
	if !hmac.Equal([]byte(ev.Proof), []byte(proofOf(w.key, ev.Match, ev.Round, ev.Attempt, ev.Worker))) {
		return nil, d.refuseLocked(ev.Worker, ev.Match, "its report carries no valid proof: the match was not delivered to it", then)
	}
	if ev.Round < w.round || ev.Round == w.round && ev.Attempt < w.attempt {
		// Its worker plays on: tell it again (it may have been cut off
		// when a later delivery started), once a second at most.
		if time.Since(w.told) > time.Second {
			w.told = time.Now()
			round, latest := w.round, w.attempt
			then = append(then, func() { d.supersede(ev.Match, round, latest) })
		}
		log.Info("late report refused: a later attempt started", zap.String("kind", ev.Kind), zap.Int("latest", w.attempt))
		return nil, then
	}
	if ev.Round > w.round {
		return nil, d.refuseLocked(ev.Worker, ev.Match, fmt.Sprintf("it reports on round %d of the match, which was never queued", ev.Round), then)
	}
	holder, held := w.holders[ev.Attempt]
	switch {
	case ev.Kind == kindStart && held && holder != ev.Worker:
		return nil, d.refuseLocked(ev.Worker, ev.Match, fmt.Sprintf("it claims delivery %d, which %s took", ev.Attempt, holder), then)
	case ev.Kind == kindStart:
		w.holders[ev.Attempt] = ev.Worker
	case !held:
		return nil, d.refuseLocked(ev.Worker, ev.Match, fmt.Sprintf("it reports on delivery %d, which no worker said it took", ev.Attempt), then)
	case holder != ev.Worker:
		return nil, d.refuseLocked(ev.Worker, ev.Match, fmt.Sprintf("it reports on delivery %d, which %s holds", ev.Attempt, holder), then)
	}
	if ev.Attempt > w.attempt {
		w.attempt = ev.Attempt
		if ev.Attempt > 1 {
			w.told = time.Now()
			round, attempt := w.round, ev.Attempt
			then = append(then, func() { d.supersede(ev.Match, round, attempt) })
		}
	}
	return w, then
}

// refuseLocked counts a report of worker's refused and logs why; past
// QuarantineAfter, the worker is quarantined.
func (d *Dispatcher) refuseLocked(worker, match, why string, then []func()) []func() {
	s := d.standingLocked(worker)
	s.refused++
	s.lastRefusal = why
	d.log.Warn("report refused", zap.String("worker", worker), zap.String("match", match), zap.String("why", why), zap.Int("refused", s.refused))
	if s.refused >= d.cfg.QuarantineAfter && !s.quarantined {
		s.quarantined = true
		d.slotsChangedLocked() // it counts for none now
		reason := fmt.Sprintf("%d reports refused, the last because %s", s.refused, why)
		d.log.Error("worker quarantined: it takes no more matches", zap.String("worker", worker), zap.String("why", reason))
		if q := d.cfg.Quarantine; q != nil {
			then = append(then, func() { q(worker, reason) })
		}
	}
	return then
}

// startLocked: a worker took a delivery. Its replay bucket is made the
// first time it is seen.
func (d *Dispatcher) startLocked(w *wait, ev Event, then []func()) []func() {
	d.log.Info("match taken", zap.String("match", ev.Match), zap.Int("attempt", ev.Attempt), zap.String("worker", ev.Worker))
	early := w.early
	w.early = nil
	for _, f := range early {
		if f.Worker == ev.Worker && f.Attempt == ev.Attempt && f.Round == ev.Round {
			then = d.frameLocked(w, f, then)
		}
	}
	if s := d.standingLocked(ev.Worker); !s.bucket {
		s.bucket = true
		then = append(then, func() { d.bg.Go(func() { d.makeBucket(ev.Worker) }) })
	}
	return then
}

// frameLocked passes a live frame on (see viewer), after the lock.
func (d *Dispatcher) frameLocked(w *wait, ev Event, then []func()) []func() {
	if w.view.on == nil {
		return then
	}
	return append(then, func() { w.view.raw(ev.Seq, ev.Frame) })
}

// viewer passes a match's frames on to Request.OnFrame, in order, each
// once, from whichever source has it first: a live frame (plain NATS, so
// one may be lost or come late) or the checked replay, which fills in
// whatever the live frames missed before Play returns. A live frame
// behind the last one passed on is dropped (a later delivery replays the
// turns already shown); one ahead of it is passed on, the gap left: live
// is live. After close nothing more is passed on.
type viewer struct {
	on     func(matches.Frame)
	mu     sync.Mutex
	shown  int // frames passed on, or the next frame's index
	closed bool
}

// raw passes on frame i, given as JSON, unless it is behind.
func (v *viewer) raw(i int, data json.RawMessage) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.closed || i < v.shown {
		return
	}
	var f matches.Frame
	if json.Unmarshal(data, &f) != nil {
		return
	}
	v.shown = i + 1
	v.on(f)
}

// frame passes on frame i of a checked replay, unless it is behind.
func (v *viewer) frame(i int, f matches.Frame) {
	if v.on == nil {
		return
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.closed || i < v.shown {
		return
	}
	v.shown = i + 1
	v.on(f)
}

// fill passes on the frames of a checked replay held in memory that
// were not passed on live.
func (v *viewer) fill(frames []matches.Frame) {
	if v.on == nil {
		return
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	for i := v.shown; !v.closed && i < len(frames); i++ {
		v.shown = i + 1
		v.on(frames[i])
	}
}

// close ends the viewer, once a frame being passed on is done.
func (v *viewer) close() {
	v.mu.Lock()
	v.closed = true
	v.mu.Unlock()
}

// stoppedLocked: the worker of a cancelled match stopped it.
func (d *Dispatcher) stoppedLocked(w *wait) {
	select {
	case <-w.stopped:
	default:
		close(w.stopped)
	}
}

// handbackLocked: a worker gave its delivery back, saying why.
func (d *Dispatcher) handbackLocked(w *wait, ev Event) {
	w.reasons = append(w.reasons, fmt.Sprintf("%s (delivery %d): %s", ev.Worker, ev.Attempt, ev.Reason))
	d.log.Info("match handed back", zap.String("match", ev.Match), zap.Int("attempt", ev.Attempt), zap.String("worker", ev.Worker), zap.String("reason", ev.Reason))
}

// resultLocked: a worker reports how its delivery ended. A failure ends
// the match; a replay (rep, when it came inline and decoded with the
// event) is read and checked after the lock, and the match ends with it
// only if it passes.
func (d *Dispatcher) resultLocked(w *wait, ev Event, rep *matches.Replay, then []func()) []func() {
	if ev.Reason != "" {
		w.reasons = append(w.reasons, fmt.Sprintf("%s (delivery %d): %s", ev.Worker, ev.Attempt, ev.Reason))
		d.endLocked(ev.Match, w, result{err: fmt.Errorf("%w: %s", ErrNoWorker, strings.Join(w.reasons, "; "))})
		return then
	}
	w.over = true // only the first result counts, unless it is refused
	// Reading (from the object store) and checking a replay takes a
	// while: the other matches' events do not wait for it.
	return append(then, func() { d.bg.Go(func() { d.check(w, ev, rep) }) })
}

// requeueLocked queues the next round of a match whose result was
// refused (the match fails past the last round): the earlier
// deliveries are told they are over.
func (d *Dispatcher) requeueLocked(w *wait, ev Event, why error) []func() {
	id := ev.Match
	w.reasons = append(w.reasons, fmt.Sprintf("%s (round %d, delivery %d): %v", ev.Worker, w.round, ev.Attempt, why))
	if w.round >= d.cfg.Rounds {
		d.endLocked(id, w, result{err: fmt.Errorf("%w: no result could be believed in %d rounds: %s", ErrNoWorker, w.round, strings.Join(w.reasons, "; "))})
		return nil
	}
	w.round++
	w.attempt, w.holders = 0, map[int]string{}
	round, old := w.round, w.seq
	d.log.Warn("match queued again: its result was refused", zap.String("match", id), zap.Int("round", round))
	return []func(){func() {
		d.supersede(id, round, 0)
		if s, err := d.js.Stream(context.Background(), MatchesStream); err == nil {
			_ = s.DeleteMsg(context.Background(), old)
		}
		if err := d.queue(context.Background(), w, round); err != nil {
			d.mu.Lock()
			d.endLocked(id, w, result{err: err})
			d.mu.Unlock()
		}
	}}
}

// goneLocked remembers a match the dispatcher is done with for kept;
// d.mu must be held.
func (d *Dispatcher) goneLocked(id string, kept time.Duration) {
	now := time.Now()
	if now.Sub(d.pruned) > time.Minute {
		d.pruned = now
		for m, g := range d.gone {
			if now.After(g.until) {
				delete(d.gone, m)
			}
		}
	}
	if g, ok := d.gone[id]; !ok || g.until.Before(now.Add(kept)) {
		d.gone[id] = goneMatch{until: now.Add(kept), told: g.told}
	}
}

// unknownLocked reports whether the event is a worker playing a match
// this dispatcher queued but has no record of (it restarted since, and
// recorded the match as interrupted): such a match is dropped, not
// played. It is remembered as given up from then on.
func (d *Dispatcher) unknownLocked(ev Event) bool {
	if ev.Owner != d.cfg.Name || ev.Kind != kindStart && ev.Kind != kindFrame {
		return false
	}
	if _, ok := d.waits[ev.Match]; ok {
		return false
	}
	if _, ok := d.gone[ev.Match]; ok {
		return false
	}
	d.log.Warn("a delivery of a match with no record here is stopped", zap.String("match", ev.Match), zap.String("worker", ev.Worker))
	d.goneLocked(ev.Match, givenUpKept)
	g := d.gone[ev.Match]
	g.told = time.Now()
	d.gone[ev.Match] = g
	return true
}

// retell reports whether the event is a worker playing a match the
// dispatcher is done with, to be told to stop it (the cancel may have
// been lost, or have come before the worker took the match), once a
// second at most.
func (d *Dispatcher) retellLocked(ev Event) bool {
	if ev.Kind != kindStart && ev.Kind != kindFrame {
		return false
	}
	g, ok := d.gone[ev.Match]
	if !ok || time.Since(g.told) < time.Second {
		return false
	}
	g.told = time.Now()
	d.gone[ev.Match] = g
	return true
}

// supersede tells the workers that the deliveries of a match before
// delivery attempt of round are over: one still playing an earlier
// delivery (its lease ran out unnoticed, or its round's result was
// refused) stops it.
func (d *Dispatcher) supersede(match string, round, attempt int) {
	_ = d.nc.Publish(supersededPrefix+match, supersededData(round, attempt))
}

// endLocked hands the match its result, once; d.mu must be held.
func (d *Dispatcher) endLocked(id string, w *wait, r result) {
	w.over = true
	d.goneLocked(id, endedKept)
	select {
	case w.done <- r:
	default:
	}
	delete(d.waits, id)
}

// exhausted fails a match whose last delivery ended without a word (its
// worker died): JetStream's advisory that it will not deliver it again.
func (d *Dispatcher) exhausted(m *nats.Msg) {
	var adv struct {
		StreamSeq  uint64 `json:"stream_seq"`
		Deliveries int    `json:"deliveries"`
	}
	if err := json.Unmarshal(m.Data, &adv); err != nil {
		return
	}
	d.mu.Lock()
	id, ok := d.seqs[adv.StreamSeq]
	w := d.waits[id]
	if !ok || w == nil || w.over {
		d.mu.Unlock()
		return
	}
	w.reasons = append(w.reasons, fmt.Sprintf("delivery %d: the worker stopped answering", adv.Deliveries))
	d.endLocked(id, w, result{err: fmt.Errorf("%w after %d deliveries: %s", ErrNoWorker, adv.Deliveries, strings.Join(w.reasons, "; "))})
	d.mu.Unlock()
	if s, err := d.js.Stream(context.Background(), MatchesStream); err == nil {
		_ = s.DeleteMsg(context.Background(), adv.StreamSeq)
	}
}

// attempt is the latest delivery of a match that a worker took (0: none
// yet, or the match is not waited for).
func (d *Dispatcher) attempt(id string) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	if w := d.waits[id]; w != nil {
		return w.attempt
	}
	return 0
}

// delivered reports whether the work queue's message of that sequence
// was handed to a worker (false when that cannot be told).
func (d *Dispatcher) delivered(ctx context.Context, seq uint64) bool {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	c, err := d.js.Consumer(ctx, MatchesStream, ConsumerName)
	if err != nil {
		return false
	}
	info, err := c.Info(ctx)
	return err == nil && info.Delivered.Stream >= seq
}

// waiting reports whether the match is published and waited for.
func (d *Dispatcher) waiting(id string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	w := d.waits[id]
	return w != nil && w.seq > 0
}
