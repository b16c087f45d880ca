package snake

import (
	"encoding/json"
	"fmt"
	"strings"
)

// RenderText draws a frame for the terminal viewer: the board as the bots
// see it, each snake's head as A or B (its body 1 or 2), and the scores.
func (Game) RenderText(frames []json.RawMessage, i int, players []string) string {
	if i < 0 || i >= len(frames) {
		return ""
	}
	var f struct {
		Round         int      `json:"round"`
		Board         []string `json:"board"`
		RoundToShrink int      `json:"round_to_shrink"`
		Snakes        []struct {
			Seat        int      `json:"seat"`
			Alive       bool     `json:"alive"`
			Body        [][2]int `json:"body"`
			Score       int      `json:"score"`
			Shield      int      `json:"shield"`
			DeathReason string   `json:"death_reason"`
		} `json:"snakes"`
	}
	if err := json.Unmarshal(frames[i], &f); err != nil {
		return "unreadable frame: " + err.Error()
	}
	rows := make([][]byte, len(f.Board))
	for r, line := range f.Board {
		rows[r] = []byte(line)
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "round %d, next ring closes in %d\n", f.Round, f.RoundToShrink)
	for _, s := range f.Snakes {
		if len(s.Body) > 0 {
			x, y := s.Body[0][0], s.Body[0][1]
			if x >= 0 && x < len(rows) && y >= 0 && y < len(rows[x]) {
				rows[x][y] = byte('A' + s.Seat)
			}
		}
	}
	for _, r := range rows {
		sb.Write(r)
		sb.WriteByte('\n')
	}
	for _, s := range f.Snakes {
		name := fmt.Sprintf("seat %d", s.Seat)
		if s.Seat < len(players) {
			name = players[s.Seat]
		}
		state := "alive"
		if !s.Alive {
			state = "dead: " + s.DeathReason
		} else if s.Shield > 0 {
			state = fmt.Sprintf("shield %d", s.Shield)
		}
		fmt.Fprintf(&sb, "%c %s: score %d, %s\n", 'A'+s.Seat, name, s.Score, state)
	}
	return sb.String()
}
