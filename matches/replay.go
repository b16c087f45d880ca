package matches

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
	"unicode/utf8"
	"unsafe"

	"arena/engine"
)

// ReplayFormat identifies the replay file format. Version 2 is version 1
// with self-contained Pac-Man frames (each carries its board); a version 1
// file still reads, and its Tanks and Snake matches still verify.
const ReplayFormat = "arena-replay/2"

// ReplayFormatV1 is the format before Pac-Man frames carried their board.
const ReplayFormatV1 = "arena-replay/1"

// Replay is a self-contained record of a match: enough to show it turn by
// turn and to re-run the engine on the recorded answers.
type Replay struct {
	Format   string          `json:"format"`
	MatchID  string          `json:"match_id"`
	Game     string          `json:"game"`
	Map      string          `json:"map"`
	MapData  string          `json:"map_data"`
	Seed     uint64          `json:"seed"`
	Settings json.RawMessage `json:"settings"`
	Limits   LimitsRecord    `json:"limits"`
	// StdioPath says how the bots' stdio travelled (see Result).
	StdioPath string      `json:"stdio_path,omitempty"`
	Bots      []ReplayBot `json:"bots"`
	// Logic is the program a hosted game's rules ran in (nil for the
	// built-in games).
	Logic  *LogicRecord `json:"logic,omitempty"`
	Frames []Frame      `json:"frames"`
	Result Result       `json:"result"`
	// File, when set, is a file that holds this replay whole, as checked
	// (CheckReplayStream): its frames are there, not in Frames. Whoever
	// keeps the replay takes the file (MoveReplay).
	File string `json:"-"`
}

// MoveReplay saves a replay whose File holds it at path, by moving the
// file there (the same file system), synced first, or when path ends in
// .zst by writing it there compressed and removing the file; a replay in
// memory is written as WriteReplay does.
func MoveReplay(path string, r *Replay) error {
	if r.File == "" {
		return WriteReplay(path, r)
	}
	if strings.HasSuffix(path, Compressed) {
		if err := copyReplay(path, r.File); err != nil {
			return fmt.Errorf("keep the replay: %w", err)
		}
		os.Remove(r.File)
		r.File = ""
		return nil
	}
	f, err := os.Open(r.File)
	if err != nil {
		return fmt.Errorf("keep the replay: %w", err)
	}
	err = f.Sync()
	f.Close()
	if err == nil {
		err = os.Chmod(r.File, 0o644)
	}
	if err == nil {
		err = os.Rename(r.File, path)
	}
	if err != nil {
		return fmt.Errorf("keep the replay: %w", err)
	}
	r.File = ""
	return nil
}

// LimitsRecord are the limits the match was played under.
type LimitsRecord struct {
	AnswerTimeoutMS float64 `json:"answer_timeout_ms"`
	WarmUpMS        float64 `json:"warm_up_ms"`
	MaxMessageBytes int     `json:"max_message_bytes"`
	// MemoryBytes is each bot's memory limit where the match set one
	// (absent: the sandbox policy's).
	MemoryBytes int64 `json:"memory_bytes,omitempty"`
}

// ReplayBot is a bot as recorded.
type ReplayBot struct {
	Seat    int    `json:"seat"`
	ID      string `json:"id"`
	Image   string `json:"image"`
	ImageID string `json:"image_id"`
}

// LogicRecord is the logic a match of a logic game was played with: its
// image as named, and the engine id it ran (the digest of its config).
type LogicRecord struct {
	Image   string `json:"image"`
	ImageID string `json:"image_id"`
}

// Frame is one turn: the state after it (turn 0: the initial state) and
// what each involved bot did during it.
type Frame struct {
	Turn  int             `json:"turn"`
	State json.RawMessage `json:"state"`
	Bots  []FrameBot      `json:"bots,omitempty"`
}

// FrameBot is one bot's part in a turn.
type FrameBot struct {
	Seat int `json:"seat"`
	// Asked is true when the bot was asked for an answer this turn: sent
	// its input and awaited. A bot out of play since a fault is not asked;
	// the game is told its fault instead (Fault).
	Asked bool `json:"asked,omitempty"`
	// Answer is the message as received (AnswerB64 when it is not UTF-8).
	Answer    string `json:"answer,omitempty"`
	AnswerB64 string `json:"answer_b64,omitempty"`
	// Fault is what the game was told instead of an answer: the fault of
	// this turn, or the bot's status once it has faulted.
	Fault engine.Status `json:"fault,omitempty"`
	// Status is the bot's status at the end of the turn; Detail explains a
	// fault that happened in this turn.
	Status engine.Status `json:"status"`
	Detail string        `json:"detail,omitempty"`
	// The answer's figures, all over one window: from the moment the bot
	// may run (it is thawed, then its input is written) to its answer
	// read. TimeUS is that window (wall clock); CPUUS the CPU time its
	// processes and threads used in it; WaitUS the time it was runnable
	// but waited for a CPU or was throttled (a busy host, not a slow bot),
	// at most TimeUS. StoppedCPUUS is the CPU its cgroup used since its
	// previous answer, while it should have been stopped, charged to this
	// answer with CPUUS (omitted when 0; never on the first answer, before
	// which the bot was starting). MemPeakBytes is its memory peak
	// so far (from its cgroup).
	TimeUS        int64  `json:"time_us,omitempty"`
	CPUUS         *int64 `json:"cpu_us,omitempty"`
	StoppedCPUUS  int64  `json:"stopped_cpu_us,omitempty"`
	WaitUS        *int64 `json:"wait_us,omitempty"`
	MemPeakBytes  int64  `json:"mem_peak_bytes,omitempty"`
	Stderr        string `json:"stderr,omitempty"`
	StderrDropped int64  `json:"stderr_dropped,omitempty"`
}

// Counted is what the answer counted against its limit, as the game was
// told (engine.Reply.Time): its CPU time where recorded, else its time.
func (f FrameBot) Counted() time.Duration {
	if f.CPUUS != nil {
		return time.Duration(*f.CPUUS) * time.Microsecond
	}
	return time.Duration(f.TimeUS) * time.Microsecond
}

// SetAnswer records the message as received: as text when it is UTF-8,
// else in base64.
func (f *FrameBot) SetAnswer(b []byte) {
	if utf8.Valid(b) {
		f.Answer = string(b)
		return
	}
	f.AnswerB64 = base64.StdEncoding.EncodeToString(b)
}

// Message is the recorded message as bytes.
func (f *FrameBot) Message() ([]byte, error) {
	if f.AnswerB64 != "" {
		return base64.StdEncoding.DecodeString(f.AnswerB64)
	}
	return []byte(f.Answer), nil
}

// Result is how a match ended, as printed by `arena run --json`.
type Result struct {
	MatchID string      `json:"match_id"`
	Game    string      `json:"game"`
	Map     string      `json:"map"`
	Seed    uint64      `json:"seed"`
	Turns   int         `json:"turns"`
	Winners []string    `json:"winners"`
	Bots    []BotResult `json:"bots"`
	// DurationMS is the wall time from the first container start to the
	// end of the match.
	DurationMS float64 `json:"duration_ms"`
	// StdioPath says how the bots' stdio travelled: "fifo" (the fast
	// path), "attach" with why the FIFO path was not used, or "pipe"
	// (local bots); the bots' paths, joined, when they differ.
	StdioPath string `json:"stdio_path,omitempty"`
	Replay    string `json:"replay,omitempty"`
	// Worker names the worker that played the match, when a worker
	// did (through NATS).
	Worker string `json:"worker,omitempty"`
}

// Draw says whether the match was a draw: nobody won, or every bot did
// (in Tanks, tanks that die together share the win).
func (r Result) Draw() bool {
	return len(r.Winners) == 0 || len(r.Bots) > 1 && len(r.Winners) == len(r.Bots)
}

// Outcome says how the match ended, in words: "draw", "winner A", or
// "shared win: A, B" (some of the bots won together).
func (r Result) Outcome() string {
	switch {
	case r.Draw():
		return "draw"
	case len(r.Winners) == 1:
		return "winner " + r.Winners[0]
	}
	return "shared win: " + strings.Join(r.Winners, ", ")
}

// BotResult is one bot's outcome and what it used.
type BotResult struct {
	Seat        int           `json:"seat"`
	ID          string        `json:"id"`
	Image       string        `json:"image"`
	ImageID     string        `json:"image_id"`
	Status      engine.Status `json:"status"`
	FaultTurn   int           `json:"fault_turn"`
	FaultDetail string        `json:"fault_detail,omitempty"`
	Score       int           `json:"score"`
	DeathReason string        `json:"death_reason"`
	DeathTurn   int           `json:"death_turn"`
	// Answers is how many answers the bot gave in time, the first (the
	// warm-up answer) included. WarmUpMS is that first answer's time,
	// from its input written (null when it gave none); the answer
	// figures are the wall-clock times of the answers after it, and their
	// CPU times (answer_cpu_ms_*, null when not read), 0 when there were
	// none.
	Answers        int      `json:"answers"`
	WarmUpMS       *float64 `json:"warmup_ms"`
	AnswerMSP50    float64  `json:"answer_ms_p50"`
	AnswerMSMax    float64  `json:"answer_ms_max"`
	AnswerCPUMSP50 *float64 `json:"answer_cpu_ms_p50"`
	AnswerCPUMSMax *float64 `json:"answer_cpu_ms_max"`
	// WaitMS is the time the bot was runnable but waited for a CPU, or
	// throttled, while answering, over the match (null when not read).
	// StoppedCPUMS is the CPU it was charged for running while it should
	// have been stopped, over the match (in the answers' CPU figures).
	// StartCPUMS is the CPU it used from its start to its first input
	// (its runtime's start, what it loads), in no answer's figures.
	WaitMS       *float64 `json:"wait_ms"`
	StoppedCPUMS float64  `json:"stopped_cpu_ms,omitempty"`
	StartCPUMS   *float64 `json:"start_cpu_ms,omitempty"`
	// Timing says how its answers were timed (the timing rule): "cpu time,
	// frozen between answers by the cgroup freezer" (or by signals), or
	// why not.
	Timing string `json:"timing"`
	// CPU and memory from the bot's cgroup; null with Accounting saying
	// why when they could not be read.
	CPUMS         *float64 `json:"cpu_ms"`
	MemPeakBytes  *int64   `json:"mem_peak_bytes"`
	OOMKills      int64    `json:"oom_kills"`
	PidsLimitHits int64    `json:"pids_limit_hits"`
	Accounting    string   `json:"accounting"`
	// StderrDropped counts stderr bytes over the caps.
	StderrDropped int64 `json:"stderr_dropped_bytes"`
}

// EncodeReplay is a replay as its file holds it: one JSON document.
func EncodeReplay(r *Replay) ([]byte, error) {
	var buf bytes.Buffer
	if err := encodeReplay(&buf, r); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// EncodeReplayTo writes a replay as its file holds it to w, a frame at a
// time (see encodeReplay).
func EncodeReplayTo(w io.Writer, r *Replay) error { return encodeReplay(w, r) }

// encodeReplay writes a replay's JSON to w, a frame at a time: the
// encoding of a long match is never held whole (encoding/json builds a
// value's whole text before writing it). The bytes are those of
// encoding/json with HTML left unescaped.
func encodeReplay(w io.Writer, r *Replay) error {
	fail := func(err error) error { return fmt.Errorf("encode the replay of %s: %w", r.MatchID, err) }
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	// value is v's encoding, without the newline Encode ends it with.
	value := func(v any) ([]byte, error) {
		buf.Reset()
		if err := enc.Encode(v); err != nil {
			return nil, err
		}
		return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
	}
	// The fields before the frames: the replay's encoding with neither
	// frames nor result, cut where its frames begin. The encoding of a
	// Replay ends with its frames and its result (a test holds it).
	head := *r
	head.Frames, head.Result = nil, Result{}
	b, err := value(&head)
	if err != nil {
		return fail(err)
	}
	zero, err := json.Marshal(Result{})
	if err != nil {
		return fail(err)
	}
	tail := append([]byte(`,"frames":null,"result":`), zero...)
	tail = append(tail, '}')
	cut, ok := bytes.CutSuffix(b, tail)
	if !ok {
		return fail(errors.New("a replay's encoding does not end with its frames and result"))
	}
	open, end := `,"frames":[`, "]"
	if r.Frames == nil {
		open, end = `,"frames":null`, "" // encoding/json's text for no frames
	}
	if _, err := w.Write(append(cut, open...)); err != nil {
		return fail(err)
	}
	for i := range r.Frames {
		b, err := value(&r.Frames[i])
		if err != nil {
			return fail(fmt.Errorf("frame %d: %w", i, err))
		}
		if i > 0 {
			b = append([]byte{','}, b...)
		}
		if _, err := w.Write(b); err != nil {
			return fail(err)
		}
	}
	b, err = value(&r.Result)
	if err != nil {
		return fail(err)
	}
	if _, err := w.Write(append(append([]byte(end+`,"result":`), b...), "}\n"...)); err != nil {
		return fail(err)
	}
	return nil
}

// WriteReplay saves a replay atomically: a reader never sees half a file,
// and a failure leaves none behind. It is encoded straight to the file,
// not into memory first; compressed when path ends in .zst.
func WriteReplay(path string, r *Replay) error {
	err := writeFile(path, func(w io.Writer) error { return encodeReplay(w, r) })
	if err != nil {
		return fmt.Errorf("write replay: %w", err)
	}
	return nil
}

// ReplayFrames reads a replay from r as it comes and calls f with each of
// its frames from index from on, as JSON, none of them kept: a viewer of
// a long match costs a frame at a time, not the whole replay. It stops
// at the first error of f. The replay is read within
// DefaultReplayBounds: a frame, or a header's value, over its bound is an
// OverBound error.
func ReplayFrames(r io.Reader, from int, f func(i int, frame json.RawMessage) error) error {
	return replayFrames(r, DefaultReplayBounds, from, f)
}

func replayFrames(r io.Reader, b ReplayBounds, from int, f func(i int, frame json.RawMessage) error) error {
	dec := newBoundedDecoder(r, b)
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return notReplay(err)
	}
	for dec.more() {
		t, err := dec.token()
		if err != nil {
			return notReplay(err)
		}
		if t != "frames" {
			var skip json.RawMessage
			if _, err := dec.decode(fmt.Sprintf("the replay's %v", t), b.Frame, &skip); err != nil {
				return notReplay(err)
			}
			continue
		}
		if t, err := dec.Token(); err != nil || t != json.Delim('[') {
			if ob := overBound(err); ob != nil {
				return ob
			}
			return fmt.Errorf("not a replay: its frames are not a list (%v)", err)
		}
		for i := 0; ; i++ {
			var frame json.RawMessage
			more, _, err := dec.frame(i, &frame)
			if err != nil {
				return notReplay(fmt.Errorf("frame %d: %w", i, err))
			}
			if !more {
				break
			}
			if err := rawFrameStrings(i, frame, b.String); err != nil {
				return err
			}
			if i >= from {
				if err := f(i, frame); err != nil {
					return err
				}
			}
		}
		if _, err := dec.Token(); err != nil {
			return notReplay(err)
		}
		return nil
	}
	if _, err := dec.Token(); err != nil {
		return notReplay(err)
	}
	return errors.New("not a replay: it has no frames")
}

// frameName names frame i in errors.
func frameName(i int) string { return fmt.Sprintf("frame %d", i) }

// notReplay is the error of a replay that does not decode: its
// OverBound as it is, when it is over a bound.
func notReplay(err error) error {
	if ob := overBound(err); ob != nil {
		return ob
	}
	return fmt.Errorf("not a replay: %w", err)
}

// ReadReplay loads a replay file, plain or compressed, within
// DefaultReplayBounds (see ReadReplayWithin).
func ReadReplay(path string) (*Replay, error) { return ReadReplayWithin(path, nil) }

// ReadReplayWithin loads a replay file, plain or compressed, within the
// bounds of its game (see DecodeReplay): a file whose JSON, a frame, a
// string of a frame or a value of its header is over its bound is
// refused with an OverBound error as soon as it passes it (a zstd bomb
// too), having cost no more memory than that.
func ReadReplayWithin(path string, bounds func(game string) ReplayBounds) (*Replay, error) {
	f, err := OpenReplay(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r, err := DecodeReplay(f, bounds)
	if ob := overBound(err); ob != nil {
		return nil, fmt.Errorf("%s: %w", path, ob)
	}
	if err != nil {
		return nil, fmt.Errorf("%s is %w", path, err)
	}
	if r.Format != ReplayFormat && r.Format != ReplayFormatV1 {
		return nil, fmt.Errorf("%s: replay format %q, want %q", path, r.Format, ReplayFormat)
	}
	return r, nil
}

// DecodeReplay reads a replay's JSON from r as it comes, a frame at a
// time, within the bounds of its game: bounds("") until its header names
// its game, bounds(game) from then on (nil: DefaultReplayBounds
// throughout). A replay over a bound is refused with an OverBound error
// as soon as it passes it. Fields it does not know are skipped, within
// their bound; nothing but spacing may follow the replay.
func DecodeReplay(r io.Reader, bounds func(game string) ReplayBounds) (*Replay, error) {
	if bounds == nil {
		bounds = func(string) ReplayBounds { return DefaultReplayBounds }
	}
	dec := newBoundedDecoder(r, bounds(""))
	rep := &Replay{}
	fields := map[string]any{
		"format": &rep.Format, "match_id": &rep.MatchID, "game": &rep.Game, "map": &rep.Map, "map_data": &rep.MapData,
		"seed": &rep.Seed, "settings": &rep.Settings, "limits": &rep.Limits, "stdio_path": &rep.StdioPath, "bots": &rep.Bots,
		"logic": &rep.Logic, "result": &rep.Result,
	}
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		if err == nil {
			err = fmt.Errorf("%v where { belongs", t)
		}
		return nil, notReplay(err)
	}
	for dec.more() {
		t, err := dec.token()
		if err != nil {
			return nil, notReplay(err)
		}
		key, _ := t.(string)
		if key == "frames" {
			if rep.Frames, err = dec.framesOrNull(); err != nil {
				return nil, notReplay(err)
			}
			continue
		}
		v := fields[key]
		if v == nil {
			v = new(json.RawMessage) // not ours: skipped
		}
		if _, err := dec.decode("the replay's "+key, dec.b.Frame, v); err != nil {
			return nil, notReplay(fmt.Errorf("%s: %w", key, err))
		}
		if key == "game" {
			dec.b = bounds(rep.Game)
		}
	}
	if _, err := dec.Token(); err != nil {
		return nil, notReplay(err)
	}
	if n, err := dec.rest(); err != nil || n > 0 {
		if err == nil {
			err = fmt.Errorf("%d more bytes follow it", n)
		}
		return nil, notReplay(err)
	}
	return rep, nil
}

// framesOrNull reads the value of a replay's frames: null, or a list of
// frames each within its bounds.
func (d *boundedDecoder) framesOrNull() ([]Frame, error) {
	d.within("the replay's frames", d.b.String)
	t, err := d.Token()
	if err != nil {
		return nil, err
	}
	if t == nil {
		return nil, nil
	}
	if t != json.Delim('[') {
		return nil, fmt.Errorf("its frames are %v, not a list", t)
	}
	var frames []Frame
	var held int64
	err = d.frameList(func(_ int, fr Frame) error {
		// Many small frames take more memory than their JSON: what they
		// take is bounded too.
		if held += heldBytes(&fr); held > d.b.File {
			return &OverBound{What: "the replay, held in memory,", Bound: d.b.File}
		}
		frames = append(frames, fr)
		return nil
	})
	return frames, err
}

// heldBytes is about what a frame takes in memory: its text, and 4 times
// its struct (the frame as decoded, then in its slice, and what the
// slice's growth copies).
func heldBytes(fr *Frame) int64 {
	n := 4*unsafe.Sizeof(*fr) + uintptr(len(fr.State))
	for _, b := range fr.Bots {
		n += unsafe.Sizeof(b) + uintptr(len(b.Answer)+len(b.AnswerB64)+len(b.Detail)+len(b.Stderr)) + 16
	}
	return int64(n)
}

// frameList reads the frames of a list whose [ was read, each within its
// bounds, to its ]: each gets every frame, the first error of each ends
// it.
func (d *boundedDecoder) frameList(each func(i int, fr Frame) error) error {
	for i := 0; ; i++ {
		var fr Frame
		more, size, err := d.frame(i, &fr)
		if err != nil {
			if ob := overBound(err); ob != nil {
				return ob
			}
			return fmt.Errorf("frame %d: %w", i, err)
		}
		if !more {
			break
		}
		if err := frameStrings(i, &fr, size, d.b.String); err != nil {
			return err
		}
		if err := each(i, fr); err != nil {
			return err
		}
	}
	_, err := d.Token() // ]
	return err
}
