package matches

import (
	"encoding/json"
	"fmt"
	"io"

	"arena/engine"
	"arena/internal/errs"
)

// ErrForeignReplay is the kind of error of a replay that is not the
// request's match, or that the engine does not reproduce
// (errs.ErrInvalid).
var ErrForeignReplay = errs.New(errs.ErrInvalid, "the replay is not the match's")

// CheckReplay says whether rep is a replay of req as this package writes
// one: the same match id, game, map (its data, not just its name), seed,
// settings and limits, the bots in seat order playing the images req
// pinned; and whether the game's engine reproduces every frame and the
// result from the answers it records. It is how a server checks a result
// that another host (a worker) reports. A hosted game's replay (a
// logic's) is checked but for its frames, which only its program can
// reproduce: the caller plays it again (Orchestrator.VerifyHosted).
func CheckReplay(req Request, rep *Replay) error {
	if rep == nil {
		return foreign("no replay")
	}
	if err := checkHeader(req, rep); err != nil {
		return err
	}
	if err := checkResult(req, rep); err != nil {
		return err
	}
	bound := req.ReplayBounds(DefaultReplayBudget).String
	for i := range rep.Frames {
		if err := frameStrings(i, &rep.Frames[i], -1, bound); err != nil {
			return fmt.Errorf("%w: %w", ErrForeignReplay, err)
		}
	}
	if _, hosted := req.Game.(engine.Hosted); hosted {
		return nil
	}
	if err := Verify([]engine.Game{req.Game}, rep); err != nil {
		return fmt.Errorf("%w: the engine does not reproduce it: %v", ErrForeignReplay, err)
	}
	return nil
}

func foreign(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrForeignReplay, fmt.Sprintf(format, a...))
}

// checkHeader compares what a replay says of its match, before its
// frames, with the request.
func checkHeader(req Request, rep *Replay) error {
	match, err := req.Match()
	if err != nil {
		return err
	}
	if rep.MatchID != req.MatchID {
		return foreign("match %q, want %q", rep.MatchID, req.MatchID)
	}
	if rep.Game != req.Game.Name() {
		return foreign("game %q, want %q", rep.Game, req.Game.Name())
	}
	if rep.Map != req.Map.Info().Name || rep.MapData != string(req.Map.Data()) {
		return foreign("map %q is not map %q as the server has it", rep.Map, req.Map.Info().Name)
	}
	if rep.Seed != req.Seed {
		return foreign("seed %d, want %d", rep.Seed, req.Seed)
	}
	if h, ok := req.Game.(engine.Hosted); ok {
		ref, id := h.HostImage()
		if rep.Logic == nil || rep.Logic.Image != ref || id != "" && rep.Logic.ImageID != id {
			return foreign("the logic played is %+v, want %s (%s)", rep.Logic, ref, id)
		}
	} else if rep.Logic != nil {
		return foreign("a logic recorded for game %s", rep.Game)
	}
	if !sameJSON(rep.Settings, match.Settings()) {
		return foreign("settings %s, want %s", rep.Settings, match.Settings())
	}
	lim := req.Limits.Resolve(req.Game.Protocol())
	if want := lim.Record(); rep.Limits != want {
		return foreign("limits %+v, want %+v", rep.Limits, want)
	}
	ids := BotIDs(req.Images)
	if len(rep.Bots) != len(ids) {
		return foreign("%d bots, want %d", len(rep.Bots), len(ids))
	}
	for i, b := range rep.Bots {
		if b.Seat != i || b.ID != ids[i] || b.Image != req.Images[i] {
			return foreign("seat %d is %s playing %s, want %s playing %s", i, b.ID, b.Image, ids[i], req.Images[i])
		}
		if len(req.ImageIDs) > 0 && b.ImageID != req.ImageIDs[i] {
			return foreign("seat %d played image %s, not the pinned %s", i, b.ImageID, req.ImageIDs[i])
		}
	}
	return nil
}

// checkResult compares a replay's result with its header.
func checkResult(req Request, rep *Replay) error {
	if r := rep.Result; r.MatchID != req.MatchID || r.Game != rep.Game || r.Map != rep.Map || r.Seed != rep.Seed {
		return foreign("the result is of match %s (%s, %s, seed %d)", r.MatchID, r.Game, r.Map, r.Seed)
	}
	if len(rep.Result.Bots) != len(rep.Bots) {
		return foreign("%d bots in the result, want %d", len(rep.Result.Bots), len(rep.Bots))
	}
	for i, b := range rep.Bots {
		if r := rep.Result.Bots[i]; r.Seat != i || r.ID != b.ID || r.Image != b.Image || r.ImageID != b.ImageID {
			return foreign("the result's seat %d is %s, want %s", i, r.ID, b.ID)
		}
	}
	return nil
}

// CheckReplayStream is CheckReplay for a replay read from r as it comes,
// frame by frame, none of them kept: the header (everything before the
// frames) is checked when the frames begin, each frame as it is read,
// the result at the end. Every byte read is written to w, so w holds the
// replay exactly as it came (a file to keep once the check passed). The
// replay must be as this package writes one: its fields in order, the
// frames after the bots and before the result, nothing unknown, nothing
// after it. It returns the replay without its frames; each, when set,
// gets every frame once the engine reproduced it (a viewer's catch-up).
// A hosted game's frames are not played again here (see CheckReplay).
// It is read within the bounds of a replay of req's match under the
// default replay budget (see CheckReplayStreamWithin).
//
// An error reading r (or writing w) is returned as it is, not as
// ErrForeignReplay: a read cut short says nothing of the replay.
func CheckReplayStream(req Request, r io.Reader, w io.Writer, each func(i int, f Frame)) (*Replay, error) {
	return CheckReplayStreamWithin(req, req.ReplayBounds(DefaultReplayBudget), r, w, each)
}

// CheckReplayStreamWithin is CheckReplayStream within the bounds b: a
// replay, a frame, a string of a frame or a value of the header over its
// bound is refused (ErrForeignReplay, with the OverBound) as soon as it
// passes it, having cost no more memory than its bound, and no more than
// the replay's bound is read from r or written to w.
func CheckReplayStreamWithin(req Request, b ReplayBounds, r io.Reader, w io.Writer, each func(i int, f Frame)) (*Replay, error) {
	src := &failingReader{r: r}
	rep, err := checkReplayStream(req, b, src, w, each)
	if src.err != nil {
		return nil, fmt.Errorf("read the replay: %w", src.err)
	}
	return rep, err
}

// failingReader remembers the first error of its reader but the end.
type failingReader struct {
	r   io.Reader
	err error
}

func (f *failingReader) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if err != nil && err != io.EOF && f.err == nil {
		f.err = err
	}
	return n, err
}

// failingWriter remembers the first error of its writer.
type failingWriter struct {
	w   io.Writer
	err error
}

func (f *failingWriter) Write(p []byte) (int, error) {
	n, err := f.w.Write(p)
	if err != nil && f.err == nil {
		f.err = err
	}
	return n, err
}

func checkReplayStream(req Request, b ReplayBounds, r *failingReader, w io.Writer, each func(int, Frame)) (*Replay, error) {
	out := &failingWriter{w: w}
	tee := io.TeeReader(r, out)
	defer func() {
		if out.err != nil && r.err == nil {
			r.err = out.err
		}
	}()
	c := &streamCheck{req: req, b: b, dec: newBoundedDecoder(tee, b), rep: &Replay{}, frames: -1, each: each}
	c.fields = headerFields(c.rep)
	if err := c.delim('{'); err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for c.dec.more() {
		t, err := c.dec.token()
		if err != nil {
			return nil, undecoded("not a replay: ", err)
		}
		key, _ := t.(string)
		if seen[key] {
			return nil, foreign("the replay has two %q", key)
		}
		seen[key] = true
		if err := c.field(key); err != nil {
			return nil, err
		}
	}
	if err := c.delim('}'); err != nil {
		return nil, err
	}
	if !seen["result"] {
		return nil, foreign("the replay has no frames or no result")
	}
	if err := c.finish(); err != nil {
		return nil, err
	}
	return c.rep, nil
}

// streamCheck is a replay read and checked as it comes (checkReplayStream).
type streamCheck struct {
	req Request
	b   ReplayBounds
	dec *boundedDecoder
	rep *Replay
	// fields are the header's values by key (headerFields).
	fields map[string]any
	// v plays the frames again (nil for a hosted game's replay).
	v *Verifier
	// frames is how many frames were read, -1 before they begin.
	frames int
	each   func(int, Frame)
}

// headerFields are where the keys before a replay's frames decode to.
func headerFields(rep *Replay) map[string]any {
	return map[string]any{
		"format": &rep.Format, "match_id": &rep.MatchID, "game": &rep.Game, "map": &rep.Map, "map_data": &rep.MapData,
		"seed": &rep.Seed, "settings": &rep.Settings, "limits": &rep.Limits, "stdio_path": &rep.StdioPath, "bots": &rep.Bots,
		"logic": &rep.Logic,
	}
}

// undecoded is the error of a replay that does not decode: what is over
// its bound, or what is wrong.
func undecoded(what string, err error) error {
	if ob := overBound(err); ob != nil {
		return fmt.Errorf("%w: %w", ErrForeignReplay, ob)
	}
	return foreign("%s%v", what, err)
}

// delim reads the delimiter that belongs next.
func (c *streamCheck) delim(want json.Delim) error {
	t, err := c.dec.Token()
	if err != nil {
		return undecoded("not a replay: ", err)
	}
	if t != want {
		return foreign("not a replay: %v where %v belongs", t, want)
	}
	return nil
}

// field reads the value of the replay's key, the frames after the header
// and the result after the frames.
func (c *streamCheck) field(key string) error {
	switch {
	case key == "frames":
		return c.readFrames()
	case key == "result":
		if c.frames < 0 {
			return foreign("the result comes before the frames")
		}
		if _, err := c.dec.decode("the replay's result", c.b.Frame, &c.rep.Result); err != nil {
			return undecoded("result: ", err)
		}
	case c.fields[key] != nil && c.frames < 0:
		if _, err := c.dec.decode("the replay's "+key, c.b.Frame, c.fields[key]); err != nil {
			return undecoded(key+": ", err)
		}
	default:
		return foreign("the replay has %q where none belongs", key)
	}
	return nil
}

// readFrames checks the header once the frames begin, then reads the
// frames one by one, each played again and handed to each.
func (c *streamCheck) readFrames() error {
	if c.rep.Format != ReplayFormat {
		return foreign("replay format %q, want %q", c.rep.Format, ReplayFormat)
	}
	if err := checkHeader(c.req, c.rep); err != nil {
		return err
	}
	if _, hosted := c.req.Game.(engine.Hosted); !hosted {
		v, err := newVerifier([]engine.Game{c.req.Game}, c.rep)
		if err != nil {
			return fmt.Errorf("%w: %v", ErrForeignReplay, err)
		}
		c.v = v
	}
	if err := c.delim('['); err != nil {
		return err
	}
	c.frames = 0
	var mismatch error
	err := c.dec.frameList(func(i int, fr Frame) error {
		c.frames++
		if c.v != nil {
			if err := c.v.Frame(fr); err != nil {
				mismatch = fmt.Errorf("%w: the engine does not reproduce it: %v", ErrForeignReplay, err)
				return mismatch
			}
		}
		if c.each != nil {
			c.each(i, fr)
		}
		return nil
	})
	if mismatch != nil {
		return mismatch
	}
	if err != nil {
		return undecoded("not a replay: ", err)
	}
	return nil
}

// finish checks what follows the replay (nothing but spacing, within the
// replay's bound; it reaches w too), its result, and the end of the match
// played again.
func (c *streamCheck) finish() error {
	n, err := c.dec.rest()
	if err != nil {
		return undecoded("after the replay: ", err)
	}
	if n > 0 {
		return foreign("the replay is followed by %d more bytes", n)
	}
	if err := checkResult(c.req, c.rep); err != nil {
		return err
	}
	if c.v != nil {
		if err := c.v.Finish(c.rep.Result); err != nil {
			return fmt.Errorf("%w: the engine does not reproduce it: %v", ErrForeignReplay, err)
		}
	}
	return nil
}
