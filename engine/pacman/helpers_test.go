package pacman

import (
	"strings"
	"testing"
)

// level builds a level from a picture of the interior (a wall border is
// added around it; rows shorter than the longest are padded with walls).
// The top row has the highest x, so "up" (x+1) points up the picture and
// "right" (y+1) to the right; the bottom-left interior cell is (1,1).
//
//	#  wall          .  empty       o  bean        O  bonus bean
//	s  speed         m  magnet      h  shield      d  double score
//	f  freeze        @  portal      P  the Pac-Man (on an empty cell)
//	A B C            ghosts 0, 1, 2 (on empty cells)
//
// A level with a portal opens it after round 60; max rounds are 500.
func level(t *testing.T, rows ...string) *state {
	t.Helper()
	size := len(rows)
	for _, r := range rows {
		size = max(size, len(r))
	}
	size += 2
	s := &state{level: 1, board: newBoard(size, cellWall), portal: noPortal}
	s.spec = levelSpec{size: size, maxRounds: 500}
	found := map[rune]bool{}
	for i, row := range rows {
		x := len(rows) - i
		for j, c := range row {
			p := point{x, j + 1}
			v, ok := map[rune]int8{'#': cellWall, '.': cellEmpty, 'o': cellBean, 'O': cellBonus, 's': cellSpeed,
				'm': cellMagnet, 'h': cellShield, 'd': cellDouble, 'f': cellFreeze, '@': cellPortal}[c]
			switch {
			case ok:
				s.board.set(p, v)
			case c == 'P':
				s.board.set(p, cellEmpty)
				s.pac = p
			case c >= 'A' && c <= 'C':
				s.board.set(p, cellEmpty)
				s.ghosts[c-'A'] = p
			default:
				t.Fatalf("unknown cell %q", c)
			}
			if found[c] && strings.ContainsRune("PABC", c) {
				t.Fatalf("%c placed twice", c)
			}
			found[c] = true
			if v == cellPortal && ok {
				s.portal = p
				s.spec.portalAt = 60
			}
			if v == cellBean || v == cellBonus {
				s.beans++
			}
		}
	}
	for _, c := range "PABC" {
		if !found[c] {
			t.Fatalf("the picture has no %c", c)
		}
	}
	return s
}

// Actions by name.
const (
	stay  = 0
	up    = 1
	left  = 2
	down  = 3
	right = 4
)

var still = [3]int{stay, stay, stay}

func pts(ps ...point) []point { return ps }

// endless is level with beans to spare elsewhere, so that the round never
// ends the level by eating the last bean.
func endless(t *testing.T, rows ...string) *state {
	t.Helper()
	s := level(t, rows...)
	s.beans += 1000
	return s
}
