// Package draw lets a bot show what it is thinking: shapes the viewer
// draws over the board for the turn, in the game's coordinates (Tanks:
// x, y; Snake and Pac-Man: row, column). Add shapes while deciding, then
// call Flush once before answering: it writes one line to stderr,
//
//	#arena {"draw":[{"circle":[3,4],"text":"me"},{"line":[[3,4],[7,4]],"color":"#e33"}]}
//
// which the replay keeps with the turn's stderr. An empty color is the
// bot's own; a text is at most 40 characters.
package draw

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sync"
)

var (
	mu    sync.Mutex
	items []map[string]any
	// Out is where Flush writes (stderr).
	Out io.Writer = os.Stderr
)

func add(item map[string]any, color, text string) {
	if color != "" {
		item["color"] = color
	}
	if text != "" {
		item["text"] = text
	}
	mu.Lock()
	items = append(items, item)
	mu.Unlock()
}

// Circle rings the cell x, y.
func Circle(x, y int, color, text string) { add(map[string]any{"circle": [2]int{x, y}}, color, text) }

// Line joins two cells' centres.
func Line(x1, y1, x2, y2 int, color, text string) {
	add(map[string]any{"line": [2][2]int{{x1, y1}, {x2, y2}}}, color, text)
}

// Cell shades the cell x, y.
func Cell(x, y int, color, text string) { add(map[string]any{"cell": [2]int{x, y}}, color, text) }

// Text writes text at the cell x, y.
func Text(x, y int, text, color string) { add(map[string]any{"at": [2]int{x, y}}, color, text) }

// Flush writes the turn's shapes (none: nothing) and starts the next
// turn's.
func Flush() {
	mu.Lock()
	out := items
	items = nil
	mu.Unlock()
	if len(out) == 0 {
		return
	}
	line, err := json.Marshal(map[string]any{"draw": out})
	if err == nil {
		fmt.Fprintf(Out, "#arena %s\n", line)
	}
}
