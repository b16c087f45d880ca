package orchestrator

import (
	"slices"
	"strings"

	"arena/engine"
)

// recorder is the one owner of the replay's frames. It files each
// exchange's outcomes and the game's rejections as the turn's per-bot
// records, adds what each bot wrote to stderr, and appends the frame once
// the game completes the turn (several exchanges may make one turn, as in
// Pac-Man's sequential protocol).
type recorder struct {
	match   engine.Match
	seats   []*seat
	rep     *Replay
	onFrame func(Frame)

	pending map[int]*FrameBot // this turn's records, by seat
	last    int               // the turn of the last frame; -1 before frame 0
	// Per seat: stderr bytes over the caps, and the last line it wrote
	// (to explain a crash in the result); partial is the end of its
	// stderr after its last newline, which the next frame's stderr may
	// finish (one line written in pieces, as tini's are).
	dropped   []int64
	lastWords []string
	partial   []string
}

func newRecorder(match engine.Match, seats []*seat, rep *Replay, onFrame func(Frame)) *recorder {
	return &recorder{
		match: match, seats: seats, rep: rep, onFrame: onFrame,
		pending: map[int]*FrameBot{}, last: -1,
		dropped: make([]int64, len(seats)), lastWords: make([]string, len(seats)), partial: make([]string, len(seats)),
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

func (rc *recorder) entry(n int) *FrameBot {
	fb := rc.pending[n]
	if fb == nil {
		fb = &FrameBot{Seat: n, Status: rc.seats[n].status}
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
			fb.setAnswer(o.answer)
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
	fr := Frame{Turn: turn, State: rc.match.Frame()}
	for _, s := range rc.seats {
		fb := rc.pending[s.n]
		if s.bot != nil {
			if e := s.bot.TakeStderr(); len(e.Text) > 0 || e.Dropped > 0 {
				if fb == nil {
					fb = &FrameBot{Seat: s.n, Status: s.status}
				}
				fb.Stderr, fb.StderrDropped = validText(e.Text), e.Dropped
				rc.dropped[s.n] += e.Dropped
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
		i := slices.IndexFunc(last.Bots, func(fb FrameBot) bool { return fb.Seat == s.n })
		if i < 0 {
			last.Bots = append(last.Bots, FrameBot{Seat: s.n, Status: s.status})
			i = len(last.Bots) - 1
		}
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
