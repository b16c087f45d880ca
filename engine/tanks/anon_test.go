package tanks

import (
	"encoding/json"
	"regexp"
	"testing"

	"arena/engine"
)

// stateOf is what one seat was sent, decoded.
type sentState struct {
	ContentsInfo []struct {
		Type   int
		UserId string
	}
	BulletsInfo []struct{ OwnerId string }
}

func anonMatch(t *testing.T, settings string, seed uint64) engine.Match {
	t.Helper()
	m, err := New().Map("triad")
	if err != nil {
		t.Fatal(err)
	}
	g, err := New().NewMatch(engine.Config{Map: m, Seed: seed, Players: []string{"bots/a", "bots/b", "bots/a#2"}, Settings: json.RawMessage(settings)})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// sent plays turns turns (every tank shoots right, then left) and returns
// what each seat was sent in each turn.
func sent(t *testing.T, g engine.Match, turns int) [][]sentState {
	t.Helper()
	var out [][]sentState
	for range turns {
		st := g.Step()
		if st.Done {
			break
		}
		byseat := make([]sentState, 3)
		for _, m := range st.Send {
			if err := json.Unmarshal(m.Data, &byseat[m.Seat]); err != nil {
				t.Fatalf("seat %d: %v", m.Seat, err)
			}
		}
		out = append(out, byseat)
		var rs []engine.Reply
		for _, s := range st.Await {
			rs = append(rs, engine.Reply{Seat: s, Data: []byte(`[{"Type":1,"Direction":3}]`)})
		}
		g.Submit(rs)
	}
	return out
}

var guidRe = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

func TestAnonymousIDs(t *testing.T) {
	players := []string{"bots/a", "bots/b", "bots/a#2"}
	turns := sent(t, anonMatch(t, `{"anonymous_ids":true}`, 7), 4)
	seen := map[string]bool{}
	bullets := 0
	for turn, byseat := range turns {
		for seat, s := range byseat {
			own := 0
			for _, c := range s.ContentsInfo {
				if c.Type != int(cellTank) {
					continue
				}
				switch {
				case c.UserId == players[seat]:
					own++
				case !guidRe.MatchString(c.UserId):
					t.Errorf("turn %d, seat %d sees a tank as %q, not a fresh id", turn, seat, c.UserId)
				case seen[c.UserId]:
					t.Errorf("turn %d, seat %d: id %s was shown before", turn, seat, c.UserId)
				default:
					seen[c.UserId] = true
				}
			}
			if own != 1 {
				t.Errorf("turn %d, seat %d sees its own tank %d times", turn, seat, own)
			}
			for _, b := range s.BulletsInfo {
				bullets++
				if b.OwnerId != "bots/a" && b.OwnerId != "bots/b" && b.OwnerId != "bots/a#2" {
					t.Errorf("a bullet's owner shows as %q, want the real id", b.OwnerId)
				}
			}
		}
	}
	if len(seen) != 4*3*2 || bullets == 0 {
		t.Errorf("%d fresh ids and %d bullets seen in 4 turns, want 24 and some", len(seen), bullets)
	}
	// The ids come from the seed: the same seed shows the same ids.
	again := sent(t, anonMatch(t, `{"anonymous_ids":true}`, 7), 4)
	if a, b := mustJSON(t, turns), mustJSON(t, again); a != b {
		t.Error("the same seed showed other ids")
	}
	if a, b := mustJSON(t, turns), mustJSON(t, sent(t, anonMatch(t, `{"anonymous_ids":true}`, 8), 4)); a == b {
		t.Error("another seed showed the same ids")
	}
}

// Off by default: every seat gets the same state with the real ids, and
// the effective settings do not mention it.
func TestAnonymousIDsOffByDefault(t *testing.T) {
	g := anonMatch(t, ``, 7)
	st := g.Step()
	for _, m := range st.Send[1:] {
		if string(m.Data) != string(st.Send[0].Data) {
			t.Fatal("the seats were sent different states")
		}
	}
	if s := string(g.Settings()); s != `{"tank_health":3,"action_points":1,"bullet_action_points":2,"zone_radius":100}` {
		t.Errorf("settings %s", s)
	}
	if s := string(anonMatch(t, `{"anonymous_ids":true}`, 7).Settings()); s != `{"tank_health":3,"action_points":1,"bullet_action_points":2,"zone_radius":100,"anonymous_ids":true}` {
		t.Errorf("settings %s", s)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
