package matches

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"sync"
	"time"

	"arena/internal/errs"
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

// Queue plays matches with bounded concurrency: at most n at once (see
// SetSlots), the others waiting. It keeps the live view of every match it holds (state,
// place in line, frames so far) in memory and wakes its followers once
// per change, however many they are.
//
// Waiting matches stand in one line per owner (Request.Owner), and a
// free slot goes to the owner served least recently (an owner with
// nothing waiting before counts as never served), each owner's matches in
// the order they came: round-robin, so one owner's flood of matches
// delays only their own, and a newcomer's match is the next to start.
// Matches start by priority (Request.Priority): those started by hand,
// then challenges, then background matches (a ladder's), each priority
// only when no match of a more urgent one waits.
//
// A match with people (Request.People) takes no slot: it starts at once
// beside them, played by the player WithPeople names, at most as many at
// once as it says.
type Queue struct {
	now      func() time.Time
	player   Player
	slots    int
	max      int // waiting matches at most; 0: no limit
	lineMax  int // waiting matches of one owner at most; 0: no limit
	frameDir string
	onFrame  func(req *Request, f Frame)
	onUpdate func(Update)
	// people plays the matches with people, at most peopleMax at once
	// (nil: none is taken).
	people    Player
	peopleMax int

	mu sync.Mutex
	// waiting holds the waiting matches in the order they came.
	waiting []*job
	// served numbers the owners with matches waiting by when one of
	// theirs last started (0: not since their line was last empty).
	served  map[string]uint64
	turn    uint64
	jobs    map[string]*job
	running int
	// withPeople counts the matches with people playing.
	withPeople int
	closed     bool
	wg         sync.WaitGroup
}

type job struct {
	req Request
	// aside is a match with people, played beside the slots.
	aside   bool
	ctx     context.Context
	cancel  context.CancelCauseFunc
	state   State
	started time.Time
	// frames are the frames so far, encoded once for every follower.
	frames frameLog
	// changed is closed and replaced at every change, waking followers.
	changed chan struct{}
}

// touch wakes the job's followers; q.mu must be held.
func (j *job) touch() {
	close(j.changed)
	j.changed = make(chan struct{})
}

// NewQueue returns a queue running at most concurrency matches at once,
// played by p, with at most maxWaiting more waiting in line (0: no
// limit). onUpdate is called for every state change after a match is
// queued (starting, running, and the final one), in order for each
// match, never under the queue's lock; it must not block for long. A
// match is queued as Enqueue returns: the caller records that itself.
// The final update is delivered before the match leaves the queue, so
// whatever onUpdate records is in place when Follow stops following it.
func NewQueue(p Player, concurrency, maxWaiting int, onUpdate func(Update), opts ...QueueOption) *Queue {
	if concurrency < 1 {
		concurrency = 1
	}
	q := &Queue{now: time.Now, player: p, slots: concurrency, max: max(0, maxWaiting), onUpdate: onUpdate, jobs: map[string]*job{}, served: map[string]uint64{}}
	for _, opt := range opts {
		opt(q)
	}
	return q
}

// Player plays one match to its end: the orchestrator itself, or a
// dispatcher that has it played on another host. Play reports frames
// through req.OnFrame and returns ctx's cause when ctx ends first.
type Player interface {
	Play(ctx context.Context, req Request) (*Replay, error)
}

// SetSlots changes how many matches the queue plays at once (0: none
// starts; every match waits in its owner's line). Waiting matches start
// at once in the slots added; fewer slots stop no match that plays, but
// none starts until fewer than n play. A queue whose matches play on
// other hosts takes as many slots as those hosts have, so that what
// waits, waits in its lines, served in turn.
func (q *Queue) SetSlots(n int) {
	q.mu.Lock()
	q.slots = max(0, n)
	var started []*job
	if !q.closed {
		started = q.dispatchLocked()
	}
	q.mu.Unlock()
	q.start(started)
}

// Slots returns how many matches the queue plays at once, and how many
// play now (more than slots right after SetSlots took some away).
func (q *Queue) Slots() (slots, playing int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.slots, q.running
}

// QueueOption configures a Queue.
type QueueOption func(*Queue)

// WithFrameFiles keeps the frames of each playing match for its
// followers in a file of its own in dir (removed when the match ends),
// with only their places in memory: a long match's frames cost a server
// no memory, however many follow it.
func WithFrameFiles(dir string) QueueOption { return func(q *Queue) { q.frameDir = dir } }

// WithFrameHook has f see every frame of every match as it is recorded
// (with the match's request), on the match's goroutine: it must not
// block.
func WithFrameHook(f func(req *Request, fr Frame)) QueueOption {
	return func(q *Queue) { q.onFrame = f }
}

// WithLineMax bounds the matches one owner may have waiting (0: no
// bound); past it, Enqueue fails with ErrQueueFull naming the owner.
// Background matches are not bounded by it.
func WithLineMax(n int) QueueOption { return func(q *Queue) { q.lineMax = max(0, n) } }

// WithPeople has p play the matches with people (Request.People), at
// most n at once, beside the queue's slots: a person's slow turns never
// hold a slot. Without it, a match with people is refused.
func WithPeople(p Player, n int) QueueOption {
	return func(q *Queue) { q.people, q.peopleMax = p, max(0, n) }
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
	if len(req.People) > 0 {
		return 0, q.startAsideLocked(j)
	}
	// Full: the line at its limit, and no slot free (with no slots at
	// all, never one).
	if q.max > 0 && len(q.waiting) >= q.max && q.running >= q.slots {
		q.mu.Unlock()
		cancel(ErrQueueFull)
		return 0, fmt.Errorf("%w: %d matches are waiting", ErrQueueFull, len(q.waiting))
	}
	if q.lineMax > 0 && req.Priority != Background {
		n := 0
		for _, w := range q.waiting {
			if w.req.Owner == req.Owner && w.req.Priority != Background {
				n++
			}
		}
		if n >= q.lineMax {
			q.mu.Unlock()
			cancel(ErrQueueFull)
			return 0, fmt.Errorf("%w: %s has %d matches waiting, the most one may (ARENA_USER_QUEUE_MAX)", ErrQueueFull, ownerName(req.Owner), n)
		}
	}
	q.jobs[req.MatchID] = j
	q.waiting = append(q.waiting, j)
	q.wg.Add(1)
	started := q.dispatchLocked()
	pos := 0
	if !slices.Contains(started, j) {
		pos = q.positionLocked(j)
	}
	// Every waiting match may have moved: a newcomer's goes ahead of
	// other owners' lines.
	for _, w := range q.waiting {
		w.touch()
	}
	q.mu.Unlock()
	q.start(started)
	return pos, nil
}

// startAsideLocked starts a match with people at once, beside the
// slots; q.mu is held, and released.
func (q *Queue) startAsideLocked(j *job) error {
	switch {
	case q.people == nil || q.peopleMax == 0:
		q.mu.Unlock()
		j.cancel(ErrQueueFull)
		return errs.New(errs.ErrInvalid, "this server plays no matches with people (ARENA_HUMAN_MATCHES is 0)")
	case q.withPeople >= q.peopleMax:
		n := q.withPeople
		q.mu.Unlock()
		j.cancel(ErrQueueFull)
		return fmt.Errorf("%w: %d matches with people are playing, the most at once (ARENA_HUMAN_MATCHES)", ErrQueueFull, n)
	}
	j.aside = true
	q.jobs[j.req.MatchID] = j
	q.wg.Add(1)
	q.withPeople++
	j.state, j.started = StateStarting, q.now()
	j.touch()
	q.mu.Unlock()
	q.start([]*job{j})
	return nil
}

func ownerName(owner string) string {
	if owner == "" {
		return "the platform"
	}
	return owner
}

// orderLocked is the order the waiting matches will start in if no
// other comes: by priority, and within each the
// owners' lines in turn, starting with the owner served least recently
// (on a tie, the one whose oldest match came first). After its turn an
// owner's line goes last, so past the first round this is a plain
// rotation. q.mu must be held.
func (q *Queue) orderLocked() []*job {
	out := make([]*job, 0, len(q.waiting))
	for _, prio := range []Priority{ByHand, Challenge, Background} {
		var owners []string
		lines := map[string][]*job{}
		for _, j := range q.waiting {
			if j.req.Priority != prio {
				continue
			}
			if _, ok := lines[j.req.Owner]; !ok {
				owners = append(owners, j.req.Owner)
			}
			lines[j.req.Owner] = append(lines[j.req.Owner], j)
		}
		// Stable: owners served alike keep the order of their oldest match.
		slices.SortStableFunc(owners, func(a, b string) int { return cmp.Compare(q.served[a], q.served[b]) })
		for round := 0; len(owners) > 0; round++ {
			left := owners[:0]
			for _, o := range owners {
				out = append(out, lines[o][round])
				if round+1 < len(lines[o]) {
					left = append(left, o)
				}
			}
			owners = left
		}
	}
	return out
}

// nextLocked is the waiting match to start next (see orderLocked).
func (q *Queue) nextLocked() *job {
	var best *job
	for _, j := range q.waiting {
		if best == nil || j.req.Priority < best.req.Priority ||
			j.req.Priority == best.req.Priority && q.served[j.req.Owner] < q.served[best.req.Owner] {
			best = j
		}
	}
	return best
}

// dispatchLocked takes waiting jobs off the line while slots are free,
// in the queue's order. q.mu must be held; the caller starts them with
// start.
func (q *Queue) dispatchLocked() []*job {
	var started []*job
	for q.running < q.slots && len(q.waiting) > 0 {
		j := q.nextLocked()
		q.removeWaitingLocked(j)
		q.turn++
		q.served[j.req.Owner] = q.turn
		j.state, j.started = StateStarting, q.now()
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

// removeWaitingLocked takes a job out of the line.
func (q *Queue) removeWaitingLocked(j *job) {
	q.waiting = slices.DeleteFunc(q.waiting, func(w *job) bool { return w == j })
}

// leaveLocked forgets a job that is over (or left the line): an owner
// with nothing left waiting or playing is forgotten, and counts as never
// served when they come back. (An owner who keeps one match waiting
// while others play stays in the rotation: they cannot jump it.)
func (q *Queue) leaveLocked(j *job) {
	delete(q.jobs, j.req.MatchID)
	j.frames.close()
	for _, o := range q.jobs {
		if o.req.Owner == j.req.Owner {
			return
		}
	}
	delete(q.served, j.req.Owner)
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
		first := j.frames.len() == 0
		if first {
			j.state = StateRunning
			j.frames = newFrameLog(q.frameDir, req.MatchID)
		}
		j.frames.add(data)
		j.touch()
		q.mu.Unlock()
		if first {
			q.notify(Update{ID: req.MatchID, State: StateRunning, At: q.now()})
		}
		if q.onFrame != nil {
			q.onFrame(&req, f)
		}
		if user != nil {
			user(f)
		}
	}
	player := q.player
	if j.aside {
		player = q.people
	}
	rep, err := player.Play(j.ctx, req)
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
	u.At = q.now()
	q.mu.Lock()
	var started []*job
	if j.aside {
		q.withPeople--
	} else {
		q.running--
		started = q.dispatchLocked()
	}
	q.mu.Unlock()
	q.start(started)
	q.notify(u)
	q.mu.Lock()
	j.state = u.State
	q.leaveLocked(j)
	j.touch()
	q.mu.Unlock()
}

func (q *Queue) notify(u Update) {
	if q.onUpdate != nil {
		q.onUpdate(u)
	}
}

// Backlog counts the matches waiting to start: foreground (by hand and
// challenges) and background ones.
func (q *Queue) Backlog() (foreground, background int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, j := range q.waiting {
		if j.req.Priority == Background {
			background++
		} else {
			foreground++
		}
	}
	return foreground, background
}

// WaitingByKind counts the matches waiting to start by their kind.
func (q *Queue) WaitingByKind() map[Kind]int {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := map[Kind]int{}
	for _, j := range q.waiting {
		out[j.req.Kind.OrHand()]++
	}
	return out
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
	if j.state != StateQueued {
		return 0
	}
	return slices.Index(q.orderLocked(), j) + 1
}

// Live is a match's live view.
type Live struct {
	State State
	// Position is the place in the line while the match waits (1 = next),
	// else 0.
	Position int
	// Started is when the match left the line (zero while it waits).
	Started time.Time
	// Frames are the frames from the index asked for on, each as JSON
	// (at most about followBytes of them: More says there are others).
	Frames []json.RawMessage
	More   bool
	// Changed is closed at the next change of the view.
	Changed <-chan struct{}
}

// Follow returns the live view of a match the queue holds, with its frames
// from index from on (as many as about followBytes hold; Live.More says
// there are others to ask for). ok is false when the queue does not hold
// the match: it was never queued here, or it is over (and its final
// update has been delivered).
func (q *Queue) Follow(id string, from int) (Live, bool) {
	q.mu.Lock()
	j, ok := q.jobs[id]
	if !ok {
		q.mu.Unlock()
		return Live{}, false
	}
	l := Live{State: j.state, Position: q.positionLocked(j), Started: j.started, Changed: j.changed}
	read := j.frames.slice(from)
	q.mu.Unlock()
	var err error
	// Read outside the lock: a file of frames only grows while followed.
	if l.Frames, l.More, err = read(); err != nil {
		// The match ended meanwhile and its file went: it is over here.
		return Live{}, false
	}
	return l, true
}

// followBytes is about the most frame data one Follow returns (a
// variable for the tests).
var followBytes int64 = 1 << 20

// frameLog is a playing match's frames, in memory or in a file of its own
// with their ends in memory.
type frameLog struct {
	mem  []json.RawMessage
	file *os.File
	ends []int64
}

// newFrameLog keeps a match's frames in a file in dir; in memory when
// dir is empty or the file cannot be made.
func newFrameLog(dir, id string) frameLog {
	if dir == "" {
		return frameLog{}
	}
	f, err := os.CreateTemp(dir, ".frames-"+id+"-*")
	if err != nil {
		return frameLog{}
	}
	return frameLog{file: f}
}

func (l *frameLog) len() int { return len(l.mem) + len(l.ends) }

// add appends a frame; a file that fails to take it gives way to memory.
func (l *frameLog) add(data []byte) {
	if l.file != nil {
		if _, err := l.file.Write(data); err == nil {
			l.ends = append(l.ends, l.end()+int64(len(data)))
			return
		}
		var all []json.RawMessage
		for more := true; more; {
			var batch []json.RawMessage
			var err error
			if batch, more, err = l.slice(len(all))(); err != nil {
				break
			}
			all = append(all, batch...)
		}
		l.close()
		l.ends, l.mem = nil, all
	}
	l.mem = append(l.mem, data)
}

func (l *frameLog) end() int64 {
	if len(l.ends) == 0 {
		return 0
	}
	return l.ends[len(l.ends)-1]
}

// slice returns what reads the frames from index from on, up to about
// followBytes of them; it is called under the queue's lock and what it
// returns without it.
func (l *frameLog) slice(from int) func() ([]json.RawMessage, bool, error) {
	if l.file == nil {
		if from >= len(l.mem) {
			return func() ([]json.RawMessage, bool, error) { return nil, false, nil }
		}
		frames := slices.Clone(l.mem[from:])
		return func() ([]json.RawMessage, bool, error) { return frames, false, nil }
	}
	if from >= len(l.ends) {
		return func() ([]json.RawMessage, bool, error) { return nil, false, nil }
	}
	f, start := l.file, int64(0)
	if from > 0 {
		start = l.ends[from-1]
	}
	to := from + 1
	for to < len(l.ends) && l.ends[to]-start <= followBytes {
		to++
	}
	ends, more := slices.Clone(l.ends[from:to]), to < len(l.ends)
	return func() ([]json.RawMessage, bool, error) {
		buf := make([]byte, ends[len(ends)-1]-start)
		if _, err := f.ReadAt(buf, start); err != nil {
			return nil, false, err
		}
		out := make([]json.RawMessage, len(ends))
		at := start
		for i, e := range ends {
			out[i] = buf[at-start : e-start : e-start]
			at = e
		}
		return out, more, nil
	}
}

// close removes the file of frames, if any.
func (l *frameLog) close() {
	if l.file != nil {
		l.file.Close()
		os.Remove(l.file.Name())
		l.file = nil
	}
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
	if !slices.Contains(q.waiting, j) {
		q.mu.Unlock()
		j.cancel(cause) // running: Play ends and play reports it
		return true
	}
	q.removeWaitingLocked(j)
	for _, w := range q.waiting {
		w.touch() // moved up the line
	}
	q.mu.Unlock()
	j.cancel(cause)
	state := StateCancelled
	if !errors.Is(cause, ErrCancelled) {
		state = StateFailed
	}
	q.notify(Update{ID: id, State: state, Err: cause, At: q.now()})
	q.mu.Lock()
	j.state = state
	q.leaveLocked(j)
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

// Waiting counts an owner's matches waiting in their line (background
// ones aside), and the most one may have waiting (0: no bound).
func (q *Queue) Waiting(owner string) (n, most int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, j := range q.waiting {
		if j.req.Owner == owner && j.req.Priority != Background {
			n++
		}
	}
	return n, q.lineMax
}
