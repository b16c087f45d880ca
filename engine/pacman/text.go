package pacman

import (
	"encoding/json"
	"fmt"
	"strings"
)

// RenderText draws a frame for the terminal viewer: the board rebuilt from
// the level's init and the cells eaten since, the Pac-Man as P, ghosts as
// G, '#' walls, '.' beans, 'o' bonus beans, '@' the portal, letters for
// skill items.
func (Game) RenderText(frames []json.RawMessage, i int, players []string) string {
	if i < 0 || i >= len(frames) {
		return ""
	}
	decode := func(k int) (arenaFrame, error) {
		var f arenaFrame
		err := json.Unmarshal(frames[k], &f)
		return f, err
	}
	f, err := decode(i)
	if err != nil {
		return "unreadable frame: " + err.Error()
	}
	// The board of frame i: the latest init before it (a frame's own init
	// is the next level's), then what was eaten since.
	var board [][]int
	start := 0
	for k := i; k >= 0; k-- {
		g, err := decode(k)
		if err != nil || g.Init == nil || (k == i && i > 0) {
			continue
		}
		board = make([][]int, len(g.Init.Board))
		for r := range g.Init.Board {
			board[r] = append([]int(nil), g.Init.Board[r]...)
		}
		start = k + 1
		break
	}
	for k := start; k <= i; k++ {
		g, err := decode(k)
		if err != nil {
			continue
		}
		for _, c := range g.Eaten {
			if c[0] >= 0 && c[0] < len(board) && c[1] >= 0 && c[1] < len(board[c[0]]) {
				board[c[0]][c[1]] = int(cellEmpty)
			}
		}
	}
	symbols := map[int]byte{0: '#', 1: ' ', 2: '.', 3: 'o', 4: 's', 5: 'm', 6: 'h', 7: 'd', 8: 'f', 9: '@'}
	rows := make([][]byte, len(board))
	for r := range board {
		rows[r] = make([]byte, len(board[r]))
		for c, v := range board[r] {
			ch, ok := symbols[v]
			if !ok {
				ch = '?'
			}
			rows[r][c] = ch
		}
	}
	put := func(p [2]int, ch byte) {
		if p[0] >= 0 && p[0] < len(rows) && p[1] >= 0 && p[1] < len(rows[p[0]]) {
			rows[p[0]][p[1]] = ch
		}
	}
	for _, g := range f.GhostsCoord {
		put(g, 'G')
	}
	put(f.PacmanCoord, 'P')
	var sb strings.Builder
	fmt.Fprintf(&sb, "level %d, round %d: Pac-Man %d, ghosts %d; beans left %d\n", f.Level, f.Round, f.Score[0], f.Score[1], f.BeansLeft)
	// Row x grows upward (action 1 is x+1): draw the last row first.
	for r := len(rows) - 1; r >= 0; r-- {
		sb.Write(rows[r])
		sb.WriteByte('\n')
	}
	for seat, role := range f.Roles {
		name := fmt.Sprintf("seat %d", seat)
		if seat < len(players) {
			name = players[seat]
		}
		what := map[int]string{0: "Pac-Man (P)", 1: "ghosts (G)"}[role]
		if what == "" {
			what = "no role yet"
		}
		fmt.Fprintf(&sb, "%s: %s\n", name, what)
	}
	if f.StopReason != nil {
		fmt.Fprintf(&sb, "%s\n", *f.StopReason)
	}
	return sb.String()
}
