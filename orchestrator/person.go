package orchestrator

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"time"

	"arena/matches"
	"arena/sandbox"
)

// A person's seat (matches.Request.People) is served like a bot's: its
// messages delivered, its answer awaited and judged by the game, a fault
// recorded as a bot's would be. Only its time differs: the person's turn
// (matches.Person.Turn) of wall-clock time, from the moment the question
// is put, for every answer including the first. No CPU is counted and
// nothing is frozen: there is no container.

// personBot stands in a person's seat where a match needs a Bot: it
// keeps the input written since the person's last answer (what they are
// asked next), and its lifecycle ends when the match stops it.
type personBot struct {
	person  matches.Person
	started time.Time
	mu      sync.Mutex
	input   bytes.Buffer
	stopped chan struct{}
	once    sync.Once
}

func newPersonBot(p matches.Person, now time.Time) *personBot {
	return &personBot{person: p, started: now, stopped: make(chan struct{})}
}

// take returns the input written since the last question, emptied.
func (b *personBot) take() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	in := bytes.Clone(b.input.Bytes())
	b.input.Reset()
	return in
}

func (b *personBot) Send(p []byte, _ time.Time) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.input.Write(p)
	return nil
}

// Receive is never called for a person (servePerson asks them).
func (b *personBot) Receive(ctx context.Context, _ time.Time) ([]byte, error) {
	return nil, errors.New("a person's seat is asked, not read")
}

func (b *personBot) TakeStderr() sandbox.Stderr            { return sandbox.Stderr{} }
func (b *personBot) Thaw() error                           { return nil }
func (b *personBot) Sample() (sandbox.Sample, bool)        { return sandbox.Sample{}, false }
func (b *personBot) CPUTime() (time.Duration, bool)        { return 0, false }
func (b *personBot) Runnable() bool                        { return false }
func (b *personBot) Usage() sandbox.Usage                  { return sandbox.Usage{} }
func (b *personBot) Started() time.Time                    { return b.started }
func (b *personBot) Close(ctx context.Context) error       { b.end(); return nil }
func (b *personBot) Stop(ctx context.Context) sandbox.Exit { b.end(); return sandbox.Exit{} }
func (b *personBot) end()                                  { b.once.Do(func() { close(b.stopped) }) }

// Exit is the end of a person's seat: when the match stops it (a person
// neither crashes nor exits).
func (b *personBot) Exit(ctx context.Context) sandbox.Exit {
	select {
	case <-b.stopped:
		return sandbox.Exit{}
	case <-ctx.Done():
		return sandbox.Exit{Err: ctx.Err()}
	}
}

// servePerson serves a person's seat: a seat only written to keeps its
// input for the next question; an awaited one is asked, and has the
// person's turn to answer. A late answer is a timeout, as a bot's is.
func (r *run) servePerson(ctx context.Context, s *seat, p *personBot, msgs [][]byte, awaited bool, turn int) outcome {
	o := outcome{seat: s.n, asked: awaited}
	for _, m := range msgs {
		_ = p.Send(m, time.Time{})
	}
	wall := p.person.Turn()
	start := r.o.now()
	o.budget = budget{start: start, deadline: start.Add(wall), hard: start.Add(wall), wall: wall}
	if !awaited {
		return o
	}
	actx, cancel := context.WithDeadline(ctx, o.budget.deadline)
	defer cancel()
	data, err := p.person.Ask(actx, matches.Question{Turn: turn, Input: p.take(), Deadline: o.budget.deadline})
	o.took = r.o.now().Sub(start)
	switch {
	case err != nil && ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded):
		err = sandbox.ErrTimeout
	case err == nil && r.lim.MaxMessageBytes > 0 && len(data) > r.lim.MaxMessageBytes:
		err = sandbox.ErrOutputLimit
	}
	if err == nil {
		err = r.charge(s, data)
	}
	if err != nil {
		return r.failed(ctx, s, o, err, "reading its answer", turn)
	}
	s.asked = true
	s.times = append(s.times, o.took)
	o.answer = data
	return o
}
