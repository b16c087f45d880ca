package pacman

import "arena/engine"

// Cell values; the numbers are part of the protocol.
const (
	cellWall   int8 = 0
	cellEmpty  int8 = 1
	cellBean   int8 = 2
	cellBonus  int8 = 3
	cellSpeed  int8 = 4
	cellMagnet int8 = 5
	cellShield int8 = 6
	cellDouble int8 = 7
	cellFreeze int8 = 8
	cellPortal int8 = 9
)

type point struct{ X, Y int }

// noPortal is portal_coord on a level without a portal.
var noPortal = point{-1, -1}

// board is a square grid; board[x][y] with x the row.
type board struct {
	size  int
	cells []int8
}

func newBoard(size int, fill int8) board {
	b := board{size: size, cells: make([]int8, size*size)}
	for i := range b.cells {
		b.cells[i] = fill
	}
	return b
}

func (b board) at(p point) int8     { return b.cells[p.X*b.size+p.Y] }
func (b board) set(p point, v int8) { b.cells[p.X*b.size+p.Y] = v }

// inside reports whether p is a cell strictly inside the border.
func (b board) inside(p point) bool {
	return p.X >= 1 && p.Y >= 1 && p.X <= b.size-2 && p.Y <= b.size-2
}

// levelSpec is one level's fixed parameters.
type levelSpec struct {
	size      int
	maxRounds int
	// portalAt is the round after which the portal opens; 0: no portal.
	portalAt int
	shields  int
}

var levels = [3]levelSpec{
	{size: 41, maxRounds: 500, portalAt: 60, shields: 3},
	{size: 32, maxRounds: 400, portalAt: 50, shields: 3},
	{size: 22, maxRounds: 300, portalAt: 0, shields: 4},
}

// Generation constants of the original game.
const (
	blockSize   = 22 // a generated block
	blockOffset = 19 // where the second row and column of blocks are pasted
	fieldSize   = 2 * blockSize
	shieldRange = 18 // shields go to cells with 1 ≤ x,y ≤ shieldRange
	drawMax     = 19 // cells with 1 ≤ x,y ≤ drawMax draw their content
)

// shape is a wall component of a block.
type shape int

const (
	shapeL shape = iota
	shapeMirroredL
	shapeCross
	shapeC
	shapeMirroredC
	shapeCount
)

// levelBoard is a generated level.
type levelBoard struct {
	board  board
	portal point
	beans  int      // cells holding a bean (2 or 3)
	starts [4]point // the Pac-Man's, then the ghosts'
	// For tests: the components of each block and where the shields went.
	shapes  [][4]shape
	shields []point
}

// The level boards come from independent streams of the match seed.
const levelStream = 0x7061636d616e00 // "pacman\0" + level

func levelRand(seed uint64, level int) *engine.Rand {
	return engine.NewRand(seed, levelStream+uint64(level))
}

// generateLevel makes level n (1-based): the board as the original game
// generates it, then the shuffled spawn corners.
func generateLevel(r *engine.Rand, n int) levelBoard {
	spec := levels[n-1]
	size := spec.size
	var lb levelBoard
	var b board
	if size <= blockSize {
		blk, shapes := generateBlock(r)
		lb.shapes = append(lb.shapes, shapes)
		b = newBoard(size, cellBean)
		paste(b, blk, 0, 0)
	} else {
		field := newBoard(fieldSize, cellBean)
		for _, off := range [4]point{{0, 0}, {0, blockOffset}, {blockOffset, 0}, {blockOffset, blockOffset}} {
			blk, shapes := generateBlock(r)
			lb.shapes = append(lb.shapes, shapes)
			paste(field, blk, off.X, off.Y) // later pastes overwrite the overlap
		}
		b = newBoard(size, cellBean)
		for x := 0; x < size; x++ {
			copy(b.cells[x*size:(x+1)*size], field.cells[x*fieldSize:x*fieldSize+size])
		}
	}

	lb.portal = noPortal
	if spec.portalAt > 0 {
		mid := size / 2
		open := false
		for x := mid - 1; x <= mid+1; x++ {
			for y := mid - 1; y <= mid+1; y++ {
				open = open || b.at(point{x, y}) != cellWall
			}
		}
		for open { // never all walls with these shapes; the check keeps it total
			p := point{mid - 1 + r.IntN(3), mid - 1 + r.IntN(3)}
			if b.at(p) != cellWall {
				b.set(p, cellPortal)
				lb.portal = p
				break
			}
		}
	}

	for placed := 0; placed < spec.shields; {
		p := point{1 + r.IntN(shieldRange), 1 + r.IntN(shieldRange)}
		if v := b.at(p); v == cellEmpty || v == cellBean {
			b.set(p, cellShield)
			lb.shields = append(lb.shields, p)
			placed++
		}
	}

	for i := 0; i < size; i++ {
		b.set(point{0, i}, cellWall)
		b.set(point{size - 1, i}, cellWall)
		b.set(point{i, 0}, cellWall)
		b.set(point{i, size - 1}, cellWall)
	}
	corners := [4]point{{1, 1}, {1, size - 2}, {size - 2, 1}, {size - 2, size - 2}}
	for _, c := range corners {
		b.set(c, cellEmpty)
	}
	for _, v := range b.cells {
		if v == cellBean || v == cellBonus {
			lb.beans++
		}
	}
	r.Shuffle(len(corners), func(i, j int) { corners[i], corners[j] = corners[j], corners[i] })
	lb.starts = corners
	lb.board = b
	return lb
}

func paste(dst, src board, x0, y0 int) {
	for x := 0; x < src.size; x++ {
		copy(dst.cells[(x0+x)*dst.size+y0:], src.cells[x*src.size:(x+1)*src.size])
	}
}

// generateBlock makes one 22×22 block: four wall components centred at
// rows and columns 6 and 15, then the random content of the bean cells.
func generateBlock(r *engine.Rand) (board, [4]shape) {
	b := newBoard(blockSize, cellBean)
	var shapes [4]shape
	i := 0
	for _, cx := range [2]int{6, 15} {
		for _, cy := range [2]int{6, 15} {
			s := shape(r.IntN(int(shapeCount)))
			shapes[i] = s
			i++
			switch s {
			case shapeL:
				lWall(r, b, point{cx + 3, cy - 3}, -1, +1)
			case shapeMirroredL:
				lWall(r, b, point{cx - 3, cy + 3}, +1, -1)
			case shapeCross:
				b.set(point{cx, cy}, cellWall)
				for k := 1; k <= 3; k++ {
					b.set(point{cx - k, cy}, cellWall)
					b.set(point{cx + k, cy}, cellWall)
					b.set(point{cx, cy - k}, cellWall)
					b.set(point{cx, cy + k}, cellWall)
				}
			case shapeC:
				cWall(b, point{cx, cy}, +1)
			case shapeMirroredC:
				cWall(b, point{cx, cy}, -1)
			}
		}
	}
	for x := 1; x <= drawMax; x++ {
		for y := 1; y <= drawMax; y++ {
			p := point{x, y}
			if b.at(p) != cellBean {
				continue
			}
			switch v := r.IntN(1001); {
			case v < 50:
				b.set(p, cellBonus)
			case v < 65:
				b.set(p, cellSpeed)
			case v < 90:
				b.set(p, cellMagnet)
			case v < 120:
				b.set(p, cellDouble)
			case v < 130:
				b.set(p, cellFreeze)
			case v > 620:
				b.set(p, cellEmpty)
			}
		}
	}
	return b, shapes
}

// lWall draws an L: the corner, two 5-cell arms (along x by dx, along y by
// dy), and 3 walls on random bean cells of the 5×5 square between the arms.
func lWall(r *engine.Rand, b board, corner point, dx, dy int) {
	b.set(corner, cellWall)
	for k := 1; k <= 5; k++ {
		b.set(point{corner.X + dx*k, corner.Y}, cellWall)
		b.set(point{corner.X, corner.Y + dy*k}, cellWall)
	}
	for left := 3; left > 0; {
		p := point{corner.X + dx*(1+r.IntN(5)), corner.Y + dy*(1+r.IntN(5))}
		if b.at(p) == cellBean {
			b.set(p, cellWall)
			left--
		}
	}
}

// cWall draws a 7×7 ring around c with bonus-bean openings in the middle of
// each side, and 3 walls on each side of the centre along a diagonal: the
// anti-diagonal (x−k, y+k) for d = +1 (C), the main diagonal (x−k, y−k) for
// d = −1 (mirrored C).
func cWall(b board, c point, d int) {
	b.set(c, cellBean)
	for k := 1; k <= 3; k++ {
		b.set(point{c.X - k, c.Y + d*k}, cellWall)
		b.set(point{c.X + k, c.Y - d*k}, cellWall)
	}
	for k := -3; k <= 3; k++ {
		b.set(point{c.X + k, c.Y - 3}, cellWall)
		b.set(point{c.X + k, c.Y + 3}, cellWall)
		b.set(point{c.X - 3, c.Y + k}, cellWall)
		b.set(point{c.X + 3, c.Y + k}, cellWall)
	}
	b.set(point{c.X, c.Y - 3}, cellBonus)
	b.set(point{c.X, c.Y + 3}, cellBonus)
	b.set(point{c.X - 3, c.Y}, cellBonus)
	b.set(point{c.X + 3, c.Y}, cellBonus)
}
