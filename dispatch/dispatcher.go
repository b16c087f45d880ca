package dispatch

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap"

	"arena/engine"
	"arena/internal/errs"
	"arena/judger"
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
	// verifying holds a slot per logic game's result played again now
	// (VerifyAtOnce).
	verifying chan struct{}
	// slotsChanged wakes tellSlots: a worker's slots may have changed.
	slotsChanged chan struct{}
	// watchMu serializes the calls to the watchers of the slots (see
	// WatchSlots); told is the total they were last told of.
	watchMu  sync.Mutex
	watchers map[*slotsWatcher]struct{}
	told     int
}

// DispatcherConfig is a dispatcher's setup.
type DispatcherConfig struct {
	// Name names its durable consumer of the events (one per server; a
	// bench takes its own).
	Name string
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
	// lack (see images.go); Logic, the logic of a logic game's match in
	// flight, from the server's engine.
	Images ImageSource
	Logic  ImageSource
	// VerifyLogic plays a logic game's reported match again on the
	// server, the logic alone on the recorded answers (the orchestrator's
	// VerifyHosted): a result is believed once it reproduces. Nil: a
	// logic game's result is refused, unless its worker is Own. At most
	// VerifyAtOnce (default 1) run at a time.
	VerifyLogic  func(ctx context.Context, game engine.Hosted, rep *matches.Replay) error
	VerifyAtOnce int
	// Own names the server's own worker (in its process), whose logic
	// games' results are not played again.
	Own string
	// BucketBytes bounds each worker's bucket, its big replays and the
	// images it asked for together (default DefaultBucketBytes): past it
	// a put is refused, so a worker's key fills no more of the server's
	// disk. It is applied to the buckets made and, with Setup, to those
	// there are as the dispatcher starts.
	BucketBytes int64
	// ReplayBudget is the replay budget of the server's matches
	// (ARENA_REPLAY_BUDGET; 0: matches.DefaultReplayBudget): a reported
	// replay is read within the bounds it gives with its game's cap
	// (matches.Request.ReplayBounds), and refused as soon as it passes
	// one.
	ReplayBudget int64
	Log          *zap.Logger
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

// NewDispatcher is NewDispatcherWith with a name and a logger.
func NewDispatcher(ctx context.Context, nc *nats.Conn, name string, log *zap.Logger) (*Dispatcher, error) {
	return NewDispatcherWith(ctx, nc, DispatcherConfig{Name: name, Log: log})
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
		workers: map[string]*standing{}, publishCap: 30 * time.Second, slotsChanged: make(chan struct{}, 1), watchers: map[*slotsWatcher]struct{}{},
		verifying: make(chan struct{}, max(1, cfg.VerifyAtOnce))}
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
	if err == nil && (cfg.Images != nil || cfg.Logic != nil) {
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

// Play publishes the match to the work queue and waits for its first
// accepted result, passing its frames on as they come.
func (d *Dispatcher) Play(ctx context.Context, req matches.Request) (*matches.Replay, error) {
	if err := req.Check(); err != nil {
		return nil, err
	}
	if req.MatchID == "" {
		req.MatchID = matches.NewMatchID()
	}
	// Pinned by who made it (platform/pins.go, orchestrator.Pin): every
	// worker plays the same images.
	if len(req.ImageIDs) != len(req.Images) {
		return nil, fmt.Errorf("match %s: its bots are not pinned to image ids", req.MatchID)
	}
	if lg, ok := req.Game.(*judger.Game); ok {
		if ref, id := lg.HostImage(); id == "" {
			return nil, fmt.Errorf("match %s: its logic %s is not pinned to an image id", req.MatchID, ref)
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
	// The check reads the object to its end, where its digest is checked,
	// unless it passes a bound first.
	if rep, err = matches.CheckReplayStreamWithin(req, d.bounds(req), r, buf, view.frame); err != nil {
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
