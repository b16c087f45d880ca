package matches

import (
	"encoding/json"
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
