package pacman

import (
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"
)

// TestEngineTranscript replays matches the engine played through this
// kit's rules: each seat's stdin, exactly as the platform delivered it, is
// fed to a Game the way Play feeds it, and after every actions line the
// Game must hold the engine's state after that round. The first round that
// differs fails, with both values of each field that differs.
//
// The transcript comes from the platform's engine: its TestKitRules
// (engine/pacman/kits_test.go) plays the matches, writes the transcript and
// runs this test with ARENA_PACMAN_TRANSCRIPT set to the file. Run alone,
// without it, the test is skipped. What is compared, and what is not, is
// listed there.
func TestEngineTranscript(t *testing.T) {
	path := os.Getenv("ARENA_PACMAN_TRANSCRIPT")
	if path == "" {
		t.Skip("ARENA_PACMAN_TRANSCRIPT is not set: the platform's go test ./engine/pacman -run TestKitRules runs this test")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var tr struct {
		Matches []recordedMatch `json:"matches"`
	}
	if err := json.Unmarshal(data, &tr); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	// startLevel logs each level on stderr, as a bot's debug output does.
	devNull, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	stderr := os.Stderr
	os.Stderr = devNull
	defer func() { os.Stderr = stderr; devNull.Close() }()

	compared := 0
	for _, m := range tr.Matches {
		for seat := range m.Stdin {
			n, err := m.follow(seat)
			compared += n
			if err != nil {
				t.Errorf("%s (seed %d, the Pac-Man on seat %d), seat %d's stdin, %v", m.Name, m.Seed, m.PacmanSeat, seat, err)
				break // the other seat reads the same rounds
			}
		}
	}
	if !t.Failed() {
		t.Logf("compared %d rounds", compared)
	}
}

// recordedMatch is a match of the transcript that TestKitRules writes.
type recordedMatch struct {
	Name       string      `json:"name"`
	Seed       uint64      `json:"seed"`
	PacmanSeat int         `json:"pacman_seat"`
	Stdin      [2]string   `json:"stdin"` // what each seat read
	Rounds     []roundTrue `json:"rounds"`
}

// roundTrue is the engine's state after a round.
type roundTrue struct {
	Level        int       `json:"level"`
	Round        int       `json:"round"`
	Pacman       [2]int    `json:"pacman"`
	Ghosts       [3][2]int `json:"ghosts"`
	Score        [2]int    `json:"score"`
	Skills       [5]int    `json:"skills"`
	Invulnerable int       `json:"invulnerable"`
	Survival     int       `json:"survival"`
	Catches      int       `json:"catches"`
	BeansLeft    int       `json:"beans_left"`
	PortalOpen   bool      `json:"portal_open"`
	LevelOver    bool      `json:"level_over"`
	GameOver     bool      `json:"game_over"`
	Board        [][3]int  `json:"board"` // the cells the round changed: x, y, value
}

// follow feeds seat's stdin to a Game, line by line as play does, and
// compares the Game with the engine after each round. It returns how many
// rounds it compared and the first difference.
func (m *recordedMatch) follow(seat int) (int, error) {
	g := &Game{Seat: -1}
	var board [][]int // the engine's board: the level's, then each round's changes
	played := 0
	lines := strings.Split(strings.TrimSuffix(m.Stdin[seat], "\n"), "\n")
	for i, line := range lines {
		line = strings.TrimSpace(line)
		switch {
		case g.Seat < 0 && (line == "0" || line == "1"):
			g.Seat = int(line[0] - '0')
		case line == "player 0 send info" || line == "player 1 send info":
		case strings.Contains(line, `"level"`):
			if err := g.startLevel(line); err != nil {
				return played, fmt.Errorf("line %d: %v", i+1, err)
			}
			var in struct {
				Board [][]int `json:"board"`
			}
			if err := json.Unmarshal([]byte(line), &in); err != nil {
				return played, fmt.Errorf("line %d: %v", i+1, err)
			}
			board = in.Board
		case strings.Contains(line, `"pacman_action"`):
			var a struct {
				Pacman int    `json:"pacman_action"`
				Ghosts [3]int `json:"ghosts_action"`
			}
			if err := json.Unmarshal([]byte(line), &a); err != nil {
				return played, fmt.Errorf("line %d: %v", i+1, err)
			}
			if played == len(m.Rounds) {
				return played, fmt.Errorf("line %d: more actions lines than the %d rounds the engine played", i+1, played)
			}
			want := m.Rounds[played]
			played++
			g.play(a.Pacman, a.Ghosts)
			for _, c := range want.Board {
				board[c[0]][c[1]] = c[2]
			}
			if diff := differences(g, want, board); len(diff) > 0 {
				return played, fmt.Errorf("line %d %s: the kit differs from the engine after level %d round %d (turn %d):\n\t%s",
					i+1, line, want.Level, want.Round, played, strings.Join(diff, "\n\t"))
			}
		default:
			return played, fmt.Errorf("line %d: unexpected line %.60q", i+1, line)
		}
	}
	if played != len(m.Rounds) {
		return played, fmt.Errorf("%d actions lines, but the engine played %d rounds", played, len(m.Rounds))
	}
	return played, nil
}

// differences lists each field where the Game differs from the engine:
// "field: kit …, engine …".
func differences(g *Game, want roundTrue, board [][]int) []string {
	var diff []string
	field := func(name string, kit, engine any) {
		if !reflect.DeepEqual(kit, engine) {
			diff = append(diff, fmt.Sprintf("%s: kit %v, engine %v", name, kit, engine))
		}
	}
	pos := func(p Point) [2]int { return [2]int{p.X, p.Y} }
	field("level", g.Level, want.Level)
	field("round", g.Round, want.Round)
	field("pacman", pos(g.Pacman), want.Pacman)
	field("ghosts", [3][2]int{pos(g.Ghosts[0]), pos(g.Ghosts[1]), pos(g.Ghosts[2])}, want.Ghosts)
	field("score", g.Score, want.Score)
	field("skills", g.Skills, want.Skills)
	field("invulnerable", g.Invulnerable, want.Invulnerable)
	field("survival", g.survival, want.Survival)
	field("catches", g.catches, want.Catches)
	field("beans left", g.BeansLeft, want.BeansLeft)
	field("portal open", g.PortalOpen, want.PortalOpen)
	field("level over", g.LevelOver, want.LevelOver)
	field("game over", g.GameOver, want.GameOver)
	if len(g.Board) != len(board) {
		diff = append(diff, fmt.Sprintf("board: kit %d rows, engine %d", len(g.Board), len(board)))
		return diff
	}
	cells := 0
	for x := range board {
		for y := range board[x] {
			if y < len(g.Board[x]) && g.Board[x][y] == board[x][y] {
				continue
			}
			if cells++; cells <= 5 {
				field(fmt.Sprintf("board[%d][%d]", x, y), g.At(Point{x, y}), board[x][y])
			}
		}
	}
	if cells > 5 {
		diff = append(diff, fmt.Sprintf("board: %d more cells differ", cells-5))
	}
	return diff
}
