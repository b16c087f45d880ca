package dispatch

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap"
	"golang.org/x/sync/singleflight"

	"arena/dispatch/trust"
	"arena/engine"
	"arena/internal/errs"
	"arena/judger"
	"arena/matches"
)

// WorkerConfig is a worker's setup.
type WorkerConfig struct {
	// Name names the worker in events and match records.
	Name string
	// Concurrency is how many matches it plays at once (at least 1).
	Concurrency int
	// MaxConcurrency, above Concurrency, lets it play up to that many
	// while the host's CPUs idle (see autoslots.go); CPU reads the host's
	// CPU time (nil: ProcStat).
	MaxConcurrency int
	CPU            CPUTimes
	// Games are the games it can play.
	Games []engine.Game
	// Player plays a match on this host (the orchestrator).
	Player matches.Player
	// Reap removes whatever containers of a match are left on this host
	// (from an earlier delivery whose worker died); nil: none.
	Reap func(ctx context.Context, matchID string) error
	// InlineMax is the largest replay sent inside a message (default
	// 512 KiB); larger ones go through the object store.
	InlineMax int
	// Spool is the folder where a played match's replay waits, encoded,
	// until it is reported (default: the system's temporary folder): a
	// replay is never held encoded in memory. What a killed worker left
	// there is removed when a worker starts.
	Spool string
	// Grace is how long running matches may finish once the worker is
	// told to stop, before they are handed back (default 0: hand back at
	// once).
	Grace time.Duration
	// FetchedIdle is how long an image fetched from the server stays on
	// the engine once no match uses it (default 30 minutes), and
	// FetchedCheck how often the worker looks for such images (default 5
	// minutes).
	FetchedIdle, FetchedCheck time.Duration
	// Images, when set, is this host's engine: a pinned image it lacks is
	// fetched from the server (see images.go).
	Images ImageStore
	Log    *zap.Logger
}

// Worker takes matches from the work queue and plays them.
type Worker struct {
	cfg WorkerConfig
	nc  *nats.Conn
	js  jetstream.JetStream
	log *zap.Logger

	mu      sync.Mutex
	running map[string]delivery
	// early are matches cancelled before this worker started them (the
	// cancel can overtake the delivery), with when; a match started
	// later is stopped at once.
	early map[string]time.Time
	// reporting are the results being stored and their deliveries acked
	// (see finish), while their slots take their next matches; Run waits
	// for them.
	reporting sync.WaitGroup
	// fetches: one fetch of an image at a time, for every match that
	// needs it.
	fetches singleflight.Group
	// playingChanged: the matches it plays changed (see reportSlots).
	playingChanged chan struct{}
	// slots are the matches it takes at once now (see autoslots.go).
	slots *slotGate
	// fetched are the images fetched from the server on the engine, by
	// id, with when each was last used; removing the removals of them
	// under way, each closed as it ends; refused those whose removal the
	// engine refused. prune: a match ended (see pruneFetchedRegularly).
	fetched  map[string]time.Time
	removing map[string]chan struct{}
	refused  map[string]bool
	prune    chan struct{}
}

// delivery is a match this worker plays: which delivery of which round,
// the ids of its images, and how to stop it.
type delivery struct {
	round, attempt int
	images         []string
	cancel         context.CancelCauseFunc
}

// earlyKept is how long a cancel of a match this worker does not play is
// remembered.
const earlyKept = time.Minute

// Causes of a match stopped on a worker.
var (
	errLeaseLost = errors.New("the lease on the match was lost (no contact with NATS)")
	errStopping  = errors.New("the worker is stopping")
	errCancelled = errors.New("cancelled by the server")
	// errSuperseded: the server says a later delivery started elsewhere
	// (this worker's lease ran out unnoticed, say while NATS elected a
	// leader).
	errSuperseded = errors.New("a later delivery of the match started elsewhere")
)

// NewWorker returns a worker on nc.
func NewWorker(nc *nats.Conn, cfg WorkerConfig) (*Worker, error) {
	if cfg.Concurrency < 1 {
		cfg.Concurrency = 1
	}
	cfg.MaxConcurrency = max(cfg.MaxConcurrency, cfg.Concurrency)
	if cfg.InlineMax <= 0 {
		cfg.InlineMax = 512 << 10
	}
	if cfg.Log == nil {
		cfg.Log = zap.NewNop()
	}
	if cfg.FetchedIdle <= 0 {
		cfg.FetchedIdle = defaultFetchedIdle
	}
	if cfg.FetchedCheck <= 0 {
		cfg.FetchedCheck = defaultFetchedCheck
	}
	if cfg.Player == nil {
		return nil, errors.New("worker: no player")
	}
	if err := trust.ValidWorkerName(cfg.Name); err != nil {
		return nil, err
	}
	if cfg.Spool != "" {
		if err := os.MkdirAll(cfg.Spool, 0o700); err != nil {
			return nil, fmt.Errorf("worker: its spool: %w", err)
		}
		clearSpool(cfg.Spool)
	}
	// Starts and results are published without waiting (reportSoon), but
	// at most a few hundred wait for JetStream at once, rather than the
	// connection holding them all in memory. One whose store is not
	// confirmed in publishAckWait is published again.
	js, err := jetstream.New(nc, jetstream.WithPublishAsyncMaxPending(256), jetstream.WithPublishAsyncTimeout(publishAckWait))
	if err != nil {
		return nil, err
	}
	return &Worker{cfg: cfg, nc: nc, js: js, log: cfg.Log.With(zap.String("worker", cfg.Name)), running: map[string]delivery{}, early: map[string]time.Time{},
		playingChanged: make(chan struct{}, 1), slots: newSlotGate(cfg.Concurrency),
		fetched: map[string]time.Time{}, removing: map[string]chan struct{}{}, refused: map[string]bool{}, prune: make(chan struct{}, 1)}, nil
}

// Run takes and plays matches until ctx ends; then it takes no more, lets
// running matches finish for the grace period and hands back the rest.
func (w *Worker) Run(ctx context.Context) error {
	cons, err := consumer(ctx, w.js)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	info := cons.CachedInfo()
	lease, maxDeliver := info.Config.AckWait, info.Config.MaxDeliver
	sub, err := w.nc.Subscribe(cancelPrefix+"*", func(m *nats.Msg) {
		w.stopMatch(strings.TrimPrefix(m.Subject, cancelPrefix), errCancelled)
	})
	if err != nil {
		return err
	}
	defer sub.Unsubscribe()
	sup, err := w.nc.Subscribe(supersededPrefix+"*", func(m *nats.Msg) {
		if round, attempt, ok := parseSuperseded(m.Data); ok {
			w.supersede(strings.TrimPrefix(m.Subject, supersededPrefix), round, attempt)
		}
	})
	if err != nil {
		return err
	}
	defer sup.Unsubscribe()
	// The server hands the work queue as many matches as the workers
	// say they take: this one's slots, until it stops.
	stopSlots, slotsDone := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(slotsDone)
		w.reportSlots(ctx, stopSlots)
	}()
	defer func() {
		close(stopSlots)
		<-slotsDone
	}()
	if w.cfg.Images != nil {
		pruneCtx, stopPrune := context.WithCancel(ctx)
		pruneDone := make(chan struct{})
		go func() {
			defer close(pruneDone)
			w.pruneFetchedRegularly(pruneCtx)
		}()
		defer func() {
			stopPrune()
			<-pruneDone
		}()
	}
	if w.cfg.MaxConcurrency > w.cfg.Concurrency {
		adaptCtx, stopAdapt := context.WithCancel(ctx)
		adaptDone := make(chan struct{})
		go func() {
			defer close(adaptDone)
			w.adaptSlots(adaptCtx)
		}()
		defer func() {
			stopAdapt()
			<-adaptDone
		}()
	}
	play, stopPlay := context.WithCancelCause(context.WithoutCancel(ctx))
	defer stopPlay(nil)
	var wg sync.WaitGroup
	for i := range w.cfg.MaxConcurrency {
		wg.Go(func() {
			// Taker i takes matches while the worker has more than i
			// slots (all of them, unless they follow the host).
			for w.slots.wait(ctx, i) {
				msg, err := cons.Next(jetstream.FetchContext(ctx), jetstream.FetchHeartbeat(pullHeartbeat))
				if err != nil {
					if ctx.Err() == nil && !errors.Is(err, nats.ErrTimeout) && !errors.Is(err, context.DeadlineExceeded) {
						w.log.Warn("take a match", zap.Error(err))
						select {
						case <-ctx.Done():
						case <-time.After(250 * time.Millisecond):
						}
					}
					continue
				}
				w.handle(play, msg, lease, maxDeliver)
			}
		})
	}
	<-ctx.Done()
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	if w.cfg.Grace > 0 {
		select {
		case <-done:
		case <-time.After(w.cfg.Grace):
		}
	}
	stopPlay(errStopping)
	<-done
	w.reporting.Wait()
	return nil
}

// reportSlots tells the server how many matches this worker takes and
// plays: now, at every change of the matches it plays and every
// slotsEvery; as none once ctx ends (it takes no more), and once more as
// stop closes (Run returns).
func (w *Worker) reportSlots(ctx context.Context, stop <-chan struct{}) {
	t := time.NewTicker(slotsEvery)
	defer t.Stop()
	ended := ctx.Done()
	for {
		slots := w.slots.get()
		if ctx.Err() != nil {
			slots = 0
		}
		w.publishSlots(slots)
		select {
		case <-stop:
			w.publishSlots(0)
			_ = w.nc.FlushTimeout(time.Second)
			return
		case <-ended:
			ended = nil
		case <-w.playingChanged:
		case <-t.C:
		}
	}
}

// publishSlots sends a report of this worker's slots, a plain NATS
// message: one lost is sent again within slotsEvery.
func (w *Worker) publishSlots(slots int) {
	w.mu.Lock()
	playing := len(w.running)
	w.mu.Unlock()
	data, err := json.Marshal(slotsReport{V: Version, Worker: w.cfg.Name, Slots: slots, Playing: playing})
	if err != nil {
		return
	}
	_ = w.nc.Publish(slotsSubject(w.cfg.Name), data)
}

// playingChangedLocked wakes reportSlots; w.mu must be held.
func (w *Worker) playingChangedLocked() {
	select {
	case w.playingChanged <- struct{}{}:
	default:
	}
}

func (w *Worker) stopMatch(id string, cause error) {
	w.mu.Lock()
	cancel := w.running[id].cancel
	if cancel == nil && errors.Is(cause, errCancelled) {
		now := time.Now()
		for m, at := range w.early {
			if now.Sub(at) > earlyKept {
				delete(w.early, m)
			}
		}
		w.early[id] = now
	}
	w.mu.Unlock()
	if cancel != nil {
		cancel(cause)
	}
}

// supersede gives up this worker's delivery of a match if it is earlier
// than delivery attempt of round: another worker plays a later one.
func (w *Worker) supersede(id string, round, attempt int) {
	w.mu.Lock()
	d, ok := w.running[id]
	w.mu.Unlock()
	if ok && (d.round < round || d.round == round && d.attempt < attempt) {
		d.cancel(errSuperseded)
	}
}

// handle plays one delivery of a match.
func (w *Worker) handle(ctx context.Context, msg jetstream.Msg, lease time.Duration, maxDeliver int) {
	meta, err := msg.Metadata()
	if err != nil {
		_ = msg.TermWithReason("not a JetStream message")
		return
	}
	attempt := int(meta.NumDelivered)
	var job Job
	if err := trust.Decode(msg.Data(), &job); err != nil {
		w.refuse(ctx, msg, attempt, err)
		return
	}
	log := w.log.With(zap.String("match", job.Match), zap.Int("attempt", attempt))
	if job.Round > 1 {
		log = log.With(zap.Int("round", job.Round))
	}
	// Every event of this delivery: its round, and a proof made with the
	// match's key (the same for all of them).
	proof := proofOf(job.Key, job.Match, job.Round, attempt, w.cfg.Name)
	ev := func(kind string) Event {
		return Event{Kind: kind, Match: job.Match, Round: job.Round, Attempt: attempt, Owner: job.Owner, Proof: proof}
	}
	req, err := w.request(job)
	if err != nil {
		// Said taken first: the server believes a delivery's result only
		// from the worker that took it.
		w.report(ctx, ev(kindStart))
		e := ev(kindResult)
		e.Reason = err.Error()
		w.report(ctx, e)
		_ = msg.TermWithReason(err.Error())
		return
	}
	mctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	w.take(job, attempt, cancel)
	defer w.release(job)
	// The lease is kept from now on: storing the start event may take a
	// while (the cluster electing a leader), and the match must not be
	// delivered again meanwhile.
	stopLease := w.keepLease(mctx, msg, lease, cancel)
	// The start is sent now and stored while the match begins (its bots
	// start), but every other event of this delivery waits for it to be
	// stored (started): the server believes a delivery's frames and result
	// only from the worker that said it took it, and a start stored late
	// (its publish tried again) would come after them.
	startStored := w.reportSoon(ctx, ev(kindStart))
	started := make(chan struct{})
	log.Info("match taken")
	if attempt > 1 && w.cfg.Reap != nil {
		// An earlier delivery's worker may have died on this host.
		if err := w.cfg.Reap(ctx, job.Match); err != nil {
			log.Warn("remove an earlier delivery's containers", zap.Error(err))
		}
	}
	w.fetchImages(mctx, job, log)
	req.Attempt = attempt
	if isLast(attempt, maxDeliver) {
		// The last delivery: a bot whose image is not here either is
		// start_failed, named so, rather than the match handed back.
		req.MissingOn = "worker " + w.cfg.Name
	}
	// Frames go out from a goroutine of their own, through a bounded
	// backlog: a connection that stalls (a cut network not yet noticed)
	// must not stall the match, whose lease then runs out as it should.
	// Frames past the backlog are not shown live; the replay has them all.
	// The backlog holds pointers to the frames alone (the events are made
	// as they go out), so that it is small to make for every match. The
	// same goroutine waits for the start to be stored first.
	frames := w.sendFrames(startStored, started, ev)
	req.OnFrame = frames.add
	var rep *matches.Replay
	if err = context.Cause(mctx); err == nil { // else cancelled already: no bot starts
		rep, err = w.cfg.Player.Play(mctx, req)
	}
	close(frames.backlog)
	// A delivery played to its end is reported, whatever happened since
	// (see afterPlay): its replay is encoded while the start may still
	// wait to be stored.
	var replay *spooled
	defer func() {
		if replay != nil {
			replay.remove()
		}
	}()
	var encodeErr error
	if err == nil {
		rep.Result.Worker = w.cfg.Name
		replay, encodeErr = w.spool(rep)
		rep.Frames = nil // in the spool now: let them go
	}
	if followStart(mctx, err, started) {
		select {
		case <-frames.sent:
		case <-time.After(frameDrain):
			log.Warn("frames still unsent as the match ends", zap.Int("backlog", len(frames.backlog)))
		}
	}
	if frames.dropped > 0 {
		log.Warn("frames not shown live: the connection to NATS was too slow", zap.Int("frames", frames.dropped))
	}
	stopLease()
	cause := context.Cause(mctx)
	switch next := afterPlay(err, cause, attempt, maxDeliver); next {
	case afterReport:
		if encodeErr != nil {
			log.Error("report the result", zap.Error(encodeErr))
			return
		}
		w.finish(ctx, msg, ev(kindResult), replay, rep.Result.Winners, held{lease: lease, since: time.Now(), last: isLast(attempt, maxDeliver)}, log)
		replay = nil // finish removes it
	case afterGiveUp:
		log.Warn("match given up", zap.Error(cause))
	case afterStopped:
		w.report(ctx, ev(kindStopped))
		_ = msg.Term()
		log.Info("match cancelled by the server")
	case afterHandBack, afterFail:
		reason := failReason(err, cause)
		if next == afterHandBack {
			w.log.Warn("match handed back", zap.String("match", job.Match), zap.Int("attempt", attempt), zap.String("reason", reason))
			e := ev(kindHandback)
			e.Reason = reason
			w.report(ctx, e)
			_ = msg.NakWithDelay(200 * time.Millisecond)
			return
		}
		e := ev(kindResult)
		e.Reason = reason
		w.report(ctx, e)
		_ = msg.TermWithReason(reason)
	}
}

// refuse fails a delivery whose job does not decode: unknown versions are
// refused, not misread.
func (w *Worker) refuse(ctx context.Context, msg jetstream.Msg, attempt int, err error) {
	w.log.Error("match refused", zap.Error(err))
	// What it takes to say so is read loosely.
	var head struct {
		Match string `json:"match"`
		Round int    `json:"round"`
		Key   string `json:"key"`
	}
	_ = json.Unmarshal(msg.Data(), &head)
	if head.Match != "" {
		// Said taken first: the server believes a delivery's result
		// only from the worker that took it.
		e := Event{Match: head.Match, Round: head.Round, Attempt: attempt, Proof: proofOf(head.Key, head.Match, head.Round, attempt, w.cfg.Name)}
		e.Kind = kindStart
		w.report(ctx, e)
		e.Kind, e.Reason = kindResult, err.Error()
		w.report(ctx, e)
	}
	_ = msg.TermWithReason(err.Error())
}

// take counts a delivery among those running, cancelled at once when the
// server cancelled its match before it got here.
func (w *Worker) take(job Job, attempt int, cancel context.CancelCauseFunc) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.running[job.Match] = delivery{round: job.Round, attempt: attempt, images: job.images(), cancel: cancel}
	w.playingChangedLocked()
	if _, ok := w.early[job.Match]; ok {
		delete(w.early, job.Match)
		cancel(errCancelled) // the server cancelled it before it got here
	}
}

// release takes a delivery off those running, its images used now, and
// wakes the pruning.
func (w *Worker) release(job Job) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.running, job.Match)
	w.playingChangedLocked()
	w.usedLocked(job.images(), time.Now())
	select {
	case w.prune <- struct{}{}:
	default:
	}
}

// isLast says whether attempt is a match's last delivery.
func isLast(attempt, maxDeliver int) bool {
	return maxDeliver > 0 && attempt >= maxDeliver
}

// failReason is why a delivery fails or is handed back: its error, or the
// worker stopping.
func failReason(err, cause error) string {
	if errors.Is(cause, errStopping) {
		return errStopping.Error()
	}
	return err.Error()
}

// frameFeed takes a delivery's frames as they come and publishes them from
// a goroutine of its own, through a bounded backlog (see handle).
type frameFeed struct {
	backlog chan *frameOut
	// sent is closed when every frame went out.
	sent chan struct{}
	// seq numbers the frames; dropped counts those past the backlog.
	seq, dropped int
}

// sendFrames starts a delivery's frames' goroutine: it waits for the
// start to be stored, closes started, then publishes each frame.
func (w *Worker) sendFrames(startStored func() error, started chan struct{}, ev func(string) Event) *frameFeed {
	f := &frameFeed{backlog: make(chan *frameOut, frameBacklog), sent: make(chan struct{})}
	go func() {
		defer close(f.sent)
		_ = startStored()
		close(started)
		for out := range f.backlog {
			e := ev(kindFrame)
			e.Seq, e.Frame = out.seq, out.data
			w.publishFrame(e)
		}
	}()
	return f
}

// add queues a frame, or drops it when the backlog is full.
func (f *frameFeed) add(fr matches.Frame) {
	data, err := json.Marshal(fr)
	if err != nil {
		return
	}
	select {
	case f.backlog <- &frameOut{seq: f.seq, data: data}:
	default:
		f.dropped++
	}
	f.seq++
}

// followStart waits for a delivery's start to be stored (started), which
// every other event of the delivery follows, and reports true; false
// when the delivery is given up first (see afterPlay) without having
// played to its end (err): it sends nothing more, and so waits for
// nothing (its connection may be lost).
func followStart(mctx context.Context, err error, started <-chan struct{}) bool {
	select {
	case <-started:
		return true
	case <-mctx.Done():
	}
	if cause := context.Cause(mctx); err != nil && (errors.Is(cause, errLeaseLost) || errors.Is(cause, errSuperseded)) {
		return false
	}
	<-started
	return true
}

// after is what a worker does once a delivery's play returned.
type after int

const (
	// afterReport: played to its end (even if a stop came just after):
	// the result is reported. Should another delivery have started
	// meanwhile, the server refuses it.
	afterReport after = iota
	// afterGiveUp: another worker has it now (the lease lost, or a later
	// delivery started): whatever this one says would be refused.
	afterGiveUp
	// afterStopped: the server cancelled it; it is stopped, and said so.
	afterStopped
	// afterHandBack: back to the queue with the reason (this worker is
	// stopping, or could not play it), for another worker.
	afterHandBack
	// afterFail: the match fails with the reason: it is invalid, its
	// logic failed, or this was its last delivery.
	afterFail
)

// afterPlay decides what follows a delivery's play: err is what Play
// returned, cause why the delivery's context ended (nil: it did not).
func afterPlay(err, cause error, attempt, maxDeliver int) after {
	last := isLast(attempt, maxDeliver)
	switch {
	case err == nil:
		return afterReport
	case errors.Is(cause, errLeaseLost), errors.Is(cause, errSuperseded):
		return afterGiveUp
	case errors.Is(cause, errCancelled):
		return afterStopped
	case errs.IsInvalid(err) && !errors.Is(err, matches.ErrImageNotFound) && cause == nil:
		// The request's own fault: it would fail on any host (an image
		// this host lacks, another may hold).
		return afterFail
	case errors.Is(err, matches.ErrLogicFailed) && cause == nil:
		// The logic's own failure: it would fail on any host.
		return afterFail
	case last:
		return afterFail
	default:
		return afterHandBack
	}
}

// keepLease sends a progress ack every quarter lease while the match
// plays and cancels it when NATS has confirmed none for most of a lease:
// by then JetStream gives it to another worker. The acks go out from a
// goroutine of their own: a connection stalled on a cut network (a write
// blocked, holding every call behind it) must not keep the lease's clock
// from running. Nothing runs before the first ack is due, so a match
// shorter than a quarter lease starts no goroutine. stop ends it, and
// waits for it.
func (w *Worker) keepLease(ctx context.Context, msg jetstream.Msg, lease time.Duration, cancel context.CancelCauseFunc) (stop func()) {
	every := max(lease/4, 50*time.Millisecond)
	var confirmed atomic.Int64
	confirmed.Store(time.Now().UnixNano())
	done := make(chan struct{})
	var kept sync.WaitGroup
	kept.Add(1)
	first := time.AfterFunc(every, func() {
		defer kept.Done()
		// Not waited for: a call blocked on a stalled connection returns
		// when the connection fails (a write times out), and the goroutine
		// then.
		stopAcks := make(chan struct{})
		defer close(stopAcks)
		go func() {
			t := time.NewTicker(every)
			defer t.Stop()
			for {
				if msg.InProgress() == nil && w.nc.FlushTimeout(every) == nil {
					confirmed.Store(time.Now().UnixNano())
				}
				select {
				case <-stopAcks:
					return
				case <-t.C:
				}
			}
		}()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
			}
			// Past most of a lease without a confirmed ack (the worker was
			// cut off, or frozen), JetStream may have given the match to
			// another.
			if time.Since(time.Unix(0, confirmed.Load())) > lease*3/4 {
				cancel(errLeaseLost)
				return
			}
		}
	})
	return func() {
		close(done)
		if first.Stop() {
			kept.Done() // it never ran
		}
		kept.Wait()
	}
}

// held is a delivery played to its end: its lease, kept until since,
// and whether it is the match's last delivery.
type held struct {
	lease time.Duration
	since time.Time
	last  bool
}

// errUnstored: a replay could not be stored, and its delivery was handed
// back (see unstored).
var errUnstored = errors.New("the replay could not be stored")

// finish reports the result (ev, with its encoded replay) and, once
// JetStream has stored it, acks the delivery. A replay that fits in a
// message goes out at once; the wait for it to be stored (or a larger
// replay's trip through the object store) and the ack go on in the
// background while this slot takes its next match. Run waits for them.
func (w *Worker) finish(ctx context.Context, msg jetstream.Msg, ev Event, replay *spooled, winners []string, h held, log *zap.Logger) {
	ctx = context.WithoutCancel(ctx)
	var stored func() error
	if replay.size <= int64(w.cfg.InlineMax) {
		data, err := replay.bytes()
		replay.remove()
		if err != nil {
			log.Error("report the result", zap.Error(err))
			return
		}
		ev.Replay = data
		stored = w.reportSoon(ctx, ev)
	} else {
		stored = func() error {
			defer replay.remove()
			name, err := w.putReplay(ctx, fmt.Sprintf("%s.%d.%d", ev.Match, ev.Round, ev.Attempt), replay, h.lease/2)
			if err != nil {
				w.unstored(ctx, msg, ev, h, err, log)
				return errUnstored
			}
			ev.Object = name
			return w.report(ctx, ev)
		}
	}
	w.reporting.Go(func() {
		if err := stored(); err != nil {
			if !errors.Is(err, errUnstored) {
				log.Error("report the result", zap.Error(err))
			}
			return
		}
		if err := msg.DoubleAck(ctx); err != nil {
			log.Error("ack a match whose result is stored", zap.Error(err))
			return
		}
		log.Info("match played", zap.Strings("winners", winners))
	})
}

// unstored hands back a delivery whose replay could not be stored (its
// bucket full, say), with the reason; on its last delivery the match
// fails with it. A delivery whose lease ran out meanwhile is another's
// by now: it is left alone.
func (w *Worker) unstored(ctx context.Context, msg jetstream.Msg, ev Event, h held, err error, log *zap.Logger) {
	reason := "its replay could not be stored: " + err.Error()
	if time.Since(h.since) > h.lease {
		log.Error("match given up: its replay could not be stored, and its lease ran out meanwhile", zap.Error(err))
		return
	}
	ev.Reason = reason
	if h.last {
		log.Error("match failed: its replay could not be stored", zap.Error(err))
		_ = w.report(ctx, ev)
		_ = msg.TermWithReason(reason)
		return
	}
	log.Warn("match handed back: its replay could not be stored", zap.Error(err))
	ev.Kind = kindHandback
	_ = w.report(ctx, ev)
	_ = msg.NakWithDelay(200 * time.Millisecond)
}

// report publishes an event under this worker's name and waits for
// JetStream to store it.
func (w *Worker) report(ctx context.Context, ev Event) error {
	ev.V, ev.Worker = Version, w.cfg.Name
	data, err := encodeEvent(ev)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	return publish(ctx, w.js, eventSubject(w.cfg.Name, ev.Kind, ev.Match), data, w.log)
}

// publishAckWait bounds the wait for JetStream to confirm an event
// published without waiting (JetStream's own wait for a request): a frame
// is then given up, an event sent by reportSoon published again.
const publishAckWait = 5 * time.Second

// reportSoon sends an event under this worker's name at once, and
// returns a wait for JetStream to store it: an event whose store is not
// confirmed then is published again, as report does.
func (w *Worker) reportSoon(ctx context.Context, ev Event) (stored func() error) {
	ev.V, ev.Worker = Version, w.cfg.Name
	data, err := encodeEvent(ev)
	if err != nil {
		return func() error { return err }
	}
	subject := eventSubject(w.cfg.Name, ev.Kind, ev.Match)
	ack, err := w.js.PublishAsync(subject, data)
	return func() error {
		if err == nil {
			select {
			case <-ack.Ok():
				return nil
			case err = <-ack.Err(): // publishAckWait at most
			}
		}
		w.log.Warn("publish, trying again", zap.String("subject", subject), zap.Error(err))
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		return publish(ctx, w.js, subject, data, w.log)
	}
}

// publish stores a message in JetStream, trying again while the cluster
// elects a new leader or the connection comes back, until ctx ends.
func publish(ctx context.Context, js jetstream.JetStream, subject string, data []byte, log *zap.Logger, opts ...jetstream.PublishOpt) error {
	for {
		_, err := js.Publish(ctx, subject, data, opts...)
		if err == nil {
			return nil
		}
		log.Warn("publish, trying again", zap.String("subject", subject), zap.Error(err))
		select {
		case <-ctx.Done():
			return fmt.Errorf("publish %s: %w", subject, err)
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// publishFrame sends a live frame as a plain NATS message, not stored:
// the replay carries every frame anyway.
func (w *Worker) publishFrame(ev Event) {
	ev.V, ev.Worker = Version, w.cfg.Name
	data, err := encodeEvent(ev)
	if err != nil {
		return
	}
	_ = w.nc.Publish(liveSubject(w.cfg.Name, ev.Match), data)
}

// frameOut is a frame waiting to be published: its number in the
// delivery, and the frame.
type frameOut struct {
	seq  int
	data json.RawMessage
}

// frameBacklog is how many frames of a match may wait to be published;
// frameDrain how long the end of a match waits for them to go.
const (
	frameBacklog = 512
	frameDrain   = 2 * time.Second
)

// sameObject reads an object back and checks it holds size bytes of
// digest sum (SHA-256).
func sameObject(ctx context.Context, obs jetstream.ObjectStore, name string, size int64, sum []byte) error {
	r, err := obs.Get(ctx, name)
	if err != nil {
		return err
	}
	defer r.Close()
	h := sha256.New()
	n, err := io.Copy(h, r)
	if err != nil {
		return err
	}
	if n != size || !bytes.Equal(h.Sum(nil), sum) {
		return errors.New("the replay read back differs")
	}
	return nil
}

// request rebuilds the orchestrator's request from a job.
func (w *Worker) request(j Job) (matches.Request, error) {
	var g engine.Game
	if j.Logic != nil {
		// A logic game: its logic pinned, whether or not this worker
		// offers a game of that name.
		if !imageID.MatchString(j.Logic.ImageID) {
			return matches.Request{}, fmt.Errorf("game %s: its logic %s is not pinned to an image id", j.Game, j.Logic.Image)
		}
		if err := j.Logic.Limits.Check(); err != nil {
			return matches.Request{}, fmt.Errorf("game %s: its logic's limits: %w", j.Game, err)
		}
		g = judger.Named(j.Game, j.Logic.Image, j.Logic.Players, "").Pinned(j.Logic.ImageID).WithLimits(j.Logic.Limits)
	} else {
		var err error
		if g, err = engine.Find(w.cfg.Games, j.Game); err != nil {
			return matches.Request{}, fmt.Errorf("game: %w", err)
		}
	}
	m, err := g.Map(j.Map)
	if err != nil {
		return matches.Request{}, fmt.Errorf("map: %w", err)
	}
	return matches.Request{
		Game: g, Map: m, Seed: j.Seed, Images: j.Images, ImageIDs: j.ImageIDs, ImageDigests: j.ImageDigests, Settings: j.Settings, MatchID: j.Match,
		Limits: matches.Limits{AnswerTimeout: j.AnswerTimeout, WarmUp: j.WarmUp, MaxMessageBytes: j.MaxMessageBytes, MemoryBytes: j.MemoryBytes},
	}, nil
}

// putReplay stores a replay in the object store and reads it back, trying
// again (under a new name) for a minute while the cluster elects a leader:
// a put cut by the loss of a node can leave an object whose chunks do not
// match its digest. It returns the name the replay is stored under. A
// bucket at its bound is tried again for full at most (the server reads
// and deletes the replays in it), and a replay larger than the bound not
// at all.
func (w *Worker) putReplay(ctx context.Context, base string, replay *spooled, full time.Duration) (string, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	var fullSince time.Time
	for try := 1; ; try++ {
		name := fmt.Sprintf("%s.%d", base, try)
		err := func() error {
			tctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			obs, err := w.js.ObjectStore(tctx, trust.BucketOf(w.cfg.Name))
			if err != nil {
				return err
			}
			if _, err := replay.f.Seek(0, io.SeekStart); err != nil {
				return err
			}
			if _, err := obs.Put(tctx, jetstream.ObjectMeta{Name: name}, io.LimitReader(replay.f, replay.size)); err != nil {
				if bucketFull(err) {
					return whyFull(tctx, obs, replay.size)
				}
				return err
			}
			// Read back as a digest: the replay is not held twice.
			if err := sameObject(tctx, obs, name, replay.size, replay.sum); err != nil {
				_ = deleteObject(tctx, w.js, obs, name)
				return err
			}
			return nil
		}()
		if err == nil {
			return name, nil
		}
		if errors.Is(err, errTooBig) {
			return "", err
		}
		if errors.Is(err, errFull) {
			if fullSince.IsZero() {
				fullSince = time.Now()
			}
			if time.Since(fullSince) > full {
				return "", err
			}
		}
		w.log.Warn("put a replay in the object store, trying again", zap.String("object", name), zap.Error(err))
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("put the replay in the object store: %w", err)
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// Why a replay does not go in a worker's bucket.
var (
	errFull   = errors.New("this worker's bucket is full")
	errTooBig = errors.New("the replay is larger than this worker's bucket")
)

// whyFull says why a put was refused by the worker's bucket at its
// bound: full, or the replay (size bytes) larger than the bound.
func whyFull(ctx context.Context, obs jetstream.ObjectStore, size int64) error {
	bound := int64(-1)
	if st, err := obs.Status(ctx); err == nil {
		if b, ok := st.(*jetstream.ObjectBucketStatus); ok {
			bound = b.StreamInfo().Config.MaxBytes
		}
	}
	if bound > 0 && size > bound {
		return fmt.Errorf("%w: %d bytes, past its bound of %d (the server's ARENA_WORKER_BUCKET_BYTES)", errTooBig, size, bound)
	}
	if bound > 0 {
		return fmt.Errorf("%w: its replays and images add up to its bound of %d bytes (the server's ARENA_WORKER_BUCKET_BYTES)", errFull, bound)
	}
	return errFull
}
