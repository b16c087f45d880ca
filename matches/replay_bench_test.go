package matches

import (
	"bytes"
	"encoding/json"
	"io"
	"path/filepath"
	"testing"

	"arena/engine"
	"arena/engine/tanks"
)

// BenchmarkWriteReplay times saving a 100-turn Tanks replay.
func BenchmarkWriteReplay(b *testing.B) {
	m, err := tanks.New().Map("classic")
	if err != nil {
		b.Fatal(err)
	}
	match, err := tanks.New().NewMatch(engine.Config{Map: m, Seed: 1, Players: []string{"a", "b"}})
	if err != nil {
		b.Fatal(err)
	}
	rep := &Replay{Format: ReplayFormat, Game: "tanks", Map: "classic", MapData: string(m.Data()), Settings: json.RawMessage(`{}`)}
	for turn := 0; turn <= 100; turn++ {
		fr := Frame{Turn: turn, State: match.Frame()}
		if turn > 0 {
			us := int64(250)
			fr.Bots = []FrameBot{
				{Seat: 0, Asked: true, Answer: `[{"Type":0,"Direction":1}]`, Status: "ok", TimeUS: 300, CPUUS: &us},
				{Seat: 1, Asked: true, Answer: `[{"Type":1,"Direction":2}]`, Status: "ok", TimeUS: 280, CPUUS: &us, Stderr: "firing\n"},
			}
		}
		rep.Frames = append(rep.Frames, fr)
	}
	path := filepath.Join(b.TempDir(), "r.json")
	b.ReportAllocs()
	for b.Loop() {
		if err := WriteReplay(path, rep); err != nil {
			b.Fatal(err)
		}
	}
}

// benchReplays are the replays the reading benchmarks read: a Tanks
// match of two random tanks, and a 2,000-turn Snake match.
var benchReplays = []struct {
	name string
	make func(testing.TB) (Request, *Replay)
}{
	{"tanks", func(t testing.TB) (Request, *Replay) { return randomTanks(t, 7) }},
	{"snake-2000-turns", longSnake},
}

// benchJSON is a replay's JSON, its size set as the benchmark's bytes.
func benchJSON(b *testing.B, rep *Replay) []byte {
	var buf bytes.Buffer
	if err := encodeReplay(&buf, rep); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(buf.Len()))
	b.ReportAllocs()
	return buf.Bytes()
}

// BenchmarkReadReplay times reading a compressed replay file whole
// (ReadReplay, as arena replay verify reads one).
func BenchmarkReadReplay(b *testing.B) {
	for _, c := range benchReplays {
		b.Run(c.name, func(b *testing.B) {
			_, rep := c.make(b)
			path := filepath.Join(b.TempDir(), "r.json"+Compressed)
			if err := WriteReplay(path, rep); err != nil {
				b.Fatal(err)
			}
			benchJSON(b, rep)
			for b.Loop() {
				if _, err := ReadReplay(path); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkCheckReplayStream times the server's check of a worker's
// replay as it streams in (CheckReplayStream, the engine playing it
// again included).
func BenchmarkCheckReplayStream(b *testing.B) {
	for _, c := range benchReplays {
		b.Run(c.name, func(b *testing.B) {
			req, rep := c.make(b)
			data := benchJSON(b, rep)
			for b.Loop() {
				if _, err := CheckReplayStream(req, bytes.NewReader(data), io.Discard, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkReplayFrames times a stored replay's frames read one by one
// (ReplayFrames, a viewer's catch-up).
func BenchmarkReplayFrames(b *testing.B) {
	for _, c := range benchReplays {
		b.Run(c.name, func(b *testing.B) {
			_, rep := c.make(b)
			data := benchJSON(b, rep)
			for b.Loop() {
				if err := ReplayFrames(bytes.NewReader(data), 0, func(int, json.RawMessage) error { return nil }); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
