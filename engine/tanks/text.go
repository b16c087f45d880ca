package tanks

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// RenderText draws a frame for the terminal viewer: '#' indestructible,
// '~' water, a barrier's health as a digit, tanks as A, B, C… by seat, '*'
// bullets; under the board, one line per seat in seat order.
func (Game) RenderText(frames []json.RawMessage, i int, players []string) string {
	if i < 0 || i >= len(frames) {
		return ""
	}
	var f struct {
		Turn  int
		State struct {
			ContentsInfo []struct {
				Coordinates point
				HealthCount int
				Type        int
				UserId      string
			}
			BulletsInfo []struct {
				Coordinates point
			}
			ZoneRadius int
		}
		Events []Event
	}
	if err := json.Unmarshal(frames[i], &f); err != nil {
		return "unreadable frame: " + err.Error()
	}
	w, h := 0, 0
	for _, c := range f.State.ContentsInfo {
		w, h = max(w, c.Coordinates.X+1), max(h, c.Coordinates.Y+1)
	}
	grid := make([][]byte, h)
	for y := range grid {
		grid[y] = []byte(strings.Repeat(" ", w))
	}
	tanks := make([]string, len(players)) // by seat
	var strangers []string                // tanks of no known seat
	for _, c := range f.State.ContentsInfo {
		ch := byte('?')
		switch cellType(c.Type) {
		case cellNotDestroyable:
			ch = '#'
		case cellWater:
			ch = '~'
		case cellBarrier:
			ch = byte('0' + min(c.HealthCount, 9))
		case cellTank:
			seat := slices.Index(players, c.UserId)
			ch = byte('A' + max(seat, 0))
			line := fmt.Sprintf("%c %s: %d HP", ch, c.UserId, c.HealthCount)
			if seat >= 0 {
				tanks[seat] = line
			} else {
				strangers = append(strangers, line)
			}
		}
		grid[c.Coordinates.Y][c.Coordinates.X] = ch
	}
	for _, b := range f.State.BulletsInfo {
		if p := b.Coordinates; p.Y >= 0 && p.Y < h && p.X >= 0 && p.X < w && grid[p.Y][p.X] == ' ' {
			grid[p.Y][p.X] = '*'
		}
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "turn %d, zone radius %d\n", f.Turn, f.State.ZoneRadius)
	for y := h - 1; y >= 0; y-- {
		sb.Write(grid[y])
		sb.WriteByte('\n')
	}
	for seat, t := range tanks {
		if t == "" {
			t = fmt.Sprintf("%c %s: destroyed", 'A'+seat, players[seat])
		}
		sb.WriteString(t + "\n")
	}
	for _, t := range strangers {
		sb.WriteString(t + "\n")
	}
	for _, e := range f.Events {
		if e.Kind == "destroyed" && e.Target != "" {
			fmt.Fprintf(&sb, "%s destroyed\n", e.Target)
		}
	}
	return sb.String()
}
