package dispatch

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap"

	"arena/engine"
	"arena/orchestrator"
)

// WorkerConfig is a worker's setup.
type WorkerConfig struct {
	// Name names the worker in events and match records.
	Name string
	// Concurrency is how many matches it plays at once (at least 1).
	Concurrency int
	// Games are the games it can play.
	Games []engine.Game
	// Player plays a match on this host (the orchestrator).
	Player orchestrator.Player
	// Reap removes whatever containers of a match are left on this host
	// (from an earlier delivery whose worker died); nil: none.
	Reap func(ctx context.Context, matchID string) error
	// InlineMax is the largest replay sent inside a message (default
	// 512 KiB); larger ones go through the object store.
	InlineMax int
	// Grace is how long running matches may finish once the worker is
	// told to stop, before they are handed back (default 0: hand back at
	// once).
	Grace time.Duration
	Log   *zap.Logger
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
}

// delivery is a match this worker plays: which delivery of which round,
// and how to stop it.
type delivery struct {
	round, attempt int
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
	if cfg.InlineMax <= 0 {
		cfg.InlineMax = 512 << 10
	}
	if cfg.Log == nil {
		cfg.Log = zap.NewNop()
	}
	if cfg.Player == nil {
		return nil, errors.New("worker: no player")
	}
	if err := ValidWorkerName(cfg.Name); err != nil {
		return nil, err
	}
	// Frames are published without waiting, but at most a few hundred wait
	// for JetStream at once: past them the frame sender waits (and the
	// match's frames, past its backlog, are not shown live) rather than
	// the connection holding them all in memory.
	js, err := jetstream.New(nc, jetstream.WithPublishAsyncMaxPending(256))
	if err != nil {
		return nil, err
	}
	return &Worker{cfg: cfg, nc: nc, js: js, log: cfg.Log.With(zap.String("worker", cfg.Name)), running: map[string]delivery{}, early: map[string]time.Time{}}, nil
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
	play, stopPlay := context.WithCancelCause(context.WithoutCancel(ctx))
	defer stopPlay(nil)
	var wg sync.WaitGroup
	for range w.cfg.Concurrency {
		wg.Go(func() {
			for ctx.Err() == nil {
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
	return nil
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
	if err := decode(msg.Data(), &job); err != nil {
		// Unknown versions are refused, not misread: the match fails.
		w.log.Error("match refused", zap.Error(err))
		// What it takes to say so is read loosely.
		var head struct {
			Match string `json:"match"`
			Round int    `json:"round"`
			Key   string `json:"key"`
		}
		_ = json.Unmarshal(msg.Data(), &head)
		if head.Match != "" {
			w.report(ctx, Event{Kind: kindResult, Match: head.Match, Round: head.Round, Attempt: attempt, Reason: err.Error(),
				Proof: proofOf(head.Key, head.Match, head.Round, attempt, w.cfg.Name)})
		}
		_ = msg.TermWithReason(err.Error())
		return
	}
	log := w.log.With(zap.String("match", job.Match), zap.Int("attempt", attempt))
	if job.Round > 1 {
		log = log.With(zap.Int("round", job.Round))
	}
	// Every event of this delivery: its round, and a proof made with the
	// match's key.
	ev := func(kind string) Event {
		return Event{Kind: kind, Match: job.Match, Round: job.Round, Attempt: attempt, Owner: job.Owner,
			Proof: proofOf(job.Key, job.Match, job.Round, attempt, w.cfg.Name)}
	}
	req, err := w.request(job)
	if err != nil {
		e := ev(kindResult)
		e.Reason = err.Error()
		w.report(ctx, e)
		_ = msg.TermWithReason(err.Error())
		return
	}
	mctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	w.mu.Lock()
	w.running[job.Match] = delivery{round: job.Round, attempt: attempt, cancel: cancel}
	if _, ok := w.early[job.Match]; ok {
		delete(w.early, job.Match)
		cancel(errCancelled) // the server cancelled it before it got here
	}
	w.mu.Unlock()
	defer func() {
		w.mu.Lock()
		delete(w.running, job.Match)
		w.mu.Unlock()
	}()
	// The lease is kept from now on: storing the start event may take a
	// while (the cluster electing a leader), and the match must not be
	// delivered again meanwhile.
	keep := make(chan struct{})
	var kept sync.WaitGroup
	kept.Go(func() { w.keepLease(mctx, msg, lease, cancel, keep) })
	w.report(ctx, ev(kindStart))
	log.Info("match taken")
	if attempt > 1 && w.cfg.Reap != nil {
		// An earlier delivery's worker may have died on this host.
		if err := w.cfg.Reap(ctx, job.Match); err != nil {
			log.Warn("remove an earlier delivery's containers", zap.Error(err))
		}
	}
	req.Attempt = attempt
	if maxDeliver > 0 && attempt >= maxDeliver {
		// The last delivery: a bot whose image is not here either is
		// start_failed, named so, rather than the match handed back.
		req.MissingOn = "worker " + w.cfg.Name
	}
	// Frames go out from a goroutine of their own, through a bounded
	// backlog: a connection that stalls (a cut network not yet noticed)
	// must not stall the match, whose lease then runs out as it should.
	// Frames past the backlog are not shown live; the replay has them all.
	frames := make(chan Event, frameBacklog)
	var sender sync.WaitGroup
	sender.Go(func() {
		for e := range frames {
			w.publishAsync(e)
		}
	})
	seq, dropped := 0, 0
	req.OnFrame = func(f orchestrator.Frame) {
		data, err := json.Marshal(f)
		if err != nil {
			return
		}
		e := ev(kindFrame)
		e.Seq, e.Frame = seq, data
		seq++
		select {
		case frames <- e:
		default:
			dropped++
		}
	}
	var rep *orchestrator.Replay
	if err = context.Cause(mctx); err == nil { // else cancelled already: no bot starts
		rep, err = w.cfg.Player.Play(mctx, req)
	}
	close(frames)
	if !waitGroupWithin(&sender, frameDrain) {
		log.Warn("frames still unsent as the match ends", zap.Int("backlog", len(frames)))
	}
	if dropped > 0 {
		log.Warn("frames not shown live: the connection to NATS was too slow", zap.Int("frames", dropped))
	}
	close(keep)
	kept.Wait()
	cause := context.Cause(mctx)
	switch next := afterPlay(err, cause, attempt, maxDeliver); next {
	case afterReport:
		rep.Result.Worker = w.cfg.Name
		if err := w.finish(ctx, msg, ev(kindResult), rep); err != nil {
			log.Error("report the result", zap.Error(err))
			return
		}
		log.Info("match played", zap.Strings("winners", rep.Result.Winners))
	case afterGiveUp:
		log.Warn("match given up", zap.Error(cause))
	case afterStopped:
		w.report(ctx, ev(kindStopped))
		_ = msg.Term()
		log.Info("match cancelled by the server")
	case afterHandBack, afterFail:
		reason := err.Error()
		if errors.Is(cause, errStopping) {
			reason = errStopping.Error()
		}
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
	// afterFail: the match fails with the reason: it is invalid, or this
	// was its last delivery.
	afterFail
)

// afterPlay decides what follows a delivery's play: err is what Play
// returned, cause why the delivery's context ended (nil: it did not).
func afterPlay(err, cause error, attempt, maxDeliver int) after {
	last := maxDeliver > 0 && attempt >= maxDeliver
	switch {
	case err == nil:
		return afterReport
	case errors.Is(cause, errLeaseLost), errors.Is(cause, errSuperseded):
		return afterGiveUp
	case errors.Is(cause, errCancelled):
		return afterStopped
	case errors.Is(err, orchestrator.ErrInvalid) && cause == nil:
		return afterFail
	case last:
		return afterFail
	default:
		return afterHandBack
	}
}

// keepLease sends progress acks while the match plays and cancels it
// when NATS has confirmed none for most of a lease: by then JetStream
// gives it to another worker. The acks go out from a goroutine of their
// own: a connection stalled on a cut network (a write blocked, holding
// every call behind it) must not keep the lease's clock from running.
func (w *Worker) keepLease(ctx context.Context, msg jetstream.Msg, lease time.Duration, cancel context.CancelCauseFunc, done <-chan struct{}) {
	every := max(lease/4, 50*time.Millisecond)
	var confirmed atomic.Int64
	confirmed.Store(time.Now().UnixNano())
	// Not waited for: a call blocked on a stalled connection returns when
	// the connection fails (a write times out), and the goroutine then.
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
			}
			if msg.InProgress() == nil && w.nc.FlushTimeout(every) == nil {
				confirmed.Store(time.Now().UnixNano())
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
		// Past most of a lease without a confirmed ack (the worker was cut
		// off, or frozen), JetStream may have given the match to another.
		if time.Since(time.Unix(0, confirmed.Load())) > lease*3/4 {
			cancel(errLeaseLost)
			return
		}
	}
}

// finish reports the result (ev), then acks the delivery.
func (w *Worker) finish(ctx context.Context, msg jetstream.Msg, ev Event, rep *orchestrator.Replay) error {
	data, err := orchestrator.EncodeReplay(rep)
	if err != nil {
		return err
	}
	if len(data) <= w.cfg.InlineMax {
		ev.Replay = data
	} else {
		name, err := w.putReplay(ctx, fmt.Sprintf("%s.%d.%d", ev.Match, ev.Round, ev.Attempt), data)
		if err != nil {
			return err
		}
		ev.Object = name
	}
	if err := w.report(ctx, ev); err != nil {
		return err
	}
	return msg.DoubleAck(ctx)
}

// report publishes an event under this worker's name and waits for
// JetStream to store it.
func (w *Worker) report(ctx context.Context, ev Event) error {
	ev.V, ev.Worker = Version, w.cfg.Name
	data, err := json.Marshal(ev)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	return publish(ctx, w.js, eventSubject(w.cfg.Name, ev.Kind, ev.Match), data, w.log)
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

// publishAsync publishes a frame without waiting: the replay carries
// every frame anyway.
func (w *Worker) publishAsync(ev Event) {
	ev.V, ev.Worker = Version, w.cfg.Name
	data, err := json.Marshal(ev)
	if err != nil {
		return
	}
	_, _ = w.js.PublishAsync(eventSubject(w.cfg.Name, ev.Kind, ev.Match), data)
}

// frameBacklog is how many frames of a match may wait to be published;
// frameDrain how long the end of a match waits for them to go.
const (
	frameBacklog = 512
	frameDrain   = 2 * time.Second
)

// waitGroupWithin waits for wg, for at most d; false if it timed out.
func waitGroupWithin(wg *sync.WaitGroup, d time.Duration) bool {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
		return true
	case <-time.After(d):
		return false
	}
}

// sameObject reads an object back and checks it holds data, by digest.
func sameObject(ctx context.Context, obs jetstream.ObjectStore, name string, data []byte) error {
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
	if want := sha256.Sum256(data); n != int64(len(data)) || !bytes.Equal(h.Sum(nil), want[:]) {
		return errors.New("the replay read back differs")
	}
	return nil
}

// request rebuilds the orchestrator's request from a job.
func (w *Worker) request(j Job) (orchestrator.Request, error) {
	g, err := engine.Find(w.cfg.Games, j.Game)
	if err != nil {
		return orchestrator.Request{}, fmt.Errorf("game: %w", err)
	}
	m, err := g.Map(j.Map)
	if err != nil {
		return orchestrator.Request{}, fmt.Errorf("map: %w", err)
	}
	return orchestrator.Request{
		Game: g, Map: m, Seed: j.Seed, Images: j.Images, ImageIDs: j.ImageIDs, ImageDigests: j.ImageDigests, Settings: j.Settings, MatchID: j.Match,
		Limits: orchestrator.Limits{AnswerTimeout: j.AnswerTimeout, WarmUp: j.WarmUp, MaxMessageBytes: j.MaxMessageBytes},
	}, nil
}

// putReplay stores a replay in the object store and reads it back, trying
// again (under a new name) for a minute while the cluster elects a leader:
// a put cut by the loss of a node can leave an object whose chunks do not
// match its digest. It returns the name the replay is stored under.
func (w *Worker) putReplay(ctx context.Context, base string, data []byte) (string, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	for try := 1; ; try++ {
		name := fmt.Sprintf("%s.%d", base, try)
		err := func() error {
			tctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			obs, err := w.js.ObjectStore(tctx, bucketOf(w.cfg.Name))
			if err != nil {
				return err
			}
			if _, err := obs.PutBytes(tctx, name, data); err != nil {
				return err
			}
			// Read back as a digest: the replay is not held twice.
			if err := sameObject(tctx, obs, name, data); err != nil {
				_ = obs.Delete(tctx, name)
				return err
			}
			return nil
		}()
		if err == nil {
			return name, nil
		}
		w.log.Warn("put a replay in the object store, trying again", zap.String("object", name), zap.Error(err))
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("put the replay in the object store: %w", err)
		case <-time.After(500 * time.Millisecond):
		}
	}
}
