package matches

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"arena/internal/bytesize"
)

// OverBound is the error of a replay, or a part of one, larger than the
// bound it is read within (ReplayBounds): no replay Arena writes is. It
// is of kind ErrOverBound (errs.ErrInvalid).
type OverBound struct {
	// What is over: "the replay", "frame 12", "a string of frame 12",
	// "map_data"…
	What string
	// Size is its size when known (0: it was not read to its end).
	Size  int64
	Bound int64
}

func (e *OverBound) Error() string {
	if e.Size > 0 {
		return fmt.Sprintf("%s (%s) is over its bound of %s", e.What, bytesize.String(e.Size), bytesize.String(e.Bound))
	}
	return fmt.Sprintf("%s is over its bound of %s", e.What, bytesize.String(e.Bound))
}

// Unwrap gives its kind, ErrOverBound.
func (*OverBound) Unwrap() error { return ErrOverBound }

// overBound is the OverBound err is or wraps, if any.
func overBound(err error) *OverBound {
	var ob *OverBound
	if errors.As(err, &ob) {
		return ob
	}
	return nil
}

// boundedDecoder is a json.Decoder reading a replay within its bounds:
// it reads no byte past the bound of the value it reads next (within),
// counted from where the decoder is, nor past the whole replay's. A value
// over its bound fails with an OverBound as soon as the decoder wants
// its next byte past the bound, so it costs no more than its bound, and
// the decoder never holds more than that.
type boundedDecoder struct {
	*json.Decoder
	r io.Reader
	b ReplayBounds
	// n is how many bytes were read; mark the offset no read passes.
	n, mark int64
	// what is being read, within bound: frame frameNo when it is a frame
	// (else frameNo is -1).
	what    string
	frameNo int
	bound   int64
}

func newBoundedDecoder(r io.Reader, b ReplayBounds) *boundedDecoder {
	d := &boundedDecoder{r: r, b: b}
	d.Decoder = json.NewDecoder(d)
	d.within("the replay's start", b.String)
	return d
}

// within bounds what the decoder reads next: its name, for the error,
// and its bound, from where the decoder is (what it read and did not
// take yet counts).
func (d *boundedDecoder) within(what string, bound int64) {
	d.what, d.frameNo, d.bound = what, -1, bound
	d.mark = d.InputOffset() + bound
}

// withinFrame bounds frame i, read next.
func (d *boundedDecoder) withinFrame(i int) {
	d.within("", d.b.Frame)
	d.frameNo = i
}

// Read is the decoder's reader.
func (d *boundedDecoder) Read(p []byte) (int, error) {
	if d.n > d.b.File {
		return 0, &OverBound{What: "the replay", Bound: d.b.File}
	}
	if d.n >= d.mark {
		what := d.what
		if d.frameNo >= 0 {
			what = frameName(d.frameNo)
		}
		return 0, &OverBound{What: what, Bound: d.bound}
	}
	// One byte past the replay's bound says it has more.
	if room := min(d.mark, d.b.File+1) - d.n; int64(len(p)) > room {
		p = p[:room]
	}
	n, err := d.r.Read(p)
	d.n += int64(n)
	if d.n > d.b.File {
		return n, &OverBound{What: "the replay", Bound: d.b.File}
	}
	return n, err
}

// decode reads the next value into v, within bound (see within); size is
// its size as written.
func (d *boundedDecoder) decode(what string, bound int64, v any) (size int64, err error) {
	d.within(what, bound)
	start := d.InputOffset()
	err = d.Decode(v)
	return d.InputOffset() - start, err
}

// token reads the next token; a string (a key) within the bound of a
// string.
func (d *boundedDecoder) token() (json.Token, error) {
	d.within("a key", d.b.String)
	return d.Token()
}

// more says whether the object being read has another key.
func (d *boundedDecoder) more() bool {
	d.within("a key", d.b.String)
	return d.More()
}

// frame reads frame i into v, within its bound, if the list being read
// has another element (ok); size is its size as written.
func (d *boundedDecoder) frame(i int, v any) (ok bool, size int64, err error) {
	d.withinFrame(i)
	if !d.More() {
		return false, 0, nil
	}
	start := d.InputOffset()
	err = d.Decode(v)
	return true, d.InputOffset() - start, err
}

// rest counts what follows the value read: the bytes from its first
// other than spacing to its last, within the replay's bound, none of them
// kept.
func (d *boundedDecoder) rest() (int64, error) {
	d.what, d.frameNo, d.bound, d.mark = "the replay", -1, d.b.File, d.b.File+1
	r := io.MultiReader(d.Buffered(), d)
	buf := make([]byte, 32<<10)
	var at, first, last int64 = 0, -1, -1
	for {
		n, err := r.Read(buf)
		for i, c := range buf[:n] {
			if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
				if first < 0 {
					first = at + int64(i)
				}
				last = at + int64(i)
			}
		}
		at += int64(n)
		if err == io.EOF {
			if first < 0 {
				return 0, nil
			}
			return last - first + 1, nil
		}
		if err != nil {
			return 0, err
		}
	}
}

// frameStrings is an OverBound for frame i when one of its strings is
// over the bound: a string of its state as written, or one of its
// records' texts. size is the frame's size as written, when known (else
// -1): a frame no larger than the bound holds no string larger.
func frameStrings(i int, fr *Frame, size, bound int64) error {
	if size >= 0 && size <= bound {
		return nil
	}
	if int64(len(fr.State)) > bound {
		if n := stringOver(fr.State, bound); n > 0 {
			return &OverBound{What: fmt.Sprintf("a string of frame %d's state", i), Size: n, Bound: bound}
		}
	}
	for _, b := range fr.Bots {
		for _, s := range [...]struct{ what, text string }{{"answer", b.Answer}, {"answer", b.AnswerB64}, {"stderr", b.Stderr}, {"detail", b.Detail}} {
			if int64(len(s.text)) > bound {
				return &OverBound{What: fmt.Sprintf("the %s of seat %d in frame %d", s.what, b.Seat, i), Size: int64(len(s.text)), Bound: bound}
			}
		}
	}
	return nil
}

// rawFrameStrings is frameStrings for a frame as written.
func rawFrameStrings(i int, raw []byte, bound int64) error {
	if int64(len(raw)) <= bound {
		return nil
	}
	if n := stringOver(raw, bound); n > 0 {
		return &OverBound{What: fmt.Sprintf("a string of frame %d", i), Size: n, Bound: bound}
	}
	return nil
}

// stringOver is the size, as written, of the first string of the JSON
// text data larger than bound (0: none is).
func stringOver(data []byte, bound int64) int64 {
	for i := 0; ; {
		j := bytes.IndexByte(data[i:], '"')
		if j < 0 {
			return 0
		}
		start := i + j + 1
		end := start
		for {
			k := bytes.IndexByte(data[end:], '"')
			if k < 0 {
				return 0 // no valid JSON: its decoder says so
			}
			end += k
			escapes := 0
			for p := end - 1; p >= start && data[p] == '\\'; p-- {
				escapes++
			}
			if escapes%2 == 0 {
				break
			}
			end++
		}
		if n := int64(end - start); n > bound {
			return n
		}
		i = end + 1
	}
}
