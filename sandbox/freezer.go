package sandbox

import (
	"sync"
	"sync/atomic"
)

// The freezer: between its answer and its next input a bot can be
// stopped (its cgroup frozen, see accounting.freeze), so that it does not
// think on the other bots' time, and the CPU time it is charged for a
// turn is what it used to answer. The runner freezes a bot once its
// answer is passed on, off the answer's path; the orchestrator thaws it
// when it asks again, and a freeze not made yet by then is not made. The orchestrator
// may instead let a bot run between its answers (FreezeAtAnswers(false)),
// charging what it uses then to its next answer: a freeze and a thaw wake
// every thread of the bot twice a turn, which costs more than the round
// trip of the answer itself.
//
// The freeze also reads the bot's figures (its wait and memory peak), off
// the answer's path. So does the runner of a bot not frozen whose wait is
// read thread by thread (a gVisor sandbox's some 50 threads; cgroup v1
// without the unified hierarchy's pressure files): see
// Container.FiguresAfterAnswers.

// freezer freezes and thaws one bot, and reads its figures after its
// answers.
type freezer struct {
	acct *accounting
	// armed: the bot was thawed to answer (it is answering); at its
	// answer it is frozen unless letRun or it cannot be, and its figures
	// are read where afterAnswers says so.
	armed  atomic.Bool
	letRun atomic.Bool
	mu     sync.Mutex
	// gone: released for good (the bot is being stopped).
	gone bool
	// frozen: a freeze of this freezer's holds the bot.
	frozen bool
	// pending: a freeze (or a read of the figures) is due and not made
	// yet; a thaw cancels it.
	pending bool
	// at are the bot's figures as read after its answer (when atOK): they
	// hold until it is thawed again (see answerFigures). thaws counts the
	// thaws, so that figures read across one are dropped.
	at     Sample
	atPeak int64
	atOK   bool
	thaws  int
}

// freezes says whether the bot is frozen at its answers.
func (f *freezer) freezes() bool {
	ok, _ := f.acct.canFreeze()
	return ok && !f.letRun.Load()
}

// afterAnswers says whether the bot's figures are read after each
// answer, off its path: by its freeze, or, where its wait is read thread
// by thread, with no freeze.
func (f *freezer) afterAnswers() bool {
	return f.acct != nil && (f.freezes() || f.acct.waitPerThread())
}

// answered runs as a message of the bot arrives: the first after a thaw
// makes a freeze due (and the read of the figures that follows it), or
// that read alone (see afterAnswers). It returns what is due, to run once
// the answer is passed on (nil when nothing is): the answer does not wait
// for the freezer's write or the reads, and the bot's next input, if it
// comes first, cancels them.
func (f *freezer) answered() func() {
	if !f.armed.CompareAndSwap(true, false) || !f.afterAnswers() {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.gone {
		return nil
	}
	f.pending = true
	return f.freezeDue
}

// freezeDue makes the freeze answered made due, unless a thaw or a
// release came first; then it reads the bot's figures, off the answer's
// path and without holding up a thaw: figures read across a thaw are
// dropped. A bot let run, or that cannot be frozen, just has its figures
// read.
func (f *freezer) freezeDue() {
	f.mu.Lock()
	if !f.pending || f.gone {
		f.mu.Unlock()
		return
	}
	f.pending = false
	if f.freezes() {
		f.frozen = true // a freeze that failed halfway is undone too
		if err := f.acct.freeze(); err != nil {
			f.mu.Unlock()
			return
		}
	}
	thaws := f.thaws
	f.mu.Unlock()
	at, ok := f.acct.sample()
	var peak int64
	if ok {
		peak, ok = f.acct.memPeak()
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.thaws == thaws && !f.gone {
		f.at, f.atPeak, f.atOK = at, peak, ok
	}
}

// answerFigures returns the figures read after the bot's last answer,
// until it is thawed again.
func (f *freezer) answerFigures() (Sample, int64, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.atOK || f.gone {
		return Sample{}, 0, false
	}
	return f.at, f.atPeak, true
}

// isFrozen reports whether a freeze of this freezer's holds the bot.
func (f *freezer) isFrozen() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.frozen
}

// thaw lets the bot run until its next answer. It fails when the bot
// cannot be frozen (then it is never frozen, and just runs).
func (f *freezer) thaw() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.gone || f.acct == nil {
		return nil
	}
	f.armed.Store(true)
	if f.pending {
		// The read after its last answer was not made: the forks the
		// pids limit refused then are read at least, before its next
		// input (which may end it, and its cgroup's counters with it).
		f.acct.readPids()
	}
	f.pending, f.atOK = false, false
	f.thaws++
	if ok, why := f.acct.canFreeze(); !ok {
		return errFreezer(why)
	}
	if !f.frozen {
		return nil
	}
	f.frozen = false
	return f.acct.thaw()
}

// release thaws the bot for good: a frozen bot cannot be killed.
func (f *freezer) release() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.gone && f.acct != nil {
		f.acct.thaw()
	}
	f.gone, f.pending, f.atOK = true, false, false
}

// FreezeAtAnswers says whether the bot is frozen at each answer (the
// default), or let run between its answers (off).
func (c *Container) FreezeAtAnswers(on bool) { c.freezer.letRun.Store(!on) }

// FreezeAtAnswers says whether the bot is frozen at each answer (see
// Container.FreezeAtAnswers).
func (p *Process) FreezeAtAnswers(on bool) { p.freezer.letRun.Store(!on) }

type errFreezer string

func (e errFreezer) Error() string { return string(e) }

// Thaw lets the bot run until its next answer, at which it is frozen
// again. It fails, saying why, where the bot cannot be frozen; the bot
// then just runs.
func (c *Container) Thaw() error { return c.freezer.thaw() }

// Frozen reports whether the bot is frozen now: it answered, was frozen
// since, and was not thawed again.
func (c *Container) Frozen() bool { return c.freezer.isFrozen() }

// AnswerFigures returns what the bot had used shortly after its last
// answer — CPU time, wait and memory peak —, read off the answer's path
// where FiguresAfterAnswers says so: by the freeze that stopped it (the
// figures it keeps while frozen), or with no freeze. They hold until it is
// thawed. False while that read is not made, or its figures could not be
// read: then read them (Sample, MemPeak).
func (c *Container) AnswerFigures() (Sample, int64, bool) { return c.freezer.answerFigures() }

// AnswerFigures returns the figures read after the last answer (see
// Container.AnswerFigures).
func (p *Process) AnswerFigures() (Sample, int64, bool) { return p.freezer.answerFigures() }

// FiguresAfterAnswers says whether the bot's wait and memory peak are read
// after each answer, off its path (AnswerFigures), so that its answers need
// only their CPU time read: a bot frozen at its answers (its freeze reads
// them), or one whose wait is read thread by thread (gVisor's; cgroup v1
// without the unified hierarchy's pressure files).
func (c *Container) FiguresAfterAnswers() bool { return c.freezer.afterAnswers() }

// FiguresAfterAnswers says whether the figures are read after each answer
// (see Container.FiguresAfterAnswers).
func (p *Process) FiguresAfterAnswers() bool { return p.freezer.afterAnswers() }

// Freezing says how the bot is stopped between answers: "the cgroup
// freezer", or signals and why; empty where it is not stopped.
func (c *Container) Freezing() string { return c.acct.freezing() }

// Freezing says how the bot is stopped (see Container.Freezing).
func (p *Process) Freezing() string { return p.acct.freezing() }

// freezing says how the cgroup is frozen (see Container.Freezing).
func (a *accounting) freezing() string {
	switch {
	case a == nil || a.procsPath == "":
		return ""
	case a.freezeMethod == "":
		return "signals"
	}
	return a.freezeMethod
}

// Sample reads the CPU time the bot used so far and the time it waited
// for a CPU; false when its cgroup cannot be read.
func (c *Container) Sample() (Sample, bool) { return c.acct.sample() }

// Thaw lets the bot run until its next answer (see Container.Thaw).
func (p *Process) Thaw() error { return p.freezer.thaw() }

// MemPeak reads the bot's memory peak so far (and the forks refused so
// far, for Usage): cheaper than Usage, for every turn; false when its
// cgroup cannot be read.
func (c *Container) MemPeak() (int64, bool) { return c.acct.memPeak() }

// MemPeak reads the memory peak so far (see Container.MemPeak).
func (p *Process) MemPeak() (int64, bool) { return p.acct.memPeak() }

// Sample reads the CPU and waiting times (see Container.Sample).
func (p *Process) Sample() (Sample, bool) { return p.acct.sample() }

// runnable reports whether the bot is kept at work by the host right now
// (see accounting.threads). A bot stopped while it is thawed to answer was
// stopped by no freeze of this runner's: it is continued, and counts as
// kept from its work.
func (f *freezer) runnable() bool {
	if f.acct == nil {
		return false
	}
	if ok, _ := f.acct.canFreeze(); ok && !f.armed.Load() {
		// Frozen (the kernel's freezer shows its tasks in the disk's
		// wait, D): not kept from its work.
		return false
	}
	busy, stopped := f.acct.threads()
	if ok, _ := f.acct.canFreeze(); ok && stopped && f.armed.Load() {
		f.mu.Lock()
		defer f.mu.Unlock()
		if f.armed.Load() && !f.gone {
			f.acct.cont()
			return true
		}
	}
	return busy
}

// Runnable reports whether the bot is runnable right now: computing, kept
// from a CPU (a wait the kernel has not counted yet) or from its disk.
func (c *Container) Runnable() bool { return c.freezer.runnable() }

// Runnable reports whether the bot is runnable right now (see
// Container.Runnable).
func (p *Process) Runnable() bool { return p.freezer.runnable() }
