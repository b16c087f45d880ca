package pacman

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"arena/engine"
)

func TestParseMessage(t *testing.T) {
	tests := []struct {
		give      string
		wantRole  int
		wantMoves []int
		wantErr   string
	}{
		{give: `{"role": 0, "action": "3"}`, wantRole: 0, wantMoves: []int{3}},
		{give: `{"role":1,"action":"1 0 4"}`, wantRole: 1, wantMoves: []int{1, 0, 4}},
		{give: `{"role": 1, "action": "0 0 0"}`, wantRole: 1, wantMoves: []int{0, 0, 0}},
		{give: `{"action": "0", "role": 0, "comment": [1, {"x": 2}]}`, wantRole: 0, wantMoves: []int{0}},
		{give: " \n{\"role\": 0, \"action\": \"4\"}\r\n ", wantRole: 0, wantMoves: []int{4}},
		{give: `{"role": 1, "role": 0, "action": "2"}`, wantRole: 0, wantMoves: []int{2}}, // the last key wins, as in Python

		// The Pac-Man's action: exactly one move 0..4.
		{give: `{"role": 0, "action": ""}`, wantErr: `move "" is not one of 0 1 2 3 4`},
		{give: `{"role": 0, "action": "5"}`, wantErr: `move "5" is not one of`},
		{give: `{"role": 0, "action": "1 2"}`, wantErr: "has 2 moves separated by single spaces, the Pac-Man moves 1"},
		{give: `{"role": 0, "action": "a"}`, wantErr: `move "a"`},
		{give: `{"role": 0, "action": " 1"}`, wantErr: "has 2 moves"},
		{give: `{"role": 0, "action": "1 "}`, wantErr: "has 2 moves"},
		{give: `{"role": 0, "action": "01"}`, wantErr: `move "01"`},
		{give: `{"role": 0, "action": "-1"}`, wantErr: `move "-1"`},
		{give: `{"role": 0, "action": "+1"}`, wantErr: `move "+1"`},
		{give: `{"role": 0, "action": "1\n"}`, wantErr: `move "1\n"`},
		{give: `{"role": 0, "action": "１"}`, wantErr: `is not one of`},
		// The ghosts': exactly three.
		{give: `{"role": 1, "action": ""}`, wantErr: "has 1 moves separated by single spaces, the ghosts move 3"},
		{give: `{"role": 1, "action": "1 2"}`, wantErr: "has 2 moves"},
		{give: `{"role": 1, "action": "1  2 3"}`, wantErr: "has 4 moves"},
		{give: `{"role": 1, "action": "1 2 3 4"}`, wantErr: "has 4 moves"},
		{give: `{"role": 1, "action": " 1 2 3"}`, wantErr: "has 4 moves"},
		{give: `{"role": 1, "action": "1 2 3 "}`, wantErr: "has 4 moves"},
		{give: `{"role": 1, "action": "1,2,3"}`, wantErr: "has 1 moves"},
		{give: `{"role": 1, "action": "1 2 5"}`, wantErr: `move "5"`},
		{give: `{"role": 1, "action": "1\t2 3"}`, wantErr: "has 2 moves"},
		{give: `{"role": 1, "action": "3"}`, wantErr: "has 1 moves"},
		// The role: the number 0 or 1.
		{give: `{"action": "3"}`, wantErr: `message has no "role"`},
		{give: `{"Role": 0, "action": "3"}`, wantErr: `message has no "role"`},
		{give: `{"role": "0", "action": "3"}`, wantErr: `role "0" is not 0 (Pac-Man) or 1 (ghosts)`},
		{give: `{"role": 2, "action": "3"}`, wantErr: "role 2 is not"},
		{give: `{"role": -1, "action": "3"}`, wantErr: "role -1 is not"},
		{give: `{"role": 0.0, "action": "3"}`, wantErr: "role 0.0 is not"},
		{give: `{"role": true, "action": "3"}`, wantErr: "role true is not"},
		{give: `{"role": null, "action": "3"}`, wantErr: "role null is not"},
		// The action: a string.
		{give: `{"role": 0}`, wantErr: `message has no "action"`},
		{give: `{"role": 0, "action": 3}`, wantErr: "action 3 is not a string"},
		{give: `{"role": 1, "action": [1, 0, 4]}`, wantErr: "action [1, 0, 4] is not a string"},
		{give: `{"role": 0, "action": null}`, wantErr: "action null is not a string"},
		// Not a JSON object.
		{give: ``, wantErr: "not a JSON object"},
		{give: `garbage`, wantErr: "not a JSON object"},
		{give: `[0, "3"]`, wantErr: "not a JSON object"},
		{give: `"3"`, wantErr: "not a JSON object"},
		{give: `null`, wantErr: "message is null"},
		{give: `{"role": 0, "action": "3"} {}`, wantErr: "not a JSON object"},
		{give: `{"role": 0, "action": "3"`, wantErr: "not a JSON object"},
		{give: "{\"role\": 0, \"action\": \"\xff\"}", wantErr: "not valid UTF-8"},
	}
	for _, tt := range tests {
		t.Run(tt.give, func(t *testing.T) {
			role, moves, err := parseMessage([]byte(tt.give))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to mention %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if role != tt.wantRole || !slices.Equal(moves, tt.wantMoves) {
				t.Errorf("got role %d moves %v, want %d %v", role, moves, tt.wantRole, tt.wantMoves)
			}
		})
	}
}

func TestParseMessageClipsLongInput(t *testing.T) {
	_, _, err := parseMessage([]byte(`{"role": 0, "action": "` + strings.Repeat("1 ", 400) + `"}`))
	if err == nil || len(err.Error()) > 200 {
		t.Errorf("err = %v, want a short message", err)
	}
}

func FuzzParseMessage(f *testing.F) {
	for _, s := range []string{`{"role": 0, "action": "3"}`, `{"role":1,"action":"1 0 4"}`, `{"role": 1, "action": "1  2 3"}`,
		`{"role": 0.0, "action": "3"}`, `{"role"`, `null`, `{"action": "\u0033", "role": 0}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		role, moves, err := parseMessage(data)
		if err != nil {
			return
		}
		want := 1
		if role == roleGhosts {
			want = 3
		} else if role != rolePacman {
			t.Fatalf("role %d accepted", role)
		}
		if len(moves) != want {
			t.Fatalf("role %d with %d moves", role, len(moves))
		}
		parts := make([]string, len(moves))
		for i, m := range moves {
			if m < 0 || m >= numActions {
				t.Fatalf("move %d accepted", m)
			}
			parts[i] = fmt.Sprint(m)
		}
		// The canonical form of what was accepted parses to the same.
		canonical := fmt.Sprintf(`{"role": %d, "action": %q}`, role, strings.Join(parts, " "))
		r2, m2, err := parseMessage([]byte(canonical))
		if err != nil || r2 != role || !slices.Equal(m2, moves) {
			t.Fatalf("%s parses to %d %v %v", canonical, r2, m2, err)
		}
	})
}

func TestActionsLine(t *testing.T) {
	got := string(actionsLine(3, [3]int{0, 2, 4}))
	if want := "{\"pacman_action\": 3, \"ghosts_action\": [0, 2, 4]}\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestInitLine(t *testing.T) {
	s := level(t, "PA", "BC")
	s.level, s.score = 2, [2]int{12, -34}
	got := string(initLine(s.initObject()))
	want := `{"level": 2, "round": 0, "board_size": 4, ` +
		`"board": [[0, 0, 0, 0], [0, 1, 1, 0], [0, 1, 1, 0], [0, 0, 0, 0]], ` +
		`"pacman_skill_status": [0, 0, 0, 0, 0], "pacman_coord": [2, 1], ` +
		`"ghosts_coord": [[2, 2], [1, 1], [1, 2]], "score": [12, -34], "beannumber": 0, ` +
		`"portal_available": false, "portal_coord": [-1, -1]}` + "\n"
	if got != want {
		t.Errorf("init line:\n got %s\nwant %s", got, want)
	}
}

func TestRoundLine(t *testing.T) {
	stop := "time is up"
	r := roundInfo{
		Round: 7, Level: 1,
		PacmanStepBlock: [][2]int{{1, 1}, {-99, -98}},
		PacmanCoord:     [2]int{1, 1},
		PacmanSkills:    [numSkills]int{0, 3, 0, 1, 0},
		GhostsStepBlock: [3][][2]int{{{5, 5}, {5, 6}}, {{3, 3}, {-197, -197}}, {{2, 2}, {2, 2}}},
		GhostsCoord:     [3][2]int{{5, 6}, {3, 3}, {2, 2}},
		Score:           [2]int{10, 50},
		Events:          []int{1},
		PortalAvailable: true,
		StopReason:      &stop,
	}
	got := string(roundLine(&r))
	want := `{"round": 7, "level": 1, "pacman_step_block": [[1, 1], [-99, -98]], "pacman_coord": [1, 1], ` +
		`"pacman_skills": [0, 3, 0, 1, 0], "ghosts_step_block": [[[5, 5], [5, 6]], [[3, 3], [-197, -197]], [[2, 2], [2, 2]]], ` +
		`"ghosts_coord": [[5, 6], [3, 3], [2, 2]], "score": [10, 50], "events": [1], "portal_available": true, ` +
		`"StopReason": "time is up"}` + "\n"
	if got != want {
		t.Errorf("round line:\n got %s\nwant %s", got, want)
	}
	r.StopReason, r.Events = nil, nil
	if got := string(roundLine(&r)); !strings.Contains(got, `"events": [], "portal_available": true, "StopReason": null}`) {
		t.Errorf("round line without events: %s", got)
	}
}

// Strings are written as Python's json.dumps(..., ensure_ascii=False).
func TestStringEscaping(t *testing.T) {
	for _, tt := range []struct{ give, want string }{
		{`Same Role`, `"Same Role"`},
		{"a\"b\\c", `"a\"b\\c"`},
		{"line\nbreak\ttab\r\b\f", `"line\nbreak\ttab\r\b\f"`},
		{"\x00\x1f\x7f", `"\u0000\u001f` + "\x7f" + `"`},
		{"卷王 </script> &", `"卷王 </script> &"`},
		{"bad \xff utf-8", "\"bad \uFFFD utf-8\""},
	} {
		w := writer{py: true}
		w.str(tt.give)
		if string(w.b) != tt.want {
			t.Errorf("str(%q) = %s, want %s", tt.give, w.b, tt.want)
		}
		var back string
		if err := json.Unmarshal(w.b, &back); err != nil {
			t.Errorf("%s is not JSON: %v", w.b, err)
		}
	}
}

func TestFrameIsStrictJSON(t *testing.T) {
	g := newMatch(7)
	var f arenaFrame
	dec := json.NewDecoder(bytes.NewReader(g.Frame()))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		t.Fatalf("frame 0 does not decode: %v", err)
	}
	if f.Turn != 0 || f.Played || f.Init == nil || f.Init.BoardSize != 41 || len(f.Init.Board) != 41 || f.Level != 1 {
		t.Errorf("frame 0 = %+v", f)
	}
	if f.MaxRounds != 500 || f.PortalRound != 60 || f.Invulnerable != 0 || len(f.Board) != 41 || f.Board[0] != strings.Repeat("#", 41) {
		t.Errorf("frame 0 level fields = %d %d %d %q", f.MaxRounds, f.PortalRound, f.Invulnerable, f.Board)
	}
	if f.Roles != [2]int{-1, -1} || f.CaughtBy != -1 || f.StopReason != nil || f.BeansLeft != f.Init.Beannumber {
		t.Errorf("frame 0 extras = %+v", f)
	}
	if again := encodeFrame(&f); !bytes.Equal(again, g.Frame()) {
		t.Errorf("the frame does not survive a round trip:\n%s\n%s", again, g.Frame())
	}
}

// Every frame carries what a viewer needs to draw it alone. Its board is
// the one obtained the long way, from the level's init and the cells eaten
// in every frame since; its invulnerability follows the events of the
// frames before it.
func TestFramesDrawAlone(t *testing.T) {
	g := newMatch(1)
	frames := record(t, g, nil, bots(g, 0, engine.NewRand(1, 99)))
	var board [][]byte
	var init *levelInit
	invulnerable, played, catches := 0, map[int]bool{}, 0
	for i, raw := range frames {
		f := decodeFrame(t, raw)
		if i == 0 {
			init = f.Init
			board = rowsOf(init.Board)
		}
		for _, c := range f.Eaten {
			board[c[0]][c[1]] = cellSymbols[cellEmpty]
		}
		switch {
		case slices.Contains(f.Events, eventEaten):
			invulnerable = invulnerableEaten
			catches++
		case slices.Contains(f.Events, eventShieldBroken):
			invulnerable = invulnerableShield
		case f.Played:
			invulnerable = max(0, invulnerable-1)
		}
		want := make([]string, len(board))
		for x, row := range board {
			want[x] = string(row)
		}
		if !slices.Equal(f.Board, want) {
			t.Fatalf("turn %d: the frame's board differs from the init's with the cells eaten since:\n%s\nwant\n%s", f.Turn, strings.Join(f.Board, "\n"), strings.Join(want, "\n"))
		}
		spec := levels[f.Level-1]
		if f.Level != init.Level || len(f.Board) != spec.size || f.MaxRounds != spec.maxRounds || f.PortalRound != spec.portalAt {
			t.Fatalf("turn %d: level %d (init of level %d), %d rows, max_rounds %d, portal_round %d", f.Turn, f.Level, init.Level, len(f.Board), f.MaxRounds, f.PortalRound)
		}
		if f.Invulnerable != invulnerable {
			t.Fatalf("turn %d: invulnerable %d, want %d (events %v)", f.Turn, f.Invulnerable, invulnerable, f.Events)
		}
		played[f.Level] = true
		if f.Init != nil && i > 0 {
			init = f.Init // the next frame is the next level's
			board = rowsOf(init.Board)
		}
	}
	if len(played) != 3 || catches == 0 {
		t.Errorf("the match played levels %v with %d catches; the test wants all three and a catch", played, catches)
	}
}

// rowsOf writes an init board with the frames' symbols.
func rowsOf(b [][]int) [][]byte {
	out := make([][]byte, len(b))
	for x, row := range b {
		out[x] = make([]byte, len(row))
		for y, v := range row {
			out[x][y] = cellSymbols[v]
		}
	}
	return out
}
