// Package fake provides scripted bots and a launcher that starts them,
// so tests can play whole matches — every fault path included — without
// Docker. A script says, for each of a bot's answers (counted from 1),
// what it answers, what it writes to stderr, and what goes wrong.
//
// Faults happen at once rather than at a deadline: a bot scripted to time
// out reports the timeout as soon as it is asked, and a bot that did not
// end reports so without waiting. Tests stay fast and deterministic.
package fake

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"arena/imageref"
	"arena/matches"
	"arena/orchestrator"
	"arena/sandbox"
)

// Fault is what goes wrong at one of a bot's answers.
type Fault int

// The faults a script can play.
const (
	// None: it answers.
	None Fault = iota
	// Timeout: it sleeps from then on, using no CPU: no answer by the
	// deadline; the bot lives on.
	Timeout
	// Crash: it exits with code 3.
	Crash
	// OOM: the kernel kills it for memory.
	OOM
	// CloseOutput: it closes stdout and lives on.
	CloseOutput
	// OutputLimit: its answer is longer than the limit.
	OutputLimit
	// NoRead: it does not read its input (a write times out).
	NoRead
	// DieWhileSilent: it times out and, just before the deadline, exits
	// with code 2 (a crash seen right after a deadline).
	DieWhileSilent
	// Think: it computes without answering; its CPU time runs past any
	// budget (the CPU watch must cut it short).
	Think
	// ThinkTooLong: it answers, after using 150 ms of CPU time.
	ThinkTooLong
	// Starved: it answers past the wall-clock cap, having waited 2 s for
	// a CPU meanwhile (a busy host, not a slow bot).
	Starved
	// StarvedNow: at the wall-clock cap it is still waiting for a CPU, a
	// wait not in its figures yet; it answers soon after.
	StarvedNow
	// Crawling: at the wall-clock cap it is still at work (its CPU time
	// grew, within its budget) but not kept from a CPU, as a bot that
	// drips its output; it would answer soon after.
	Crawling
)

// Script is a bot's behaviour.
type Script struct {
	// Answer gives the answer to request n (from 1), given what the bot
	// was sent since its last answer. Nil answers "[]".
	Answer func(n int, input [][]byte) []byte
	// Faults says what goes wrong at which answer.
	Faults map[int]Fault
	// Stderr gives what the bot writes to stderr while answering request
	// n; nil writes nothing.
	Stderr func(n int) string
	// LastWords are written to stderr as the bot is stopped.
	LastWords string
	// Delay is waited (for real) before every answer.
	Delay time.Duration
	// Hold, when set, makes every answer wait until it is closed (or the
	// match is cancelled): a test controls when a match goes on.
	Hold <-chan struct{}
	// StartErr makes the bot fail to start.
	StartErr error
	// NoAccounting makes its CPU and memory figures unavailable.
	NoAccounting bool
	// ReadDelay, when set, is how long a message sent to the bot waits in
	// its input before the bot reads it (Unread counts it meanwhile); a
	// bot stopped first never reads it. Read lists what it read.
	ReadDelay time.Duration
	// Game is the image's game label (sandbox.GameLabel), as Images
	// lists it.
	Game string
	// StoppedCPU is CPU time the bot uses after each answer, while it
	// should be stopped (a process its freeze missed): it shows in the
	// first reading of its CPU after its answer's own sample.
	StoppedCPU time.Duration
	// Digest is the image's registry digest (REPO@sha256:…), if any.
	Digest string
	// ID is the image's id, as an engine gives a pulled image its
	// config's digest; empty: ImageID of its reference.
	ID string
	// Labels are the image's labels, as Image gives them.
	Labels map[string]string
	// Switch makes the bot one the orchestrator can let run between its
	// answers (FreezeAtAnswers), as a container: it then runs its
	// StoppedCPU only while it is let run.
	Switch bool
}

// Launcher starts scripted bots for the images it knows.
type Launcher struct {
	mu      sync.Mutex
	scripts map[string]Script
	tags    map[string]string // reference → the reference of the image it names now (Tag)
	bots    []*Bot
}

// NewLauncher returns a launcher that knows the given images.
func NewLauncher(images map[string]Script) *Launcher {
	return &Launcher{scripts: images}
}

var _ orchestrator.Launcher = (*Launcher)(nil)

// Check accepts well-formed image references and refuses local bots.
func (l *Launcher) Check(ref string) error {
	if sandbox.IsLocalRef(ref) {
		return fmt.Errorf("%w: local bots (%s) are not enabled here", sandbox.ErrBadReference, ref)
	}
	return imageref.Check(ref)
}

// Image finds a known image, by its reference or by its id (ImageID);
// others are not found.
func (l *Launcher) Image(_ context.Context, ref string) (sandbox.Image, error) {
	if err := l.Check(ref); err != nil {
		return sandbox.Image{}, err
	}
	l.mu.Lock()
	target := ref
	if to, ok := l.tags[ref]; ok {
		target = to
	}
	l.mu.Unlock()
	s, ok := l.script(target)
	if !ok {
		return sandbox.Image{}, fmt.Errorf("%w: image %s is not known to the fake launcher", matches.ErrImageNotFound, ref)
	}
	img := sandbox.Image{Ref: ref, ID: cmp.Or(s.ID, ImageID(target)), Game: s.Game, Labels: s.Labels}
	if s.Digest != "" {
		img.Digests = []string{s.Digest}
	}
	return img, nil
}

// Tag makes ref name the image known as image from now on, as docker tag
// does (a rebuild under the same name): the image ref named until now is
// still found by its id.
func (l *Launcher) Tag(image, ref string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.tags == nil {
		l.tags = map[string]string{}
	}
	l.tags[ref] = image
}

// Add makes an image known under ref, with its script, as a build does.
func (l *Launcher) Add(ref string, s Script) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.scripts[ref] = s
}

// Images lists the known images as the engine would: one per reference,
// all created at the Unix epoch, in the order of their references.
func (l *Launcher) Images(context.Context) ([]sandbox.LocalImage, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]sandbox.LocalImage, 0, len(l.scripts))
	for ref, s := range l.scripts {
		out = append(out, sandbox.LocalImage{Ref: ref, ID: ImageID(ref), Created: time.Unix(0, 0).UTC(), Game: s.Game})
	}
	slices.SortFunc(out, func(a, b sandbox.LocalImage) int { return strings.Compare(a.Ref, b.Ref) })
	return out, nil
}

// ImageID is the id the launcher gives a known image: sha256: and the
// hex SHA-256 of its reference. An id is its own image's id.
func ImageID(ref string) string {
	if strings.HasPrefix(ref, "sha256:") {
		return ref
	}
	sum := sha256.Sum256([]byte(ref))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// script finds the script of an image named by reference or id.
func (l *Launcher) script(ref string) (Script, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if s, ok := l.scripts[ref]; ok {
		return s, true
	}
	for r, s := range l.scripts {
		if ImageID(r) == ref || s.ID == ref {
			return s, true
		}
	}
	return Script{}, false
}

// Remove forgets an image: it is not found from then on.
func (l *Launcher) Remove(ref string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.scripts, ref)
}

// Launch starts a scripted bot.
func (l *Launcher) Launch(_ context.Context, s sandbox.Spec) (orchestrator.Bot, error) {
	look := s.Image.ID // the image resolved, as the engine runs it
	if look == "" {
		look = s.Image.Ref
	}
	script, _ := l.script(look)
	l.mu.Lock()
	defer l.mu.Unlock()
	if script.StartErr != nil {
		return nil, script.StartErr
	}
	b := &Bot{script: script, spec: s, started: time.Now(), exited: make(chan struct{}), freezes: true}
	l.bots = append(l.bots, b)
	if script.Switch {
		return switching{b}, nil
	}
	return b, nil
}

// switching is a bot of Script.Switch.
type switching struct{ *Bot }

// FreezeAtAnswers says whether the bot is frozen at its answers (and so
// runs none of its StoppedCPU).
func (s switching) FreezeAtAnswers(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.freezes = on
}

// FiguresAfterAnswers says whether its figures are read after its
// answers: while it is frozen at them.
func (s switching) FiguresAfterAnswers() bool { return s.FrozenAtAnswers() }

// AnswerFigures are the figures a freeze after its answer would have
// read, while the bot is frozen at its answers: those of Sample, and a
// memory peak of 2 MiB (Usage says 1 MiB, so a record tells which it
// was given).
func (s switching) AnswerFigures() (sandbox.Sample, int64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.freezes || s.answers == 0 {
		return sandbox.Sample{}, 0, false
	}
	return sandbox.Sample{CPU: s.cpuLocked(), Wait: s.wait, WaitKnown: true}, 2 << 20, true
}

// FrozenAtAnswers says whether the bot is frozen at its answers now.
func (b *Bot) FrozenAtAnswers() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.freezes
}

// Bots are the bots started so far, in start order.
func (l *Launcher) Bots() []*Bot {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]*Bot(nil), l.bots...)
}

// Running counts the bots started and not yet closed.
func (l *Launcher) Running() int {
	n := 0
	for _, b := range l.Bots() {
		if !b.Closed() {
			n++
		}
	}
	return n
}

// Bot is a scripted bot.
type Bot struct {
	script  Script
	spec    sandbox.Spec
	started time.Time

	mu      sync.Mutex
	input   [][]byte
	answers int
	// extra CPU time the script burns (Think, ThinkTooLong), and the time
	// it waited for a CPU (Starved).
	extra   time.Duration
	wait    time.Duration
	starved bool // the starved answer's deadline has passed once
	// stopping is where a pending StoppedCPU is: 1 after an answer, 2
	// once the answer's own sample was read; the next reading sees it.
	stopping int
	runnable bool // kept from a CPU right now (StarvedNow)
	// freezes: frozen at its answers (a Switch bot may be let run).
	freezes bool
	hung    bool // sleeps for good (Timeout): no answer, no CPU
	stderr  strings.Builder
	exit    *sandbox.Exit // set once it ended
	exited  chan struct{}
	closed  bool
	stops   int
	// read is every message the bot read, in order; pending those sent
	// but not read yet (ReadDelay), sent the count of messages sent.
	read    [][]byte
	pending [][]byte
	sent    int
}

var _ orchestrator.Bot = (*Bot)(nil)

// Spec is what the bot was started with.
func (b *Bot) Spec() sandbox.Spec { return b.spec }

// Closed reports whether the bot was closed (its container removed).
func (b *Bot) Closed() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.closed
}

// end records how the bot ended; b.mu must be held.
func (b *Bot) end(e sandbox.Exit) {
	if b.exit == nil {
		b.exit = &e
		close(b.exited)
	}
}

// Send takes a message, unless the bot ended or does not read.
func (b *Bot) Send(p []byte, _ time.Time) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.exit != nil || b.closed {
		return fmt.Errorf("%w: stdin: broken pipe", sandbox.ErrClosed)
	}
	if b.script.Faults[b.answers+1] == NoRead {
		return sandbox.ErrTimeout
	}
	msg := append([]byte(nil), p...)
	b.input = append(b.input, msg)
	b.pending = append(b.pending, msg)
	b.sent++
	if b.script.ReadDelay <= 0 {
		b.readUpTo(b.sent)
		return nil
	}
	seq := b.sent
	time.AfterFunc(b.script.ReadDelay, func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		b.readUpTo(seq)
	})
	return nil
}

// readUpTo has the bot read its input up to the seq-th message sent,
// unless it ended; b.mu must be held.
func (b *Bot) readUpTo(seq int) {
	for b.exit == nil && !b.closed && b.sent-len(b.pending) < seq {
		b.read = append(b.read, b.pending[0])
		b.pending = b.pending[1:]
	}
}

// Unread is how many bytes sent to the bot it has not read yet.
func (b *Bot) Unread() (int, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for _, m := range b.pending {
		n += len(m)
	}
	return n, true
}

// Read is every message the bot read, in order.
func (b *Bot) Read() [][]byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([][]byte(nil), b.read...)
}

// Receive plays the script's next answer.
func (b *Bot) Receive(ctx context.Context, _ time.Time) ([]byte, error) {
	if err := b.hold(ctx); err != nil {
		return nil, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if b.exit != nil || b.closed {
		return nil, sandbox.ErrClosed
	}
	if b.hung || b.starve() {
		return nil, sandbox.ErrTimeout
	}
	b.runnable = false
	b.readUpTo(b.sent) // it reads its input to answer it
	b.answers++
	if b.script.StoppedCPU > 0 && (!b.script.Switch || !b.freezes) {
		b.stopping = 1
	}
	n := b.answers
	switch b.script.Faults[n] {
	case Think:
		b.extra += time.Hour
		b.mu.Unlock()
		<-ctx.Done()
		b.mu.Lock()
		return nil, ctx.Err()
	case ThinkTooLong:
		b.extra += 149 * time.Millisecond // with its millisecond per answer, 150 ms
	}
	if b.script.Stderr != nil {
		b.stderr.WriteString(b.script.Stderr(n))
	}
	input := b.input
	b.input = nil
	if err := b.answerFault(n); err != nil {
		return nil, err
	}
	if b.script.Answer == nil {
		return []byte("[]"), nil
	}
	return b.script.Answer(n, input), nil
}

// hold waits before an answer as the script says: its Delay, then until
// its Hold is closed.
func (b *Bot) hold(ctx context.Context) error {
	if d := b.script.Delay; d > 0 {
		select {
		case <-time.After(d):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if b.script.Hold != nil {
		select {
		case <-b.script.Hold:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// starve plays, once, the starving fault the script gives the next answer:
// the answer times out, the bot having waited for a CPU, been runnable or
// crawled. b.mu must be held.
func (b *Bot) starve() bool {
	f := b.script.Faults[b.answers+1]
	if !(f == Starved || f == StarvedNow || f == Crawling) || b.starved {
		return false
	}
	b.starved = true
	switch f {
	case Starved:
		b.wait += 2 * time.Second
	case StarvedNow:
		b.runnable = true
	case Crawling:
		b.extra += 5 * time.Millisecond
	}
	return true
}

// answerFault plays the fault the script gives answer n instead of the
// answer, if any. b.mu must be held.
func (b *Bot) answerFault(n int) error {
	switch b.script.Faults[n] {
	case Timeout:
		b.hung = true
		return sandbox.ErrTimeout
	case NoRead:
		return sandbox.ErrTimeout
	case Crash:
		b.end(sandbox.Exit{Code: 3})
		return sandbox.ErrClosed
	case OOM:
		b.end(sandbox.Exit{Code: 137, OOMKilled: true})
		return sandbox.ErrClosed
	case CloseOutput:
		return sandbox.ErrClosed
	case OutputLimit:
		return fmt.Errorf("%w: a line longer than %d bytes", sandbox.ErrOutputLimit, b.spec.MaxMessageBytes)
	case DieWhileSilent:
		b.end(sandbox.Exit{Code: 2})
		return sandbox.ErrTimeout
	}
	return nil
}

// TakeStderr returns what the bot wrote to stderr since the last call.
func (b *Bot) TakeStderr() sandbox.Stderr {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := sandbox.Stderr{Text: []byte(b.stderr.String())}
	b.stderr.Reset()
	if len(s.Text) == 0 {
		s.Text = nil
	}
	return s
}

// CPUTime is a millisecond per answer given.
func (b *Bot) CPUTime() (time.Duration, bool) {
	if b.script.NoAccounting {
		return 0, false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.stopping == 2 {
		b.extra += b.script.StoppedCPU
		b.stopping = 0
	}
	return b.cpuLocked(), true
}

// cpuLocked is the CPU time used so far; b.mu must be held.
func (b *Bot) cpuLocked() time.Duration {
	return time.Duration(b.answers)*time.Millisecond + b.extra
}

// Thaw does nothing: a fake bot is never frozen.
func (b *Bot) Thaw() error { return nil }

// Sample reports a millisecond of CPU per answer and the waiting
// scripted.
func (b *Bot) Sample() (sandbox.Sample, bool) {
	if b.script.NoAccounting {
		return sandbox.Sample{}, false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.stopping == 1 {
		b.stopping = 2
	}
	return sandbox.Sample{CPU: b.cpuLocked(), Wait: b.wait, WaitKnown: true}, true
}

// Runnable says whether the bot is kept from a CPU right now (StarvedNow).
func (b *Bot) Runnable() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.runnable
}

// Usage reports a millisecond of CPU per answer and a MiB of memory.
func (b *Bot) Usage() sandbox.Usage {
	if b.script.NoAccounting {
		return sandbox.Usage{Unavailable: "the fake bot has no cgroup"}
	}
	cpu, _ := b.CPUTime()
	return sandbox.Usage{Source: "fake", CPU: cpu, MemPeakBytes: 1 << 20}
}

// StdioPath says the fake bot's stdio is no real path.
func (b *Bot) StdioPath() string { return "fake" }

// Started is when the bot was launched.
func (b *Bot) Started() time.Time { return b.started }

// Exit says how the bot ended, at once: a bot still running reports an
// error as if ctx ran out.
func (b *Bot) Exit(context.Context) sandbox.Exit {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.exit == nil {
		return sandbox.Exit{Code: -1, Err: errors.New("still running")}
	}
	return *b.exit
}

// Stop ends the bot (killed, code 137, unless it ended already) and
// writes its last words.
func (b *Bot) Stop(ctx context.Context) sandbox.Exit {
	b.mu.Lock()
	b.stops++
	if b.exit == nil {
		b.stderr.WriteString(b.script.LastWords)
	}
	b.end(sandbox.Exit{Code: 137})
	b.mu.Unlock()
	return b.Exit(ctx)
}

// Stops counts the calls to Stop.
func (b *Bot) Stops() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.stops
}

// Close removes the bot.
func (b *Bot) Close(context.Context) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.end(sandbox.Exit{Code: 137})
	b.closed = true
	return nil
}
