package tanks

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestStateLine(t *testing.T) {
	g := board(t, DefaultSettings(), "ab", "2~")
	g.userIDs[0], _ = json.Marshal("bots/random")
	g.userIDs[1], _ = json.Marshal("bots/random#2")
	g.tick(map[int][]action{0: shoot(dirRight)}) // created on b: b loses 1
	g.tick(map[int][]action{0: shoot(dirDown)})  // created on the barrier: it loses 1
	g.bullets = append(g.bullets, bullet{at: point{2, 1}, dir: dirLeft, owner: 1})

	got := string(g.appendState(nil))
	var want strings.Builder
	want.WriteString(`{"ContentsInfo":[`)
	want.WriteString(`{"Coordinates":{"X":0,"Y":0},"HealthCount":255,"Type":2},{"Coordinates":{"X":1,"Y":0},"HealthCount":255,"Type":2},{"Coordinates":{"X":2,"Y":0},"HealthCount":255,"Type":2},{"Coordinates":{"X":3,"Y":0},"HealthCount":255,"Type":2},`)
	want.WriteString(`{"Coordinates":{"X":0,"Y":1},"HealthCount":255,"Type":2},{"Coordinates":{"X":1,"Y":1},"HealthCount":1,"Type":1},{"Coordinates":{"X":2,"Y":1},"HealthCount":255,"Type":3},{"Coordinates":{"X":3,"Y":1},"HealthCount":255,"Type":2},`)
	want.WriteString(`{"Coordinates":{"X":0,"Y":2},"HealthCount":255,"Type":2},{"Coordinates":{"X":1,"Y":2},"HealthCount":3,"Type":0,"UserId":"bots/random"},{"Coordinates":{"X":2,"Y":2},"HealthCount":2,"Type":0,"UserId":"bots/random#2"},{"Coordinates":{"X":3,"Y":2},"HealthCount":255,"Type":2},`)
	want.WriteString(`{"Coordinates":{"X":0,"Y":3},"HealthCount":255,"Type":2},{"Coordinates":{"X":1,"Y":3},"HealthCount":255,"Type":2},{"Coordinates":{"X":2,"Y":3},"HealthCount":255,"Type":2},{"Coordinates":{"X":3,"Y":3},"HealthCount":255,"Type":2}`)
	want.WriteString(`],"BulletsInfo":[{"Coordinates":{"X":2,"Y":1},"Direction":2,"OwnerId":"bots/random#2"}],"ZoneRadius":98}`)
	if got != want.String() {
		t.Errorf("state line:\n got %s\nwant %s", got, want.String())
	}
	// It is valid JSON, and its field names are the original's.
	var decoded struct {
		ContentsInfo []struct {
			Coordinates struct{ X, Y int }
			HealthCount int
			Type        int
			UserId      string
		}
		BulletsInfo []struct {
			Coordinates struct{ X, Y int }
			Direction   int
			OwnerId     string
		}
		ZoneRadius int
	}
	if err := json.Unmarshal([]byte(got), &decoded); err != nil {
		t.Fatal(err)
	}
}

func TestStateLineEscapesIDs(t *testing.T) {
	g := newMatch(mustMap(t, "classic"), DefaultSettings(), 1, []string{`we"ird\name`, "ok"})
	var v map[string]any
	if err := json.Unmarshal(g.appendState(nil), &v); err != nil {
		t.Fatalf("state with a quote in an id is not JSON: %v", err)
	}
}

func TestParseActions(t *testing.T) {
	tests := []struct {
		give    string
		want    []action
		wantErr string
	}{
		{give: `[{"Type":1,"Direction":3}]`, want: []action{{actionShoot, dirRight}}},
		{give: `[{"Type":0,"Direction":0}]`, want: []action{{actionMove, dirUp}}},
		{give: `[]`, want: nil},
		{give: `  [ ]  `, want: nil},
		// The original sample bots' output.
		{give: `[{'Type': 0, 'Direction': 2}]`, want: []action{{actionMove, dirLeft}}},
		{give: `[ { Type: 0, Direction: 1 } ]`, want: []action{{actionMove, dirDown}}},
		// Case-insensitive names, enum names, numeric strings.
		{give: `[{"type":"Shoot","direction":"Left"}]`, want: []action{{actionShoot, dirLeft}}},
		{give: `[{"TYPE":"shoot","DIRECTION":"RIGHT"}]`, want: []action{{actionShoot, dirRight}}},
		{give: `[{"Type":"1","Direction":"2"}]`, want: []action{{actionShoot, dirLeft}}},
		{give: `[{"Type":1.0,"Direction":3}]`, want: []action{{actionShoot, dirRight}}},
		// Missing fields take 0 (Move, Up), unknown fields are ignored.
		{give: `[{"Type":1}]`, want: []action{{actionShoot, dirUp}}},
		{give: `[{}]`, want: []action{{actionMove, dirUp}}},
		{give: `[{"Type":1,"Direction":3,"Comment":"hi"}]`, want: []action{{actionShoot, dirRight}}},
		// A repeated key: the last value wins, whatever the case.
		{give: `[{"Type":0,"type":1,"Direction":3}]`, want: []action{{actionShoot, dirRight}}},
		// Unknown numbers parse (the action is ignored by the rules).
		{give: `[{"Type":7,"Direction":9}]`, want: []action{{7, 9}}},
		{give: `[{"Type":1,"Direction":3},{"Type":0,"Direction":1}]`, want: []action{{actionShoot, dirRight}, {actionMove, dirDown}}},
		{give: "[{\"Type\":1,\"Direction\":3}]\r", want: []action{{actionShoot, dirRight}}},

		{give: ``, wantErr: "unexpected end of input"},
		{give: `garbage`, wantErr: "answer is a string"},
		{give: `{"Type":1,"Direction":3}`, wantErr: "answer is an object"},
		{give: `null`, wantErr: "answer is null"},
		{give: `[1,2]`, wantErr: "action 0 is a number"},
		{give: `[{"Type":"Jump","Direction":3}]`, wantErr: `unknown value "Jump"`},
		{give: `[{"Type":true}]`, wantErr: "a boolean is not a number"},
		{give: `[{"Type":1.5}]`, wantErr: "1.5 is not an integer"},
		{give: `[{"Type":1,"Direction":3}] extra`, wantErr: "after the value"},
		{give: `[{"Type":1,"Direction":3}`, wantErr: "end of input"},
		{give: `[{"Type" 1}]`, wantErr: "missing ':'"},
		{give: `['unterminated]`, wantErr: "unterminated string"},
		{give: "[\xff]", wantErr: "not valid UTF-8"},
		{give: strings.Repeat("[", 100) + strings.Repeat("]", 100), wantErr: "nested too deeply"},
	}
	for _, tt := range tests {
		t.Run(tt.give, func(t *testing.T) {
			got, err := parseActions([]byte(tt.give))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to mention %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func FuzzParseActions(f *testing.F) {
	for _, s := range []string{`[{"Type":1,"Direction":3}]`, `[{'Type': 0, 'Direction': 2}]`, `[ { Type: 0, Direction: 1 } ]`, `[`, `"\u00`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = parseActions(b) // must not panic or hang
	})
}
