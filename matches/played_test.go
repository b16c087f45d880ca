package matches

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"arena/engine"
	"arena/engine/snake"
	"arena/engine/tanks"
)

// played plays req's match in its engine alone, each seat the engine
// awaits answering answer(seat, turn), and records it as the orchestrator
// records a match: a frame per turn with the answers and their figures,
// the result with every seat's outcome. The replay is req's: it passes
// CheckReplay.
func played(t testing.TB, req Request, answer func(seat, turn int) string) *Replay {
	t.Helper()
	match, err := req.Match()
	if err != nil {
		t.Fatal(err)
	}
	ids := BotIDs(req.Images)
	rep := &Replay{Format: ReplayFormat, MatchID: req.MatchID, Game: req.Game.Name(), Map: req.Map.Info().Name, MapData: string(req.Map.Data()),
		Seed: req.Seed, Settings: match.Settings(), Limits: req.Limits.Resolve(req.Game.Protocol()).Record()}
	for i, id := range ids {
		rep.Bots = append(rep.Bots, ReplayBot{Seat: i, ID: id, Image: req.Images[i], ImageID: req.ImageIDs[i]})
	}
	rep.Frames = append(rep.Frames, Frame{Turn: 0, State: match.Frame()})
	var pending []FrameBot // the records of the turn being played
	for {
		st := match.Step()
		if st.Done {
			break
		}
		turn := match.Turn() + 1
		replies := make([]engine.Reply, 0, len(st.Await))
		for _, seat := range st.Await {
			a := answer(seat, turn)
			cpu := int64(1500 + (37*turn+seat*11)%4000)
			pending = append(pending, FrameBot{Seat: seat, Asked: true, Answer: a, Status: engine.StatusOK, TimeUS: cpu + 250, CPUUS: &cpu, MemPeakBytes: 6 << 20})
			replies = append(replies, engine.Reply{Seat: seat, Data: []byte(a), Time: time.Duration(cpu) * time.Microsecond})
		}
		match.Submit(replies)
		if match.Turn() != rep.Frames[len(rep.Frames)-1].Turn {
			rep.Frames = append(rep.Frames, Frame{Turn: match.Turn(), State: match.Frame(), Bots: pending})
			pending = nil
		}
	}
	res := match.Result()
	rep.Result = Result{MatchID: req.MatchID, Game: rep.Game, Map: rep.Map, Seed: req.Seed, Turns: match.Turn(), Winners: []string{}}
	for _, w := range res.Winners {
		rep.Result.Winners = append(rep.Result.Winners, ids[w])
	}
	for i, id := range ids {
		sr := res.Seats[i]
		rep.Result.Bots = append(rep.Result.Bots, BotResult{Seat: i, ID: id, Image: req.Images[i], ImageID: req.ImageIDs[i], Status: engine.StatusOK,
			Score: sr.Score, DeathReason: sr.DeathReason, DeathTurn: sr.DeathTurn, Answers: match.Turn()})
	}
	return rep
}

// twoImages are the images of a test match's two bots, pinned.
func twoImages(req Request) Request {
	req.Images = []string{"alice/bot:v1", "bob/bot:v1"}
	req.ImageIDs = []string{"sha256:" + strings.Repeat("a", 64), "sha256:" + strings.Repeat("b", 64)}
	return req
}

// longSnake is a 2,000-turn Snake match and its replay: on a 30×60
// board without items, each snake (34 cells long once grown) goes round
// its own 48-cell loop in the middle of the board, which the walls
// closing in ring by ring (one every 240 rounds) do not reach before the
// match's last round.
func longSnake(t testing.TB) (Request, *Replay) {
	t.Helper()
	loops := [2][]point{loopOf(10, 12, 13, 33), loopOf(16, 12, 19, 33)}
	rows := make([][]byte, 30)
	for x := range rows {
		rows[x] = []byte(strings.Repeat(".", 60))
	}
	rows[10][12], rows[16][12] = '1', '2' // where each loop begins
	var file strings.Builder
	file.WriteString("30 60\n")
	for _, r := range rows {
		file.Write(r)
		file.WriteByte('\n')
	}
	m, err := snake.ParseMap("loops", []byte(file.String()))
	if err != nil {
		t.Fatal(err)
	}
	req := twoImages(Request{Game: snake.New(), Map: m, Seed: 5, MatchID: "snakelong001",
		Settings: []byte(`{"max_rounds":2000,"apples":0,"shields":0}`)})
	rep := played(t, req, func(seat, turn int) string {
		next := loops[seat][turn%len(loops[seat])]
		return fmt.Sprintf(`{"X":%d,"Y":%d}`, next.x, next.y)
	})
	if rep.Result.Turns != 2000 || len(rep.Result.Winners) != 2 && len(rep.Result.Winners) != 0 {
		t.Fatalf("the long Snake match lasted %d turns, winners %v", rep.Result.Turns, rep.Result.Winners)
	}
	for _, b := range rep.Result.Bots {
		if b.DeathReason != "" {
			t.Fatalf("a snake died: %+v", b)
		}
	}
	return req, rep
}

// point is a Snake cell: row x, column y.
type point struct{ x, y int }

// loopOf is the cycle of cells around the rectangle rows x0..x1, columns
// y0..y1, clockwise from (x0, y0).
func loopOf(x0, y0, x1, y1 int) []point {
	var c []point
	for y := y0; y < y1; y++ {
		c = append(c, point{x0, y})
	}
	for x := x0; x < x1; x++ {
		c = append(c, point{x, y1})
	}
	for y := y1; y > y0; y-- {
		c = append(c, point{x1, y})
	}
	for x := x1; x > x0; x-- {
		c = append(c, point{x, y0})
	}
	return c
}

// randomTanks is a whole Tanks match on the classic map between two
// tanks that move and fire at random, and its replay.
func randomTanks(t testing.TB, seed uint64) (Request, *Replay) {
	t.Helper()
	g := tanks.New()
	m, err := g.Map("classic")
	if err != nil {
		t.Fatal(err)
	}
	req := twoImages(Request{Game: g, Map: m, Seed: seed, MatchID: "tanksrandom1"})
	rnd := rand.New(rand.NewPCG(seed, 1))
	return req, played(t, req, func(int, int) string {
		return fmt.Sprintf(`[{"Type":%d,"Direction":%d}]`, rnd.IntN(2), rnd.IntN(4))
	})
}
