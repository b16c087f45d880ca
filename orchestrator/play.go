package orchestrator

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"go.uber.org/zap"

	"arena/engine"
	"arena/framing"
	"arena/internal/errs"
	"arena/matches"
	"arena/sandbox"
)

// seat is one bot's standing during a match. Each field is written by one
// goroutine at a time: the seat's own during an exchange, the match's
// otherwise.
type seat struct {
	n     int
	id    string
	image sandbox.Image
	bot   Bot // nil if it never started
	// status is ok until the first fault, which turn and detail explain.
	status engine.Status
	turn   int
	detail string
	// times are the answer times of the answers given in time, cpus their
	// CPU times (when known).
	times []time.Duration
	cpus  []time.Duration
	// wait is the time spent waiting for a CPU while answering.
	wait      time.Duration
	waitKnown bool
	// lastCPU is its cgroup's CPU time when its last answer was read;
	// stoppedCPU the CPU it was charged for running while it should have
	// been stopped, stoppedExcess the part of it beyond the tolerance
	// (timing.go).
	lastCPU, stoppedCPU, stoppedExcess time.Duration
	// startCPU is what it used from its start to its first input.
	startCPU time.Duration
	// written is what its answers added up to.
	written int64
	// last is the sample read as its last answer was read (lastOK: one
	// was).
	last   sandbox.Sample
	lastOK bool
	// timing is "cpu" once an answer's CPU time was counted (timing.go);
	// frozen says why the bot could not be frozen between turns, if so;
	// frozenFrom is the turn from which it was, for running there (0:
	// let run).
	timing, frozen string
	frozenFrom     int
	asked          bool // answered at least once: the warm-up is over
	out            bool // the game is done with it
	stopped        bool // its bot is being or has been stopped
	final          sandbox.Usage
}

// fault records the seat's first fault; later ones change nothing.
func (s *seat) fault(st engine.Status, turn int, detail string) {
	if s.status != engine.StatusOK {
		return
	}
	s.status, s.turn, s.detail = st, turn, detail
}

// playing reports whether the seat's bot takes part in exchanges.
func (s *seat) playing() bool { return s.bot != nil && s.status == engine.StatusOK && !s.stopped }

// Play runs a match to its end and returns its replay (whose Result is the
// outcome). Every bot is removed before it returns, also when ctx is
// cancelled; then the error is ctx's.
func (o *Orchestrator) Play(ctx context.Context, req matches.Request) (*matches.Replay, error) {
	match, images, absent, err := o.prepare(ctx, req, true)
	if err != nil {
		return nil, err
	}
	proto := req.Game.Protocol()
	lim := req.Limits.Resolve(proto)
	matchID := req.MatchID
	if matchID == "" {
		matchID = matches.NewMatchID()
	}
	ids := matches.BotIDs(req.Images)
	seats := make([]*seat, len(ids))
	for i := range seats {
		seats[i] = &seat{n: i, id: ids[i], image: images[i], status: engine.StatusOK}
		if absent[i] != "" {
			seats[i].fault(engine.StatusStartFailed, 0, absent[i])
		}
	}
	var host Bot
	var logic *matches.LogicRecord
	hm, _ := match.(engine.HostedMatch)
	if hm != nil {
		host, logic, err = o.startHost(ctx, req, matchID, hm)
		if host != nil {
			defer o.closeHost(ctx, host)
		}
		if err != nil {
			return nil, err
		}
	}
	rep := newReplay(matchID, req, match, lim, seats)
	rep.Logic = logic
	r := &run{
		o: o, log: o.log.With(zap.String("match", matchID)), matchID: matchID, attempt: req.Attempt,
		match: match, host: host, hosted: hm, seats: seats, lim: lim, base: lim, share: o.budget / int64(len(seats)),
		rec: newRecorder(match, seats, rep, req.OnFrame), people: req.People,
	}
	defer r.closeAll(ctx)

	start := o.now()
	if err := r.startAll(ctx, proto.Framing); err != nil {
		return nil, err
	}
	rep.StdioPath = stdioPath(seats)
	r.rec.commit()
	if err := r.loop(ctx); err != nil {
		return nil, err
	}
	r.finish()
	r.rec.late()
	rep.Result = r.result(o.now().Sub(start))
	r.log.Info("match finished", zap.Int("turns", rep.Result.Turns), zap.Strings("winners", rep.Result.Winners))
	return rep, nil
}

// run is one match being played.
type run struct {
	o       *Orchestrator
	log     *zap.Logger
	matchID string
	attempt int
	match   engine.Match
	// host is the program of a hosted game's rules and hosted its match,
	// both nil for the other games.
	host   Bot
	hosted engine.HostedMatch
	seats  []*seat
	// lim are the limits of the exchange in progress: base, the match's,
	// with the step's own answer time where it sets one.
	lim, base matches.Limits
	// share is what each bot's answers may add up to: its share of the
	// replay budget.
	share int64
	rec   *recorder
	stops sync.WaitGroup
	// people are the seats people play.
	people map[int]matches.Person
}

// startAll starts every bot at once. A bot that cannot start is
// start_failed; the match goes on without it.
func (r *run) startAll(ctx context.Context, f framing.Framing) error {
	var wg sync.WaitGroup
	for _, s := range r.seats {
		if s.status != engine.StatusOK {
			continue // its image is not here (matches.Request.MissingOn)
		}
		name := fmt.Sprintf("arena-%s-%d", r.matchID, s.n)
		if r.attempt > 1 {
			name = fmt.Sprintf("arena-%s-%d-%d", r.matchID, r.attempt, s.n)
		}
		if p := r.people[s.n]; p != nil {
			s.bot = newPersonBot(p, r.o.now())
			continue
		}
		wg.Go(func() {
			bot, err := r.o.launcher.Launch(ctx, sandbox.Spec{
				Image:           s.image,
				Name:            name,
				MatchID:         r.matchID,
				BotID:           s.id,
				Framing:         f,
				MaxMessageBytes: r.lim.MaxMessageBytes,
				MemoryBytes:     r.lim.MemoryBytes,
			})
			if err != nil {
				s.fault(engine.StatusStartFailed, 0, err.Error())
				if ctx.Err() == nil { // a cancelled match's bots need not start
					r.log.Warn("bot did not start", zap.String("bot", s.id), zap.Error(err))
				}
				return
			}
			// Let run between its answers until it runs there (timing.go).
			if f, ok := bot.(freezeSwitch); ok {
				f.FreezeAtAnswers(false)
			}
			s.bot = bot
		})
	}
	wg.Wait()
	return ctx.Err()
}

// loop plays exchanges until the game is done: the game says what to
// deliver and whom to wait for, the exchange returns an outcome per seat,
// the game judges the answers, the recorder files it all, and the bots
// the game is done with are stopped.
func (r *run) loop(ctx context.Context) error {
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		st := r.match.Step()
		if st.Done {
			r.deliverFinal(st.Send)
			return nil
		}
		turn := r.match.Turn() + 1
		r.lim = r.base.ForStep(st)
		outs := r.exchange(ctx, st, turn)
		if err := ctx.Err(); err != nil {
			return err
		}
		r.rec.exchanged(outs)
		for _, rej := range r.match.Submit(replies(st.Await, outs)) {
			s := r.seats[rej.Seat]
			s.fault(engine.StatusBadOutput, turn, rej.Reason)
			r.rec.rejected(rej.Seat, rej.Reason)
			r.stop(s)
		}
		if r.hosted != nil && r.hosted.Err() != nil {
			if err := ctx.Err(); err != nil {
				return err
			}
			return errs.Mark(matches.ErrGameHost, errs.Mark(matches.ErrLogicFailed, fmt.Errorf("the game's logic failed: %w", hostError(r.host, r.hosted.Err()))))
		}
		r.rec.commit()
		for _, s := range r.seats {
			if !s.out && r.match.Out(s.n) {
				s.out = true
				r.stop(s)
			}
		}
	}
}

// deliverFinal sends the game's last messages, best effort: the match is
// over, so a bot that cannot take them is not at fault. The bots are
// thawed to read them, and are stopped only once they did (see
// awaitRead): written to a pipe is not yet read, and the seat written to
// last would otherwise often be stopped before it read its line.
func (r *run) deliverFinal(msgs []engine.Message) {
	deadline := r.o.now().Add(r.lim.AnswerTimeout)
	var sent []*seat
	for _, m := range msgs {
		if s := r.seats[m.Seat]; s.playing() {
			_ = s.bot.Thaw()
			if s.bot.Send(m.Data, deadline) == nil && !slices.Contains(sent, s) {
				sent = append(sent, s)
			}
		}
	}
	r.awaitRead(sent, min(r.lim.AnswerTimeout, finalReadWait))
}

// finalReadWait bounds the wait for the bots to read their last messages.
const finalReadWait = time.Second

// unreader is a bot that says how much of its input it has not read yet
// (sandbox.Container and sandbox.Process where stdin is a pipe).
type unreader interface{ Unread() (int, bool) }

// awaitRead waits until every seat has read its input, for at most wait.
// A bot whose unread input cannot be known gets a short settle instead.
func (r *run) awaitRead(seats []*seat, wait time.Duration) {
	if len(seats) == 0 {
		return
	}
	end := time.Now().Add(wait)
	settle := time.Now().Add(min(wait, unknownReadSettle))
	for {
		waiting := false
		for _, s := range seats {
			u, ok := s.bot.(unreader)
			n, known := 0, false
			if ok {
				n, known = u.Unread()
			}
			if (known && n > 0) || (!known && time.Now().Before(settle)) {
				waiting = true
			}
		}
		if !waiting || !time.Now().Before(end) {
			return
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// unknownReadSettle is how long a bot whose unread input cannot be known
// (the attach stdio path) is left to read its last messages.
const unknownReadSettle = 100 * time.Millisecond

// stop ends a bot in the background, once; its figures are taken first.
func (r *run) stop(s *seat) {
	if s.bot == nil || s.stopped {
		return
	}
	s.stopped = true
	r.stops.Go(func() {
		s.final = s.bot.Usage()
		ctx, cancel := context.WithTimeout(context.Background(), r.o.grace)
		defer cancel()
		s.bot.Stop(ctx)
	})
}

// finish stops every bot still running and waits for all stops.
func (r *run) finish() {
	for _, s := range r.seats {
		r.stop(s)
	}
	r.stops.Wait()
}

// closeAll removes every bot; it runs even when ctx was cancelled.
func (r *run) closeAll(ctx context.Context) {
	r.stops.Wait()
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	for _, s := range r.seats {
		if s.bot == nil {
			continue
		}
		wg.Go(func() {
			if err := s.bot.Close(cctx); err != nil {
				r.log.Error("bot not removed", zap.String("bot", s.id), zap.Error(err))
			}
		})
	}
	wg.Wait()
}
