package pacman

import (
	"math"
	"slices"
	"strings"
	"testing"
)

func TestGenerationIsDeterministic(t *testing.T) {
	for n := 1; n <= 3; n++ {
		a := generateLevel(levelRand(42, n), n)
		b := generateLevel(levelRand(42, n), n)
		if !slices.Equal(a.board.cells, b.board.cells) || a.starts != b.starts || a.portal != b.portal {
			t.Errorf("level %d: the same seed made two boards", n)
		}
		c := generateLevel(levelRand(43, n), n)
		if slices.Equal(a.board.cells, c.board.cells) {
			t.Errorf("level %d: seeds 42 and 43 made the same board", n)
		}
	}
	if slices.Equal(generateLevel(levelRand(0, 1), 1).board.cells[:100], generateLevel(levelRand(0, 2), 1).board.cells[:100]) {
		t.Error("the levels do not have their own streams")
	}
}

func TestBoardInvariants(t *testing.T) {
	for seed := uint64(0); seed < 300; seed++ {
		for n := 1; n <= 3; n++ {
			lb := generateLevel(levelRand(seed, n), n)
			b, spec := lb.board, levels[n-1]
			fail := func(format string, args ...any) {
				t.Helper()
				t.Fatalf("seed %d level %d: "+format, append([]any{seed, n}, args...)...)
			}
			if b.size != spec.size || len(b.cells) != spec.size*spec.size {
				fail("size %d, want %d", b.size, spec.size)
			}
			s := b.size
			for i := 0; i < s; i++ {
				for _, p := range []point{{0, i}, {s - 1, i}, {i, 0}, {i, s - 1}} {
					if b.at(p) != cellWall {
						fail("border cell %v is %d", p, b.at(p))
					}
				}
			}
			corners := []point{{1, 1}, {1, s - 2}, {s - 2, 1}, {s - 2, s - 2}}
			for _, c := range corners {
				if b.at(c) != cellEmpty {
					fail("corner %v is %d, want empty", c, b.at(c))
				}
			}
			starts := lb.starts[:]
			for _, c := range corners {
				if !slices.Contains(starts, c) {
					fail("starts %v miss corner %v", starts, c)
				}
			}
			beans, shields, portals := 0, 0, 0
			for _, v := range b.cells {
				switch {
				case v < cellWall || v > cellPortal:
					fail("cell value %d", v)
				case v == cellBean || v == cellBonus:
					beans++
				case v == cellShield:
					shields++
				case v == cellPortal:
					portals++
				}
			}
			if beans != lb.beans {
				fail("beannumber %d, the board holds %d beans", lb.beans, beans)
			}
			if len(lb.shields) != spec.shields {
				fail("%d shields placed, want %d", len(lb.shields), spec.shields)
			}
			wantShields := spec.shields
			for _, p := range lb.shields {
				if p.X < 1 || p.Y < 1 || p.X > 18 || p.Y > 18 {
					fail("shield at %v", p)
				}
				if p == (point{1, 1}) {
					wantShields-- // cleared with the corner, as in the original
				}
			}
			if shields != wantShields {
				fail("%d shields on the board, want %d", shields, wantShields)
			}
			if spec.portalAt == 0 {
				if lb.portal != noPortal || portals != 0 {
					fail("portal %v on a level without one", lb.portal)
				}
				continue
			}
			mid := s / 2
			if portals != 1 || b.at(lb.portal) != cellPortal || abs(lb.portal.X-mid) > 1 || abs(lb.portal.Y-mid) > 1 {
				fail("portal at %v (%d portals), want one within 1 of (%d,%d)", lb.portal, portals, mid, mid)
			}
		}
	}
}

// The big boards are four blocks pasted at offsets 0 and 19, later ones
// over earlier ones, then cropped.
func TestBlocksArePasted(t *testing.T) {
	for n := 1; n <= 3; n++ {
		lb := generateLevel(levelRand(5, n), n)
		r := levelRand(5, n)
		size := levels[n-1].size
		want := newBoard(fieldSize, cellBean)
		offsets := []point{{0, 0}, {0, 19}, {19, 0}, {19, 19}}
		if size == blockSize {
			offsets = offsets[:1]
		}
		for _, off := range offsets {
			blk, _ := generateBlock(r)
			paste(want, blk, off.X, off.Y)
		}
		for x := 1; x < size-1; x++ {
			for y := 1; y < size-1; y++ {
				p := point{x, y}
				if p == lb.portal || slices.Contains(lb.shields, p) || ((x == 1 || x == size-2) && (y == 1 || y == size-2)) {
					continue
				}
				if got := lb.board.at(p); got != want.at(p) {
					t.Fatalf("level %d: %v is %d, the pasted blocks have %d", n, p, got, want.at(p))
				}
			}
		}
	}
}

// picture draws rows x0..x0+h−1, columns y0..y0+w−1 of a board, the
// lowest x first, walls as '#' and anything else as '.'.
func picture(b board, x0, y0, h, w int) string {
	var sb strings.Builder
	for x := x0; x < x0+h; x++ {
		for y := y0; y < y0+w; y++ {
			switch b.at(point{x, y}) {
			case cellWall:
				sb.WriteByte('#')
			case cellBonus:
				sb.WriteByte('O')
			default:
				sb.WriteByte('.')
			}
		}
		sb.WriteByte('\n')
	}
	return sb.String()
}

func TestShapes(t *testing.T) {
	c := point{6, 6}
	tests := []struct {
		name string
		draw func(b board)
		want string // rows 2..10, columns 2..10
	}{
		{"cross", func(b board) {
			b.set(c, cellWall)
			for k := 1; k <= 3; k++ {
				b.set(point{c.X - k, c.Y}, cellWall)
				b.set(point{c.X + k, c.Y}, cellWall)
				b.set(point{c.X, c.Y - k}, cellWall)
				b.set(point{c.X, c.Y + k}, cellWall)
			}
		}, "" +
			".........\n" +
			"....#....\n" +
			"....#....\n" +
			"....#....\n" +
			".#######.\n" +
			"....#....\n" +
			"....#....\n" +
			"....#....\n" +
			".........\n"},
		{"C: the anti-diagonal", func(b board) { cWall(b, c, +1) }, "" +
			".........\n" +
			".###O###.\n" +
			".#....##.\n" +
			".#...#.#.\n" +
			".O.....O.\n" +
			".#.#...#.\n" +
			".##....#.\n" +
			".###O###.\n" +
			".........\n"},
		{"mirrored C: the main diagonal", func(b board) { cWall(b, c, -1) }, "" +
			".........\n" +
			".###O###.\n" +
			".##....#.\n" +
			".#.#...#.\n" +
			".O.....O.\n" +
			".#...#.#.\n" +
			".#....##.\n" +
			".###O###.\n" +
			".........\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newBoard(blockSize, cellBean)
			tt.draw(b)
			if got := picture(b, 2, 2, 9, 9); got != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

func TestLShapes(t *testing.T) {
	for _, tt := range []struct {
		name           string
		corner         point
		dx, dy         int
		armX, armY     [2]int // the arms' extents
		areaX0, areaY0 int    // the 5×5 square of extra walls
	}{
		{"L: corner at centre+(3,−3), arms to −x and +y", point{9, 3}, -1, +1, [2]int{4, 9}, [2]int{3, 8}, 4, 4},
		{"mirrored L: corner at centre+(−3,+3), arms to +x and −y", point{3, 9}, +1, -1, [2]int{3, 8}, [2]int{4, 9}, 4, 4},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for seed := uint64(0); seed < 50; seed++ {
				b := newBoard(blockSize, cellBean)
				lWall(levelRand(seed, 9), b, tt.corner, tt.dx, tt.dy)
				for x := tt.armX[0]; x <= tt.armX[1]; x++ {
					if b.at(point{x, tt.corner.Y}) != cellWall {
						t.Fatalf("arm cell (%d,%d) is not a wall", x, tt.corner.Y)
					}
				}
				for y := tt.armY[0]; y <= tt.armY[1]; y++ {
					if b.at(point{tt.corner.X, y}) != cellWall {
						t.Fatalf("arm cell (%d,%d) is not a wall", tt.corner.X, y)
					}
				}
				extra := 0
				for x := tt.areaX0; x < tt.areaX0+5; x++ {
					for y := tt.areaY0; y < tt.areaY0+5; y++ {
						if b.at(point{x, y}) == cellWall {
							extra++
						}
					}
				}
				total := 0
				for _, v := range b.cells {
					if v == cellWall {
						total++
					}
				}
				if extra != 3 || total != 11+3 {
					t.Fatalf("%d extra walls in the square and %d walls in all, want 3 and 14", extra, total)
				}
			}
		})
	}
}

// Over many blocks, the components and the cell contents follow the
// original's distribution.
func TestDistribution(t *testing.T) {
	const blocks = 4000
	r := levelRand(2024, 1)
	var shapes [shapeCount]int
	var counts [10]int
	drawn := 0
	wallsPerShape := [shapeCount]int{shapeL: 14, shapeMirroredL: 14, shapeCross: 13, shapeC: 24, shapeMirroredC: 24}
	for range blocks {
		b, sh := generateBlock(r)
		walls, openings := 0, 0
		for _, s := range sh {
			shapes[s]++
			walls += wallsPerShape[s]
			if s == shapeC || s == shapeMirroredC {
				openings += 4
			}
		}
		got := 0
		for x := 0; x < blockSize; x++ {
			for y := 0; y < blockSize; y++ {
				v := b.at(point{x, y})
				if v == cellWall {
					got++
					continue
				}
				if x >= 1 && y >= 1 && x <= drawMax && y <= drawMax {
					counts[v]++
					drawn++
				} else if v != cellBean {
					t.Fatalf("cell (%d,%d) outside the drawn square is %d", x, y, v)
				}
			}
		}
		if got != walls {
			t.Fatalf("%d walls, the components %v make %d", got, sh, walls)
		}
		counts[cellBonus] -= openings
		drawn -= openings
	}
	for s, n := range shapes {
		if f := float64(n) / (4 * blocks); math.Abs(f-0.2) > 0.015 {
			t.Errorf("shape %d chosen %.3f of the time, want 0.2", s, f)
		}
	}
	want := map[int8]float64{
		cellBonus: 50, cellSpeed: 15, cellMagnet: 25, cellDouble: 30, cellFreeze: 10,
		cellEmpty: 380, cellBean: 491,
	}
	for v, w := range want {
		f, p := float64(counts[v])/float64(drawn), w/1001
		if math.Abs(f-p) > 4*math.Sqrt(p*(1-p)/float64(drawn))+1e-4 {
			t.Errorf("value %d on %.4f of the drawn cells, want %.4f", v, f, p)
		}
	}
	if counts[cellShield] != 0 || counts[cellPortal] != 0 {
		t.Errorf("a block drew shields (%d) or portals (%d)", counts[cellShield], counts[cellPortal])
	}
}

func TestBeanCountAcrossSeeds(t *testing.T) {
	// Sanity of the sizes: a level-1 board holds several hundred beans.
	var total [3]int
	for seed := uint64(0); seed < 50; seed++ {
		for n := 1; n <= 3; n++ {
			total[n-1] += generateLevel(levelRand(seed, n), n).beans
		}
	}
	for n, sum := range total {
		avg := sum / 50
		if avg < 50 || avg > levels[n].size*levels[n].size/2 {
			t.Errorf("level %d: %d beans on average", n+1, avg)
		}
		t.Logf("level %d: %d beans on average", n+1, avg)
	}
}
