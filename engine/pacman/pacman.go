package pacman

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"arena/engine"
	"arena/framing"
)

// Game is the Pac-Man catalogue entry.
type Game struct{}

// New returns the Pac-Man game.
func New() Game { return Game{} }

// Name implements engine.Game.
func (Game) Name() string { return "pacman" }

// mapName is the only map: the boards are generated from the match seed
// by the original game's generator.
const mapName = "saiblo"

// mapFile is the content of the shipped map file.
const mapFile = `{"generator":"saiblo"}`

// Map is the generated-board map. It carries no board: every level's board
// comes from the match seed.
type Map struct {
	name string
	data []byte
}

// Info describes the map: the first level's 41×41 board, two players.
func (m *Map) Info() engine.MapInfo {
	size := levels[0].size
	return engine.MapInfo{Name: m.name, Width: size, Height: size, MinPlayers: 2, MaxPlayers: 2}
}

// Data is the map file as given.
func (m *Map) Data() []byte { return m.data }

// Maps implements engine.Game.
func (Game) Maps() []engine.MapInfo {
	return []engine.MapInfo{(&Map{name: mapName}).Info()}
}

// Map implements engine.Game.
func (Game) Map(name string) (engine.Map, error) {
	if name != mapName {
		return nil, fmt.Errorf("%w %q for pacman (maps: %s)", engine.ErrUnknownMap, name, mapName)
	}
	return &Map{name: name, data: []byte(mapFile)}, nil
}

// ParseMap implements engine.Game. The only map file there is names the
// generator: {"generator":"saiblo"}. Anything else is rejected, so a replay
// cannot claim a board this engine does not make.
func (Game) ParseMap(name string, data []byte) (engine.Map, error) {
	var f struct {
		Generator *string `json:"generator"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("map %s: not a pacman map file (want %s): %w", name, mapFile, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("map %s: unexpected content after the map object", name)
	}
	if f.Generator == nil {
		return nil, fmt.Errorf("map %s: generator is required (want %s)", name, mapFile)
	}
	if *f.Generator != mapName {
		return nil, fmt.Errorf("map %s: unknown generator %q (the boards come from the seed; want %s)", name, *f.Generator, mapFile)
	}
	return &Map{name: name, data: data}, nil
}

// Protocol implements engine.Game: length-prefixed JSON from the bots, at
// most 1024 bytes each, 1 s per answer and 20 s for the first one, as on
// Saiblo.
func (Game) Protocol() engine.Protocol {
	return engine.Protocol{
		Framing:         framing.LengthPrefixed,
		MaxMessageBytes: 1024,
		AnswerTimeout:   time.Second,
		WarmUp:          20 * time.Second,
	}
}

// Settings are the per-match options. The spec's only settings (message
// size, answer time, warm-up) are protocol limits, which the platform sets
// through its own limits; the rules themselves have none, so the settings
// object is empty and any field in it is rejected.
type Settings struct{}

// NewMatch implements engine.Game.
func (Game) NewMatch(cfg engine.Config) (engine.Match, error) {
	m, ok := cfg.Map.(*Map)
	if !ok {
		return nil, fmt.Errorf("pacman: map %T is not a pacman map", cfg.Map)
	}
	var s Settings
	if err := engine.DecodeSettings(cfg.Settings, &s); err != nil {
		return nil, fmt.Errorf("pacman settings: %w", err)
	}
	if err := m.Info().CheckPlayers(len(cfg.Players)); err != nil {
		return nil, err
	}
	return newMatch(cfg.Seed), nil
}
