// Package tanks implements TankFight: tanks on a grid shoot each other and
// the barriers in their way while a square zone closes in. The rules are
// documented here and in the kits' READMEs; this package is pure and
// deterministic.
package tanks

import (
	"fmt"
	"time"

	"arena/engine"
	"arena/framing"
)

// Cell content types; the numbers are part of the wire protocol.
type cellType int8

const (
	cellTank           cellType = 0
	cellBarrier        cellType = 1
	cellNotDestroyable cellType = 2
	cellWater          cellType = 3
	cellSpawn          cellType = 4

	cellEmpty cellType = -1
)

var cellTypeNames = [...]string{"Tank", "Barrier", "NotDestroyable", "Water", "Spawn"}

// indestructible is the health reported for blocks and water.
const indestructible = 255

// Directions and action types as on the wire.
type direction int

const (
	dirUp direction = iota
	dirDown
	dirLeft
	dirRight
)

var directionNames = [...]string{"Up", "Down", "Left", "Right"}

type actionType int

const (
	actionMove actionType = iota
	actionShoot
)

var actionTypeNames = [...]string{"Move", "Shoot"}

type point struct{ X, Y int }

func (p point) step(d direction) point {
	switch d {
	case dirUp:
		p.Y++
	case dirDown:
		p.Y--
	case dirLeft:
		p.X--
	case dirRight:
		p.X++
	}
	return p
}

// Settings are the per-match options. Fields left out take the defaults.
type Settings struct {
	// TankHealth is each tank's starting health.
	TankHealth int `json:"tank_health"`
	// ActionPoints is how many actions of each answer are used per tick.
	ActionPoints int `json:"action_points"`
	// BulletActionPoints is how many cells a bullet flies per action.
	BulletActionPoints int `json:"bullet_action_points"`
	// ZoneRadius is the zone's starting radius.
	ZoneRadius int `json:"zone_radius"`
	// AnonymousIDs, when set, shows each bot the other tanks under fresh
	// random ids every turn (its own tank keeps its id), as the upstream
	// TankFight did so that bots could not single out an opponent by name.
	// Bullets keep their owner's real id, as there. The ids come from the
	// match seed.
	AnonymousIDs bool `json:"anonymous_ids,omitempty"`
}

// DefaultSettings are the original game's values.
func DefaultSettings() Settings {
	return Settings{TankHealth: 3, ActionPoints: 1, BulletActionPoints: 2, ZoneRadius: 100}
}

func (s Settings) validate() error {
	switch {
	case s.TankHealth < 1 || s.TankHealth > maxHealth:
		return fmt.Errorf("tank_health %d is outside 1..%d", s.TankHealth, maxHealth)
	case s.ActionPoints < 1 || s.ActionPoints > 10:
		return fmt.Errorf("action_points %d is outside 1..10", s.ActionPoints)
	case s.BulletActionPoints < 1 || s.BulletActionPoints > 10:
		return fmt.Errorf("bullet_action_points %d is outside 1..10", s.BulletActionPoints)
	case s.ZoneRadius < 0 || s.ZoneRadius > 10000:
		return fmt.Errorf("zone_radius %d is outside 0..10000", s.ZoneRadius)
	}
	return nil
}

// Game is the Tanks catalogue entry.
type Game struct{}

// New returns the Tanks game.
func New() Game { return Game{} }

// Name implements engine.Game.
func (Game) Name() string { return "tanks" }

// Maps implements engine.Game.
func (Game) Maps() []engine.MapInfo {
	infos := make([]engine.MapInfo, 0, len(shippedMaps))
	for _, name := range shippedMaps {
		m, err := loadShippedMap(name)
		if err != nil {
			panic(fmt.Sprintf("tanks: shipped map %s: %v", name, err)) // caught by the map tests
		}
		infos = append(infos, m.Info())
	}
	return infos
}

// Map implements engine.Game.
func (Game) Map(name string) (engine.Map, error) { return loadShippedMap(name) }

// ParseMap implements engine.Game.
func (Game) ParseMap(name string, data []byte) (engine.Map, error) { return ParseMap(name, data) }

// maxAnswerBytes caps one answer. An answer is a list of actions of which
// only the first is used, such as [{"Type":1,"Direction":3}] (the original
// bots print a few dozen bytes); 4 KiB leaves ample room for whitespace
// and a few actions, and bounds what a bot can make Arena keep per turn.
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
		return nil, fmt.Errorf("tanks: map %T is not a tanks map", cfg.Map)
	}
	s := DefaultSettings()
	if err := engine.DecodeSettings(cfg.Settings, &s); err != nil {
		return nil, fmt.Errorf("tanks settings: %w", err)
	}
	if err := s.validate(); err != nil {
		return nil, fmt.Errorf("tanks settings: %w", err)
	}
	if err := m.Info().CheckPlayers(len(cfg.Players)); err != nil {
		return nil, err
	}
	return newMatch(m, s, cfg.Seed, cfg.Players), nil
}
