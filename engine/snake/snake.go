package snake

import (
	"encoding/json"
	"fmt"
	"time"

	"arena/engine"
	"arena/framing"
)

// Settings are the per-match options. In the JSON a field left out takes its
// default; Match.Settings reports the effective values.
type Settings struct {
	// MaxRounds ends the game after this many rounds. The map's limit is
	// 10·n·m; 0 means that limit and a larger value is lowered to it (the
	// setting can only shorten a game).
	MaxRounds int `json:"max_rounds"`
	// ShieldRounds is the shield counter a snake gets from a shield.
	ShieldRounds int `json:"shield_rounds"`
	// Apples and Shields are how many of each item a map without items gets
	// (defaults ⌈n·m/40⌉ and ⌈n·m/160⌉). A map that places items keeps its
	// own: the effective values are then the map's counts.
	Apples  int `json:"apples"`
	Shields int `json:"shields"`
}

// settingsFile is the JSON as given: pointers tell a field left out from a
// zero.
type settingsFile struct {
	MaxRounds    *int `json:"max_rounds"`
	ShieldRounds *int `json:"shield_rounds"`
	Apples       *int `json:"apples"`
	Shields      *int `json:"shields"`
}

// Limits on settings, so a setting cannot make the engine work without bound.
const maxShieldRounds = 10000

// DefaultSettings are the effective settings on a map when none are given.
func DefaultSettings(m *Map) Settings {
	s, _ := resolveSettings(m, nil) // no fields: the defaults always validate
	return s
}

// resolveSettings reads the JSON settings (nil or null for none), fills in
// the map's defaults and validates the result.
func resolveSettings(m *Map, raw json.RawMessage) (Settings, error) {
	var f settingsFile
	if err := engine.DecodeSettings(raw, &f); err != nil {
		return Settings{}, err
	}
	cells := m.rows * m.cols
	limit := 10 * cells
	s := Settings{
		MaxRounds:    limit,
		ShieldRounds: 20,
		Apples:       ceilDiv(cells, 40),
		Shields:      ceilDiv(cells, 160),
	}
	if f.MaxRounds != nil {
		if *f.MaxRounds < 0 {
			return Settings{}, fmt.Errorf("max_rounds %d is negative (0 means the map's limit, %d)", *f.MaxRounds, limit)
		}
		if *f.MaxRounds > 0 {
			s.MaxRounds = min(*f.MaxRounds, limit)
		}
	}
	if f.ShieldRounds != nil {
		if *f.ShieldRounds < 0 || *f.ShieldRounds > maxShieldRounds {
			return Settings{}, fmt.Errorf("shield_rounds %d is outside 0..%d", *f.ShieldRounds, maxShieldRounds)
		}
		s.ShieldRounds = *f.ShieldRounds
	}
	if f.Apples != nil {
		if *f.Apples < 0 || *f.Apples > cells {
			return Settings{}, fmt.Errorf("apples %d is outside 0..%d (the map's cell count)", *f.Apples, cells)
		}
		s.Apples = *f.Apples
	}
	if f.Shields != nil {
		if *f.Shields < 0 || *f.Shields > cells {
			return Settings{}, fmt.Errorf("shields %d is outside 0..%d (the map's cell count)", *f.Shields, cells)
		}
		s.Shields = *f.Shields
	}
	if m.apples+m.shields > 0 {
		s.Apples, s.Shields = m.apples, m.shields
	}
	return s, nil
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// Game is the Snake catalogue entry.
type Game struct{}

// New returns the Snake game.
func New() Game { return Game{} }

// Name implements engine.Game.
func (Game) Name() string { return "snake" }

// Maps implements engine.Game.
func (Game) Maps() []engine.MapInfo {
	infos := make([]engine.MapInfo, 0, len(shippedMaps))
	for _, name := range shippedMaps {
		m, err := loadShippedMap(name)
		if err != nil {
			panic(fmt.Sprintf("snake: shipped map %s: %v", name, err)) // caught by the map tests
		}
		infos = append(infos, m.Info())
	}
	return infos
}

// Map implements engine.Game.
func (Game) Map(name string) (engine.Map, error) { return loadShippedMap(name) }

// ParseMap implements engine.Game.
func (Game) ParseMap(name string, data []byte) (engine.Map, error) { return ParseMap(name, data) }

// maxAnswerBytes caps one answer. An answer is one small object such as
// {"X":3,"Y":4}; 4 KiB leaves ample room for whitespace and extra fields
// while bounding what the engine parses, and Arena keeps, per turn.
const maxAnswerBytes = 4 << 10

// Protocol implements engine.Game: one JSON line each way, 100 ms per
// answer, 20 s of warm-up.
func (Game) Protocol() engine.Protocol {
	return engine.Protocol{
		Framing:         framing.Lines,
		MaxMessageBytes: maxAnswerBytes,
		AnswerTimeout:   100 * time.Millisecond,
		WarmUp:          20 * time.Second,
	}
}

// NewMatch implements engine.Game.
func (Game) NewMatch(cfg engine.Config) (engine.Match, error) {
	m, ok := cfg.Map.(*Map)
	if !ok {
		return nil, fmt.Errorf("snake: map %T is not a snake map", cfg.Map)
	}
	s, err := resolveSettings(m, cfg.Settings)
	if err != nil {
		return nil, fmt.Errorf("snake settings: %w", err)
	}
	if err := m.Info().CheckPlayers(len(cfg.Players)); err != nil {
		return nil, err
	}
	return newMatch(m, s, cfg.Seed), nil
}
