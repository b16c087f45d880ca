package tanks

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"testing"

	"arena/engine"
	"arena/internal/testsupport/golden"
)

// scriptedAnswer is a deterministic stand-in for a bot: a mix of moves,
// shots, empty answers, lenient syntax and the odd unparsable line.
func scriptedAnswer(r *engine.Rand) []byte {
	dirs := []string{"Up", "Down", "Left", "Right"}
	switch n := r.IntN(20); {
	case n == 0:
		return []byte("[]")
	case n == 19:
		return []byte("fire!")
	case n == 1:
		return []byte(fmt.Sprintf("[{'Type': 0, 'Direction': %d}]", r.IntN(4)))
	case n < 8:
		return []byte(fmt.Sprintf(`[{"Type":"Shoot","Direction":%q}]`, dirs[r.IntN(4)]))
	default:
		return []byte(fmt.Sprintf(`[{"Type":0,"Direction":%d}]`, r.IntN(4)))
	}
}

// playScripted plays a whole match through the engine.Match contract and
// returns a transcript: the first and the last frame in full, and for every
// frame its events and a digest of its state, then the result.
func playScripted(t *testing.T, mapName string, players int, seed uint64) []byte {
	t.Helper()
	m := mustMap(t, mapName)
	ids := make([]string, players)
	for i := range ids {
		ids[i] = fmt.Sprintf("bot%d", i)
	}
	match, err := New().NewMatch(engine.Config{Map: m, Seed: seed, Players: ids})
	if err != nil {
		t.Fatal(err)
	}
	answers := engine.NewRand(seed, 99)
	var out bytes.Buffer
	out.Write(match.Frame())
	out.WriteByte('\n')
	var last json.RawMessage
	for turn := 0; ; turn++ {
		if turn > 2000 {
			t.Fatal("the match did not end")
		}
		st := match.Step()
		if st.Done {
			break
		}
		if len(st.Send) != len(st.Await) {
			t.Fatalf("turn %d: %d messages for %d awaited seats", turn, len(st.Send), len(st.Await))
		}
		replies := make([]engine.Reply, len(st.Await))
		for i, seat := range st.Await {
			if match.Out(seat) {
				t.Fatalf("turn %d: seat %d is out but awaited", turn, seat)
			}
			replies[i] = engine.Reply{Seat: seat, Data: scriptedAnswer(answers)}
			if seat == 0 && turn%17 == 16 {
				replies[i].Fault = engine.StatusTimeout // the faulted tank idles
			}
		}
		for _, rej := range match.Submit(replies) {
			fmt.Fprintf(&out, "rejected seat %d: %s\n", rej.Seat, rej.Reason)
		}
		last = match.Frame()
		var f struct {
			Turn   int
			State  json.RawMessage
			Events json.RawMessage
		}
		if err := json.Unmarshal(last, &f); err != nil {
			t.Fatalf("frame %d is not JSON: %v", turn+1, err)
		}
		fmt.Fprintf(&out, "turn %d state %x events %s\n", f.Turn, sha256.Sum256(f.State), f.Events)
	}
	out.Write(last)
	out.WriteByte('\n')
	res, _ := json.Marshal(match.Result())
	out.Write(res)
	out.WriteByte('\n')
	return out.Bytes()
}

func TestGoldenMatches(t *testing.T) {
	for _, tt := range []struct {
		mapName string
		players int
		seed    uint64
	}{
		{"classic", 2, 7},
		{"triad", 3, 1},
		{"crossroads", 4, 0},
	} {
		name := fmt.Sprintf("%s-seed%d", tt.mapName, tt.seed)
		t.Run(name, func(t *testing.T) {
			got := playScripted(t, tt.mapName, tt.players, tt.seed)
			if again := playScripted(t, tt.mapName, tt.players, tt.seed); !bytes.Equal(got, again) {
				t.Fatal("the same seed and answers played two different matches")
			}
			golden.Check(t, name, got)
		})
	}
}
