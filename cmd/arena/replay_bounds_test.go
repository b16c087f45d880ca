package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"arena/engine/snake"
	"arena/matches"
	"arena/orchestrator"
	"arena/orchestrator/fake"
)

// zstdRLE is a zstd frame that decompresses to head, n bytes of fill and
// tail, the fill in RLE blocks of 128 KiB, 4 bytes each (a GiB in 32 KiB).
func zstdRLE(head string, fill byte, n int64, tail string) []byte {
	const block = 128 << 10
	out := []byte{0x28, 0xb5, 0x2f, 0xfd, 0x00, 7 << 3} // no content size, no checksum, a 128 KiB window
	header := func(last bool, kind, size int) {
		v := size<<3 | kind<<1
		if last {
			v |= 1
		}
		out = append(out, byte(v), byte(v>>8), byte(v>>16))
	}
	raw := func(b string) {
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

// The replay commands refuse the replay bomb of issue #59 (a 33 KB file
// holding a 1 GiB string: arena replay verify took 20 s and 3.78 GB) as
// soon as the frame that holds it passes its bound, a Tanks replay's
// (16 MiB), before any container: exit status 2, the error naming what
// is over its bound.
func TestReplayCommandsRefuseABomb(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bomb.json.zst")
	head := `{"format":"arena-replay/2","match_id":"bomb00000001","game":"tanks","frames":[{"turn":0,"state":{}},{"turn":1,"state":{},"bots":[{"seat":0,"asked":true,"answer":"`
	if err := os.WriteFile(path, zstdRLE(head, 'a', 1<<30, `","status":"ok"}]}],"result":{}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"replay", "verify", path},
		{"replay", "export", "--format", "saiblo", path},
		{"replay", "rerun", path, "--seat", "0"},
	} {
		var code int
		var stderr string
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		code, _, stderr = arena(t, args...)
		runtime.ReadMemStats(&after)
		if n := after.TotalAlloc - before.TotalAlloc; n > 200<<20 {
			t.Errorf("arena %s allocated %d MiB", args[1], n>>20)
		}
		if code != exitUsage || !strings.Contains(stderr, path+": frame 1 is over its bound of 16 MiB") {
			t.Errorf("arena %s: exit %d, %s", args[1], code, stderr)
		}
	}
}

// A 2,000-turn Snake match played by two bots that go round loops in
// the middle of the board verifies (arena replay verify), compressed.
func TestReplayVerifyOfALongSnakeMatch(t *testing.T) {
	rows := make([][]byte, 30)
	for x := range rows {
		rows[x] = []byte(strings.Repeat(".", 60))
	}
	rows[10][12], rows[16][12] = '1', '2'
	var file strings.Builder
	file.WriteString("30 60\n")
	for _, r := range rows {
		file.Write(r)
		file.WriteByte('\n')
	}
	m, err := snake.ParseMap("loops", []byte(file.String()))
	if err != nil {
		t.Fatal(err)
	}
	images := []string{"bot/a", "bot/b"}
	scripts := map[string]fake.Script{}
	for seat, top := range []int{10, 16} {
		loop := loopOf(top, 12, top+3, 33)
		scripts[images[seat]] = fake.Script{Answer: func(n int, _ [][]byte) []byte {
			next := loop[n%len(loop)]
			return fmt.Appendf(nil, `{"X":%d,"Y":%d}`, next[0], next[1])
		}}
	}
	req := matches.Request{Game: snake.New(), Map: m, Seed: 5, MatchID: "snakelong002", Images: images,
		ImageIDs: []string{fake.ImageID(images[0]), fake.ImageID(images[1])}, Settings: []byte(`{"max_rounds":2000,"apples":0,"shields":0}`)}
	rep, err := orchestrator.New(fake.NewLauncher(scripts)).Play(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Result.Turns != 2000 {
		t.Fatalf("the match lasted %d turns: %+v", rep.Result.Turns, rep.Result.Bots)
	}
	path := filepath.Join(t.TempDir(), "long.json"+matches.Compressed)
	if err := matches.WriteReplay(path, rep); err != nil {
		t.Fatal(err)
	}
	if code, out, stderr := arena(t, "replay", "verify", path); code != 0 || !strings.Contains(out, ": ok, 2001 frames reproduced") {
		t.Errorf("arena replay verify: exit %d, %s%s", code, out, stderr)
	}
}

// loopOf is the cycle of cells round the rectangle rows x0..x1, columns
// y0..y1, clockwise from (x0, y0).
func loopOf(x0, y0, x1, y1 int) [][2]int {
	var c [][2]int
	for y := y0; y < y1; y++ {
		c = append(c, [2]int{x0, y})
	}
	for x := x0; x < x1; x++ {
		c = append(c, [2]int{x, y1})
	}
	for y := y1; y > y0; y-- {
		c = append(c, [2]int{x1, y})
	}
	for x := x1; x > x0; x-- {
		c = append(c, [2]int{x, y0})
	}
	return c
}
