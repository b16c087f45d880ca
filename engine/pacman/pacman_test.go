package pacman

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"arena/engine"
	"arena/framing"
)

var _ engine.Game = New()

func mustMap(t *testing.T) engine.Map {
	t.Helper()
	m, err := New().Map("saiblo")
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestCatalogue(t *testing.T) {
	g := New()
	if g.Name() != "pacman" {
		t.Errorf("name %q", g.Name())
	}
	want := []engine.MapInfo{{Name: "saiblo", Width: 41, Height: 41, MinPlayers: 2, MaxPlayers: 2}}
	if got := g.Maps(); !reflect.DeepEqual(got, want) {
		t.Errorf("maps %+v, want %+v", got, want)
	}
	if info := mustMap(t).Info(); info != want[0] {
		t.Errorf("map info %+v", info)
	}
	p := g.Protocol()
	if p.Framing != framing.LengthPrefixed || p.MaxMessageBytes != 1024 || p.AnswerTimeout != time.Second || p.WarmUp != 20*time.Second {
		t.Errorf("protocol %+v", p)
	}
}

func TestUnknownMap(t *testing.T) {
	_, err := New().Map("classic")
	if !errors.Is(err, engine.ErrUnknownMap) || !strings.Contains(err.Error(), "saiblo") {
		t.Errorf("err = %v, want ErrUnknownMap naming saiblo", err)
	}
}

// A replay stores Map.Data(); ParseMap takes it back and nothing else.
func TestParseMap(t *testing.T) {
	m, err := New().ParseMap("saiblo", mustMap(t).Data())
	if err != nil {
		t.Fatal(err)
	}
	if string(m.Data()) != `{"generator":"saiblo"}` || m.Info().Name != "saiblo" {
		t.Errorf("parsed %+v", m.Info())
	}
	if _, err := New().ParseMap("spaced", []byte(" { \"generator\" : \"saiblo\" }\n")); err != nil {
		t.Errorf("the same JSON spaced differently: %v", err)
	}
	for _, tt := range []struct{ give, want string }{
		{``, "not a pacman map file"},
		{`{"Width":4}`, `unknown field "Width"`},
		{`{"generator":"saiblo","seed":3}`, `unknown field "seed"`},
		{`{}`, "generator is required"},
		{`{"generator":"random"}`, `unknown generator "random"`},
		{`{"generator":"saiblo"} {}`, "unexpected content after the map object"},
		{`[1]`, "not a pacman map file"},
	} {
		t.Run(tt.give, func(t *testing.T) {
			_, err := New().ParseMap("m.json", []byte(tt.give))
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "map m.json") {
				t.Errorf("err = %v, want it to name the map and mention %q", err, tt.want)
			}
		})
	}
}

type otherMap struct{}

func (otherMap) Info() engine.MapInfo { return engine.MapInfo{} }
func (otherMap) Data() []byte         { return nil }

func TestNewMatch(t *testing.T) {
	for _, settings := range []string{"", "null", "{}", " { } "} {
		m, err := New().NewMatch(engine.Config{Map: mustMap(t), Players: []string{"a", "b"}, Settings: []byte(settings)})
		if err != nil {
			t.Fatalf("settings %q: %v", settings, err)
		}
		if string(m.Settings()) != "{}" {
			t.Errorf("settings %s", m.Settings())
		}
	}
	for _, tt := range []struct {
		name string
		cfg  engine.Config
		want string
	}{
		{"one bot", engine.Config{Map: mustMap(t), Players: []string{"a"}}, "map saiblo takes 2 bots, got 1"},
		{"three bots", engine.Config{Map: mustMap(t), Players: []string{"a", "b", "c"}}, "map saiblo takes 2 bots, got 3"},
		{"unknown setting", engine.Config{Map: mustMap(t), Players: []string{"a", "b"}, Settings: []byte(`{"max_rounds":10}`)}, `unknown field "max_rounds"`},
		{"settings not an object", engine.Config{Map: mustMap(t), Players: []string{"a", "b"}, Settings: []byte(`[1]`)}, "pacman settings"},
		{"trailing settings", engine.Config{Map: mustMap(t), Players: []string{"a", "b"}, Settings: []byte(`{} {}`)}, "unexpected content"},
		{"another game's map", engine.Config{Map: otherMap{}, Players: []string{"a", "b"}}, "is not a pacman map"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New().NewMatch(tt.cfg)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want it to mention %q", err, tt.want)
			}
		})
	}
}

func TestSeedZeroIsASeed(t *testing.T) {
	a, b := newMatch(0), newMatch(0)
	if string(a.Frame()) != string(b.Frame()) {
		t.Error("seed 0 made two different matches")
	}
	if string(a.Frame()) == string(newMatch(1).Frame()) {
		t.Error("seeds 0 and 1 made the same match")
	}
}
