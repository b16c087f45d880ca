package dispatch

import (
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"go.uber.org/zap"

	"arena/dispatch/trust"
)

// slotsWatcher is a watcher of the workers' slots, with what it was
// last told.
type slotsWatcher struct {
	f    func(n int)
	last int
}

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

func (d *Dispatcher) standingLocked(worker string) *standing {
	s := d.workers[worker]
	if s == nil {
		s = &standing{}
		d.workers[worker] = s
	}
	return s
}
