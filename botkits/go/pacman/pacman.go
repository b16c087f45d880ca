// Package pacman is the Pac-Man-vs-ghosts protocol for Go bots. One bot
// plays the Pac-Man (role 0), the other the three ghosts (role 1); the
// role is claimed by the bot's first message, whatever its seat.
//
// The platform writes plain lines: the seat ("0" or "1"), each level's init
// line (JSON, with the board), "player N send info" when the other seat
// has answered, and after every round the actions line
// {"pacman_action": 3, "ghosts_action": [0, 2, 4]}. It sends no state
// during a level: Play keeps a Game up to date by replaying the rules on
// the actions. The bot answers with a 4-byte big-endian length followed by
// JSON: {"role":0,"action":"3"} or {"role":1,"action":"1 0 4"}.
//
// When to answer: seat 0 after the init line at the start and after each
// actions line (or after the next level's init line, when that round
// ended a level); seat 1 after each "player 0 send info". Play takes care
// of it: write only the strategy.
package pacman

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"
)

// Roles.
const (
	RolePacman = 0
	RoleGhosts = 1
)

// Cell values of Game.Board.
const (
	Wall     = 0
	Empty    = 1
	Bean     = 2 // 1 point
	Bonus    = 3 // a bonus bean: 2 points
	Speed    = 4 // skill items: picked up by walking over them
	Magnet   = 5
	ShieldUp = 6
	Double   = 7
	Freeze   = 8
	Portal   = 9
)

// Actions. Up is x+1: rows grow "up".
const (
	Stay  = 0
	Up    = 1 // x+1
	Left  = 2 // y−1
	Down  = 3 // x−1
	Right = 4 // y+1
)

// Skill indices of Game.Skills (pacman_skill_status).
const (
	SkillDouble = 0 // beans score double
	SkillSpeed  = 1 // the Pac-Man moves twice per round
	SkillMagnet = 2 // eats the 3×3 square around it
	SkillShield = 3 // a count: each absorbs one catch
	SkillFreeze = 4 // the ghosts stand still
)

// Point is a cell: X the row, Y the column.
type Point struct{ X, Y int }

// Step is where action a leads from p, walls not considered.
func (p Point) Step(a int) Point {
	switch a {
	case Up:
		p.X++
	case Left:
		p.Y--
	case Down:
		p.X--
	case Right:
		p.Y++
	}
	return p
}

// Game is what the bot knows: the level's init line, updated round by
// round from the actions.
type Game struct {
	Seat, Role int
	Level      int // 1..3
	Round      int // rounds played in this level
	MaxRounds  int // the level ends (ghosts +75) after this many rounds
	Size       int
	Board      [][]int // Board[x][y]; eaten beans and items become Empty
	Pacman     Point
	Ghosts     [3]Point
	// Skills in effect in the next round, indexed by the Skill constants:
	// rounds left, or the shield count.
	Skills       [5]int
	Invulnerable int    // > 0: the Pac-Man cannot be caught next round
	Score        [2]int // Pac-Man, ghosts
	BeansLeft    int
	Portal       Point // {-1, -1} on level 3
	PortalOpen   bool  // stepping on it ends the level, with a bonus
	LevelOver    bool  // the last round ended the level
	GameOver     bool  // and it was the last level

	portalAt          int
	survival, catches int
}

// Inside reports whether p is on the board.
func (g *Game) Inside(p Point) bool { return p.X >= 0 && p.Y >= 0 && p.X < g.Size && p.Y < g.Size }

// At is the value of a cell; outside the board is a wall.
func (g *Game) At(p Point) int {
	if !g.Inside(p) {
		return Wall
	}
	return g.Board[p.X][p.Y]
}

// Move is where action a really takes a piece from p: into a wall it stays.
func (g *Game) Move(p Point, a int) Point {
	if q := p.Step(a); g.At(q) != Wall {
		return q
	}
	return p
}

// PlayPacman runs a Pac-Man bot: turn returns the action (0..4) for each
// round. It returns when the input ends.
func PlayPacman(turn func(g *Game) int) error {
	return play(RolePacman, func(g *Game) string {
		return fmt.Sprint(legal(turn(g)))
	})
}

// PlayGhosts runs a ghosts bot: turn returns the three ghosts' actions for
// each round. It returns when the input ends.
func PlayGhosts(turn func(g *Game) [3]int) error {
	return play(RoleGhosts, func(g *Game) string {
		a := turn(g)
		return fmt.Sprintf("%d %d %d", legal(a[0]), legal(a[1]), legal(a[2]))
	})
}

// legal replaces an action out of 0..4 by Stay: anything else would be an
// illegal action, which loses the match.
func legal(a int) int {
	if a < Stay || a > Right {
		return Stay
	}
	return a
}

// levelWait bounds how long seat 0 waits for the next level's init line
// after a round its tracking says ended the level (1 s per answer).
const levelWait = 400 * time.Millisecond

func play(role int, action func(g *Game) string) error {
	lines := make(chan string, 4)
	go func() {
		in := bufio.NewScanner(os.Stdin)
		in.Buffer(make([]byte, 1<<16), 1<<22)
		for in.Scan() {
			lines <- in.Text()
		}
		if err := in.Err(); err != nil {
			fmt.Fprintln(os.Stderr, "pacman: reading input:", err)
		}
		close(lines)
	}()
	out := bufio.NewWriter(os.Stdout)
	g := &Game{Seat: -1, Role: role}
	owe := false // seat 0 still has to answer this round
	var wait <-chan time.Time
	answer := func() error {
		owe, wait = false, nil
		msg := fmt.Sprintf(`{"role":%d,"action":"%s"}`, role, action(g))
		var n [4]byte
		binary.BigEndian.PutUint32(n[:], uint32(len(msg)))
		out.Write(n[:])
		out.WriteString(msg)
		// Flush every answer: a buffered one never reaches the game.
		return out.Flush()
	}
	for {
		var line string
		select {
		case l, ok := <-lines:
			if !ok {
				return nil
			}
			line = strings.TrimSpace(l)
		case <-wait:
			// No new level came: answer from what we know.
			if err := answer(); err != nil {
				return err
			}
			continue
		}
		switch {
		case g.Seat < 0 && (line == "0" || line == "1"):
			g.Seat = int(line[0] - '0')
			owe = g.Seat == 0 // seat 0 opens every round, the first after the init line
		case line == "player 0 send info":
			if err := answer(); err != nil { // seat 1's turn
				return err
			}
		case line == "player 1 send info":
			// Seat 0 learns that seat 1 answered; the actions line follows.
		case strings.Contains(line, `"level"`):
			if err := g.startLevel(line); err != nil {
				return err
			}
			if owe {
				if err := answer(); err != nil {
					return err
				}
			}
		case strings.Contains(line, `"pacman_action"`):
			var a struct {
				Pacman int    `json:"pacman_action"`
				Ghosts [3]int `json:"ghosts_action"`
			}
			if err := json.Unmarshal([]byte(line), &a); err != nil {
				return fmt.Errorf("bad actions line: %w", err)
			}
			g.play(a.Pacman, a.Ghosts)
			if g.Seat != 0 {
				break
			}
			owe = true
			if !g.LevelOver {
				if err := answer(); err != nil {
					return err
				}
				break
			}
			// The next level's init line should follow at once (none
			// after the last level); answer then, or when it is late.
			wait = time.After(levelWait)
		case line == "":
		default:
			fmt.Fprintf(os.Stderr, "pacman: unexpected line %.60q\n", line)
		}
	}
}

// levels: the rounds of each level and the round after which the portal
// opens (0: no portal).
var levels = [3]struct{ maxRounds, portalAt int }{{500, 60}, {400, 50}, {300, 0}}

// startLevel reads an init line.
func (g *Game) startLevel(line string) error {
	var in struct {
		Level       int       `json:"level"`
		Round       int       `json:"round"`
		BoardSize   int       `json:"board_size"`
		Board       [][]int   `json:"board"`
		Skills      [5]int    `json:"pacman_skill_status"`
		PacmanCoord [2]int    `json:"pacman_coord"`
		GhostsCoord [3][2]int `json:"ghosts_coord"`
		Score       [2]int    `json:"score"`
		Beannumber  int       `json:"beannumber"`
		PortalOpen  bool      `json:"portal_available"`
		PortalCoord [2]int    `json:"portal_coord"`
	}
	if err := json.Unmarshal([]byte(line), &in); err != nil {
		return fmt.Errorf("bad init line: %w", err)
	}
	g.Level, g.Round, g.Size, g.Board = in.Level, in.Round, in.BoardSize, in.Board
	g.Skills, g.Score, g.BeansLeft, g.PortalOpen = in.Skills, in.Score, in.Beannumber, in.PortalOpen
	g.Pacman = Point{in.PacmanCoord[0], in.PacmanCoord[1]}
	for j, c := range in.GhostsCoord {
		g.Ghosts[j] = Point{c[0], c[1]}
	}
	g.Portal = Point{in.PortalCoord[0], in.PortalCoord[1]}
	if l := in.Level - 1; l >= 0 && l < len(levels) {
		g.MaxRounds, g.portalAt = levels[l].maxRounds, levels[l].portalAt
	}
	g.survival, g.catches = 0, 0
	g.LevelOver, g.GameOver = false, false
	fmt.Fprintf(os.Stderr, "level %d: %d×%d, %d beans\n", g.Level, g.Size, g.Size, g.BeansLeft)
	return nil
}
