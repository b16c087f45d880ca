package pacman

import (
	"encoding/json"
	"fmt"
	"strings"
)

// RenderText draws a frame for the terminal viewer: the frame's board with
// the Pac-Man as P, ghosts as G, '#' walls, '.' beans, 'o' bonus beans, '@'
// the portal, letters for skill items.
func (Game) RenderText(frames []json.RawMessage, i int, players []string) string {
	if i < 0 || i >= len(frames) {
		return ""
	}
	var f arenaFrame
	if err := json.Unmarshal(frames[i], &f); err != nil {
		return "unreadable frame: " + err.Error()
	}
	rows := make([][]byte, len(f.Board))
	for r, row := range f.Board {
		rows[r] = []byte(row)
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
