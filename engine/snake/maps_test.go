package snake

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"arena/engine"
)

func mustMap(t *testing.T, name string) *Map {
	t.Helper()
	m, err := loadShippedMap(name)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestShippedMaps(t *testing.T) {
	want := []engine.MapInfo{
		{Name: "open10", Width: 10, Height: 10, MinPlayers: 2, MaxPlayers: 2},
		{Name: "walls20", Width: 20, Height: 20, MinPlayers: 2, MaxPlayers: 2},
		{Name: "corridor30x15", Width: 30, Height: 15, MinPlayers: 2, MaxPlayers: 2},
		{Name: "wide60x30", Width: 60, Height: 30, MinPlayers: 2, MaxPlayers: 2},
	}
	got := New().Maps()
	if len(got) != len(want) {
		t.Fatalf("maps %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("map %d: %+v, want %+v", i, got[i], want[i])
		}
	}
}

// Every shipped map is fair: turned half a turn, with regions 1 and 2
// swapped, it is the same map.
func TestShippedMapsAreSymmetric(t *testing.T) {
	swap := map[byte]byte{'1': '2', '2': '1'}
	for _, name := range shippedMaps {
		m := mustMap(t, name)
		for x := range m.rows {
			for y := range m.cols {
				a, b := m.at(point{x, y}), m.at(point{m.rows - 1 - x, m.cols - 1 - y})
				if s, ok := swap[a]; ok {
					a = s
				}
				if a != b {
					t.Fatalf("%s: (%d,%d) is %c but its mirror is %c", name, x, y, m.at(point{x, y}), b)
				}
			}
		}
	}
}

func TestShippedMapItems(t *testing.T) {
	for _, tt := range []struct {
		name            string
		apples, shields int
	}{
		{"open10", 3, 1}, // none in the file: ⌈100/40⌉, ⌈100/160⌉
		{"walls20", 4, 2},
		{"corridor30x15", 2, 2},
		{"wide60x30", 45, 12}, // none in the file: ⌈1800/40⌉, ⌈1800/160⌉
	} {
		s := DefaultSettings(mustMap(t, tt.name))
		if s.Apples != tt.apples || s.Shields != tt.shields {
			t.Errorf("%s: %d apples %d shields, want %d and %d", tt.name, s.Apples, s.Shields, tt.apples, tt.shields)
		}
	}
}

func TestParseMapRejects(t *testing.T) {
	tests := []struct {
		name string
		give string
		want string
	}{
		{"empty", "", "file is empty"},
		{"blank lines only", "\n\n", "file is empty"},
		{"ragged short", "1...\n..\n...2", "line 2, column 3: the row ends after 2 symbols, want 4 (as the first row)"},
		{"ragged long", "1..\n....\n..2", "line 2, column 4: the row is longer than 3 symbols (as the first row)"},
		{"ragged with header", "3 3\n1..\n....\n..2", "line 3, column 4: the row is longer than 3 symbols (as the header says)"},
		{"empty row inside", "1..\n\n..2", "line 2, column 1: the row ends after 0 symbols, want 3"},
		{"unknown symbol", "1..\n.x.\n..2", "line 2, column 2: unknown symbol 'x'"},
		{"unknown symbol after a header", "3 3\n1..\n...\n..@", "line 4, column 3: unknown symbol '@'"},
		{"space in a row", "1..\n. .\n..2", "line 2, column 2: unknown symbol ' '"},
		{"unicode", "1..\n.é.\n..2", "line 2, column 2: unknown symbol 'é'"},
		{"not UTF-8", "1..\n.\xff.\n..2", "not valid UTF-8"},
		{"no region 1", "...\n..2", "no start region for snake 1 (no '1' or '3' cell)"},
		{"no region 2", "1..\n...", "no start region for snake 2 (no '2' or '3' cell)"},
		{"one shared cell", "...\n.3.", "line 2, column 2: the only start cell of both snakes"},
		{"bad header", "3 x\n1..\n..2\n...", `line 1: header "3 x" is not "n m"`},
		{"header with three numbers", "3 3 3\n1..\n..2\n...", `line 1: header "3 3 3" is not "n m"`},
		{"zero size", "0 3\n", "line 1: size 0 rows × 3 columns is outside 1..100 each"},
		{"too wide in the header", "2 101\n", "line 1: size 2 rows × 101 columns is outside 1..100 each"},
		{"fewer rows than the header", "3 3\n1..\n..2", "line 4: the file ends after 2 rows, the header says 3"},
		{"more rows than the header", "2 3\n1..\n..2\n...", "line 4: row 3 is beyond the 2 rows the header says"},
		{"too many rows", "1" + strings.Repeat("\n.", 100) + "2", "line 101: more than 100 rows"},
		{"too many columns", "1" + strings.Repeat(".", 100) + "2", "line 1, column 101: more than 100 columns"},
		{"too large", strings.Repeat(".", maxMapBytes+1), "file is larger than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseMap("m.txt", []byte(tt.give))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to mention %q", err, tt.want)
			}
			if !strings.HasPrefix(err.Error(), "map m.txt: ") {
				t.Errorf("error %q does not name the map", err)
			}
		})
	}
}

func TestParseMapAccepts(t *testing.T) {
	tests := []struct {
		name       string
		give       string
		rows, cols int
	}{
		{"header", "2 3\n1o.\n.O2\n", 2, 3},
		{"no header", "1o.\n.O2", 2, 3},
		{"CRLF and trailing blank lines", "2 3\r\n1o.\r\n.O2\r\n\r\n\n", 2, 3},
		{"header with extra spaces", "  2   3 \n1o.\n.O2", 2, 3},
		{"shared regions", "3#\n#3", 2, 2},
		{"smallest", "12", 1, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := ParseMap("ok", []byte(tt.give))
			if err != nil {
				t.Fatal(err)
			}
			if info := m.Info(); info.Height != tt.rows || info.Width != tt.cols || string(m.Data()) != tt.give {
				t.Errorf("info %+v, data %q", info, m.Data())
			}
		})
	}
}

func TestUnknownMap(t *testing.T) {
	_, err := New().Map("atlantis")
	if !errors.Is(err, engine.ErrUnknownMap) || !strings.Contains(err.Error(), "open10, walls20, corridor30x15") {
		t.Errorf("err = %v, want ErrUnknownMap listing the maps", err)
	}
}

func TestNewMatchRejects(t *testing.T) {
	open10 := mustMap(t, "open10")
	two := []string{"a", "b"}
	tests := []struct {
		name string
		cfg  engine.Config
		want string
	}{
		{"one bot", engine.Config{Map: open10, Players: []string{"a"}}, "map open10 takes 2 bots, got 1"},
		{"three bots", engine.Config{Map: open10, Players: []string{"a", "b", "c"}}, "map open10 takes 2 bots, got 3"},
		{"unknown setting", engine.Config{Map: open10, Players: two, Settings: []byte(`{"speed":2}`)}, `unknown field "speed"`},
		{"not an object", engine.Config{Map: open10, Players: two, Settings: []byte(`[1]`)}, "snake settings:"},
		{"trailing data", engine.Config{Map: open10, Players: two, Settings: []byte(`{} {}`)}, "unexpected content after the settings object"},
		{"negative max_rounds", engine.Config{Map: open10, Players: two, Settings: []byte(`{"max_rounds":-1}`)}, "max_rounds -1 is negative"},
		{"shield_rounds", engine.Config{Map: open10, Players: two, Settings: []byte(`{"shield_rounds":-2}`)}, "shield_rounds -2 is outside 0..10000"},
		{"apples", engine.Config{Map: open10, Players: two, Settings: []byte(`{"apples":101}`)}, "apples 101 is outside 0..100"},
		{"shields", engine.Config{Map: open10, Players: two, Settings: []byte(`{"shields":-1}`)}, "shields -1 is outside 0..100"},
		{"a string", engine.Config{Map: open10, Players: two, Settings: []byte(`{"apples":"3"}`)}, "snake settings:"},
		{"a tanks map", engine.Config{Map: fakeMap{}, Players: two}, "is not a snake map"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New().NewMatch(tt.cfg)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want it to mention %q", err, tt.want)
			}
		})
	}
}

type fakeMap struct{}

func (fakeMap) Info() engine.MapInfo { return engine.MapInfo{} }
func (fakeMap) Data() []byte         { return nil }

func TestEffectiveSettings(t *testing.T) {
	tests := []struct {
		mapName string
		give    string
		want    string
	}{
		{"open10", ``, `{"max_rounds":1000,"shield_rounds":20,"apples":3,"shields":1}`},
		{"open10", `null`, `{"max_rounds":1000,"shield_rounds":20,"apples":3,"shields":1}`},
		{"open10", `{"max_rounds":300,"shield_rounds":0,"apples":0,"shields":5}`, `{"max_rounds":300,"shield_rounds":0,"apples":0,"shields":5}`},
		{"open10", `{"max_rounds":5000}`, `{"max_rounds":1000,"shield_rounds":20,"apples":3,"shields":1}`},
		// A map that places its items keeps them.
		{"walls20", `{"apples":9,"shields":9}`, `{"max_rounds":4000,"shield_rounds":20,"apples":4,"shields":2}`},
		{"corridor30x15", ``, `{"max_rounds":4500,"shield_rounds":20,"apples":2,"shields":2}`},
	}
	for _, tt := range tests {
		t.Run(tt.mapName+" "+tt.give, func(t *testing.T) {
			match, err := New().NewMatch(engine.Config{Map: mustMap(t, tt.mapName), Players: []string{"a", "b"}, Settings: json.RawMessage(tt.give)})
			if err != nil {
				t.Fatal(err)
			}
			if got := string(match.Settings()); got != tt.want {
				t.Errorf("settings %s, want %s", got, tt.want)
			}
		})
	}
}

func FuzzParseMap(f *testing.F) {
	for _, s := range []string{"1.\n.2", "2 2\n1.\n.2\n", "3 3\n1..", "3\n.", "12"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := ParseMap("fuzz", b)
		if err != nil {
			return
		}
		s := DefaultSettings(m)
		g := newMatch(m, s, 1) // a valid map always starts a match
		g.moveBy("RL")
		_ = g.Frame()
	})
}
