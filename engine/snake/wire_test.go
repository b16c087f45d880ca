package snake

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

func ExampleGame_Protocol() {
	p := New().Protocol()
	fmt.Println(p.Framing, p.AnswerTimeout, p.WarmUp, p.MaxMessageBytes)
	// Output: lines 100ms 20s 4096
}

func TestStateLine(t *testing.T) {
	g := board(t,
		"aAo.",
		".O#b",
		"...B")
	g.turn = 11 // the line is for round 12; P = 4·12/3 = 16
	g.snakes[0].score = 5
	g.snakes[1].shield = 7
	want := []string{
		`{"round":12,"round_to_shrink":4,"row_cnt":3,"col_cnt":4,"mat":["11o.",".O#2","...2"],` +
			`"you":1,"your_posx":0,"your_posy":1,"opponent_posx":2,"opponent_posy":3,` +
			`"your_status":0,"opponent_status":7,"your_score":5,"opponent_score":2,` +
			`"your_body":[[0,1],[0,0]],"opponent_body":[[2,3],[1,3]]}`,
		`{"round":12,"round_to_shrink":4,"row_cnt":3,"col_cnt":4,"mat":["11o.",".O#2","...2"],` +
			`"you":2,"your_posx":2,"your_posy":3,"opponent_posx":0,"opponent_posy":1,` +
			`"your_status":7,"opponent_status":0,"your_score":2,"opponent_score":5,` +
			`"your_body":[[2,3],[1,3]],"opponent_body":[[0,1],[0,0]]}`,
	}
	for seat, w := range want {
		if got := string(g.appendState(nil, seat)); got != w {
			t.Errorf("seat %d:\n got %s\nwant %s", seat, got, w)
		}
	}
	st := g.Step()
	if st.Done || len(st.Send) != 2 || len(st.Await) != 2 || st.Await[0] != 0 || st.Await[1] != 1 {
		t.Fatalf("step %+v, want both seats sent to and awaited", st)
	}
	for i, m := range st.Send {
		if m.Seat != i || string(m.Data) != want[i]+"\n" {
			t.Errorf("message %d to seat %d:\n%s", i, m.Seat, m.Data)
		}
	}
	// The keys are the spec's, in its order, and the line is valid JSON.
	var keys []string
	dec := json.NewDecoder(bytes.NewReader(st.Send[0].Data))
	if _, err := dec.Token(); err != nil {
		t.Fatal(err)
	}
	for dec.More() {
		k, _ := dec.Token()
		keys = append(keys, k.(string))
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
	}
	if got := strings.Join(keys, " "); got != "round round_to_shrink row_cnt col_cnt mat you your_posx your_posy opponent_posx opponent_posy your_status opponent_status your_score opponent_score your_body opponent_body" {
		t.Errorf("keys %s", got)
	}
}

func TestStepAfterTheEnd(t *testing.T) {
	g := board(t, "A....", ".....", "....B")
	g.moveBy("UL")
	if st := g.Step(); !st.Done || len(st.Send) != 0 || len(st.Await) != 0 {
		t.Errorf("step after the end: %+v", st)
	}
	if rej := g.Submit(nil); rej != nil || g.Turn() != 1 {
		t.Errorf("a submit after the end played: turn %d", g.Turn())
	}
}

func TestFrame(t *testing.T) {
	g := board(t,
		"aAo.",
		".O#b",
		"...B")
	want0 := `{"round":0,"rows":3,"cols":4,"board":["11o.",".O#2","...2"],"shrink_period":16,"rings":2,"rings_closed":0,"round_to_shrink":15,"over":false,` +
		`"snakes":[{"seat":0,"alive":true,"body":[[0,1],[0,0]],"score":2,"status":0,"shield":0,"death_reason":"","death_round":0},` +
		`{"seat":1,"alive":true,"body":[[2,3],[1,3]],"score":2,"status":0,"shield":0,"death_reason":"","death_round":0}],` +
		`"items":[{"type":"apple","at":[0,2]},{"type":"shield","at":[1,1]}],"events":[]}`
	if got := string(g.Frame()); got != want0 {
		t.Errorf("frame 0:\n got %s\nwant %s", got, want0)
	}
	g.moveBy("RL") // A eats the apple; the apple reappears
	g.moveBy("UL") // A off the board
	want2 := `{"round":2,"rows":3,"cols":4,"board":["o...",".O#.",".22."],"shrink_period":16,"rings":2,"rings_closed":0,"round_to_shrink":13,"over":true,` +
		`"snakes":[{"seat":0,"alive":false,"body":[],"score":3,"status":-1,"shield":0,"death_reason":"wall","death_round":2},` +
		`{"seat":1,"alive":true,"body":[[2,1],[2,2]],"score":2,"status":0,"shield":0,"death_reason":"","death_round":0}],` +
		`"items":[{"type":"apple","at":[0,0]},{"type":"shield","at":[1,1]}],` +
		`"events":[{"type":"died","seat":0,"reason":"wall","at":[0,2],"to":[-1,2]}]}`
	if got := string(g.Frame()); got != want2 {
		t.Errorf("frame 2:\n got %s\nwant %s", got, want2)
	}
	var f any
	if err := json.Unmarshal(g.Frame(), &f); err != nil {
		t.Fatalf("the frame is not JSON: %v", err)
	}
}

func TestFrameEvents(t *testing.T) {
	g := board(t, "aAo.", ".O#b", "...B")
	g.moveBy("RL")
	var f struct {
		Events []json.RawMessage `json:"events"`
	}
	if err := json.Unmarshal(g.Frame(), &f); err != nil {
		t.Fatal(err)
	}
	if len(f.Events) != 2 || string(f.Events[0]) != `{"type":"ate","seat":0,"item":"apple","at":[0,2]}` ||
		!strings.HasPrefix(string(f.Events[1]), `{"type":"spawn","item":"apple","at":[`) {
		t.Errorf("events %s", f.Events)
	}
	g.turn = g.period - 2
	g.moveBy("RL") // A: (0,3); B: (2,1); ring 0 closes
	if err := json.Unmarshal(g.Frame(), &f); err != nil {
		t.Fatal(err)
	}
	if len(f.Events) == 0 || string(f.Events[0]) != `{"type":"shrink","ring":0}` {
		t.Errorf("events %s, want a shrink", f.Events)
	}
}

func TestParseMove(t *testing.T) {
	tests := []struct {
		give    string
		want    point
		wantErr string
	}{
		{give: `{"X":3,"Y":4}`, want: point{3, 4}},
		{give: `{"x":3,"y":4}`, want: point{3, 4}},
		{give: `{"Y":4,"X":3,"comment":"hi"}`, want: point{3, 4}},
		{give: " {\"X\": -1, \"Y\": 0}\r\n", want: point{-1, 0}},
		{give: `{"X":3.0,"Y":4e0}`, want: point{3, 4}},
		{give: `{"X":1,"x":3,"Y":4}`, want: point{3, 4}}, // the last key wins
		{give: `{"X":99999999999999999999,"Y":-1e300}`, want: point{farAway, farAway}},

		{give: ``, wantErr: "not a JSON object"},
		{give: `up`, wantErr: "not a JSON object"},
		{give: `[3,4]`, wantErr: "not a JSON object"},
		{give: `{"X":3,"Y":4} {}`, wantErr: "not a JSON object"},
		{give: `{"X":3,"Y":4`, wantErr: "not a JSON object"},
		{give: `null`, wantErr: "answer has no X"},
		{give: `{}`, wantErr: "answer has no X"},
		{give: `{"X":3}`, wantErr: "answer has no Y"},
		{give: `{"X":3.5,"Y":4}`, wantErr: "X is 3.5, want an integer"},
		{give: `{"X":"3","Y":4}`, wantErr: `X is "3", want an integer`},
		{give: `{"X":null,"Y":4}`, wantErr: "X is null, want an integer"},
		{give: `{"X":3,"Y":[4]}`, wantErr: "Y is [4], want an integer"},
		{give: `{"X":true,"Y":4}`, wantErr: "X is true, want an integer"},
		{give: `{"X":"` + strings.Repeat("é", 40) + `","Y":4}`, wantErr: "want an integer"},
		{give: "{\"X\":3,\"Y\":4,\"z\":\"\xff\"}", wantErr: "not valid UTF-8"},
	}
	for _, tt := range tests {
		t.Run(tt.give, func(t *testing.T) {
			got, err := parseMove([]byte(tt.give))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to mention %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{`{"X":3,"Y":4}`, `{"x":-1,"y":0}`, `{"X":3.0,"Y":1e3}`, `{"X":"3"}`, `[`, `{"X":1e999,"Y":0}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := parseMove(b) // must not panic
		if err != nil {
			return
		}
		if p.X > farAway || p.X < -farAway || p.Y > farAway || p.Y < -farAway {
			t.Errorf("%q gave %v, beyond ±farAway", b, p)
		}
	})
}
