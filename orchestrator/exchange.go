package orchestrator

import (
	"context"
	"slices"
	"sync"
	"time"

	"arena/engine"
	"arena/sandbox"
)

// outcome is one seat's part in one exchange, as a plain value: what the
// game is told (its answer or its fault) and what the replay records.
type outcome struct {
	seat  int
	asked bool // its answer was awaited
	// answer is the message it gave in time.
	answer []byte
	// fault is set when it gave no usable answer: fresh when the fault
	// happened in this exchange (detail explains it), else the seat's
	// earlier status.
	fault  engine.Status
	fresh  bool
	detail string
	// took is the time from the moment it may run (it is thawed, its
	// input written) to its answer read (or its fault); cpu the CPU time
	// it used meanwhile (when cpuOK), stopped the CPU charged to it for
	// running while it should have been stopped, before; memPeak its
	// memory peak so far (0: unknown); wait the time it was runnable but
	// waited for a CPU or was throttled (when waitOK), at most took.
	took    time.Duration
	cpu     time.Duration
	cpuOK   bool
	stopped time.Duration
	// budget is what the answer was allowed: the fault judge names it.
	budget  budget
	wait    time.Duration // runnable but waiting for a CPU, or throttled
	waitOK  bool
	memPeak int64
	// before is what the bot had used as it was asked; late says that its
	// wait and memory peak are read once every answer is in (settle).
	before sandbox.Sample
	late   bool
}

// replies are the game's replies, one per awaited seat in await order.
func replies(await []int, outs []outcome) []engine.Reply {
	rs := make([]engine.Reply, 0, len(await))
	for _, n := range await {
		i := slices.IndexFunc(outs, func(o outcome) bool { return o.seat == n })
		o := outs[i]
		t := o.took
		if o.cpuOK {
			t = o.cpu
		}
		rs = append(rs, engine.Reply{Seat: n, Data: o.answer, Fault: o.fault, Time: t})
	}
	return rs
}

// exchange delivers one step's messages and collects the awaited answers,
// one outcome per involved seat, in seat order. Each seat is served on its
// own goroutine, so a slow or stuck bot never delays another's messages or
// eats into its time. A seat that faulted is stopped at once.
func (r *run) exchange(ctx context.Context, st engine.Step, turn int) []outcome {
	msgs := map[int][][]byte{}
	for _, m := range st.Send {
		msgs[m.Seat] = append(msgs[m.Seat], m.Data)
	}
	var involved []int
	for n := range msgs {
		involved = append(involved, n)
	}
	involved = append(involved, st.Await...)
	slices.Sort(involved)
	involved = slices.Compact(involved)

	outs := make([]outcome, 0, len(involved))
	served := make([]outcome, len(involved))
	var wg sync.WaitGroup
	for i, n := range involved {
		s := r.seats[n]
		awaited := slices.Contains(st.Await, n)
		if s.bot == nil || s.status != engine.StatusOK {
			if awaited {
				served[i] = outcome{seat: n, asked: true, fault: s.status}
			} else {
				served[i].seat = -1 // nothing to tell or record
			}
			continue
		}
		wg.Go(func() { served[i] = r.serve(ctx, s, msgs[n], awaited, turn) })
	}
	wg.Wait()
	for _, o := range served {
		if o.seat >= 0 {
			if o.late {
				r.settle(r.seats[o.seat], &o)
			}
			outs = append(outs, o)
		}
	}
	return outs
}

// settle completes the figures of an answer of a bot whose figures are
// read after its answers (a bot frozen at them, or whose wait is slow to
// read): its wait and memory peak as read off the answer's path, or read
// now where that read is not made yet.
func (r *run) settle(s *seat, o *outcome) {
	after, peak, ok := sandbox.Sample{}, int64(0), false
	if f, is := s.bot.(answerFigurer); is {
		after, peak, ok = f.AnswerFigures()
	}
	if !ok {
		if after, ok = s.bot.Sample(); !ok {
			s.lastOK = false // read it afresh when asked again
			return
		}
		peak = memPeakOf(s.bot)
	}
	s.last = after
	o.memPeak = peak
	if o.wait, o.waitOK = waited(o.before, after, o.took); o.waitOK {
		s.wait += o.wait
		s.waitKnown = true
	}
}

// waited is the wait of an answer between two samples, at most took.
func waited(before, after sandbox.Sample, took time.Duration) (time.Duration, bool) {
	if !after.WaitKnown || !before.WaitKnown {
		return 0, false
	}
	return min(max(0, after.Wait-before.Wait), took), true
}

// memPeakOf reads the bot's memory peak so far (0: unknown).
func memPeakOf(bot Bot) int64 {
	if m, ok := bot.(memPeaker); ok {
		peak, _ := m.MemPeak()
		return peak
	}
	return bot.Usage().MemPeakBytes
}

// serve sends a seat its messages and, when awaited, thaws it and reads
// its answer within its budget (timing.go). A seat only written to is not
// thawed: frozen, its input waits in its pipe; let run, whatever it does
// with it is charged to its next answer.
func (r *run) serve(ctx context.Context, s *seat, msgs [][]byte, awaited bool, turn int) outcome {
	if p, ok := s.bot.(*personBot); ok {
		return r.servePerson(ctx, s, p, msgs, awaited, turn)
	}
	o := outcome{seat: s.n, asked: awaited}
	if !awaited {
		return r.write(ctx, s, o, msgs, turn)
	}
	before, cpuKnown := r.sampleBefore(s)
	charged := chargedSince(s, before, cpuKnown)
	start := r.o.now()
	if err := s.bot.Thaw(); err != nil && s.frozen == "" {
		s.frozen = err.Error()
	}
	b := budgetFor(r.lim, !s.asked, start, s.bot.Started(), cpuKnown, charged)
	if cpuKnown && s.timing == "" {
		s.timing = "cpu"
	}
	o.budget = b
	if s.asked && cpuKnown {
		if err := r.checkStopped(s, charged, turn); err != nil {
			o.stopped = charged
			return r.failed(ctx, s, o, err, "waiting for its input", turn)
		}
	}
	for _, m := range msgs {
		if err := s.bot.Send(m, b.deadline); err != nil {
			return r.failed(ctx, s, o, err, "writing its input", turn)
		}
	}
	data, err := r.await(ctx, s, b, before)
	// One window for every figure: from start to the answer read, CPU and
	// waiting sampled at its two ends.
	o.took = r.o.now().Sub(start)
	measure(s, &o, before, charged, cpuKnown, err == nil)
	if err == nil && b.cpu > 0 && o.cpuOK && o.cpu+charged > b.cpu {
		err = &overCPU{used: o.cpu + charged, stopped: charged, limit: b.cpu, answered: true}
	}
	if err == nil {
		err = r.charge(s, data)
	}
	if err != nil {
		return r.failed(ctx, s, o, err, "reading its answer", turn)
	}
	s.answered(o)
	o.answer = data
	return o
}

// write sends a seat that is not awaited its messages, within the wall
// cap, without thawing it.
func (r *run) write(ctx context.Context, s *seat, o outcome, msgs [][]byte, turn int) outcome {
	deadline := r.o.now().Add(WallCap(r.lim))
	o.budget = budget{deadline: deadline, hard: deadline, wall: WallCap(r.lim)}
	for _, m := range msgs {
		if err := s.bot.Send(m, deadline); err != nil {
			return r.failed(ctx, s, o, err, "writing its input", turn)
		}
	}
	return o
}

// chargedSince is the CPU time the seat's cgroup used since its last answer
// was read, while it should have been stopped, which is charged to this
// answer. (Before the warm-up it was starting, not stopped: that is its
// start's CPU, which it notes.)
func chargedSince(s *seat, before sandbox.Sample, cpuKnown bool) time.Duration {
	switch {
	case !cpuKnown:
	case !s.asked:
		s.startCPU = before.CPU
	default:
		return max(0, before.CPU-s.lastCPU)
	}
	return 0
}

// checkStopped counts what the seat ran while it should have been stopped
// beyond the tolerance, freezing it at its answers from the first time, and
// fails it once that is more than an answer's time.
func (r *run) checkStopped(s *seat, charged time.Duration, turn int) error {
	tolerance := stopTolerance(r.lim, s.frozen == "")
	if charged > tolerance && s.frozenFrom == 0 && s.frozen == "" {
		// It ran while it should have been stopped: frozen at its
		// answers from now on.
		if f, ok := s.bot.(freezeSwitch); ok {
			f.FreezeAtAnswers(true)
			s.frozenFrom = turn
		}
	}
	s.stoppedExcess += max(0, charged-tolerance)
	if s.stoppedExcess > r.lim.AnswerTimeout {
		return &ranWhileStopped{used: s.stoppedExcess, tolerance: tolerance, limit: r.lim.AnswerTimeout}
	}
	return nil
}

// measure reads an answer's figures at the end of its window into o. A bot
// whose figures are read after its answers (frozen at them, or whose wait is
// slow to read) has only its CPU time read here (it decides whether the
// answer stands): the rest is read off the answer's path (settle).
func measure(s *seat, o *outcome, before sandbox.Sample, charged time.Duration, cpuKnown, answered bool) {
	f, late := s.bot.(answerFigurer)
	o.late = late && answered && cpuKnown && f.FiguresAfterAnswers()
	if o.late {
		if cpu, ok := s.bot.CPUTime(); ok {
			o.cpu, o.cpuOK, o.stopped, o.before = max(0, cpu-before.CPU), true, charged, before
			s.lastCPU, s.lastOK = cpu, true
		} else {
			o.late = false
		}
	} else if after, ok := s.bot.Sample(); ok && cpuKnown {
		o.cpu, o.cpuOK = max(0, after.CPU-before.CPU), true
		o.stopped = charged
		s.lastCPU, s.last, s.lastOK = after.CPU, after, true
		o.wait, o.waitOK = waited(before, after, o.took)
	}
	if !o.late {
		o.memPeak = memPeakOf(s.bot)
	}
}

// answered adds an answer that stands to the seat's figures.
func (s *seat) answered(o outcome) {
	s.asked = true
	s.times = append(s.times, o.took)
	if o.cpuOK {
		s.cpus = append(s.cpus, o.cpu+o.stopped)
		s.stoppedCPU += o.stopped
	}
	if o.waitOK {
		s.wait += o.wait
		s.waitKnown = true
	}
}

// charge counts an answer against the seat's share of the replay budget.
func (r *run) charge(s *seat, data []byte) error {
	s.written += int64(len(data))
	if s.written > r.share {
		return &overBudget{share: r.share, budget: r.o.budget}
	}
	return nil
}

// sampleBefore reads the figures an answer's window starts from: its CPU
// time afresh, and the waiting time read at its last answer. A bot the
// cgroup freezer held since cannot have waited for a CPU meanwhile (a
// frozen thread is not runnable); one not frozen (let run, or under
// gVisor) has its waits between answers counted to the next, never
// beyond its time. Reading the waiting time means reading every thread's
// run delay: once a turn, not twice.
func (r *run) sampleBefore(s *seat) (sandbox.Sample, bool) {
	if !s.lastOK {
		return s.bot.Sample()
	}
	if f, ok := s.bot.(answerFigurer); ok && s.frozenFrom > 0 {
		// Frozen since its freeze read its figures: they are its figures now.
		if b, _, ok := f.AnswerFigures(); ok {
			return b, true
		}
	}
	cpu, ok := s.bot.CPUTime()
	if !ok {
		return sandbox.Sample{}, false
	}
	b := s.last
	b.CPU = cpu
	return b, true
}

// memPeaker is a bot whose memory peak alone can be read, cheaply
// (sandbox.Container, sandbox.Process).
type memPeaker interface{ MemPeak() (int64, bool) }

// failed turns a failed Send or Receive into the seat's fault, and stops
// its bot.
func (r *run) failed(ctx context.Context, s *seat, o outcome, err error, doing string, turn int) outcome {
	st, detail := r.classify(ctx, s, o.budget, err, doing)
	if st == engine.StatusStartFailed {
		turn = 0 // it never ran
	}
	s.fault(st, turn, detail)
	r.stop(s)
	o.fault, o.fresh, o.detail = st, true, detail
	return o
}
