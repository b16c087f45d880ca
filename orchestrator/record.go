package orchestrator

import (
	"fmt"
	"slices"
	"strings"

	"arena/engine"
	"arena/matches"
)

// recorder is the one owner of the replay's frames. It files each
// exchange's outcomes and the game's rejections as the turn's per-bot
// records, adds what each bot wrote to stderr, and appends the frame once
// the game completes the turn (several exchanges may make one turn, as in
// Pac-Man's sequential protocol).
type recorder struct {
	match   engine.Match
	seats   []*seat
	rep     *matches.Replay
	onFrame func(matches.Frame)

	pending map[int]*matches.FrameBot // this turn's records, by seat
	last    int                       // the turn of the last frame; -1 before frame 0
	// Per seat: stderr bytes over the caps, and the last line it wrote
	// (to explain a crash in the result); partial is the end of its
	// stderr after its last newline, which the next frame's stderr may
	// finish (one line written in pieces, as tini's are).
	dropped   []int64
	lastWords []string
	partial   []string
	// tail is the end of what each seat wrote to stderr (tailKept bytes),
	// where a crash's reason is looked for (crashReason).
	tail []string
}

// tailKept is how much of a bot's stderr is kept to explain its crash.
const tailKept = 8 << 10

// keepTail adds text to seat n's tail.
func (rc *recorder) keepTail(n int, text string) {
	t := rc.tail[n] + text
	if len(t) > tailKept {
		t = strings.ToValidUTF8(t[len(t)-tailKept:], "")
	}
	rc.tail[n] = t
}

func newRecorder(match engine.Match, seats []*seat, rep *matches.Replay, onFrame func(matches.Frame)) *recorder {
	return &recorder{
		match: match, seats: seats, rep: rep, onFrame: onFrame,
		pending: map[int]*matches.FrameBot{}, last: -1,
		dropped: make([]int64, len(seats)), lastWords: make([]string, len(seats)), partial: make([]string, len(seats)),
		tail: make([]string, len(seats)),
	}
}

// stderrSoFar is the end of what seat n wrote to stderr and was filed:
// its unfinished last line, which what it writes next continues, or its
// last line and a newline.
func (rc *recorder) stderrSoFar(n int) string {
	if rc.partial[n] != "" {
		return rc.partial[n]
	}
	if rc.lastWords[n] == "" {
		return ""
	}
	return rc.lastWords[n] + "\n"
}

func (rc *recorder) entry(n int) *matches.FrameBot {
	fb := rc.pending[n]
	if fb == nil {
		fb = &matches.FrameBot{Seat: n, Status: rc.seats[n].status}
		rc.pending[n] = fb
	}
	return fb
}

// exchanged files an exchange's outcomes: the awaited seats' answers or
// faults with their figures, and the faults of seats only written to.
func (rc *recorder) exchanged(outs []outcome) {
	for _, o := range outs {
		if !o.asked && !o.fresh {
			continue
		}
		fb := rc.entry(o.seat)
		fb.Status = rc.seats[o.seat].status
		if o.fresh {
			fb.Detail = o.detail
		}
		if !o.asked {
			continue
		}
		// The game awaited the seat; the bot itself was asked only if it
		// was still playing (else the game is told its earlier fault).
		fb.Asked, fb.Fault = o.fault == "" || o.fresh, o.fault
		if o.answer != nil {
			fb.SetAnswer(o.answer)
		}
		fb.TimeUS = o.took.Microseconds()
		fb.MemPeakBytes = o.memPeak
		if o.cpuOK {
			us := o.cpu.Microseconds()
			fb.CPUUS = &us
		}
		fb.StoppedCPUUS = o.stopped.Microseconds()
		if o.waitOK {
			us := o.wait.Microseconds()
			fb.WaitUS = &us
		}
	}
}

// rejected files the game's refusal of a seat's answer.
func (rc *recorder) rejected(n int, reason string) {
	fb := rc.entry(n)
	fb.Status, fb.Detail = rc.seats[n].status, reason
}

// commit appends the frame of the turn the game just completed, with the
// bots' stderr of that turn; it does nothing while the turn is still being
// played.
func (rc *recorder) commit() {
	turn := rc.match.Turn()
	if turn == rc.last {
		return
	}
	rc.last = turn
	fr := matches.Frame{Turn: turn, State: rc.match.Frame()}
	for _, s := range rc.seats {
		fb := rc.pending[s.n]
		if s.bot != nil {
			if e := s.bot.TakeStderr(); len(e.Text) > 0 || e.Dropped > 0 {
				if fb == nil {
					fb = &matches.FrameBot{Seat: s.n, Status: s.status}
				}
				fb.Stderr, fb.StderrDropped = validText(e.Text), e.Dropped
				rc.dropped[s.n] += e.Dropped
				rc.keepTail(s.n, fb.Stderr)
				text := rc.partial[s.n] + fb.Stderr
				if line := lastLine(text); line != "" {
					rc.lastWords[s.n] = line
				}
				rc.partial[s.n] = ""
				if i := strings.LastIndexByte(text, '\n'); i < len(text)-1 {
					rc.partial[s.n] = text[i+1:]
					if len(rc.partial[s.n]) > 200 {
						rc.partial[s.n] = strings.ToValidUTF8(rc.partial[s.n][len(rc.partial[s.n])-200:], "")
					}
				}
			}
		}
		if fb != nil {
			fr.Bots = append(fr.Bots, *fb)
		}
	}
	clear(rc.pending)
	rc.rep.Frames = append(rc.rep.Frames, fr)
	if rc.onFrame != nil {
		rc.onFrame(fr)
	}
}

// late adds to the last frame what the bots wrote to stderr after it was
// recorded (while they were being stopped). A bot whose record already
// has that turn's share gets the rest counted as dropped.
func (rc *recorder) late() {
	last := &rc.rep.Frames[len(rc.rep.Frames)-1]
	for _, s := range rc.seats {
		if s.bot == nil {
			continue
		}
		e := s.bot.TakeStderr()
		if len(e.Text) == 0 && e.Dropped == 0 {
			continue
		}
		i := slices.IndexFunc(last.Bots, func(fb matches.FrameBot) bool { return fb.Seat == s.n })
		if i < 0 {
			last.Bots = append(last.Bots, matches.FrameBot{Seat: s.n, Status: s.status})
			i = len(last.Bots) - 1
		}
		rc.keepTail(s.n, validText(e.Text))
		dropped := e.Dropped
		if last.Bots[i].Stderr != "" {
			dropped += int64(len(e.Text))
		} else {
			last.Bots[i].Stderr = validText(e.Text)
		}
		last.Bots[i].StderrDropped += dropped
		rc.dropped[s.n] += dropped
	}
}

func validText(b []byte) string { return strings.ToValidUTF8(string(b), "\uFFFD") }

// lastLine is the last non-empty line of s, at most 200 bytes of it.
func lastLine(s string) string {
	s = strings.TrimRight(s, "\r\n \t")
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	if len(s) > 200 {
		s = strings.ToValidUTF8(s[len(s)-200:], "")
	}
	return s
}

// crashReason is what a crashed bot's stderr says of its crash, its
// reason first: a Go panic's message and the first frame of the
// panicking goroutine; a Python traceback's exception and its deepest
// frame; else the last line it wrote.
func crashReason(tail string) string {
	lines := strings.Split(strings.ReplaceAll(tail, "\r\n", "\n"), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if !strings.HasPrefix(lines[i], "panic: ") && !strings.HasPrefix(lines[i], "fatal error: ") {
			continue
		}
		reason := clipReason(lines[i])
		// The frame: the function line after "goroutine N [running]:",
		// then its file and line.
		for j := i + 1; j+2 < len(lines); j++ {
			if strings.HasPrefix(lines[j], "goroutine ") && strings.HasSuffix(lines[j], ":") {
				fn, at := strings.TrimSpace(lines[j+1]), strings.TrimSpace(lines[j+2])
				for k := j + 1; k+1 < len(lines) && strings.HasPrefix(fn, "panic("); k += 2 {
					fn, at = strings.TrimSpace(lines[k+2]), strings.TrimSpace(lines[min(k+3, len(lines)-1)])
				}
				if p := strings.LastIndex(at, " +0x"); p > 0 {
					at = at[:p]
				}
				return clipReason(fmt.Sprintf("%s (at %s, %s)", reason, fn, at))
			}
		}
		return reason
	}
	for i := len(lines) - 1; i >= 0; i-- {
		if !strings.HasPrefix(lines[i], "Traceback (most recent call last):") {
			continue
		}
		frame, exc := "", ""
		for _, l := range lines[i+1:] {
			switch {
			case strings.HasPrefix(l, "  File "):
				frame = strings.TrimSpace(l)
			case l != "" && !strings.HasPrefix(l, " "):
				exc = l
			}
			if exc != "" {
				break
			}
		}
		if exc != "" {
			if frame != "" {
				return clipReason(exc + " (" + frame + ")")
			}
			return clipReason(exc)
		}
	}
	return lastLine(tail)
}

// clipReason bounds a reason to 300 bytes.
func clipReason(s string) string {
	if len(s) > 300 {
		return strings.ToValidUTF8(s[:300], "") + "…"
	}
	return s
}

// newReplay starts the replay of a match: everything but its frames and
// result.
func newReplay(matchID string, req matches.Request, match engine.Match, lim matches.Limits, seats []*seat) *matches.Replay {
	rep := &matches.Replay{
		Format: matches.ReplayFormat, MatchID: matchID, Game: req.Game.Name(),
		Map: req.Map.Info().Name, MapData: string(req.Map.Data()), Seed: req.Seed,
		Settings: match.Settings(),
		Limits:   lim.Record(),
	}
	for _, s := range seats {
		rep.Bots = append(rep.Bots, matches.ReplayBot{Seat: s.n, ID: s.id, Image: s.image.Ref, ImageID: s.image.ID})
	}
	return rep
}
