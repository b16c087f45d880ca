package tanks

import (
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
	want := map[string]engine.MapInfo{
		"classic":    {Name: "classic", Width: 20, Height: 12, MinPlayers: 2, MaxPlayers: 2},
		"triad":      {Name: "triad", Width: 18, Height: 14, MinPlayers: 2, MaxPlayers: 3},
		"crossroads": {Name: "crossroads", Width: 16, Height: 16, MinPlayers: 2, MaxPlayers: 4},
	}
	infos := New().Maps()
	if len(infos) != len(want) || infos[0].Name != "classic" {
		t.Fatalf("maps = %+v, want classic first and %d maps", infos, len(want))
	}
	for _, info := range infos {
		if info != want[info.Name] {
			t.Errorf("%s: %+v, want %+v", info.Name, info, want[info.Name])
		}
	}
}

// The classic map reproduces the original default map: 6 water cells, 8
// barriers of health 1 or 2 and 41 indestructible blocks inside the ring,
// with the tanks on the cells where the original README's sample state shows
// them.
func TestClassicMap(t *testing.T) {
	m := mustMap(t, "classic")
	count := map[cellType]int{}
	for _, o := range m.objects {
		count[o.kind]++
		if o.kind == cellBarrier && (o.health < 1 || o.health > 2) {
			t.Errorf("barrier at %v has health %d", o.at, o.health)
		}
	}
	if count[cellWater] != 6 || count[cellBarrier] != 8 || count[cellNotDestroyable] != 41 {
		t.Errorf("classic has %v", count)
	}
	g := newMatch(m, DefaultSettings(), 0, []string{"r1", "r2"})
	spawns := map[point]bool{g.tanks[0].at: true, g.tanks[1].at: true}
	if !spawns[point{20, 3}] || !spawns[point{1, 12}] {
		t.Errorf("tanks at %v, want (20,3) and (1,12) as in the original", spawns)
	}
	// Spot checks against the sample state.
	for _, c := range []struct {
		at     point
		kind   cellType
		health int
	}{
		{point{7, 3}, cellBarrier, 2},
		{point{9, 8}, cellWater, 255},
		{point{18, 11}, cellNotDestroyable, 255},
		{point{0, 13}, cellNotDestroyable, 255},
		{point{21, 0}, cellNotDestroyable, 255},
	} {
		if got := g.at(c.at); got.kind != c.kind || got.health != c.health {
			t.Errorf("%v: %+v, want type %d health %d", c.at, got, c.kind, c.health)
		}
	}
}

func TestParseMapRejects(t *testing.T) {
	spawns := `{"Coordinates":{"X":0,"Y":0},"CellContentType":"Spawn"},{"Coordinates":{"X":3,"Y":3},"CellContentType":"Spawn"}`
	tests := []struct {
		name string
		give string
		want string
	}{
		{"not JSON", `{"Width":4`, "not a map file"},
		{"not an object", `[1,2]`, "not a map file"},
		{"unknown field", `{"Width":4,"Height":4,"Walls":[]}`, `unknown field "Walls"`},
		{"missing size", `{"MapObjects":[]}`, "Width and Height are required"},
		{"zero size", `{"Width":0,"Height":4,"MapObjects":[]}`, "size 0x4"},
		{"huge", `{"Width":100000,"Height":4,"MapObjects":[]}`, "size 100000x4"},
		{"tank", `{"Width":4,"Height":4,"MapObjects":[` + spawns + `,{"Coordinates":{"X":1,"Y":1},"CellContentType":"Tank"}]}`, "MapObjects[2] at (1,1): a map cannot place a Tank"},
		{"tank by number", `{"Width":4,"Height":4,"MapObjects":[{"Coordinates":{"X":1,"Y":1},"CellContentType":0}]}`, "MapObjects[0] at (1,1): a map cannot place a Tank"},
		{"overlap", `{"Width":4,"Height":4,"MapObjects":[` + spawns + `,{"Coordinates":{"X":3,"Y":3},"CellContentType":"Water"}]}`, "MapObjects[2] at (3,3): overlaps MapObjects[1]"},
		{"outside", `{"Width":4,"Height":4,"MapObjects":[` + spawns + `,{"Coordinates":{"X":4,"Y":0},"CellContentType":"Water"}]}`, "MapObjects[2] at (4,0): outside the 4x4 map"},
		{"negative", `{"Width":4,"Height":4,"MapObjects":[{"Coordinates":{"X":-1,"Y":0},"CellContentType":"Water"}]}`, "MapObjects[0] at (-1,0): outside"},
		{"no coordinates", `{"Width":4,"Height":4,"MapObjects":[{"CellContentType":"Water"}]}`, "MapObjects[0]: Coordinates are required"},
		{"unknown type", `{"Width":4,"Height":4,"MapObjects":[{"Coordinates":{"X":1,"Y":1},"CellContentType":"Lava"}]}`, `unknown CellContentType "Lava"`},
		{"no type", `{"Width":4,"Height":4,"MapObjects":[{"Coordinates":{"X":1,"Y":1}}]}`, "CellContentType is required"},
		{"barrier without health", `{"Width":4,"Height":4,"MapObjects":[{"Coordinates":{"X":1,"Y":1},"CellContentType":"Barrier"}]}`, "a Barrier needs HealthCount"},
		{"barrier health 0", `{"Width":4,"Height":4,"MapObjects":[{"Coordinates":{"X":1,"Y":1},"CellContentType":"Barrier","HealthCount":0}]}`, "a Barrier needs HealthCount"},
		{"one spawn", `{"Width":4,"Height":4,"MapObjects":[{"Coordinates":{"X":1,"Y":1},"CellContentType":"Spawn"}]}`, "needs at least 2 Spawn entries, has 1"},
		{"trailing", `{"Width":4,"Height":4,"MapObjects":[` + spawns + `]} {}`, "unexpected content after the map object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseMap("m.json", []byte(tt.give))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to mention %q", err, tt.want)
			}
			if !strings.HasPrefix(err.Error(), "map m.json") {
				t.Errorf("error %q does not name the map", err)
			}
		})
	}
}

func TestParseMapAccepts(t *testing.T) {
	m, err := ParseMap("ok", []byte(`{"Width":4,"Height":3,"MapObjects":[
		{"Coordinates":{"X":0,"Y":0},"CellContentType":"spawn"},
		{"Coordinates":{"X":3,"Y":2},"CellContentType":4},
		{"Coordinates":{"X":1,"Y":1},"CellContentType":"barrier","HealthCount":3},
		{"Coordinates":{"X":2,"Y":1},"CellContentType":"NotDestroyable","HealthCount":7}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if info := m.Info(); info.Width != 4 || info.Height != 3 || info.MaxPlayers != 2 {
		t.Errorf("info = %+v", info)
	}
	if m.objects[1].health != indestructible {
		t.Errorf("an indestructible block keeps health %d, want 255", m.objects[1].health)
	}
}

func TestUnknownMap(t *testing.T) {
	_, err := New().Map("atlantis")
	if !errors.Is(err, engine.ErrUnknownMap) || !strings.Contains(err.Error(), "classic") {
		t.Errorf("err = %v, want ErrUnknownMap listing the maps", err)
	}
}

func TestNewMatchRejects(t *testing.T) {
	g := New()
	classic := mustMap(t, "classic")
	tests := []struct {
		name string
		cfg  engine.Config
		want string
	}{
		{"one bot", engine.Config{Map: classic, Players: []string{"a"}}, "map classic takes 2 bots, got 1"},
		{"too many bots", engine.Config{Map: classic, Players: []string{"a", "b", "c"}}, "map classic takes 2 bots, got 3"},
		{"unknown setting", engine.Config{Map: classic, Players: []string{"a", "b"}, Settings: []byte(`{"lasers":true}`)}, `unknown field "lasers"`},
		{"bad setting", engine.Config{Map: classic, Players: []string{"a", "b"}, Settings: []byte(`{"tank_health":0}`)}, "tank_health 0 is outside"},
		{"trailing settings", engine.Config{Map: classic, Players: []string{"a", "b"}, Settings: []byte(`{"zone_radius":5} {}`)}, "unexpected content after the settings object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := g.NewMatch(tt.cfg)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want it to mention %q", err, tt.want)
			}
		})
	}
}
