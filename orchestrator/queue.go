package orchestrator

import (
	"context"
	"errors"
	"slices"
	"sync"
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
	// Err is set for failed and cancelled jobs.
	Err error
	// Replay is set for finished jobs.
	Replay *Replay
}

// Queue plays matches with bounded concurrency: at most n at once, the
// others waiting in order.
type Queue struct {
	o        *Orchestrator
	slots    int
	onUpdate func(Update)

	mu      sync.Mutex
	waiting []*job
	jobs    map[string]*job
	running int
	closed  bool
	wg      sync.WaitGroup
}

type job struct {
	req    Request
	ctx    context.Context
	cancel context.CancelCauseFunc
	state  State
}

// ErrQueueClosed is returned by Enqueue once the queue shuts down.
var ErrQueueClosed = errors.New("the server is shutting down")

// ErrCancelled is the cause of a match cancelled on request.
var ErrCancelled = errors.New("cancelled on request")

// NewQueue returns a queue running at most concurrency matches at once.
// onUpdate is called for every state change after a match is queued
// (starting, running, and the final one), in order for each match, never
// under the queue's lock; it must not block for long. A match is queued
// as Enqueue returns: the caller records that itself.
func NewQueue(o *Orchestrator, concurrency int, onUpdate func(Update)) *Queue {
	if concurrency < 1 {
		concurrency = 1
	}
	return &Queue{o: o, slots: concurrency, onUpdate: onUpdate, jobs: map[string]*job{}}
}

// Enqueue adds a match (req.MatchID must be set) and returns its place in
// the line (1 = next; 0 = started at once).
func (q *Queue) Enqueue(req Request) (int, error) {
	ctx, cancel := context.WithCancelCause(context.Background())
	j := &job{req: req, ctx: ctx, cancel: cancel, state: StateQueued}
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		cancel(ErrQueueClosed)
		return 0, ErrQueueClosed
	}
	q.jobs[req.MatchID] = j
	q.waiting = append(q.waiting, j)
	q.wg.Add(1)
	pos := len(q.waiting)
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
		j.state = StateStarting
		q.running++
		started = append(started, j)
	}
	return started
}

// start announces and runs dispatched jobs; announcing first keeps each
// match's updates in order.
func (q *Queue) start(jobs []*job) {
	for _, j := range jobs {
		q.notify(Update{ID: j.req.MatchID, State: StateStarting})
		go q.play(j)
	}
}

func (q *Queue) play(j *job) {
	defer q.wg.Done()
	req := j.req
	user := req.OnFrame
	first := true
	req.OnFrame = func(f Frame) {
		if first {
			first = false
			q.setState(j, StateRunning)
			q.notify(Update{ID: req.MatchID, State: StateRunning})
		}
		if user != nil {
			user(f)
		}
	}
	rep, err := q.o.Play(j.ctx, req)
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
	q.mu.Lock()
	j.state = u.State
	q.running--
	delete(q.jobs, req.MatchID)
	started := q.dispatchLocked()
	q.mu.Unlock()
	q.notify(u)
	q.start(started)
}

func (q *Queue) setState(j *job, s State) {
	q.mu.Lock()
	j.state = s
	q.mu.Unlock()
}

func (q *Queue) notify(u Update) {
	if q.onUpdate != nil {
		q.onUpdate(u)
	}
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
	for i, w := range q.waiting {
		if w == j {
			return j.state, i + 1, true
		}
	}
	return j.state, 0, true
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
	for i, w := range q.waiting {
		if w == j {
			q.waiting = append(q.waiting[:i], q.waiting[i+1:]...)
			delete(q.jobs, id)
			j.state = StateCancelled
			if !errors.Is(cause, ErrCancelled) {
				j.state = StateFailed
			}
			q.mu.Unlock()
			j.cancel(cause)
			q.wg.Done()
			q.notify(Update{ID: id, State: j.state, Err: cause})
			return true
		}
	}
	q.mu.Unlock()
	j.cancel(cause)
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
