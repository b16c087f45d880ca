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

// freezer freezes and thaws one bot.
type freezer struct {
	acct *accounting
	// armed: the bot was thawed to answer (it is answering); at its
	// answer it is frozen unless letRun.
	armed  atomic.Bool
	letRun atomic.Bool
	mu     sync.Mutex
	// gone: released for good (the bot is being stopped).
	gone bool
	// frozen: a freeze of this freezer's holds the bot.
	frozen bool
	// pending: a freeze is due and not made yet; a thaw cancels it.
	pending bool
	// at are the bot's figures as the freeze left it (when atOK): they
	// hold while it stays frozen (see FrozenFigures). thaws counts the
	// thaws, so that figures read across one are dropped.
	at     Sample
	atPeak int64
	atOK   bool
	thaws  int
}

// answered runs as a message of the bot arrives: the first after a thaw
// makes a freeze due, unless the bot is let run. It returns the freeze,
// to run once the answer is passed on (nil when none is due): the
// answer does not wait for the freezer's write, and the bot's next
// input, if it comes first, cancels the freeze.
func (f *freezer) answered() func() {
	if !f.armed.CompareAndSwap(true, false) || f.letRun.Load() {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.gone || f.acct == nil {
		return nil
	}
	f.pending = true
	return f.freezeDue
}

// freezeDue makes the freeze answered made due, unless a thaw or a
// release came first; then it reads the bot's figures, off the answer's
// path and without holding up a thaw: figures read across a thaw are
// dropped.
func (f *freezer) freezeDue() {
	f.mu.Lock()
	if !f.pending || f.gone {
		f.mu.Unlock()
		return
	}
	f.pending = false
	f.frozen = true // a freeze that failed halfway is undone too
	err := f.acct.freeze()
	thaws := f.thaws
	f.mu.Unlock()
	if err != nil {
		return
	}
	at, ok := f.acct.sample()
	var peak int64
	if ok {
		peak, ok = f.acct.memPeak()
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.frozen && f.thaws == thaws && !f.gone {
		f.at, f.atPeak, f.atOK = at, peak, ok
	}
}

// frozenFigures returns the figures the bot's freeze left it with, while
// that freeze holds.
func (f *freezer) frozenFigures() (Sample, int64, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.frozen || !f.atOK || f.gone {
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
	if ok, why := f.acct.canFreeze(); !ok {
		return errFreezer(why)
	}
	f.armed.Store(true)
	f.pending, f.atOK = false, false
	f.thaws++
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

// FrozenFigures returns what the bot had used when the freeze after its
// last answer stopped it: CPU time, wait and memory peak, read by that
// freeze, off the answer's path. They hold until it is thawed. False
// while that freeze is not made (or was not due), or its figures could
// not be read: then read them (Sample, MemPeak).
func (c *Container) FrozenFigures() (Sample, int64, bool) { return c.freezer.frozenFigures() }

// FrozenFigures returns the figures the last freeze left (see
// Container.FrozenFigures).
func (p *Process) FrozenFigures() (Sample, int64, bool) { return p.freezer.frozenFigures() }

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
	if stopped && f.armed.Load() {
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
