package orchestrator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"
)

// State is where a queued match stands.
type State string

// The states of a match in a queue.
const (
	StateQueued    State = "queued"
	StateStarting  State = "starting" // containers being created
	StateRunning   State = "running"  // the first frame is recorded
	StateFinished  State = "finished"
	StateFailed    State = "failed"
	StateCancelled State = "cancelled"
)

// Final reports whether no further change can happen.
func (s State) Final() bool {
	return s == StateFinished || s == StateFailed || s == StateCancelled
}

// Update is one change of a job's state.
type Update struct {
	ID    string
	State State
	// At is when the change happened.
	At time.Time
	// Err is set for failed and cancelled jobs.
	Err error
	// Replay is set for finished jobs.
	Replay *Replay
}

// Queue plays matches with bounded concurrency: at most n at once, the
// others waiting in order. It keeps the live view of every match it holds
// (state, place in line, frames so far) in memory and wakes its followers
// once per change, however many they are.
type Queue struct {
	o        *Orchestrator
	player   Player
	slots    int
	max      int // waiting matches at most; 0: no limit
	onUpdate func(Update)

	mu      sync.Mutex
	waiting []*job
	jobs    map[string]*job
	running int
	closed  bool
	wg      sync.WaitGroup
}

type job struct {
	req     Request
	ctx     context.Context
	cancel  context.CancelCauseFunc
	state   State
	started time.Time
	// frames are the frames so far, encoded once for every follower.
	frames []json.RawMessage
	// changed is closed and replaced at every change, waking followers.
	changed chan struct{}
}

// touch wakes the job's followers; q.mu must be held.
func (j *job) touch() {
	close(j.changed)
	j.changed = make(chan struct{})
}

// NewQueue returns a queue running at most concurrency matches at once,
// with at most maxWaiting more waiting in line (0: no limit).
// onUpdate is called for every state change after a match is queued
// (starting, running, and the final one), in order for each match, never
// under the queue's lock; it must not block for long. A match is queued
// as Enqueue returns: the caller records that itself. The final update is
// delivered before the match leaves the queue, so whatever onUpdate
// records is in place when Follow stops following it.
func NewQueue(o *Orchestrator, concurrency, maxWaiting int, onUpdate func(Update)) *Queue {
	return NewQueueWith(o, o, concurrency, maxWaiting, onUpdate)
}

// Player plays one match to its end: the orchestrator itself, or a
// dispatcher that has it played on another host. Play reports frames
// through req.OnFrame and returns ctx's cause when ctx ends first.
type Player interface {
	Play(ctx context.Context, req Request) (*Replay, error)
}

// NewQueueWith is NewQueue with the matches played by p; o keeps the
// clock.
func NewQueueWith(o *Orchestrator, p Player, concurrency, maxWaiting int, onUpdate func(Update)) *Queue {
	if concurrency < 1 {
		concurrency = 1
	}
	return &Queue{o: o, player: p, slots: concurrency, max: max(0, maxWaiting), onUpdate: onUpdate, jobs: map[string]*job{}}
}

// Enqueue adds a match (req.MatchID must be set) and returns its place in
// the line (1 = next; 0 = started at once). It fails with ErrQueueFull
// when the line is at its limit, and ErrQueueClosed after Shutdown.
func (q *Queue) Enqueue(req Request) (int, error) {
	ctx, cancel := context.WithCancelCause(context.Background())
	j := &job{req: req, ctx: ctx, cancel: cancel, state: StateQueued, changed: make(chan struct{})}
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		cancel(ErrQueueClosed)
		return 0, ErrQueueClosed
	}
	if q.max > 0 && len(q.waiting) >= q.max && q.running >= q.slots {
		q.mu.Unlock()
		cancel(ErrQueueFull)
		return 0, fmt.Errorf("%w: %d matches are waiting", ErrQueueFull, len(q.waiting))
	}
	q.jobs[req.MatchID] = j
	// Background matches wait behind every other.
	at := len(q.waiting)
	if !req.Background {
		at = slices.IndexFunc(q.waiting, func(w *job) bool { return w.req.Background })
		if at < 0 {
			at = len(q.waiting)
		}
	}
	q.waiting = slices.Insert(q.waiting, at, j)
	for _, w := range q.waiting[at+1:] {
		w.touch() // moved down the line
	}
	q.wg.Add(1)
	pos := at + 1
	started := q.dispatchLocked()
	q.mu.Unlock()
	q.start(started)
	if slices.Contains(started, j) {
		return 0, nil
	}
	return pos - len(started), nil
}

// dispatchLocked takes waiting jobs off the line while slots are free.
// q.mu must be held; the caller starts them with start.
func (q *Queue) dispatchLocked() []*job {
	var started []*job
	for q.running < q.slots && len(q.waiting) > 0 {
		j := q.waiting[0]
		q.waiting = q.waiting[1:]
		j.state, j.started = StateStarting, q.o.now()
		q.running++
		started = append(started, j)
	}
	if len(started) > 0 {
		// Every waiting match moved up the line.
		for _, j := range started {
			j.touch()
		}
		for _, j := range q.waiting {
			j.touch()
		}
	}
	return started
}

// start announces and runs dispatched jobs; announcing first keeps each
// match's updates in order.
func (q *Queue) start(jobs []*job) {
	for _, j := range jobs {
		q.notify(Update{ID: j.req.MatchID, State: StateStarting, At: j.started})
		go q.play(j)
	}
}

func (q *Queue) play(j *job) {
	defer q.wg.Done()
	req := j.req
	user := req.OnFrame
	req.OnFrame = func(f Frame) {
		data, err := json.Marshal(f)
		if err != nil {
			data = []byte(`{"turn":` + strconv.Itoa(f.Turn) + `}`) // a frame is plain data: this does not happen
		}
		q.mu.Lock()
		first := len(j.frames) == 0
		if first {
			j.state = StateRunning
		}
		j.frames = append(j.frames, data)
		j.touch()
		q.mu.Unlock()
		if first {
			q.notify(Update{ID: req.MatchID, State: StateRunning, At: q.o.now()})
		}
		if user != nil {
			user(f)
		}
	}
	rep, err := q.player.Play(j.ctx, req)
	u := Update{ID: req.MatchID, State: StateFinished, Replay: rep}
	if err != nil {
		u = Update{ID: req.MatchID, State: StateFailed, Err: err}
		if cause := context.Cause(j.ctx); cause != nil {
			u.Err = cause
			if errors.Is(cause, ErrCancelled) {
				u.State = StateCancelled
			}
		}
	}
	u.At = q.o.now()
	q.mu.Lock()
	q.running--
	started := q.dispatchLocked()
	q.mu.Unlock()
	q.start(started)
	q.notify(u)
	q.mu.Lock()
	j.state = u.State
	delete(q.jobs, req.MatchID)
	j.touch()
	q.mu.Unlock()
}

func (q *Queue) notify(u Update) {
	if q.onUpdate != nil {
		q.onUpdate(u)
	}
}

// Backlog counts the matches waiting to start: foreground and
// background ones.
func (q *Queue) Backlog() (foreground, background int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, j := range q.waiting {
		if j.req.Background {
			background++
		} else {
			foreground++
		}
	}
	return foreground, background
}

// Status returns a match's state and, while it waits, its place in the
// line (1 = next). ok is false for a match the queue does not hold (never
// queued, or already over).
func (q *Queue) Status(id string) (s State, position int, ok bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	j, ok := q.jobs[id]
	if !ok {
		return "", 0, false
	}
	return j.state, q.positionLocked(j), true
}

func (q *Queue) positionLocked(j *job) int {
	return slices.Index(q.waiting, j) + 1
}

// Live is a match's live view.
type Live struct {
	State State
	// Position is the place in the line while the match waits (1 = next),
	// else 0.
	Position int
	// Started is when the match left the line (zero while it waits).
	Started time.Time
	// Frames are the frames from the index asked for on, each as JSON.
	Frames []json.RawMessage
	// Changed is closed at the next change of the view.
	Changed <-chan struct{}
}

// Follow returns the live view of a match the queue holds, with its frames
// from index from on. ok is false when the queue does not hold the match:
// it was never queued here, or it is over (and its final update has been
// delivered).
func (q *Queue) Follow(id string, from int) (Live, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	j, ok := q.jobs[id]
	if !ok {
		return Live{}, false
	}
	l := Live{State: j.state, Position: q.positionLocked(j), Started: j.started, Changed: j.changed}
	if from < len(j.frames) {
		l.Frames = slices.Clone(j.frames[from:])
	}
	return l, true
}

// Cancel stops a match: a waiting one leaves the line, a running one is
// interrupted and its containers removed. It reports whether the queue
// held the match.
func (q *Queue) Cancel(id string) bool {
	return q.stop(id, ErrCancelled)
}

func (q *Queue) stop(id string, cause error) bool {
	q.mu.Lock()
	j, ok := q.jobs[id]
	if !ok {
		q.mu.Unlock()
		return false
	}
	i := slices.Index(q.waiting, j)
	if i < 0 {
		q.mu.Unlock()
		j.cancel(cause) // running: Play ends and play reports it
		return true
	}
	q.waiting = slices.Delete(q.waiting, i, i+1)
	for _, w := range q.waiting[i:] {
		w.touch() // moved up the line
	}
	q.mu.Unlock()
	j.cancel(cause)
	state := StateCancelled
	if !errors.Is(cause, ErrCancelled) {
		state = StateFailed
	}
	q.notify(Update{ID: id, State: state, Err: cause, At: q.o.now()})
	q.mu.Lock()
	j.state = state
	delete(q.jobs, id)
	j.touch()
	q.mu.Unlock()
	q.wg.Done()
	return true
}

// Shutdown stops taking matches and ends the queue: waiting matches fail
// with ErrQueueClosed; running ones are interrupted unless finish is set,
// in which case they may finish until ctx is done. It returns when every
// match has ended and its containers are gone.
func (q *Queue) Shutdown(ctx context.Context, finish bool) {
	q.mu.Lock()
	q.closed = true
	var ids []string
	for id := range q.jobs {
		ids = append(ids, id)
	}
	q.mu.Unlock()
	for _, id := range ids {
		if st, _, ok := q.Status(id); ok && (st == StateQueued || !finish) {
			q.stop(id, ErrQueueClosed)
		}
	}
	done := make(chan struct{})
	go func() {
		q.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return
	case <-ctx.Done():
	}
	for _, id := range ids {
		q.stop(id, ErrQueueClosed)
	}
	<-done
}
