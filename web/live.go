package web

import (
	"sync"

	"arena/orchestrator"
)

// live holds the frames of the matches in progress, for viewers that
// join late: each gets every frame so far, then each new one.
type live struct {
	mu      sync.Mutex
	matches map[string]*liveMatch
}

type liveMatch struct {
	frames []orchestrator.Frame
	// changed is closed and replaced whenever something happens, so
	// waiting viewers wake up.
	changed chan struct{}
	over    bool
}

func newLive() *live { return &live{matches: map[string]*liveMatch{}} }

func (l *live) get(id string) *liveMatch {
	m := l.matches[id]
	if m == nil {
		m = &liveMatch{changed: make(chan struct{})}
		l.matches[id] = m
	}
	return m
}

// open starts tracking a match.
func (l *live) open(id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.get(id)
}

// frame records a new frame and wakes the viewers.
func (l *live) frame(id string, f orchestrator.Frame) {
	l.mu.Lock()
	defer l.mu.Unlock()
	m := l.get(id)
	m.frames = append(m.frames, f)
	close(m.changed)
	m.changed = make(chan struct{})
}

// touch wakes the viewers (a status change).
func (l *live) touch(id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if m := l.matches[id]; m != nil {
		close(m.changed)
		m.changed = make(chan struct{})
	}
}

// close ends a match: viewers are woken one last time and the frames are
// dropped (from now on they are read from the replay file).
func (l *live) close(id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if m := l.matches[id]; m != nil {
		m.over = true
		close(m.changed)
		delete(l.matches, id)
	}
}

// since returns the frames from index from on, a channel that is closed
// at the next change, and whether the match is still tracked.
func (l *live) since(id string, from int) ([]orchestrator.Frame, <-chan struct{}, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	m := l.matches[id]
	if m == nil {
		return nil, nil, false
	}
	var out []orchestrator.Frame
	if from < len(m.frames) {
		out = append(out, m.frames[from:]...)
	}
	return out, m.changed, true
}

// touchAll wakes every viewer (queue positions moved).
func (l *live) touchAll() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, m := range l.matches {
		close(m.changed)
		m.changed = make(chan struct{})
	}
}
