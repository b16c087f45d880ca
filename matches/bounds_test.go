package matches

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"arena/engine"
	"arena/engine/snake"
	"arena/engine/tanks"
	"arena/internal/errs"
)

// zstdRLE is a zstd frame that decompresses to head, n bytes of fill and
// tail: head and tail in raw blocks, the fill in RLE blocks of 128 KiB,
// 4 bytes each (a GiB of fill takes 32 KiB: the replay bomb of issue #59
// was a 33 KB file).
func zstdRLE(head []byte, fill byte, n int64, tail []byte) []byte {
	const block = 128 << 10
	// The magic; no content size, no checksum; a 128 KiB window.
	out := []byte{0x28, 0xb5, 0x2f, 0xfd, 0x00, 7 << 3}
	header := func(last bool, kind, size int) {
		v := size<<3 | kind<<1
		if last {
			v |= 1
		}
		out = append(out, byte(v), byte(v>>8), byte(v>>16))
	}
	raw := func(b []byte) {
		for len(b) > 0 {
			k := min(len(b), block)
			header(false, 0, k)
			out = append(out, b[:k]...)
			b = b[k:]
		}
	}
	raw(head)
	for ; n > 0; n -= block {
		header(false, 1, int(min(n, block)))
		out = append(out, fill)
	}
	raw(tail)
	header(true, 0, 0)
	return out
}

// The bomb writer writes what zstd decompresses.
func TestZstdRLE(t *testing.T) {
	data := zstdRLE([]byte(`{"a":"`), 'x', 300<<10+7, []byte(`"}`))
	r, err := Decompressed(io.NopCloser(bytes.NewReader(data)))
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(r)
	if want := `{"a":"` + strings.Repeat("x", 300<<10+7) + `"}`; err != nil || string(got) != want {
		t.Fatalf("%d bytes, %v", len(got), err)
	}
}

// allocated is what f allocated, in bytes (logged).
func allocated(t *testing.T, f func()) uint64 {
	t.Helper()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	n := after.TotalAlloc - before.TotalAlloc
	t.Logf("allocated %.1f MiB", float64(n)/(1<<20))
	return n
}

// bomb writes a file in dir that decompresses to head, n bytes of fill
// and tail.
func bomb(t *testing.T, head string, fill byte, n int64, tail string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "bomb.json"+Compressed)
	if err := os.WriteFile(path, zstdRLE([]byte(head), fill, n, []byte(tail)), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// refusedOver checks that err says what is over its bound, and is the
// caller's mistake.
func refusedOver(t *testing.T, err error, what string) {
	t.Helper()
	if err == nil || !strings.Contains(err.Error(), what) || !strings.Contains(err.Error(), " is over its bound of ") || !errs.IsInvalid(err) || !errors.Is(err, ErrOverBound) {
		t.Errorf("got %v, want %q over its bound (invalid)", err, what)
	}
}

const gib = 1 << 30

// A 32 KiB file that decompresses to a replay with a 1 GiB string (issue
// #59: arena replay verify took 20 s and 3.78 GB) is refused as soon as
// the string passes its bound, wherever the string is: a reader holds no
// more than the bound.
func TestAReplayBombIsRefused(t *testing.T) {
	const start = `{"format":"arena-replay/2","match_id":"bomb00000001","game":"tanks",`
	for _, c := range []struct {
		name, head, tail, what string
	}{
		{"an answer", start + `"frames":[{"turn":0,"state":{}},{"turn":1,"state":{},"bots":[{"seat":0,"asked":true,"answer":"`, `","status":"ok"}]}],"result":{}}`, "frame 1"},
		{"the map", start + `"map_data":"`, `","frames":[],"result":{}}`, "the replay's map_data"},
		{"a key", `{"`, `":1}`, "a key"},
		{"the result", start + `"frames":[],"result":{"match_id":"`, `"}}`, "the replay's result"},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := bomb(t, c.head, 'a', gib, c.tail)
			if fi, _ := os.Stat(path); fi.Size() > 40<<10 {
				t.Fatalf("the bomb is %d bytes", fi.Size())
			}
			var err error
			if n := allocated(t, func() { _, err = ReadReplay(path) }); n > 200<<20 {
				t.Errorf("reading the bomb allocated %d MiB", n>>20)
			}
			refusedOver(t, err, c.what)
			if err != nil && !strings.Contains(err.Error(), path) {
				t.Errorf("the error does not name the file: %v", err)
			}
		})
	}
}

// The same bomb as a stream, as a viewer reads a stored replay's frames,
// and as the server checks a worker's replay.
func TestAReplayBombIsRefusedAsAStream(t *testing.T) {
	req, rep := randomTanks(t, 7)
	rep.Frames = rep.Frames[:1]
	data, err := EncodeReplay(rep)
	if err != nil {
		t.Fatal(err)
	}
	cut := bytes.Index(data, []byte(`],"result":`))
	path := bomb(t, string(data[:cut])+`,{"turn":1,"state":{"`, 'b', gib, `":1}}`+string(data[cut:]))
	open := func() io.ReadCloser {
		f, err := OpenReplay(path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
	if n := allocated(t, func() { err = ReplayFrames(open(), 0, func(int, json.RawMessage) error { return nil }) }); n > 200<<20 {
		t.Errorf("its frames allocated %d MiB", n>>20)
	}
	refusedOver(t, err, "frame 1")
	var out bytes.Buffer
	if n := allocated(t, func() { _, err = CheckReplayStream(req, open(), &out, nil) }); n > 200<<20 {
		t.Errorf("its check allocated %d MiB", n>>20)
	}
	refusedOver(t, err, "frame 1")
	if !errors.Is(err, ErrForeignReplay) {
		t.Errorf("the check's error: %v", err)
	}
	if b := req.ReplayBounds(DefaultReplayBudget); int64(out.Len()) > b.Frame+64<<10 {
		t.Errorf("the check read %d bytes, its frame bound is %d", out.Len(), b.Frame)
	}
}

// A replay that decompresses to more than its bound (a GiB of spaces
// after it) is refused at its bound, none of it kept.
func TestAReplayOverItsBoundIsRefused(t *testing.T) {
	_, rep := randomTanks(t, 7)
	data, err := EncodeReplay(rep)
	if err != nil {
		t.Fatal(err)
	}
	path := bomb(t, string(data), ' ', gib, "")
	var back *Replay
	if n := allocated(t, func() { back, err = ReadReplay(path) }); n > 200<<20 {
		t.Errorf("reading it allocated %d MiB", n>>20)
	}
	refusedOver(t, err, "the replay")
	if back != nil || err != nil && !strings.Contains(err.Error(), "256 MiB") {
		t.Errorf("got %v", err)
	}
}

// A replay of a great many frames is refused at its bound, its frames
// held in memory bounded too: a GiB of them in 230 KB, read within
// bounds of 64 MiB.
func TestAReplayOfTooManyFramesIsRefused(t *testing.T) {
	var file bytes.Buffer
	z, err := zstd.NewWriter(&file, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1))
	if err != nil {
		t.Fatal(err)
	}
	z.Write([]byte(`{"format":"arena-replay/2","game":"tanks","frames":[{"turn":0,"state":{}}`))
	chunk := bytes.Repeat([]byte(`,{"turn":1,"state":{}}`), (1<<20)/22)
	for range gib / len(chunk) {
		z.Write(chunk)
	}
	z.Write([]byte(`],"result":{}}`))
	z.Close()
	path := filepath.Join(t.TempDir(), "frames.json"+Compressed)
	if err := os.WriteFile(path, file.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	small := ReplayBounds{File: 64 << 20, Frame: 1 << 20, String: 25 << 10}
	var back *Replay
	if n := allocated(t, func() { back, err = ReadReplayWithin(path, func(string) ReplayBounds { return small }) }); n > 200<<20 {
		t.Errorf("reading it allocated %d MiB", n>>20)
	}
	refusedOver(t, err, "the replay, held in memory,")
	if back != nil {
		t.Errorf("%d frames read", len(back.Frames))
	}
	// As a stream, nothing held, it is refused at its bound.
	f, err := OpenReplay(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	frames := 0
	err = replayFrames(f, small, 0, func(int, json.RawMessage) error { frames++; return nil })
	refusedOver(t, err, "the replay")
	if frames < 2<<20 || frames > 4<<20 {
		t.Errorf("%d frames read before the bound", frames)
	}
}

// A frame's strings are bounded by the game's cap on an answer: an
// answer no bot could send (over 6× the cap, every byte escaped) is
// refused, in memory, as a stream and from a file, the error naming it.
func TestAStringOverItsBoundIsRefused(t *testing.T) {
	req, rep := randomTanks(t, 7)
	b := req.ReplayBounds(DefaultReplayBudget)
	if b.String != 6*4<<10+1<<10 {
		t.Fatalf("a Tanks replay's string bound is %d", b.String)
	}
	rep.Frames[3].Bots[1].Answer = strings.Repeat(" ", int(b.String)+1)
	err := CheckReplay(req, rep)
	refusedOver(t, err, "the answer of seat 1 in frame 3")
	if !errors.Is(err, ErrForeignReplay) {
		t.Errorf("CheckReplay: %v", err)
	}
	data, err := EncodeReplay(rep)
	if err != nil {
		t.Fatal(err)
	}
	_, err = CheckReplayStream(req, bytes.NewReader(data), io.Discard, nil)
	refusedOver(t, err, "the answer of seat 1 in frame 3")
	path := filepath.Join(t.TempDir(), "r.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = ReadReplayWithin(path, func(game string) ReplayBounds { return BoundsFor(DefaultReplayBudget, AnswerCap(tanks.New())) })
	refusedOver(t, err, "the answer of seat 1 in frame 3")
	if _, err := ReadReplay(path); err != nil {
		t.Errorf("within the default bounds (any game's): %v", err)
	}
	// A string of a state, escapes and all.
	rep.Frames[3].Bots[1].Answer = "[]"
	rep.Frames[3].State = json.RawMessage(`{"a":"\"\\` + strings.Repeat(`\"`, int(b.String)) + `"}`)
	_, err = CheckReplayStream(req, bytes.NewReader(must(EncodeReplay(rep))), io.Discard, nil)
	refusedOver(t, err, "a string of frame 3's state")
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("(%d bytes)", 2*b.String+4)) {
		t.Errorf("the size of the string: %v", err)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// stringOver finds the first string over its bound, escaped quotes and
// backslashes counted as written.
func TestStringOver(t *testing.T) {
	for text, want := range map[string]int64{
		`{"a":"bcd","e":[1,"fg"]}`:   0,
		`{"a":"bcde"}`:               4,
		`{"abcdef":1}`:               6,
		`["\"\"",""]`:                4,
		`["\\","\\\\\\\"x"]`:         9,
		`["\\"]`:                     0,
		`[1,2,{"x":"\u0000\u0001"}]`: 12,
	} {
		if got := stringOver([]byte(text), 3); got != want {
			t.Errorf("%s: %d, want %d", text, got, want)
		}
	}
}

// A 2,000-turn Snake match's replay still decodes, compressed or not,
// and verifies, read whole, as a stream and checked as a worker's; a
// replay larger than zstd's window decodes too.
func TestALongReplayStillDecodes(t *testing.T) {
	req, rep := longSnake(t)
	dir := t.TempDir()
	b := BoundsFor(DefaultReplayBudget, AnswerCap(snake.New()))
	for _, name := range []string{"long.json", "long.json" + Compressed} {
		path := filepath.Join(dir, name)
		if err := WriteReplay(path, rep); err != nil {
			t.Fatal(err)
		}
		back, err := ReadReplayWithin(path, func(string) ReplayBounds { return b })
		if err != nil {
			t.Fatal(err)
		}
		if len(back.Frames) != 2001 || back.Result.Turns != 2000 {
			t.Fatalf("%s: %d frames, %d turns", name, len(back.Frames), back.Result.Turns)
		}
		if err := Verify([]engine.Game{snake.New()}, back); err != nil {
			t.Errorf("%s does not verify: %v", name, err)
		}
		if err := CheckReplay(req, back); err != nil {
			t.Errorf("%s fails its check: %v", name, err)
		}
	}
	data, err := EncodeReplay(rep)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("a 2,000-turn Snake replay: %d bytes of JSON", len(data))
	frames := 0
	if _, err := CheckReplayStreamWithin(req, b, bytes.NewReader(data), io.Discard, func(int, Frame) { frames++ }); err != nil || frames != 2001 {
		t.Errorf("checked as a stream: %d frames, %v", frames, err)
	}
	if err := ReplayFrames(bytes.NewReader(data), 1990, func(i int, _ json.RawMessage) error { frames++; return nil }); err != nil || frames != 2012 {
		t.Errorf("its last frames: %d, %v", frames-2001, err)
	}

	// Over 8 MiB (the zstd window) of frames, compressed.
	_, tk := randomTanks(t, 7)
	for len(tk.Frames) < 3000 {
		tk.Frames = append(tk.Frames, tk.Frames[1:100]...)
	}
	path := filepath.Join(dir, "big.json"+Compressed)
	if err := WriteReplay(path, tk); err != nil {
		t.Fatal(err)
	}
	if back, err := ReadReplay(path); err != nil || len(back.Frames) != len(tk.Frames) {
		t.Errorf("a replay larger than the window: %v", err)
	}
	if size := len(must(EncodeReplay(tk))); size < 16<<20 {
		t.Errorf("the big replay is only %d bytes", size)
	}
}
