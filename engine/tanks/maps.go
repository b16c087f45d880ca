package tanks

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"arena/engine"
)

//go:embed maps/*.json
var mapFiles embed.FS

// shippedMaps lists the embedded maps; the first is the default.
var shippedMaps = []string{"classic", "triad", "crossroads"}

// Limits on map files, so a hostile file cannot make the engine allocate
// without bound.
const (
	maxMapSide  = 200
	maxMapBytes = 4 << 20
	// Health is carried in a byte on the wire; 255 means indestructible.
	maxHealth = 254
)

// Map is a validated Tanks map. Coordinates are interior coordinates (the
// file's); the board adds a ring of indestructible blocks around them.
type Map struct {
	name    string
	data    []byte
	width   int
	height  int
	objects []mapObject // everything but spawns, in file order
	spawns  []point
}

type mapObject struct {
	at     point
	kind   cellType
	health int
}

// Info describes the map.
func (m *Map) Info() engine.MapInfo {
	return engine.MapInfo{Name: m.name, Width: m.width, Height: m.height, MinPlayers: 2, MaxPlayers: len(m.spawns)}
}

// Data is the map file as given.
func (m *Map) Data() []byte { return m.data }

type mapFile struct {
	Width      *int           `json:"Width"`
	Height     *int           `json:"Height"`
	MapObjects []mapFileEntry `json:"MapObjects"`
}

type mapFileEntry struct {
	Coordinates     *struct{ X, Y int } `json:"Coordinates"`
	CellContentType json.RawMessage     `json:"CellContentType"`
	HealthCount     *int                `json:"HealthCount"`
}

// ParseMap validates a map file: {"Width":W,"Height":H,"MapObjects":[...]}.
// Errors name the offending entry.
func ParseMap(name string, data []byte) (*Map, error) {
	if len(data) > maxMapBytes {
		return nil, fmt.Errorf("map %s: file is larger than %d bytes", name, maxMapBytes)
	}
	var f mapFile
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("map %s: not a map file: %w", name, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("map %s: unexpected content after the map object", name)
	}
	if f.Width == nil || f.Height == nil {
		return nil, fmt.Errorf("map %s: Width and Height are required", name)
	}
	m := &Map{name: name, data: data, width: *f.Width, height: *f.Height}
	if m.width < 1 || m.height < 1 || m.width > maxMapSide || m.height > maxMapSide {
		return nil, fmt.Errorf("map %s: size %dx%d is outside 1x1..%dx%d", name, m.width, m.height, maxMapSide, maxMapSide)
	}
	taken := make(map[point]int, len(f.MapObjects))
	for i, e := range f.MapObjects {
		where := fmt.Sprintf("map %s: MapObjects[%d]", name, i)
		if e.Coordinates == nil {
			return nil, fmt.Errorf("%s: Coordinates are required", where)
		}
		at := point{e.Coordinates.X, e.Coordinates.Y}
		where += fmt.Sprintf(" at (%d,%d)", at.X, at.Y)
		if at.X < 0 || at.Y < 0 || at.X >= m.width || at.Y >= m.height {
			return nil, fmt.Errorf("%s: outside the %dx%d map", where, m.width, m.height)
		}
		if j, dup := taken[at]; dup {
			return nil, fmt.Errorf("%s: overlaps MapObjects[%d]", where, j)
		}
		taken[at] = i
		kind, err := parseCellType(e.CellContentType)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		switch kind {
		case cellTank:
			return nil, fmt.Errorf("%s: a map cannot place a Tank; use Spawn", where)
		case cellSpawn:
			m.spawns = append(m.spawns, at)
			continue
		case cellBarrier:
			if e.HealthCount == nil || *e.HealthCount < 1 || *e.HealthCount > maxHealth {
				return nil, fmt.Errorf("%s: a Barrier needs HealthCount between 1 and %d", where, maxHealth)
			}
			m.objects = append(m.objects, mapObject{at: at, kind: kind, health: *e.HealthCount})
		default:
			m.objects = append(m.objects, mapObject{at: at, kind: kind, health: indestructible})
		}
	}
	if len(m.spawns) < 2 {
		return nil, fmt.Errorf("map %s: needs at least 2 Spawn entries, has %d", name, len(m.spawns))
	}
	return m, nil
}

// parseCellType accepts a type name (case-insensitive) or its number.
func parseCellType(raw json.RawMessage) (cellType, error) {
	if len(raw) == 0 {
		return 0, errors.New("CellContentType is required")
	}
	var name string
	if err := json.Unmarshal(raw, &name); err == nil {
		for t, n := range cellTypeNames {
			if strings.EqualFold(n, name) {
				return cellType(t), nil
			}
		}
		return 0, fmt.Errorf("unknown CellContentType %q (want Barrier, NotDestroyable, Water or Spawn)", name)
	}
	n, err := strconv.Atoi(string(raw))
	if err != nil || n < 0 || n >= len(cellTypeNames) {
		return 0, fmt.Errorf("unknown CellContentType %s (want Barrier, NotDestroyable, Water or Spawn)", raw)
	}
	return cellType(n), nil
}

func loadShippedMap(name string) (*Map, error) {
	for _, n := range shippedMaps {
		if n == name {
			data, err := mapFiles.ReadFile("maps/" + name + ".json")
			if err != nil {
				return nil, err
			}
			return ParseMap(name, data)
		}
	}
	return nil, fmt.Errorf("%w %q for tanks (maps: %s)", engine.ErrUnknownMap, name, strings.Join(shippedMaps, ", "))
}
