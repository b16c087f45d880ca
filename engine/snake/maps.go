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
	m := &Map{name: name, data: data}
	if err := m.parse(); err != nil {
		return nil, fmt.Errorf("map %s: %w", name, err)
	}
	return m, nil
}

// parse reads the map's file into its size, cells and start regions.
func (m *Map) parse() error {
	lines, err := mapLines(m.data)
	if err != nil {
		return err
	}
	rows, first, want, err := m.size(lines)
	if err != nil {
		return err
	}
	m.cells = make([]byte, 0, m.rows*m.cols)
	for x, line := range rows {
		if err := m.readRow(x, first+x, line, want); err != nil {
			return err
		}
	}
	return m.checkRegions(first)
}

// mapLines splits a map file into its lines, without their line ends or
// the blank lines at its end.
func mapLines(data []byte) ([]string, error) {
	if len(data) > maxMapBytes {
		return nil, fmt.Errorf("file is larger than %d bytes", maxMapBytes)
	}
	if !utf8.Valid(data) {
		return nil, fmt.Errorf("file is not valid UTF-8 text")
	}
	lines := strings.Split(string(data), "\n")
	for i := range lines {
		lines[i] = strings.TrimSuffix(lines[i], "\r")
	}
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	if len(lines) == 0 {
		return nil, fmt.Errorf("file is empty")
	}
	return lines, nil
}

// size reads the map's size from its header line, else from its rows. It
// gives the rows, the line number of the first, and what decided the row
// length (for messages).
func (m *Map) size(lines []string) (rows []string, first int, want string, err error) {
	if !strings.ContainsAny(lines[0], " \t") {
		if len(lines) > maxMapSide {
			return nil, 0, "", fmt.Errorf("line %d: more than %d rows", 1+maxMapSide, maxMapSide)
		}
		m.rows, m.cols = len(lines), utf8.RuneCountInString(lines[0])
		if m.cols > maxMapSide {
			return nil, 0, "", fmt.Errorf("line 1, column %d: more than %d columns", maxMapSide+1, maxMapSide)
		}
		return lines, 1, "as the first row", nil
	}
	n, c, err := parseHeader(lines[0])
	if err != nil {
		return nil, 0, "", fmt.Errorf("line 1: %w", err)
	}
	if n < 1 || c < 1 || n > maxMapSide || c > maxMapSide {
		return nil, 0, "", fmt.Errorf("line 1: size %d rows × %d columns is outside 1..%d each", n, c, maxMapSide)
	}
	m.rows, m.cols = n, c
	rows, first = lines[1:], 2
	if len(rows) < n {
		return nil, 0, "", fmt.Errorf("line %d: the file ends after %d rows, the header says %d", first+len(rows), len(rows), n)
	}
	if len(rows) > n {
		return nil, 0, "", fmt.Errorf("line %d: row %d is beyond the %d rows the header says", first+n, n+1, n)
	}
	return rows, first, "as the header says", nil
}

// readRow reads row x, line ln of the file, of exactly m.cols symbols (want
// says why so many).
func (m *Map) readRow(x, ln int, line, want string) error {
	y := 0
	for _, r := range line {
		if y == m.cols {
			return fmt.Errorf("line %d, column %d: the row is longer than %d symbols (%s)", ln, y+1, m.cols, want)
		}
		if err := m.add(point{x, y}, r); err != nil {
			return fmt.Errorf("line %d, column %d: %w", ln, y+1, err)
		}
		y++
	}
	if y < m.cols {
		return fmt.Errorf("line %d, column %d: the row ends after %d symbols, want %d (%s)", ln, y+1, y, m.cols, want)
	}
	return nil
}

// add puts the symbol r at the map's next cell, at, counting its items and
// start cells.
func (m *Map) add(at point, r rune) error {
	switch r {
	case symWall, symGround, symRegion1, symRegion2, symRegionB:
	case symApple:
		m.apples++
	case symShield:
		m.shields++
	default:
		return fmt.Errorf("unknown symbol %q (want one of # . o O 1 2 3)", r)
	}
	if r == symRegion1 || r == symRegionB {
		m.regions[0] = append(m.regions[0], at)
	}
	if r == symRegion2 || r == symRegionB {
		m.regions[1] = append(m.regions[1], at)
	}
	m.cells = append(m.cells, byte(r))
	return nil
}

// checkRegions checks that each snake has a start region and that the two
// heads have two cells (first: the line number of the first row).
func (m *Map) checkRegions(first int) error {
	for seat, cells := range m.regions {
		if len(cells) == 0 {
			return fmt.Errorf("no start region for snake %d (no '%d' or '3' cell)", seat+1, seat+1)
		}
	}
	if r1, r2 := m.regions[0], m.regions[1]; len(r1) == 1 && len(r2) == 1 && r1[0] == r2[0] {
		return fmt.Errorf("line %d, column %d: the only start cell of both snakes; the two heads need two cells", first+r1[0].X, r1[0].Y+1)
	}
	return nil
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
