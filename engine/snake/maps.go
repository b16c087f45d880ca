package snake

import (
	"embed"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"arena/engine"
)

//go:embed maps/*.txt
var mapFiles embed.FS

// shippedMaps lists the embedded maps; the first is the default.
var shippedMaps = []string{"open10", "walls20", "corridor30x15", "wide60x30"}

// players is the number of snakes of every match.
const players = 2

// Limits on map files, so a hostile file cannot make the engine allocate
// or work without bound (the state line of a 100×100 board is about 10 KB
// of cells plus the bodies).
const (
	maxMapSide  = 100
	maxMapBytes = 1 << 20
)

// The map and board symbols.
const (
	symWall    = '#'
	symGround  = '.'
	symApple   = 'o'
	symShield  = 'O'
	symRegion1 = '1'
	symRegion2 = '2'
	symRegionB = '3' // in both start regions
)

// Map is a validated Snake map: n rows × m columns of symbols.
type Map struct {
	name       string
	data       []byte
	rows, cols int
	// cells holds the file's symbols row by row.
	cells []byte
	// regions are each snake's candidate start cells, row by row.
	regions [players][]point
	// apples and shields count the items the file places.
	apples, shields int
}

// Info describes the map: Width is the number of columns, Height of rows.
func (m *Map) Info() engine.MapInfo {
	return engine.MapInfo{Name: m.name, Width: m.cols, Height: m.rows, MinPlayers: players, MaxPlayers: players}
}

// Data is the map file as given.
func (m *Map) Data() []byte { return m.data }

// ParseMap validates a map file: an optional header line "n m", then n rows
// of m symbols among # . o O 1 2 3. Errors name the line and column.
func ParseMap(name string, data []byte) (*Map, error) {
	fail := func(format string, args ...any) error {
		return fmt.Errorf("map %s: "+format, append([]any{name}, args...)...)
	}
	if len(data) > maxMapBytes {
		return nil, fail("file is larger than %d bytes", maxMapBytes)
	}
	if !utf8.Valid(data) {
		return nil, fail("file is not valid UTF-8 text")
	}
	lines := strings.Split(string(data), "\n")
	for i := range lines {
		lines[i] = strings.TrimSuffix(lines[i], "\r")
	}
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	if len(lines) == 0 {
		return nil, fail("file is empty")
	}
	m := &Map{name: name, data: data}
	first := 1 // the line number of the first row
	header := strings.ContainsAny(lines[0], " \t")
	if header {
		n, c, err := parseHeader(lines[0])
		if err != nil {
			return nil, fail("line 1: %v", err)
		}
		if n < 1 || c < 1 || n > maxMapSide || c > maxMapSide {
			return nil, fail("line 1: size %d rows × %d columns is outside 1..%d each", n, c, maxMapSide)
		}
		m.rows, m.cols = n, c
		lines, first = lines[1:], 2
		if len(lines) < n {
			return nil, fail("line %d: the file ends after %d rows, the header says %d", first+len(lines), len(lines), n)
		}
		if len(lines) > n {
			return nil, fail("line %d: row %d is beyond the %d rows the header says", first+n, n+1, n)
		}
	} else {
		if len(lines) > maxMapSide {
			return nil, fail("line %d: more than %d rows", first+maxMapSide, maxMapSide)
		}
		m.rows, m.cols = len(lines), utf8.RuneCountInString(lines[0])
		if m.cols > maxMapSide {
			return nil, fail("line 1, column %d: more than %d columns", maxMapSide+1, maxMapSide)
		}
	}
	m.cells = make([]byte, 0, m.rows*m.cols)
	var want string // what decided the row length, for messages
	if header {
		want = "as the header says"
	} else {
		want = "as the first row"
	}
	for x, line := range lines {
		ln := first + x
		y := 0
		for _, r := range line {
			if y == m.cols {
				return nil, fail("line %d, column %d: the row is longer than %d symbols (%s)", ln, y+1, m.cols, want)
			}
			switch r {
			case symWall, symGround, symRegion1, symRegion2, symRegionB:
			case symApple:
				m.apples++
			case symShield:
				m.shields++
			default:
				return nil, fail("line %d, column %d: unknown symbol %q (want one of # . o O 1 2 3)", ln, y+1, r)
			}
			at := point{x, y}
			if r == symRegion1 || r == symRegionB {
				m.regions[0] = append(m.regions[0], at)
			}
			if r == symRegion2 || r == symRegionB {
				m.regions[1] = append(m.regions[1], at)
			}
			m.cells = append(m.cells, byte(r))
			y++
		}
		if y < m.cols {
			return nil, fail("line %d, column %d: the row ends after %d symbols, want %d (%s)", ln, y+1, y, m.cols, want)
		}
	}
	for seat, cells := range m.regions {
		if len(cells) == 0 {
			return nil, fail("no start region for snake %d (no '%d' or '3' cell)", seat+1, seat+1)
		}
	}
	if r1, r2 := m.regions[0], m.regions[1]; len(r1) == 1 && len(r2) == 1 && r1[0] == r2[0] {
		return nil, fail("line %d, column %d: the only start cell of both snakes; the two heads need two cells", first+r1[0].X, r1[0].Y+1)
	}
	return m, nil
}

func parseHeader(line string) (rows, cols int, err error) {
	f := strings.Fields(line)
	if len(f) == 2 {
		rows, err1 := strconv.Atoi(f[0])
		cols, err2 := strconv.Atoi(f[1])
		if err1 == nil && err2 == nil {
			return rows, cols, nil
		}
	}
	return 0, 0, fmt.Errorf("header %q is not \"n m\" (rows and columns)", line)
}

// at returns the file's symbol at p.
func (m *Map) at(p point) byte { return m.cells[p.X*m.cols+p.Y] }

func loadShippedMap(name string) (*Map, error) {
	for _, n := range shippedMaps {
		if n == name {
			data, err := mapFiles.ReadFile("maps/" + name + ".txt")
			if err != nil {
				return nil, err
			}
			return ParseMap(name, data)
		}
	}
	return nil, fmt.Errorf("%w %q for snake (maps: %s)", engine.ErrUnknownMap, name, strings.Join(shippedMaps, ", "))
}
