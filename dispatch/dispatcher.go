package dispatch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap"

	"arena/engine"
	"arena/orchestrator"
)

// Dispatcher plays matches on workers: it is the server's
// orchestrator.Player when matches go through NATS.
type Dispatcher struct {
	nc  *nats.Conn
	js  jetstream.JetStream
	log *zap.Logger
	// pin resolves a bot's image to its id when a request has none.
	pin func(ctx context.Context, ref string) (string, error)

	mu    sync.Mutex
	waits map[string]*wait
	seqs  map[uint64]string // work queue sequence → match
	// gone are matches this dispatcher is done with: given up (cancelled,
	// or their publish failed and may yet have stored them) or ended. A
	// worker that reports playing one (a delivery that overlapped the one
	// whose result counted, say) is told to stop it.
	gone   map[string]goneMatch
	pruned time.Time
	// publishCap bounds how long a match's publish waits for its ack
	// (the broker answering again, a cluster electing a leader).
	publishCap time.Duration
	stop       func()
}

// goneMatch is a match the dispatcher is done with: until when it is
// remembered, and when a worker was last told to stop it.
type goneMatch struct{ until, told time.Time }

const (
	// givenUpKept is how long a match given up is remembered: one that
	// still waits in the work queue then is a server's that stopped long
	// ago.
	givenUpKept = 24 * time.Hour
	// endedKept is how long an ended match is remembered: its result's
	// worker acked it, so only deliveries already under way then may
	// still report.
	endedKept = 10 * time.Minute
)

// wait is a match the dispatcher waits for.
type wait struct {
	onFrame func(orchestrator.Frame)
	seq     uint64
	attempt int // the latest attempt started
	frames  int // frames passed on
	reasons []string
	done    chan result // buffered: the result is sent once
	over    bool
	// told is when the earlier deliveries were last told they are over.
	told time.Time
	// stopped is closed when the worker of a cancelled match says it
	// stopped it.
	stopped chan struct{}
}

type result struct {
	rep *orchestrator.Replay
	err error
}

// stopWait bounds how long cancelling a match waits for its worker to
// stop it.
const stopWait = 30 * time.Second

// pullHeartbeat is how often a consumer's leader says it still holds a
// pull request: past two missed, the client asks again.
const pullHeartbeat = time.Second

// ErrNoWorker is the kind of error of a match no worker could play.
var ErrNoWorker = errors.New("no worker could play the match")

// NewDispatcher follows the events stream from now on, through a durable
// consumer of its own name (one per server; a bench takes its own); Setup
// must have run. pin resolves image references to ids for requests that
// carry none (nil: requests must carry them).
func NewDispatcher(ctx context.Context, nc *nats.Conn, name string, pin func(ctx context.Context, ref string) (string, error), log *zap.Logger) (*Dispatcher, error) {
	if log == nil {
		log = zap.NewNop()
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, err
	}
	d := &Dispatcher{nc: nc, js: js, log: log, pin: pin, waits: map[string]*wait{}, seqs: map[uint64]string{}, gone: map[string]goneMatch{}, publishCap: 30 * time.Second}
	// A durable consumer, replicated like its stream: it outlives the loss
	// of a NATS node, and an event the server did not ack comes again.
	cons, err := js.CreateOrUpdateConsumer(ctx, EventsStream, jetstream.ConsumerConfig{
		Durable: name, DeliverPolicy: jetstream.DeliverNewPolicy, AckPolicy: jetstream.AckExplicitPolicy,
		AckWait: 10 * time.Second, MaxAckPending: 100_000, InactiveThreshold: 24 * time.Hour,
		Description: "arena: a server's or a bench's view of the matches it dispatched",
	})
	if err != nil {
		return nil, fmt.Errorf("follow %s: %w", EventsStream, err)
	}
	// A pull request held by a consumer leader that steps down (a young
	// replicated consumer may, once or twice) is lost without a word: the
	// client notices when heartbeats stop, after two of them. The default
	// heartbeat (15 s) left a server blind to its matches for 30 s.
	cc, err := cons.Consume(func(m jetstream.Msg) {
		d.event(m)
		_ = m.Ack()
	}, jetstream.ConsumeErrHandler(func(_ jetstream.ConsumeContext, err error) {
		log.Debug("follow events", zap.Error(err))
	}), jetstream.PullExpiry(10*time.Second), jetstream.PullHeartbeat(pullHeartbeat))
	if err != nil {
		return nil, fmt.Errorf("follow %s: %w", EventsStream, err)
	}
	sub, err := nc.Subscribe(maxDeliveries, d.exhausted)
	if err != nil {
		cc.Stop()
		return nil, err
	}
	d.stop = func() {
		cc.Stop()
		_ = sub.Unsubscribe()
	}
	return d, nil
}

// Close stops following events; matches still waited for fail.
func (d *Dispatcher) Close() {
	d.stop()
	d.mu.Lock()
	defer d.mu.Unlock()
	for id, w := range d.waits {
		d.endLocked(id, w, result{err: errors.New("the dispatcher closed")})
	}
}

// Purge drops the matches waiting in the work queue (those of a server
// that stopped: it recorded them as interrupted).
func (d *Dispatcher) Purge(ctx context.Context) error {
	s, err := d.js.Stream(ctx, MatchesStream)
	if err != nil {
		return err
	}
	return s.Purge(ctx)
}

// Play publishes the match to the work queue and waits for its first
// accepted result, passing its frames on as they come.
func (d *Dispatcher) Play(ctx context.Context, req orchestrator.Request) (*orchestrator.Replay, error) {
	if err := req.Check(); err != nil {
		return nil, err
	}
	if req.MatchID == "" {
		req.MatchID = orchestrator.NewMatchID()
	}
	if len(req.ImageIDs) == 0 {
		if d.pin == nil {
			return nil, fmt.Errorf("match %s: its bots are not pinned to image ids", req.MatchID)
		}
		for _, ref := range req.Images {
			id, err := d.pin(ctx, ref)
			if err != nil {
				return nil, err
			}
			req.ImageIDs = append(req.ImageIDs, id)
		}
	}
	data, err := json.Marshal(jobOf(req))
	if err != nil {
		return nil, err
	}
	w := &wait{onFrame: req.OnFrame, done: make(chan result, 1), stopped: make(chan struct{})}
	d.mu.Lock()
	d.waits[req.MatchID] = w
	d.mu.Unlock()
	defer func() {
		d.mu.Lock()
		if d.waits[req.MatchID] == w {
			delete(d.waits, req.MatchID)
		}
		delete(d.seqs, w.seq)
		d.mu.Unlock()
	}()
	// Not cut short by ctx: a publish abandoned half-way may still have
	// stored the match, which a worker would then play unseen. A match
	// cancelled meanwhile is taken back below.
	pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), d.publishCap)
	ack, err := publishAck(pctx, d.js, matchesSubject, data, jetstream.WithMsgID(req.MatchID))
	cancel()
	if err != nil {
		// The broker may have stored it all the same, its ack lost: a
		// worker that takes it is told to stop.
		d.drop(req.MatchID)
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		return nil, fmt.Errorf("queue match %s on nats: %w", req.MatchID, err)
	}
	d.mu.Lock()
	w.seq = ack.Sequence
	d.seqs[ack.Sequence] = req.MatchID
	d.mu.Unlock()
	select {
	case r := <-w.done:
		return r.rep, r.err
	case <-ctx.Done():
		// Whichever worker plays it stops; a match still in the queue is
		// deleted there.
		d.drop(req.MatchID)
		if s, err := d.js.Stream(context.WithoutCancel(ctx), MatchesStream); err == nil {
			_ = s.DeleteMsg(context.WithoutCancel(ctx), ack.Sequence)
		}
		// As in-process, the match ends once its bots are gone: wait for
		// its worker to say so (for a while: it may be lost). A worker
		// may have taken it before its start event reached us: the
		// consumer says whether it was delivered.
		if d.attempt(req.MatchID) > 0 || d.delivered(context.WithoutCancel(ctx), ack.Sequence) {
			select {
			case <-w.stopped:
			case <-w.done:
			case <-time.After(stopWait):
				d.log.Warn("the worker of a cancelled match did not say it stopped", zap.String("match", req.MatchID))
			}
		}
		return nil, context.Cause(ctx)
	}
}

// event handles one message of the events stream.
func (d *Dispatcher) event(m jetstream.Msg) {
	var ev Event
	if err := decode(m.Data(), &ev); err != nil {
		d.log.Warn("event refused", zap.String("subject", m.Subject()), zap.Error(err))
		return
	}
	if d.retell(ev) {
		d.tellStop(ev.Match)
	}
	d.mu.Lock()
	w, ok := d.waits[ev.Match]
	if !ok || w.over {
		d.mu.Unlock()
		return // not ours, or over: a late or repeated report
	}
	log := d.log.With(zap.String("match", ev.Match), zap.Int("attempt", ev.Attempt), zap.String("worker", ev.Worker))
	if ev.Attempt < w.attempt {
		// Its worker plays on: tell it again (it may have been cut off
		// when a later delivery started), once a second at most.
		latest, tell := w.attempt, time.Since(w.told) > time.Second
		if tell {
			w.told = time.Now()
		}
		d.mu.Unlock()
		log.Info("late report refused: a later attempt started", zap.String("kind", ev.Kind), zap.Int("latest", latest))
		if tell {
			d.supersede(ev.Match, latest)
		}
		return
	}
	if ev.Attempt > w.attempt {
		w.attempt = ev.Attempt
		if ev.Attempt > 1 {
			w.told = time.Now()
			defer d.supersede(ev.Match, ev.Attempt)
		}
	}
	switch ev.Kind {
	case kindStart:
		d.mu.Unlock()
		log.Info("match taken")
	case kindFrame:
		if ev.Seq < w.frames {
			d.mu.Unlock() // a later attempt replaying turns already shown
			return
		}
		w.frames = ev.Seq + 1
		on := w.onFrame
		d.mu.Unlock()
		var f orchestrator.Frame
		if err := json.Unmarshal(ev.Frame, &f); err == nil && on != nil {
			on(f)
		}
	case kindStopped:
		select {
		case <-w.stopped:
		default:
			close(w.stopped)
		}
		d.mu.Unlock()
	case kindHandback:
		w.reasons = append(w.reasons, fmt.Sprintf("%s (delivery %d): %s", ev.Worker, ev.Attempt, ev.Reason))
		d.mu.Unlock()
		log.Info("match handed back", zap.String("reason", ev.Reason))
	case kindResult:
		if ev.Reason != "" {
			w.reasons = append(w.reasons, fmt.Sprintf("%s (delivery %d): %s", ev.Worker, ev.Attempt, ev.Reason))
			d.endLocked(ev.Match, w, result{err: fmt.Errorf("%w: %s", ErrNoWorker, strings.Join(w.reasons, "; "))})
			d.mu.Unlock()
			return
		}
		w.over = true // only the first result counts
		d.mu.Unlock()
		rep, err := d.replay(ev)
		if err == nil {
			rep.Result.Worker = ev.Worker
			d.mu.Lock()
			earlier := slices.Clone(w.reasons)
			d.mu.Unlock()
			explainStartFailed(rep, earlier)
		}
		d.mu.Lock()
		d.endLocked(ev.Match, w, result{rep: rep, err: err})
		d.mu.Unlock()
	default:
		d.mu.Unlock()
		log.Warn("event of an unknown kind refused", zap.String("kind", ev.Kind))
	}
}

// drop gives a match up: whichever worker plays it, or takes it later,
// stops it.
func (d *Dispatcher) drop(id string) {
	d.mu.Lock()
	d.goneLocked(id, givenUpKept)
	d.mu.Unlock()
	d.tellStop(id)
}

// tellStop tells the workers to stop a match: whichever plays it stops
// it, and one that takes it within a minute stops it before any bot
// starts.
func (d *Dispatcher) tellStop(id string) {
	_ = d.nc.Publish(cancelPrefix+id, nil)
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

// retell reports whether the event is a worker playing a match the
// dispatcher is done with, to be told to stop it (the cancel may have
// been lost, or have come before the worker took the match), once a
// second at most.
func (d *Dispatcher) retell(ev Event) bool {
	if ev.Kind != kindStart && ev.Kind != kindFrame {
		return false
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	g, ok := d.gone[ev.Match]
	if !ok || time.Since(g.told) < time.Second {
		return false
	}
	g.told = time.Now()
	d.gone[ev.Match] = g
	return true
}

// supersede tells the workers that the deliveries of a match before
// attempt are over: one still playing an earlier delivery (its lease ran
// out unnoticed) stops it.
func (d *Dispatcher) supersede(match string, attempt int) {
	_ = d.nc.Publish(supersededPrefix+match, []byte(strconv.Itoa(attempt)))
}

// explainStartFailed adds to the detail of each bot that did not start
// (its image on no worker that took the match) why the earlier deliveries
// were handed back.
func explainStartFailed(rep *orchestrator.Replay, earlier []string) {
	if len(earlier) == 0 {
		return
	}
	for i, b := range rep.Result.Bots {
		if b.Status == engine.StatusStartFailed {
			rep.Result.Bots[i].FaultDetail += "; before that: " + strings.Join(earlier, "; ")
		}
	}
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

// replay reads a result's replay, inline or from the object store.
func (d *Dispatcher) replay(ev Event) (*orchestrator.Replay, error) {
	data := []byte(ev.Replay)
	if ev.Object != "" {
		// While the cluster elects a new leader (a node lost), reads fail
		// for a few seconds: try again for a minute.
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		for {
			var err error
			data, err = d.object(ctx, ev.Object)
			if err == nil {
				break
			}
			d.log.Warn("read a replay from the object store, trying again", zap.String("match", ev.Match), zap.Error(err))
			select {
			case <-ctx.Done():
				return nil, fmt.Errorf("replay of %s from the object store: %w", ev.Match, err)
			case <-time.After(500 * time.Millisecond):
			}
		}
	}
	var rep orchestrator.Replay
	if err := json.Unmarshal(data, &rep); err != nil {
		return nil, fmt.Errorf("replay of %s: %w", ev.Match, err)
	}
	return &rep, nil
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

// publishAck is publish that returns the stored message's sequence.
func publishAck(ctx context.Context, js jetstream.JetStream, subject string, data []byte, opts ...jetstream.PublishOpt) (*jetstream.PubAck, error) {
	for {
		ack, err := js.Publish(ctx, subject, data, opts...)
		if err == nil {
			return ack, nil
		}
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// object reads a replay from the object store and deletes it there.
func (d *Dispatcher) object(ctx context.Context, name string) ([]byte, error) {
	tctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	obs, err := d.js.ObjectStore(tctx, ReplayBucket)
	if err != nil {
		return nil, err
	}
	data, err := obs.GetBytes(tctx, name)
	if err != nil {
		return nil, err
	}
	_ = obs.Delete(tctx, name)
	return data, nil
}
