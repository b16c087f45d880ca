package matches

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"

	"arena/engine"
)

// Mismatch is where a replay and the engine part ways.
type Mismatch struct {
	Turn int
	// Want is what the replay recorded, Got what the engine produced.
	Want, Got string
	Reason    string
}

func (m *Mismatch) Error() string {
	if m.Want == "" && m.Got == "" {
		return fmt.Sprintf("turn %d: %s", m.Turn, m.Reason)
	}
	return fmt.Sprintf("turn %d: %s\n  replay: %s\n  engine: %s", m.Turn, m.Reason, clip(m.Want), clip(m.Got))
}

func clip(s string) string {
	if len(s) > 400 {
		return s[:400] + "…"
	}
	return s
}

// Verify re-runs the game's engine on a replay's recorded answers and
// checks that it reproduces every frame and the result. It returns a
// *Mismatch for the first difference.
func Verify(games []engine.Game, r *Replay) error {
	v, err := newVerifier(games, r)
	if err != nil {
		return err
	}
	for _, fr := range r.Frames {
		if err := v.Frame(fr); err != nil {
			return err
		}
	}
	return v.Finish(r.Result)
}

// Verifier re-runs a replay's match in the engine frame by frame, as the
// frames come (a replay read from a stream need not be held whole).
type Verifier struct {
	match  engine.Match
	ids    []string
	frames int
}

// newVerifier starts the match a replay's header (everything but its
// frames and result) describes.
func newVerifier(games []engine.Game, r *Replay) (*Verifier, error) {
	game, err := engine.Find(games, r.Game)
	if err != nil {
		return nil, err
	}
	if _, ok := game.(engine.Hosted); ok {
		return nil, fmt.Errorf("%s is played by a program of its own: its replay is verified by playing it again (Orchestrator.VerifyHosted)", r.Game)
	}
	return NewVerifier(game, r)
}

// NewVerifier starts the match of a replay of game (the orchestrator
// drives one beside a game's own program to verify a hosted game).
func NewVerifier(game engine.Game, r *Replay) (*Verifier, error) {
	if r.Format == ReplayFormatV1 && r.Game == "pacman" {
		return nil, fmt.Errorf("this Pac-Man replay is in format %s, whose frames the engine no longer writes: it can be watched but not verified", ReplayFormatV1)
	}
	var m engine.Map
	var err error
	if _, hosted := game.(engine.Hosted); hosted {
		m, err = game.Map(r.Map) // the program makes its own world
	} else {
		m, err = game.ParseMap(r.Map, []byte(r.MapData))
	}
	if err != nil {
		return nil, fmt.Errorf("replay map: %w", err)
	}
	ids := make([]string, len(r.Bots))
	for i, b := range r.Bots {
		if b.Seat != i {
			return nil, fmt.Errorf("replay bots are not in seat order")
		}
		ids[i] = b.ID
	}
	match, err := game.NewMatch(engine.Config{Map: m, Seed: r.Seed, Players: ids, Settings: r.Settings})
	if err != nil {
		return nil, fmt.Errorf("replay settings: %w", err)
	}
	return &Verifier{match: match, ids: ids}, nil
}

// Match is the engine's match the verifier plays.
func (v *Verifier) Match() engine.Match { return v.match }

// Frame checks the next frame: the first is the initial state; each
// later one is what the engine makes of the answers it records.
func (v *Verifier) Frame(fr Frame) error {
	v.frames++
	match := v.match
	if v.frames == 1 {
		return sameFrame(fr, match)
	}
	records := map[int]FrameBot{}
	for _, b := range fr.Bots {
		if b.Asked || b.Fault != "" {
			records[b.Seat] = b
		}
	}
	for match.Turn() < fr.Turn {
		st := match.Step()
		if st.Done {
			return &Mismatch{Turn: fr.Turn, Reason: fmt.Sprintf("the engine ended the match after turn %d", match.Turn())}
		}
		replies := make([]engine.Reply, len(st.Await))
		for i, seat := range st.Await {
			rec, ok := records[seat]
			if !ok {
				return &Mismatch{Turn: fr.Turn, Reason: fmt.Sprintf("the engine asks seat %d, the replay has no answer from it", seat)}
			}
			data, err := rec.Message()
			if err != nil {
				return &Mismatch{Turn: fr.Turn, Reason: fmt.Sprintf("seat %d: undecodable answer: %v", seat, err)}
			}
			replies[i] = engine.Reply{Seat: seat, Data: data, Fault: rec.Fault, Time: rec.Counted()}
		}
		match.Submit(replies)
	}
	if match.Turn() != fr.Turn {
		return &Mismatch{Turn: fr.Turn, Reason: fmt.Sprintf("the engine is at turn %d", match.Turn())}
	}
	return sameFrame(fr, match)
}

// Finish checks that the match ends after the last frame with the
// recorded result.
func (v *Verifier) Finish(res Result) error {
	match := v.match
	if v.frames == 0 {
		return &Mismatch{Reason: "the replay has no frames"}
	}
	if st := match.Step(); !st.Done {
		return &Mismatch{Turn: match.Turn(), Reason: "the engine goes on after the replay's last frame"}
	}
	er := match.Result()
	winners := make([]string, len(er.Winners))
	for i, w := range er.Winners {
		winners[i] = v.ids[w]
	}
	if !slices.Equal(winners, res.Winners) {
		return &Mismatch{Turn: match.Turn(), Reason: "different winners", Want: fmt.Sprint(res.Winners), Got: fmt.Sprint(winners)}
	}
	for i, sr := range er.Seats {
		if i >= len(res.Bots) {
			break
		}
		b := res.Bots[i]
		if b.Score != sr.Score || b.DeathReason != sr.DeathReason || b.DeathTurn != sr.DeathTurn {
			return &Mismatch{Turn: match.Turn(), Reason: fmt.Sprintf("different result for %s", v.ids[i]),
				Want: fmt.Sprintf("score %d, death %q at %d", b.Score, b.DeathReason, b.DeathTurn),
				Got:  fmt.Sprintf("score %d, death %q at %d", sr.Score, sr.DeathReason, sr.DeathTurn)}
		}
	}
	return nil
}

func sameFrame(fr Frame, m engine.Match) error {
	got := m.Frame()
	if sameJSON(fr.State, got) {
		return nil
	}
	return &Mismatch{Turn: fr.Turn, Reason: "the state differs", Want: string(fr.State), Got: string(got)}
}

// sameJSON compares two JSON documents by value: the bytes first, then,
// if they differ in form only (spacing, escapes), the decoded values.
func sameJSON(a, b []byte) bool {
	if bytes.Equal(a, b) {
		return true
	}
	var va, vb any
	if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil {
		return false
	}
	return reflect.DeepEqual(va, vb)
}
