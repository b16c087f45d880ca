package dispatch

import (
	"bufio"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap"

	"arena/dispatch/trust"
	"arena/engine"
	"arena/internal/errs"
	"arena/matches"
)

// Dispatcher plays matches on workers: it is the server's
// matches.Player when matches go through NATS. It believes a
// worker's report only from the worker that holds that delivery (its
// name is the one NATS checked, in the event's subject; its proof shows
// it was handed the match), and a result only if the replay is the
// match's and the engine reproduces it; a result refused queues the
// match again, and a worker refused again and again is quarantined.
type Dispatcher struct {
	nc  *nats.Conn
	js  jetstream.JetStream
	log *zap.Logger
	cfg DispatcherConfig

	mu    sync.Mutex
	waits map[string]*wait
	seqs  map[uint64]string // work queue sequence → match
	// gone are matches this dispatcher is done with: given up (cancelled,
	// or their publish failed and may yet have stored them) or ended. A
	// worker that reports playing one (a delivery that overlapped the one
	// whose result counted, say) is told to stop it.
	gone   map[string]goneMatch
	pruned time.Time
	// workers are the workers seen, with their refused reports.
	workers map[string]*standing
	// publishCap bounds how long a match's publish waits for its ack
	// (the broker answering again, a cluster electing a leader).
	publishCap time.Duration
	// buckets is how the workers' replay buckets are made.
	buckets jetstream.ObjectStoreConfig
	stop    func()
	// health is the last Check's word (nil: fine).
	health error
	// cc consumes the events (made again by Check when it was lost).
	followMu sync.Mutex
	cc       jetstream.ConsumeContext
	// bg are the dispatcher's own goroutines (making buckets), ended by
	// Close through bgCtx.
	bg       sync.WaitGroup
	bgCtx    context.Context
	bgCancel context.CancelFunc
	// slotsChanged wakes tellSlots: a worker's slots may have changed.
	slotsChanged chan struct{}
	// watchMu serializes the calls to the watchers of the slots (see
	// WatchSlots); told is the total they were last told of.
	watchMu  sync.Mutex
	watchers map[*slotsWatcher]struct{}
	told     int
}

// slotsWatcher is a watcher of the workers' slots, with what it was
// last told.
type slotsWatcher struct {
	f    func(n int)
	last int
}

// DispatcherConfig is a dispatcher's setup.
type DispatcherConfig struct {
	// Name names its durable consumer of the events (one per server; a
	// bench takes its own).
	Name string
	// Pin resolves a bot's image to its id when a request has none (nil:
	// requests must carry them).
	Pin func(ctx context.Context, ref string) (string, error)
	// Quarantine is told when a worker's reports were refused
	// QuarantineAfter times (default 3), so it takes no more matches (the
	// embedded NATS server revokes its key). Its events are refused from
	// then on either way.
	Quarantine      func(worker, why string)
	QuarantineAfter int
	// Setup is the work queue's policy: with it, the dispatcher remakes
	// the streams and consumers it finds missing (see Check).
	Setup *Config
	// Rounds bounds how often a match is queued: once, and again for each
	// result refused or taken by a quarantined worker (default 5, more
	// than QuarantineAfter: a lone forger is quarantined before a match
	// runs out of rounds). Past it the match fails.
	Rounds int
	// Spool, when set, is a folder where a replay read from the object
	// store (larger than a message) is checked as it streams in, into a
	// file of its own that the result then names (Replay.File): a long
	// match's replay is never in the server's memory. Empty: such a
	// replay is decoded into memory and checked there.
	Spool string
	// Images, when set, hands the workers the pushed bots their engines
	// lack (see images.go).
	Images ImageSource
	// BucketBytes bounds each worker's bucket, its big replays and the
	// images it asked for together (default DefaultBucketBytes): past it
	// a put is refused, so a worker's key fills no more of the server's
	// disk. It is applied to the buckets made and, with Setup, to those
	// there are as the dispatcher starts.
	BucketBytes int64
	Log         *zap.Logger
}

// DefaultBucketBytes bounds a worker's bucket unless set otherwise.
const DefaultBucketBytes int64 = 2 << 30

// standing is what the dispatcher holds of a worker.
type standing struct {
	refused     int
	lastRefusal string
	quarantined bool
	bucket      bool // its replay bucket is made
	// slots and playing are what it last said of its slots, at heard.
	slots, playing int
	heard          time.Time
}

// counted is how many matches the worker takes at once as far as the
// dispatcher believes: what it said within slotsKept, unless it is
// quarantined.
func (s *standing) counted(now time.Time) (slots, playing int) {
	if s.quarantined || now.Sub(s.heard) > slotsKept {
		return 0, 0
	}
	return s.slots, s.playing
}

// maxSlots bounds the slots one worker is believed to have.
const maxSlots = 1 << 16

// WorkerStanding is a worker as the dispatcher sees it.
type WorkerStanding struct {
	Name string `json:"name"`
	// Refused counts its reports refused (forged, or not its delivery's),
	// LastRefusal says why the last one was.
	Refused     int    `json:"refused"`
	LastRefusal string `json:"last_refusal,omitempty"`
	Quarantined bool   `json:"quarantined"`
	// Slots is how many matches it takes at once and Playing how many it
	// plays, as it last said (0 when not heard from for slotsKept, or
	// quarantined).
	Slots   int `json:"slots"`
	Playing int `json:"playing"`
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
	req matches.Request
	// key is the match's secret (see Job.Key); round the times it was
	// queued.
	key     string
	round   int
	view    *viewer
	seq     uint64
	attempt int // the latest attempt of the round started
	// holders are the workers that took each delivery of the round.
	holders map[int]string
	// early are live frames that came before their delivery's start.
	early   []Event
	reasons []string
	done    chan result // buffered: the result is sent once
	// over: the match ended, or a result is being checked.
	over bool
	// told is when the earlier deliveries were last told they are over.
	told time.Time
	// stopped is closed when the worker of a cancelled match says it
	// stopped it.
	stopped chan struct{}
}

type result struct {
	rep *matches.Replay
	err error
}

// stopWait bounds how long cancelling a match waits for its worker to
// stop it.
const stopWait = 30 * time.Second

// pullHeartbeat is how often a consumer's leader says it still holds a
// pull request: past two missed, the client asks again.
const pullHeartbeat = time.Second

// ErrNoWorker is the kind of error of a match no worker could play.
var ErrNoWorker = errs.New(errs.ErrUnavailable, "no worker could play the match")

// errObjectStore: a replay could not be read from the object store (not
// the worker's doing, as far as can be told).
var errObjectStore = errors.New("the object store did not give the replay")

// NewDispatcher is NewDispatcherWith with a name, a pin and a logger.
func NewDispatcher(ctx context.Context, nc *nats.Conn, name string, pin func(ctx context.Context, ref string) (string, error), log *zap.Logger) (*Dispatcher, error) {
	return NewDispatcherWith(ctx, nc, DispatcherConfig{Name: name, Pin: pin, Log: log})
}

// NewDispatcherWith follows the events stream from now on, through a
// durable consumer of cfg.Name; Setup must have run.
func NewDispatcherWith(ctx context.Context, nc *nats.Conn, cfg DispatcherConfig) (*Dispatcher, error) {
	if cfg.Log == nil {
		cfg.Log = zap.NewNop()
	}
	if cfg.QuarantineAfter <= 0 {
		cfg.QuarantineAfter = 3
	}
	if cfg.Rounds <= 0 {
		cfg.Rounds = 5
	}
	if cfg.BucketBytes <= 0 {
		cfg.BucketBytes = DefaultBucketBytes
	}
	log := cfg.Log
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, err
	}
	d := &Dispatcher{nc: nc, js: js, log: log, cfg: cfg, waits: map[string]*wait{}, seqs: map[uint64]string{}, gone: map[string]goneMatch{},
		workers: map[string]*standing{}, publishCap: 30 * time.Second, slotsChanged: make(chan struct{}, 1), watchers: map[*slotsWatcher]struct{}{}}
	d.bgCtx, d.bgCancel = context.WithCancel(context.Background())
	// The workers' replay buckets are kept like the events, and bounded.
	if st, err := js.Stream(ctx, EventsStream); err == nil {
		c := st.CachedInfo().Config
		d.buckets = jetstream.ObjectStoreConfig{Replicas: c.Replicas, TTL: c.MaxAge, Storage: jetstream.FileStorage, MaxBytes: cfg.BucketBytes}
	} else {
		return nil, fmt.Errorf("follow %s: %w", EventsStream, err)
	}
	if err := d.follow(ctx); err != nil {
		return nil, err
	}
	var subs []*nats.Subscription
	d.stop = func() {
		d.unfollow()
		for _, s := range subs {
			_ = s.Unsubscribe()
		}
	}
	subscribe := func(subject string, h nats.MsgHandler) (*nats.Subscription, error) {
		sub, err := nc.Subscribe(subject, h)
		if err == nil {
			subs = append(subs, sub)
		}
		return sub, err
	}
	_, err = subscribe(maxDeliveries, d.exhausted)
	var live *nats.Subscription
	if err == nil {
		live, err = subscribe(livePrefix+"*."+kindFrame+".*", func(m *nats.Msg) { d.liveFrame(m.Subject, m.Data) })
	}
	if err == nil {
		// A match's frames come faster than a viewer needs them; past
		// this backlog (on a slow server) they are dropped, not held.
		err = live.SetPendingLimits(4096, 64<<20)
	}
	if err == nil {
		_, err = subscribe(livePrefix+"*."+slotsKind, d.workerSlots)
	}
	if err == nil && cfg.Images != nil {
		var images *nats.Subscription
		if images, err = d.serveImages(cfg.Images); err == nil {
			subs = append(subs, images)
		}
	}
	if err != nil {
		d.stop()
		return nil, err
	}
	d.bg.Go(d.watchSlots)
	if cfg.Setup != nil {
		d.bg.Go(d.heal)
		d.bg.Go(d.boundBuckets)
	}
	return d, nil
}

// workerSlots takes a worker's report of its slots. NATS lets a worker
// publish under its own name only (the subject's): a report whose body
// names another worker is ignored.
func (d *Dispatcher) workerSlots(m *nats.Msg) {
	rest, ok1 := strings.CutPrefix(m.Subject, livePrefix)
	worker, ok2 := strings.CutSuffix(rest, "."+slotsKind)
	if !ok1 || !ok2 || trust.ValidWorkerName(worker) != nil {
		return
	}
	var r slotsReport
	if err := trust.Decode(m.Data, &r); err != nil {
		d.log.Warn("a worker's slots refused", zap.String("worker", worker), zap.Error(err))
		return
	}
	if r.Worker != worker || r.Slots < 0 || r.Playing < 0 {
		d.log.Warn("a worker's slots refused: another worker's, or fewer than none", zap.String("worker", worker), zap.String("named", r.Worker),
			zap.Int("slots", r.Slots), zap.Int("playing", r.Playing))
		return
	}
	d.mu.Lock()
	s := d.standingLocked(worker)
	s.slots, s.playing, s.heard = min(r.Slots, maxSlots), r.Playing, time.Now()
	d.slotsChangedLocked()
	d.mu.Unlock()
}

// slotsChangedLocked wakes tellSlots.
func (d *Dispatcher) slotsChangedLocked() {
	select {
	case d.slotsChanged <- struct{}{}:
	default:
	}
}

// Slots is how many matches the workers take at once: the sum of what
// each said within slotsKept, quarantined workers not counted.
func (d *Dispatcher) Slots() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	n, now := 0, time.Now()
	for _, s := range d.workers {
		slots, _ := s.counted(now)
		n += slots
	}
	return n
}

// WatchSlots calls f with the workers' slots (see Slots) now, before it
// returns, and at every change until stop is called: from one goroutine
// at a time, in order, never under the dispatcher's lock. f must not
// call stop.
func (d *Dispatcher) WatchSlots(f func(n int)) (stop func()) {
	d.watchMu.Lock()
	defer d.watchMu.Unlock()
	w := &slotsWatcher{f: f, last: d.Slots()}
	f(w.last)
	d.watchers[w] = struct{}{}
	return func() {
		d.watchMu.Lock()
		delete(d.watchers, w)
		d.watchMu.Unlock()
	}
}

// QueueSlots is how many matches a server's queue hands the work queue
// at once: as many as the workers take, at most limit (0: no limit).
func QueueSlots(workers, limit int) int {
	if limit > 0 {
		return min(workers, limit)
	}
	return workers
}

// FeedSlots keeps q's slots (an matches.Queue's) at
// QueueSlots(d.Slots(), limit) until stop is called, from before it
// returns. The work queue delivers in the order it was handed matches:
// handed only what the workers take at once, the rest wait in the
// queue's lines, each owner's in turn, wherever the workers are.
func (d *Dispatcher) FeedSlots(q interface{ SetSlots(n int) }, limit int) (stop func()) {
	return d.WatchSlots(func(n int) { q.SetSlots(QueueSlots(n, limit)) })
}

// watchSlots tells the watchers of every change of the workers' slots:
// as a worker reports, and as one falls silent (checked every
// slotsCheck).
func (d *Dispatcher) watchSlots() {
	t := time.NewTicker(slotsCheck)
	defer t.Stop()
	for {
		select {
		case <-d.bgCtx.Done():
			return
		case <-d.slotsChanged:
		case <-t.C:
		}
		d.tellSlots()
	}
}

// slotsCheck is how often the dispatcher looks for workers fallen
// silent.
const slotsCheck = 250 * time.Millisecond

// tellSlots tells the watchers the workers' slots, if they changed.
func (d *Dispatcher) tellSlots() {
	d.watchMu.Lock()
	defer d.watchMu.Unlock()
	n := d.Slots()
	if n != d.told {
		d.log.Info("the workers' slots changed", zap.Int("slots", n), zap.Int("before", d.told))
		d.told = n
	}
	for w := range d.watchers {
		if w.last != n {
			w.last = n
			w.f(n)
		}
	}
}

// follow (re)creates the dispatcher's durable consumer of the events and
// consumes it.
func (d *Dispatcher) follow(ctx context.Context) error {
	// A durable consumer, replicated like its stream: it outlives the loss
	// of a NATS node, and an event the server did not ack comes again.
	cons, err := d.js.CreateOrUpdateConsumer(ctx, EventsStream, jetstream.ConsumerConfig{
		Durable: d.cfg.Name, DeliverPolicy: jetstream.DeliverNewPolicy, AckPolicy: jetstream.AckExplicitPolicy,
		AckWait: 10 * time.Second, MaxAckPending: 100_000, InactiveThreshold: 24 * time.Hour,
		Description: "arena: a server's or a bench's view of the matches it dispatched",
	})
	if err != nil {
		return fmt.Errorf("follow %s: %w", EventsStream, err)
	}
	// A pull request held by a consumer leader that steps down (a young
	// replicated consumer may, once or twice) is lost without a word: the
	// client notices when heartbeats stop, after two of them. The default
	// heartbeat (15 s) left a server blind to its matches for 30 s.
	cc, err := cons.Consume(func(m jetstream.Msg) {
		d.event(m.Subject(), m.Data())
		_ = m.Ack()
	}, jetstream.ConsumeErrHandler(func(_ jetstream.ConsumeContext, err error) {
		d.log.Debug("follow events", zap.Error(err))
	}), jetstream.PullExpiry(10*time.Second), jetstream.PullHeartbeat(pullHeartbeat))
	if err != nil {
		return fmt.Errorf("follow %s: %w", EventsStream, err)
	}
	d.followMu.Lock()
	old := d.cc
	d.cc = cc
	d.followMu.Unlock()
	if old != nil {
		old.Stop()
	}
	return nil
}

func (d *Dispatcher) unfollow() {
	d.followMu.Lock()
	cc := d.cc
	d.cc = nil
	d.followMu.Unlock()
	if cc != nil {
		cc.Stop()
	}
}

// healEvery is how often the dispatcher checks the work queue's streams
// and consumers (and remakes those missing).
const healEvery = 5 * time.Second

// heal checks the streams and consumers now and then, remaking those
// that are missing.
func (d *Dispatcher) heal() {
	t := time.NewTicker(healEvery)
	defer t.Stop()
	for {
		select {
		case <-d.bgCtx.Done():
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(d.bgCtx, 10*time.Second)
		err := d.Check(ctx)
		cancel()
		if d.bgCtx.Err() != nil {
			return
		}
		if err != nil {
			d.log.Error("the work queue", zap.Error(err))
		}
		d.mu.Lock()
		d.health = err
		d.mu.Unlock()
	}
}

// Health is what the last periodic Check found (checked every 5 s when
// the dispatcher has the queue's Setup): nil when the queue is fine.
func (d *Dispatcher) Health() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.health
}

// Check says whether the work queue can be used: its streams, the
// workers' consumer and this dispatcher's are there. Those missing
// (deleted, say) are made again when the dispatcher has the queue's
// Setup; the error then says what was missing only if remaking failed.
func (d *Dispatcher) Check(ctx context.Context) error {
	var missing []string
	for _, st := range []string{MatchesStream, EventsStream} {
		if _, err := d.js.Stream(ctx, st); errors.Is(err, jetstream.ErrStreamNotFound) {
			missing = append(missing, "stream "+st)
		} else if err != nil {
			return fmt.Errorf("stream %s: %w", st, err)
		}
	}
	for _, c := range [][2]string{{MatchesStream, ConsumerName}, {EventsStream, d.cfg.Name}} {
		if _, err := d.js.Consumer(ctx, c[0], c[1]); errors.Is(err, jetstream.ErrConsumerNotFound) || errors.Is(err, jetstream.ErrStreamNotFound) {
			missing = append(missing, "consumer "+c[1]+" of "+c[0])
		} else if err != nil {
			return fmt.Errorf("consumer %s of %s: %w", c[1], c[0], err)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	what := strings.Join(missing, ", ")
	if d.cfg.Setup == nil {
		return fmt.Errorf("missing: %s", what)
	}
	d.log.Warn("the work queue lacks some of its parts: making them again", zap.String("missing", what))
	if err := Setup(ctx, d.js, *d.cfg.Setup); err != nil {
		return fmt.Errorf("missing: %s; making them again: %w", what, err)
	}
	if err := d.follow(ctx); err != nil {
		return fmt.Errorf("missing: %s; following the events again: %w", what, err)
	}
	// The workers' buckets went with nothing, but they are made again
	// when each worker is next seen.
	d.mu.Lock()
	for _, s := range d.workers {
		s.bucket = false
	}
	d.mu.Unlock()
	return nil
}

// Close stops following events; matches still waited for fail.
func (d *Dispatcher) Close() {
	d.stop()
	d.bgCancel()
	d.bg.Wait()
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

// Workers are the workers seen since the dispatcher started, with their
// refused reports and their slots, by name.
func (d *Dispatcher) Workers() []WorkerStanding {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make([]WorkerStanding, 0, len(d.workers))
	now := time.Now()
	for name, s := range d.workers {
		slots, playing := s.counted(now)
		out = append(out, WorkerStanding{Name: name, Refused: s.refused, LastRefusal: s.lastRefusal, Quarantined: s.quarantined, Slots: slots, Playing: playing})
	}
	slices.SortFunc(out, func(a, b WorkerStanding) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Play publishes the match to the work queue and waits for its first
// accepted result, passing its frames on as they come.
func (d *Dispatcher) Play(ctx context.Context, req matches.Request) (*matches.Replay, error) {
	if err := req.Check(); err != nil {
		return nil, err
	}
	if req.MatchID == "" {
		req.MatchID = matches.NewMatchID()
	}
	if len(req.ImageIDs) == 0 {
		if d.cfg.Pin == nil {
			return nil, fmt.Errorf("match %s: its bots are not pinned to image ids", req.MatchID)
		}
		for _, ref := range req.Images {
			id, err := d.cfg.Pin(ctx, ref)
			if err != nil {
				return nil, err
			}
			req.ImageIDs = append(req.ImageIDs, id)
		}
	}
	var k [16]byte
	if _, err := rand.Read(k[:]); err != nil {
		return nil, err
	}
	w := &wait{req: req, key: hex.EncodeToString(k[:]), round: 1, holders: map[int]string{}, view: &viewer{on: req.OnFrame},
		done: make(chan result, 1), stopped: make(chan struct{})}
	d.mu.Lock()
	d.waits[req.MatchID] = w
	d.mu.Unlock()
	defer func() {
		// No frame is passed on once Play has returned.
		w.view.close()
		d.mu.Lock()
		if d.waits[req.MatchID] == w {
			delete(d.waits, req.MatchID)
		}
		delete(d.seqs, w.seq)
		d.mu.Unlock()
	}()
	if err := d.queue(ctx, w, 1); err != nil {
		// The broker may have stored it all the same, its ack lost: a
		// worker that takes it is told to stop.
		d.drop(req.MatchID)
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		return nil, err
	}
	select {
	case r := <-w.done:
		return r.rep, r.err
	case <-ctx.Done():
		// Whichever worker plays it stops; a match still in the queue is
		// deleted there.
		d.mu.Lock()
		d.goneLocked(req.MatchID, givenUpKept)
		seq := w.seq
		d.mu.Unlock()
		d.tellStop(req.MatchID)
		// As in-process, the match ends once its bots are gone: wait for
		// its worker to say so (for a while: it may be lost). A worker
		// may have taken it before its start event reached us: the
		// consumer says whether it was delivered.
		taken := d.attempt(req.MatchID) > 0 || d.delivered(context.WithoutCancel(ctx), seq)
		// Asked before the purge, which moves the consumer on.
		d.purge(req.MatchID)
		if taken {
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

// queue publishes round of the match to the work queue.
func (d *Dispatcher) queue(ctx context.Context, w *wait, round int) error {
	job := jobOf(w.req)
	job.Round, job.Key, job.Owner = round, w.key, d.cfg.Name
	data, err := json.Marshal(job)
	if err != nil {
		return err
	}
	msgID := w.req.MatchID
	if round > 1 {
		msgID += ".r" + strconv.Itoa(round)
	}
	// Not cut short by ctx: a publish abandoned half-way may still have
	// stored the match, which a worker would then play unseen. A match
	// cancelled meanwhile is taken back by Play.
	pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), d.publishCap)
	ack, err := publishAck(pctx, d.js, jobSubject(w.req.MatchID), data, jetstream.WithMsgID(msgID))
	cancel()
	if err != nil {
		return fmt.Errorf("queue match %s on nats: %w", w.req.MatchID, err)
	}
	d.mu.Lock()
	delete(d.seqs, w.seq)
	w.seq = ack.Sequence
	d.seqs[ack.Sequence] = w.req.MatchID
	d.mu.Unlock()
	return nil
}

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

func (d *Dispatcher) standingLocked(worker string) *standing {
	s := d.workers[worker]
	if s == nil {
		s = &standing{}
		d.workers[worker] = s
	}
	return s
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

// check reads a result's replay (unless it is inline, decoded already)
// and checks it against the match; one that fails is refused, and the
// match queued again.
func (d *Dispatcher) check(w *wait, ev Event, inline *matches.Replay) {
	var rep *matches.Replay
	var err error
	if ev.Object != "" && d.cfg.Spool != "" {
		rep, err = d.checkedObject(w.req, ev, w.view)
	} else if rep, err = d.replay(ev, inline); err == nil {
		if err = matches.CheckReplay(w.req, rep); err == nil {
			w.view.fill(rep.Frames)
		}
	}
	forged := err == nil || !errors.Is(err, errObjectStore)
	if err != nil {
		d.mu.Lock()
		w.over = false
		var then []func()
		if forged {
			then = d.refuseLocked(ev.Worker, ev.Match, "its result: "+err.Error(), nil)
		} else {
			d.log.Warn("a result's replay could not be read", zap.String("match", ev.Match), zap.String("worker", ev.Worker), zap.Error(err))
		}
		then = append(then, d.requeueLocked(w, ev, fmt.Errorf("result refused: %w", err))...)
		d.mu.Unlock()
		for _, f := range then {
			f()
		}
		return
	}
	rep.Result.Worker = ev.Worker
	d.mu.Lock()
	defer d.mu.Unlock()
	explainStartFailed(rep, w.reasons)
	d.endLocked(ev.Match, w, result{rep: rep})
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

// bucketConfig is a worker's bucket's configuration.
func (d *Dispatcher) bucketConfig(worker string) jetstream.ObjectStoreConfig {
	cfg := d.buckets
	cfg.Bucket, cfg.Description = trust.BucketOf(worker), "arena: replays of worker "+worker+" larger than a message, and images it asked for"
	return cfg
}

// makeBucket makes a worker's replay bucket (a worker may not make
// streams), or gives the one there is this dispatcher's configuration:
// its bound.
func (d *Dispatcher) makeBucket(worker string) {
	ctx, cancel := context.WithTimeout(d.bgCtx, time.Minute)
	defer cancel()
	for {
		_, err := d.js.CreateOrUpdateObjectStore(ctx, d.bucketConfig(worker))
		if err == nil {
			return
		}
		if ctx.Err() != nil {
			return
		}
		d.log.Warn("make a worker's replay bucket, trying again", zap.String("worker", worker), zap.Error(err))
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
	}
}

// boundBuckets gives the workers' buckets there are already (made by an
// earlier server, maybe without a bound, or with another) this
// dispatcher's configuration.
func (d *Dispatcher) boundBuckets() {
	ctx, cancel := context.WithTimeout(d.bgCtx, time.Minute)
	defer cancel()
	names := d.js.ObjectStoreNames(ctx)
	var workers []string
	for name := range names.Name() {
		if w, ok := strings.CutPrefix(name, ReplayBucket+"-"); ok && trust.ValidWorkerName(w) == nil {
			workers = append(workers, w)
		}
	}
	if err := names.Error(); err != nil && ctx.Err() == nil {
		d.log.Warn("list the workers' buckets", zap.Error(err))
	}
	for _, w := range workers {
		d.makeBucket(w)
	}
}

// bucketFull reports whether err is JetStream refusing a put into a
// bucket at its bound (see DispatcherConfig.BucketBytes).
func bucketFull(err error) bool {
	var api *jetstream.APIError
	return errors.As(err, &api) && strings.Contains(api.Description, "maximum bytes exceeded")
}

// drop gives a match up: whichever worker plays it, or takes it later,
// stops it, and its jobs still in the work queue (of any round, stored
// even if their publish's ack was lost) are purged.
func (d *Dispatcher) drop(id string) {
	d.mu.Lock()
	d.goneLocked(id, givenUpKept)
	d.mu.Unlock()
	d.tellStop(id)
	d.purge(id)
}

// purge removes a match's jobs from the work queue.
func (d *Dispatcher) purge(id string) {
	ctx, cancel := context.WithTimeout(d.bgCtx, 10*time.Second)
	defer cancel()
	s, err := d.js.Stream(ctx, MatchesStream)
	if err == nil {
		err = s.Purge(ctx, jetstream.WithPurgeSubject(jobSubject(id)))
	}
	if err != nil && d.bgCtx.Err() == nil {
		d.log.Warn("purge a match given up from the work queue", zap.String("match", id), zap.Error(err))
	}
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

// explainStartFailed adds to the detail of each bot that did not start
// (its image on no worker that took the match) why the earlier deliveries
// were handed back.
func explainStartFailed(rep *matches.Replay, earlier []string) {
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

// replay reads a result's replay, inline (decoded with the event already,
// unless it did not decode) or from its worker's bucket.
func (d *Dispatcher) replay(ev Event, inline *matches.Replay) (*matches.Replay, error) {
	if ev.Object == "" {
		if inline != nil {
			return inline, nil
		}
		var rep matches.Replay
		if err := json.Unmarshal(ev.Replay, &rep); err != nil {
			return nil, fmt.Errorf("replay of %s: %w", ev.Match, err)
		}
		return &rep, nil
	}
	var rep matches.Replay
	err := d.fromObject(ev, func(r io.Reader) error {
		rep = matches.Replay{}
		if err := json.NewDecoder(r).Decode(&rep); err != nil {
			return err
		}
		// To its end, where the object's digest is checked.
		_, err := io.Copy(io.Discard, r)
		return err
	}, func(err error) bool {
		var syntax *json.SyntaxError
		var typed *json.UnmarshalTypeError
		return errors.As(err, &syntax) || errors.As(err, &typed)
	})
	if err != nil {
		return nil, err
	}
	return &rep, nil
}

// fromObject reads a result's replay from its worker's bucket with read,
// and deletes it there. While the cluster elects a new leader (a node
// lost), reads fail for a few seconds: a read cut short is tried again,
// for a minute, unless final says its error is about the replay itself.
func (d *Dispatcher) fromObject(ev Event, read func(io.Reader) error, final func(error) bool) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for {
		err := d.readObject(ctx, trust.BucketOf(ev.Worker), ev.Object, read)
		if err == nil {
			return nil
		}
		if final(err) {
			return fmt.Errorf("replay of %s: %w", ev.Match, err)
		}
		d.log.Warn("read a replay from the object store, trying again", zap.String("match", ev.Match), zap.Error(err))
		select {
		case <-ctx.Done():
			return fmt.Errorf("replay of %s from the object store: %w: %w", ev.Match, errObjectStore, err)
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// readObject reads one object of a bucket with read, and deletes it once
// read.
func (d *Dispatcher) readObject(ctx context.Context, bucket, name string, read func(io.Reader) error) error {
	tctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	obs, err := d.js.ObjectStore(tctx, bucket)
	if err != nil {
		return err
	}
	r, err := obs.Get(tctx, name)
	if err != nil {
		return err
	}
	defer r.Close()
	if err := read(r); err != nil {
		return err
	}
	_ = deleteObject(tctx, d.js, obs, name)
	return nil
}

// deleteObject deletes an object of a bucket, its chunks first: the
// delete's marker is a message too, which a bucket at its bound refuses
// until the chunks purged make room for it.
func deleteObject(ctx context.Context, js jetstream.JetStream, obs jetstream.ObjectStore, name string) error {
	info, err := obs.GetInfo(ctx, name, jetstream.GetObjectInfoShowDeleted())
	if err != nil {
		return err
	}
	if !info.Deleted && info.NUID != "" {
		if st, err := js.Stream(ctx, "OBJ_"+info.Bucket); err == nil {
			_ = st.Purge(ctx, jetstream.WithPurgeSubject("$O."+info.Bucket+".C."+info.NUID))
		}
	}
	return obs.Delete(ctx, name)
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

// checkedObject reads a result's replay from its worker's bucket into a
// file in the spool folder, checking it as it streams in
// (matches.CheckReplayStream): the replay it returns has no frames
// in memory, its File holds it.
func (d *Dispatcher) checkedObject(req matches.Request, ev Event, view *viewer) (rep *matches.Replay, err error) {
	err = d.fromObject(ev, func(r io.Reader) error {
		rep, err = d.spool(req, r, view)
		return err
	}, func(err error) bool { return errors.Is(err, matches.ErrForeignReplay) })
	return rep, err
}

// spool checks a replay read from r into a file of the spool folder; the
// file is removed unless the check passed.
func (d *Dispatcher) spool(req matches.Request, r io.Reader, view *viewer) (rep *matches.Replay, err error) {
	f, err := os.CreateTemp(d.cfg.Spool, ".replay-"+req.MatchID+"-*")
	if err != nil {
		return nil, fmt.Errorf("spool a replay: %w", err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	buf := bufio.NewWriterSize(f, 64<<10)
	// The check reads the object to its end, where its digest is checked.
	if rep, err = matches.CheckReplayStream(req, r, buf, view.frame); err != nil {
		return nil, err
	}
	if err = buf.Flush(); err == nil {
		err = f.Close()
	}
	if err != nil {
		return nil, fmt.Errorf("spool a replay: %w", err)
	}
	rep.File = f.Name()
	return rep, nil
}
