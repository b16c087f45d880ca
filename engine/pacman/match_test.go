package pacman

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"arena/engine"
)

// ask marks, in a seat's transcript, where it was asked for an answer.
const ask = "<ask>"

// exchange is the record of driving a match.
type exchange struct {
	recv       [2]strings.Builder // what each seat received, with ask marks
	rejections []engine.Rejection
	done       *engine.Step
}

// drive plays up to steps exchanges; answer gives each awaited seat's
// reply (the turn is the one in progress). before runs ahead of each Step.
func drive(t *testing.T, g *match, steps int, before func(), answer func(seat, turn int) engine.Reply) *exchange {
	t.Helper()
	x := &exchange{}
	for range steps {
		if before != nil {
			before()
		}
		st := g.Step()
		if again := g.Step(); !reflect.DeepEqual(st, again) {
			t.Fatal("Step changed the match")
		}
		for _, m := range st.Send {
			x.recv[m.Seat].Write(m.Data)
		}
		if st.Done {
			if len(st.Await) != 0 {
				t.Fatalf("done but awaiting %v", st.Await)
			}
			x.done = &st
			return x
		}
		if len(st.Await) != 1 {
			t.Fatalf("awaiting %v, want one seat", st.Await)
		}
		seat := st.Await[0]
		x.recv[seat].WriteString(ask)
		turn := g.Turn() + 1
		r := answer(seat, turn)
		r.Seat = seat
		x.rejections = append(x.rejections, g.Submit([]engine.Reply{r})...)
	}
	return x
}

// scripted answers: seat pacmanSeat plays the Pac-Man, the other the
// ghosts, with the moves of the given rounds (then staying).
func scripted(pacmanSeat int, pacman []int, ghosts [][3]int) func(seat, turn int) engine.Reply {
	return func(seat, turn int) engine.Reply {
		if seat == pacmanSeat {
			m := stay
			if turn <= len(pacman) {
				m = pacman[turn-1]
			}
			return engine.Reply{Data: fmt.Appendf(nil, `{"role": 0, "action": "%d"}`, m)}
		}
		m := still
		if turn <= len(ghosts) {
			m = ghosts[turn-1]
		}
		return engine.Reply{Data: fmt.Appendf(nil, `{"role": 1, "action": "%d %d %d"}`, m[0], m[1], m[2])}
	}
}

func decodeFrame(t *testing.T, raw []byte) arenaFrame {
	t.Helper()
	var f arenaFrame
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatalf("frame is not JSON: %v\n%s", err, raw)
	}
	return f
}

// shortLevels makes every level of g end by timeout after n rounds.
func shortLevels(g *match, n int) func() {
	return func() {
		if g.s.round == 0 {
			g.s.spec.maxRounds = n
		}
	}
}

func TestProtocolSequence(t *testing.T) {
	for _, pacmanSeat := range []int{0, 1} {
		t.Run(fmt.Sprintf("Pac-Man on seat %d", pacmanSeat), func(t *testing.T) {
			g := newMatch(11)
			init1 := string(initLine(decodeFrame(t, g.Frame()).Init))
			var init2 string
			before := func() {
				if g.s.level == 1 && g.s.round == 0 {
					g.s.spec.maxRounds = 2
				}
				if f := decodeFrame(t, g.Frame()); f.Turn == 2 {
					init2 = string(initLine(f.Init))
				}
			}
			pac := []int{down, up, right}
			ghosts := [][3]int{{1, 0, 4}, {2, 2, 2}, {0, 3, 0}}
			x := drive(t, g, 7, before, scripted(pacmanSeat, pac, ghosts))
			if x.done != nil || len(x.rejections) != 0 {
				t.Fatalf("done %v, rejections %v", x.done, x.rejections)
			}
			act1 := "{\"pacman_action\": 3, \"ghosts_action\": [1, 0, 4]}\n"
			act2 := "{\"pacman_action\": 1, \"ghosts_action\": [2, 2, 2]}\n"
			act3 := "{\"pacman_action\": 4, \"ghosts_action\": [0, 3, 0]}\n"
			want0 := "0\n" + init1 + ask +
				"player 1 send info\n" + act1 + ask +
				"player 1 send info\n" + act2 + init2 + ask +
				"player 1 send info\n" + act3 + ask
			want1 := "1\n" + init1 +
				"player 0 send info\n" + ask + act1 +
				"player 0 send info\n" + ask + act2 + init2 +
				"player 0 send info\n" + ask + act3
			for seat, want := range []string{want0, want1} {
				if got := x.recv[seat].String(); got != want {
					t.Errorf("seat %d received\n%.600q\nwant\n%.600q", seat, got, want)
				}
			}
			if !strings.HasPrefix(init1, `{"level": 1, "round": 0, "board_size": 41, "board": [[0, 0, 0, `) {
				t.Errorf("level 1 init line starts %.80q", init1)
			}
			if !strings.HasPrefix(init2, `{"level": 2, "round": 0, "board_size": 32, "board": [[0, 0, 0, `) ||
				!strings.Contains(init2, `"pacman_skill_status": [0, 0, 0, 0, 0], "pacman_coord": [`) ||
				!strings.HasSuffix(init2, ", \"portal_available\": false, \"portal_coord\": ["+fmt.Sprint(g.s.portal.X)+", "+fmt.Sprint(g.s.portal.Y)+"]}\n") {
				t.Errorf("level 2 init line: %.80q … %q", init2, init2[max(0, len(init2)-120):])
			}
			if g.Turn() != 3 || g.s.level != 2 || g.s.round != 1 {
				t.Errorf("turn %d, level %d round %d; want 3, 2, 1", g.Turn(), g.s.level, g.s.round)
			}
		})
	}
}

func TestTurnAdvancesAfterTheSecondAnswer(t *testing.T) {
	g := newMatch(1)
	answer := scripted(0, nil, nil)
	g.Submit([]engine.Reply{{Seat: 0, Data: answer(0, 1).Data}})
	if g.Turn() != 0 {
		t.Fatalf("turn %d after seat 0's answer, want 0", g.Turn())
	}
	if st := g.Step(); !reflect.DeepEqual(st.Await, []int{1}) {
		t.Fatalf("awaiting %v, want seat 1", st.Await)
	}
	g.Submit([]engine.Reply{{Seat: 1, Data: answer(1, 1).Data}})
	if g.Turn() != 1 || !decodeFrame(t, g.Frame()).Played {
		t.Fatalf("turn %d after both answers, want 1 with a played frame", g.Turn())
	}
}

func TestSubmitIgnoresOtherSeats(t *testing.T) {
	g := newMatch(1)
	before := g.Step()
	if rej := g.Submit([]engine.Reply{{Seat: 1, Data: []byte(`{"role": 1, "action": "0 0 0"}`)}}); rej != nil {
		t.Fatalf("rejections %v", rej)
	}
	if after := g.Step(); !reflect.DeepEqual(before, after) || g.Turn() != 0 {
		t.Error("an answer from a seat that was not awaited changed the match")
	}
}

func TestFinalMessagesAndResult(t *testing.T) {
	g := newMatch(3)
	x := drive(t, g, 100, shortLevels(g, 1), scripted(1, nil, nil))
	if x.done == nil {
		t.Fatal("the match did not end")
	}
	act := []byte("{\"pacman_action\": 0, \"ghosts_action\": [0, 0, 0]}\n")
	want := []engine.Message{{Seat: 0, Data: []byte(infoFromSeat1)}, {Seat: 0, Data: act}, {Seat: 1, Data: act}}
	if !reflect.DeepEqual(x.done.Send, want) {
		t.Errorf("final messages %+v, want %+v", x.done.Send, want)
	}
	if g.Turn() != 3 {
		t.Errorf("turn %d, want 3 (one round per level)", g.Turn())
	}
	f := decodeFrame(t, g.Frame())
	if f.StopReason == nil || *f.StopReason != stopTimeUp || !f.Played || f.Init != nil || f.Level != 3 {
		t.Errorf("last frame: %+v", f)
	}
	res := g.Result()
	// Seat 0 plays the ghosts: 3 timeouts.
	wantRes := engine.Result{Winners: []int{0}, Seats: []engine.SeatResult{{Score: 225}, {Score: 0}}}
	if !reflect.DeepEqual(res, wantRes) {
		t.Errorf("result %+v, want %+v", res, wantRes)
	}
	if st := g.Step(); !st.Done || g.Submit([]engine.Reply{{Seat: 0}}) != nil {
		t.Error("the match goes on after its end")
	}
}

func TestDraw(t *testing.T) {
	g := newMatch(3)
	before := func() {
		shortLevels(g, 1)()
		if g.s.level == 3 && g.s.round == 0 {
			g.s.score = [2]int{225, 150} // the last timeout brings the ghosts level
		}
	}
	x := drive(t, g, 100, before, scripted(0, nil, nil))
	if x.done == nil {
		t.Fatal("the match did not end")
	}
	if res := g.Result(); res.Winners != nil || res.Seats[0].Score != 225 || res.Seats[1].Score != 225 {
		t.Errorf("result %+v, want a draw at 225", res)
	}
}

func TestSameRole(t *testing.T) {
	for _, role := range []int{0, 1} {
		t.Run(fmt.Sprintf("both claim %d", role), func(t *testing.T) {
			g := newMatch(1)
			msg := `{"role": 0, "action": "1"}`
			if role == 1 {
				msg = `{"role": 1, "action": "1 1 1"}`
			}
			x := drive(t, g, 10, nil, func(int, int) engine.Reply { return engine.Reply{Data: []byte(msg)} })
			if x.done == nil || len(x.done.Send) != 0 {
				t.Fatalf("done %+v, want the end with nothing more to send", x.done)
			}
			if len(x.rejections) != 2 || x.rejections[0].Seat != 0 || x.rejections[1].Seat != 1 {
				t.Errorf("rejections %v, want both seats", x.rejections)
			}
			want := engine.Result{Seats: []engine.SeatResult{
				{Score: -1000, DeathReason: "IA", DeathTurn: 1}, {Score: -1000, DeathReason: "IA", DeathTurn: 1}}}
			if res := g.Result(); !reflect.DeepEqual(res, want) {
				t.Errorf("result %+v, want %+v", res, want)
			}
			f := decodeFrame(t, g.Frame())
			if f.StopReason == nil || *f.StopReason != "Same Role" || f.Played || f.Turn != 1 || f.Round != 0 || f.Roles != [2]int{role, role} {
				t.Errorf("last frame %+v", f)
			}
		})
	}
}

func TestRoleChangeIsIllegal(t *testing.T) {
	g := newMatch(1)
	answer := func(seat, turn int) engine.Reply {
		if seat == 1 && turn == 3 {
			return engine.Reply{Data: []byte(`{"role": 0, "action": "2"}`)}
		}
		return scripted(0, nil, nil)(seat, turn)
	}
	before := func() { g.s.score = [2]int{40, 30} }
	x := drive(t, g, 10, before, answer)
	if x.done == nil || len(x.rejections) != 1 || x.rejections[0].Seat != 1 ||
		!strings.Contains(x.rejections[0].Reason, "role 0 differs from the role 1") {
		t.Fatalf("done %v, rejections %v", x.done, x.rejections)
	}
	want := engine.Result{Winners: []int{0}, Seats: []engine.SeatResult{{Score: 1040}, {Score: -970, DeathReason: "IA", DeathTurn: 3}}}
	if res := g.Result(); !reflect.DeepEqual(res, want) {
		t.Errorf("result %+v, want %+v", res, want)
	}
	if f := decodeFrame(t, g.Frame()); f.StopReason == nil || *f.StopReason != "Role error." || f.Turn != 3 || f.Round != 2 {
		t.Errorf("last frame %+v", f)
	}
}

func TestIllegalMessageEndsTheMatch(t *testing.T) {
	for _, bad := range []string{`{"role": 1, "action": "1  2 3"}`, `{"role": 1, "action": "5 5 5"}`, `not json`, `{"role": 1}`} {
		t.Run(bad, func(t *testing.T) {
			g := newMatch(1)
			answer := func(seat, turn int) engine.Reply {
				if seat == 1 && turn == 2 {
					return engine.Reply{Data: []byte(bad)}
				}
				return scripted(0, nil, nil)(seat, turn)
			}
			x := drive(t, g, 10, nil, answer)
			if x.done == nil || len(x.rejections) != 1 || x.rejections[0].Seat != 1 || x.rejections[0].Reason == "" {
				t.Fatalf("done %v, rejections %v", x.done, x.rejections)
			}
			res := g.Result()
			if res.Seats[1].DeathReason != "IA" || res.Seats[1].Score != -1000 || res.Seats[0].Score != 1000 || res.Winners[0] != 0 {
				t.Errorf("result %+v", res)
			}
			f := decodeFrame(t, g.Frame())
			if f.StopReason == nil || !strings.HasPrefix(*f.StopReason, "Illegal action of player 1: ") {
				t.Errorf("stop reason %v", f.StopReason)
			}
		})
	}
}

func TestFaultEndings(t *testing.T) {
	tests := []struct {
		status engine.Status
		code   string
	}{
		{engine.StatusTimeout, "TLE"},
		{engine.StatusCrashed, "RE"},
		{engine.StatusOOM, "RE"},
		{engine.StatusStartFailed, "RE"},
		{engine.StatusOutputLimit, "OLE"},
		{engine.StatusBadOutput, "IA"},
	}
	for _, tt := range tests {
		for _, seat := range []int{0, 1} {
			t.Run(fmt.Sprintf("%s on seat %d", tt.status, seat), func(t *testing.T) {
				g := newMatch(5)
				answer := func(s, turn int) engine.Reply {
					if s == seat && turn == 3 {
						return engine.Reply{Fault: tt.status}
					}
					return scripted(1, nil, nil)(s, turn) // seat 1 plays the Pac-Man
				}
				before := func() { g.s.score = [2]int{40, 30} }
				x := drive(t, g, 10, before, answer)
				if x.done == nil || len(x.done.Send) != 0 || len(x.rejections) != 0 {
					t.Fatalf("done %+v, rejections %v", x.done, x.rejections)
				}
				// Seat 0 plays the ghosts (30), seat 1 the Pac-Man (40).
				scores := [2]int{30, 40}
				want := engine.Result{Winners: []int{1 - seat}, Seats: []engine.SeatResult{{Score: scores[0]}, {Score: scores[1]}}}
				want.Seats[seat].Score -= 1000
				want.Seats[1-seat].Score += 1000
				want.Seats[seat].DeathReason, want.Seats[seat].DeathTurn = tt.code, 3
				if res := g.Result(); !reflect.DeepEqual(res, want) {
					t.Errorf("result %+v, want %+v", res, want)
				}
				f := decodeFrame(t, g.Frame())
				wantStop := fmt.Sprintf("Unexpected behavior of player %d, judger returned error type %s.", seat, tt.code)
				if f.StopReason == nil || *f.StopReason != wantStop || f.Played || f.Turn != 3 || f.Round != 2 {
					t.Errorf("last frame %+v, want the stop reason %q", f, wantStop)
				}
				if g.Turn() != 3 {
					t.Errorf("turn %d, want 3", g.Turn())
				}
			})
		}
	}
}

func TestFaultBeforeAnyRole(t *testing.T) {
	g := newMatch(1)
	x := drive(t, g, 3, nil, func(int, int) engine.Reply { return engine.Reply{Fault: engine.StatusStartFailed} })
	if x.done == nil {
		t.Fatal("the match did not end")
	}
	want := engine.Result{Winners: []int{1}, Seats: []engine.SeatResult{{Score: -1000, DeathReason: "RE", DeathTurn: 1}, {Score: 1000}}}
	if res := g.Result(); !reflect.DeepEqual(res, want) {
		t.Errorf("result %+v, want %+v", res, want)
	}
	if f := decodeFrame(t, g.Frame()); f.Roles != [2]int{-1, -1} || f.Turn != 1 || f.Played {
		t.Errorf("last frame %+v", f)
	}
}

func TestResultBeforeTheEnd(t *testing.T) {
	g := newMatch(1)
	drive(t, g, 4, nil, scripted(0, nil, nil))
	if res := g.Result(); res.Winners != nil || len(res.Seats) != 2 {
		t.Errorf("result %+v before the end", res)
	}
	if g.Out(0) || g.Out(1) {
		t.Error("a seat is out")
	}
}

func TestInvulnerabilityCarriesOverLevels(t *testing.T) {
	g := newMatch(2)
	before := func() {
		shortLevels(g, 1)()
		if g.s.level == 1 {
			g.s.invulnerable = 3
		}
	}
	drive(t, g, 2, before, scripted(0, nil, nil))
	if g.s.level != 2 || g.s.invulnerable != 2 {
		t.Errorf("level %d, invulnerable %d; want level 2 and 2 rounds left", g.s.level, g.s.invulnerable)
	}
}

func TestScoresCarryAcrossLevels(t *testing.T) {
	g := newMatch(2)
	drive(t, g, 2, shortLevels(g, 1), scripted(0, nil, nil))
	f := decodeFrame(t, g.Frame())
	if f.Init == nil || f.Init.Score != g.s.score || g.s.score[1] != timeoutPoints {
		t.Errorf("level 2 starts with %v, the match has %v", f.Init, g.s.score)
	}
}
