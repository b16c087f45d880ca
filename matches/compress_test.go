package matches

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"arena/engine"
	"arena/engine/tanks"
)

// tanksReplay plays a whole Tanks match on the classic map between two
// players that move and fire at random, recorded as a match's replay is
// (states, answers, figures, some stderr).
func tanksReplay(t testing.TB, seed uint64) *Replay {
	t.Helper()
	g := tanks.New()
	m, err := g.Map("classic")
	if err != nil {
		t.Fatal(err)
	}
	match, err := g.NewMatch(engine.Config{Map: m, Seed: seed, Players: []string{"a", "b"}})
	if err != nil {
		t.Fatal(err)
	}
	rnd := rand.New(rand.NewPCG(seed, 1))
	rep := &Replay{Format: ReplayFormat, MatchID: "0123456789ab", Game: "tanks", Map: "classic", MapData: string(m.Data()), Seed: seed,
		Settings: match.Settings(), Bots: []ReplayBot{{Seat: 0, ID: "a", Image: "alice/bot:v1"}, {Seat: 1, ID: "b", Image: "bob/bot:v1"}}}
	rep.Frames = append(rep.Frames, Frame{Turn: 0, State: match.Frame()})
	for {
		st := match.Step()
		if st.Done {
			break
		}
		var replies []engine.Reply
		var bots []FrameBot
		for _, seat := range st.Await {
			answer := fmt.Sprintf(`[{"Type":%d,"Direction":%d}]`, rnd.IntN(2), rnd.IntN(4))
			cpu := int64(2000 + rnd.IntN(40000))
			fb := FrameBot{Seat: seat, Asked: true, Answer: answer, Status: "ok", TimeUS: cpu + int64(rnd.IntN(3000)), CPUUS: &cpu, MemPeakBytes: int64(4<<20 + rnd.IntN(1<<20))}
			if rnd.IntN(10) == 0 {
				fb.Stderr = fmt.Sprintf("turn %d: target at %d,%d\n", match.Turn()+1, rnd.IntN(30), rnd.IntN(30))
			}
			bots = append(bots, fb)
			replies = append(replies, engine.Reply{Seat: seat, Data: []byte(answer)})
		}
		match.Submit(replies)
		rep.Frames = append(rep.Frames, Frame{Turn: match.Turn(), State: match.Frame(), Bots: bots})
	}
	res := match.Result()
	rep.Result = Result{Turns: match.Turn()}
	for _, w := range res.Winners {
		rep.Result.Winners = append(rep.Result.Winners, rep.Bots[w].ID)
	}
	return rep
}

// A replay written compressed reads back as the one written as JSON, and
// takes at most a twentieth of its bytes.
func TestCompressedReplays(t *testing.T) {
	rep := tanksReplay(t, 7)
	dir := t.TempDir()
	plain, packed := filepath.Join(dir, "m.json"), filepath.Join(dir, "m.json"+Compressed)
	if err := WriteReplay(plain, rep); err != nil {
		t.Fatal(err)
	}
	if err := WriteReplay(packed, rep); err != nil {
		t.Fatal(err)
	}
	ps, _ := os.Stat(plain)
	zs, _ := os.Stat(packed)
	t.Logf("a Tanks replay of %d turns: %d bytes of JSON, %d compressed (1/%.0f)", rep.Result.Turns, ps.Size(), zs.Size(), float64(ps.Size())/float64(zs.Size()))
	if rep.Result.Turns < 50 {
		t.Fatalf("the match lasted %d turns: too short to measure", rep.Result.Turns)
	}
	if zs.Size()*20 > ps.Size() {
		t.Errorf("compressed %d bytes, more than a twentieth of the JSON's %d", zs.Size(), ps.Size())
	}
	want, _ := os.ReadFile(plain)
	for _, p := range []string{plain, packed} {
		f, err := OpenReplay(p)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(f)
		f.Close()
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s reads back other than the JSON written (%v)", filepath.Base(p), err)
		}
		back, err := ReadReplay(p)
		if err != nil || len(back.Frames) != len(rep.Frames) || back.Result.Turns != rep.Result.Turns {
			t.Errorf("ReadReplay(%s): %v", filepath.Base(p), err)
		}
	}
	// A file named .zst that is plain JSON, and one named .json that is
	// compressed, read by their content.
	swapped := filepath.Join(dir, "swapped.json")
	os.Rename(packed, swapped)
	if _, err := ReadReplay(swapped); err != nil {
		t.Errorf("a compressed replay named .json: %v", err)
	}
	// A spooled replay (a file) kept compressed; the spool file is gone.
	spool := filepath.Join(dir, "spool.json")
	os.WriteFile(spool, want, 0o600)
	kept := filepath.Join(dir, "kept.json"+Compressed)
	if err := MoveReplay(kept, &Replay{File: spool}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(spool); !os.IsNotExist(err) {
		t.Errorf("the spool file is still there: %v", err)
	}
	if back, err := ReadReplay(kept); err != nil || len(back.Frames) != len(rep.Frames) {
		t.Errorf("the kept replay: %v", err)
	}
	// Damage is named, not taken for a replay.
	data, _ := os.ReadFile(kept)
	bad := filepath.Join(dir, "bad.json"+Compressed)
	os.WriteFile(bad, append(data[:len(data)/2:len(data)/2], bytes.Repeat([]byte{0xff}, 64)...), 0o644)
	if _, err := ReadReplay(bad); err == nil || !strings.Contains(err.Error(), "not a replay") {
		t.Errorf("a damaged compressed replay: %v", err)
	}
	// Nothing half-written is left behind.
	left, _ := filepath.Glob(filepath.Join(dir, ".*"))
	if len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

// BenchmarkCompressReplay prints the sizes of a whole Tanks replay as
// JSON and compressed, and times compressing it.
func BenchmarkCompressReplay(b *testing.B) {
	rep := tanksReplay(b, 7)
	var plain bytes.Buffer
	if err := encodeReplay(&plain, rep); err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(b.TempDir(), "r.json"+Compressed)
	b.SetBytes(int64(plain.Len()))
	for b.Loop() {
		if err := WriteReplayBytes(path, plain.Bytes()); err != nil {
			b.Fatal(err)
		}
	}
	fi, _ := os.Stat(path)
	b.ReportMetric(float64(plain.Len()), "json-bytes")
	b.ReportMetric(float64(fi.Size()), "zst-bytes")
}
