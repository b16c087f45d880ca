package judger

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"arena/engine"
	"arena/framing"
)

// script is a logic played in memory: each call of its turn function gets
// what the judger sent last (nil at the start, after the init) and
// returns what the logic writes before it waits again.
type script struct {
	t       *testing.T
	got     [][]byte // the judger's messages, unframed
	pending [][]byte
	turn    func(got []byte) [][]byte
	closed  bool
}

func (s *script) Send(p []byte, _ time.Time) error {
	if s.closed {
		return errors.New("broken pipe")
	}
	n := binary.BigEndian.Uint32(p)
	if int(n) != len(p)-4 {
		s.t.Fatalf("a judger message of %d bytes says %d", len(p)-4, n)
	}
	s.got = append(s.got, p[4:])
	s.pending = append(s.pending, s.turn(p[4:])...)
	return nil
}

func (s *script) Receive(time.Time) ([]byte, error) {
	if len(s.pending) == 0 {
		return nil, errors.New("no answer within its time")
	}
	m := s.pending[0]
	s.pending = s.pending[1:]
	if m == nil { // as the sandbox says of a message over its cap
		return nil, fmt.Errorf("read: %w", framing.ErrTooLong)
	}
	return m, nil
}

// to frames a logic's message to target as the sandbox cuts it.
func to(target int32, v any) []byte {
	data, ok := v.([]byte)
	if !ok {
		data, _ = json.Marshal(v)
	}
	b := binary.BigEndian.AppendUint32(nil, uint32(target))
	return append(b, data...)
}

func newMatch(t *testing.T, settings string) *match {
	g := New("arena-test/logic", 2)
	m, err := g.NewMatch(engine.Config{Map: theMap{g.Maps()[0]}, Seed: 7, Players: []string{"a", "b"}, Settings: json.RawMessage(settings)})
	if err != nil {
		t.Fatal(err)
	}
	return m.(*match)
}

// A round trip of the protocol: the init, a round config, a round, the
// answers (one a fault), watch messages, the end with its statuses.
func TestAMatchAsTheJudgerPlaysIt(t *testing.T) {
	m := newMatch(t, `{"size":3}`)
	calls := 0
	s := &script{t: t, turn: func(got []byte) [][]byte {
		calls++
		switch calls {
		case 1:
			return [][]byte{
				to(-1, map[string]any{"state": 0, "time": 0.5, "length": 8}),
				to(1, []byte("hello 1\n")),
				to(-1, map[string]any{"watch": "round 1 begins"}),
				to(-1, map[string]any{"state": 1, "listen": []int{0, 1}, "player": []int{0}, "content": []string{"go\n"}}),
			}
		case 2:
			return nil
		}
		return [][]byte{
			to(-1, map[string]any{"action": "request_end_state"}),
		}
	}}
	if err := m.Attach(s); err != nil {
		t.Fatal(err)
	}
	var init map[string]any
	json.Unmarshal(s.got[0], &init)
	if init["player_num"] != 2.0 || init["replay"] != ReplayPath || init["config"].(map[string]any)["seed"] != 7.0 || init["config"].(map[string]any)["size"] != 3.0 {
		t.Errorf("init: %s", s.got[0])
	}
	st := m.Step()
	if st.Done || st.AnswerTimeout != 500*time.Millisecond || len(st.Await) != 2 || len(st.Send) != 2 ||
		st.Send[0].Seat != 1 || string(st.Send[0].Data) != "hello 1\n" || st.Send[1].Seat != 0 || string(st.Send[1].Data) != "go\n" {
		t.Fatalf("step: %+v", st)
	}
	if f := string(m.Frame()); !strings.Contains(f, `"watch":["round 1 begins"]`) || !strings.Contains(f, `"listen":[0,1]`) {
		t.Errorf("frame: %s", f)
	}
	// Seat 0 answers, over the round's 8 bytes; seat 1 times out.
	m.Submit([]engine.Reply{{Seat: 0, Data: []byte("123456789"), Time: 3 * time.Millisecond}, {Seat: 1, Fault: engine.StatusTimeout}})
	if m.Err() == nil {
		t.Fatal("the logic asked for the end state and then said nothing: no error")
	}
	for i, want := range []string{
		`{"content":"{\"error\":2,\"error_log\":\"outputLimitError\",\"player\":0,\"state\":1}","player":-1}`,
		`{"content":"{\"error\":1,\"error_log\":\"timeOutError\",\"player\":1,\"state\":1}","player":-1}`,
		`{"end_state":"[\"OLE\",\"TLE\"]"}`,
	} {
		if got := string(s.got[1+i]); got != want {
			t.Errorf("message %d to the logic: %s, want %s", 1+i, got, want)
		}
	}
}

// The end: end_info as a JSON string (as the protocol sends it) or an
// object; end_state's words become Arena's statuses.
func TestTheEnd(t *testing.T) {
	for _, c := range []struct {
		end      map[string]any
		winners  []int
		statuses []engine.Status
	}{
		{map[string]any{"state": -1, "end_info": `{"0": 3, "1": 1}`, "end_state": `["OK","IA"]`}, []int{0}, []engine.Status{engine.StatusOK, engine.StatusIllegal}},
		{map[string]any{"state": -1, "end_info": map[string]any{"0": 2, "1": 2}}, []int{}, []engine.Status{"", ""}},
		{map[string]any{"state": -1, "end_info": `{"0": 0, "1": 1.6}`, "end_state": []string{"RE", "MLE"}}, []int{1}, []engine.Status{engine.StatusCrashed, engine.StatusOOM}},
	} {
		m := newMatch(t, "")
		s := &script{t: t, turn: func([]byte) [][]byte { return [][]byte{to(-1, c.end)} }}
		if err := m.Attach(s); err != nil {
			t.Fatalf("%v: %v", c.end, err)
		}
		res := m.Result()
		if !m.Step().Done || len(res.Winners) != len(c.winners) || (len(c.winners) > 0 && res.Winners[0] != c.winners[0]) {
			t.Errorf("%v: done %v, winners %v", c.end, m.Step().Done, res.Winners)
		}
		for i, st := range c.statuses {
			if res.Seats[i].Status != st {
				t.Errorf("%v: seat %d is %q, want %q", c.end, i, res.Seats[i].Status, st)
			}
		}
	}
}

// A logic that breaks the protocol fails the match, saying how; it is no
// bot's fault.
func TestAHostileLogicFailsTheMatch(t *testing.T) {
	flood := make([][]byte, MaxLogicMessages+1)
	for i := range flood {
		flood[i] = to(0, []byte("x"))
	}
	for name, c := range map[string]struct {
		out  [][]byte
		want string
	}{
		"never answers":          {nil, "no answer within its time"},
		"a message over its cap": {[][]byte{nil}, "the logic sent a message over 1 MiB"},
		"floods":                 {flood, "more than 1024 messages in one round"},
		"not JSON":               {[][]byte{to(-1, []byte("hello judger"))}, "not a JSON object"},
		"no target":              {[][]byte{{0, 1}}, "without its target"},
		"a seat that is not":     {[][]byte{to(5, []byte("hi"))}, "a message to player 5; the match has 2"},
		"a target that is not":   {[][]byte{to(-7, []byte("hi"))}, "target -7"},
		"listens to no one here": {[][]byte{to(-1, map[string]any{"state": 1, "listen": []int{2}, "player": []int{}, "content": []string{}})}, "names player 2"},
		"contents amiss":         {[][]byte{to(-1, map[string]any{"state": 1, "listen": []int{0}, "player": []int{0, 1}, "content": []string{"a"}})}, "2 players for 1 contents"},
		"no state":               {[][]byte{to(-1, map[string]any{"listen": []int{0}})}, "without its state"},
		"no end_info":            {[][]byte{to(-1, map[string]any{"state": -1})}, "without end_info"},
		"a score missing":        {[][]byte{to(-1, map[string]any{"state": -1, "end_info": `{"0": 1}`})}, "no score for player 1"},
		"an unknown status":      {[][]byte{to(-1, map[string]any{"state": -1, "end_info": `{"0":1,"1":0}`, "end_state": `["OK","WON"]`})}, `"WON" for player 1`},
		"an endless round":       {[][]byte{to(-1, map[string]any{"state": 0, "time": 600})}, "sets time 600 s"},
	} {
		t.Run(name, func(t *testing.T) {
			m := newMatch(t, "")
			s := &script{t: t, turn: func([]byte) [][]byte { return c.out }}
			err := m.Attach(s)
			if err == nil || !strings.Contains(err.Error(), c.want) || m.Err() == nil || !m.Step().Done {
				t.Errorf("error %v, want one saying %q", err, c.want)
			}
		})
	}
}

func TestSettingsAreTheLogicsConfig(t *testing.T) {
	g := New("x/logic", 2)
	if _, err := g.NewMatch(engine.Config{Map: theMap{g.Maps()[0]}, Players: []string{"a", "b"}, Settings: json.RawMessage(`[1]`)}); err == nil {
		t.Error("settings that are no object: no error")
	}
	if _, err := g.NewMatch(engine.Config{Map: theMap{g.Maps()[0]}, Players: []string{"a"}}); err == nil {
		t.Error("one bot for a logic of two: no error")
	}
	if err := g.CheckHost(map[string]string{PlayersLabel: "3"}); err == nil || !strings.Contains(err.Error(), "takes 3 bots") {
		t.Errorf("a logic of 3 for a match of 2: %v", err)
	}
	if err := g.CheckHost(map[string]string{LogicLabel: "botzone"}); !errors.Is(err, ErrNotALogic) {
		t.Errorf("a logic of another protocol: %v", err)
	}
	if err := g.CheckHost(nil); err != nil {
		t.Errorf("an unlabelled logic of 2: %v", err)
	}
}

// What a logic sends is capped over the whole match, not per round: two
// rounds of 33 MiB each to a bot fail the match at the second.
func TestALogicThatFloodsTheMatch(t *testing.T) {
	mib := to(0, bytes.Repeat([]byte("x"), 1<<20))
	round := func() [][]byte {
		out := make([][]byte, 0, 34)
		for range 33 {
			out = append(out, mib)
		}
		return append(out, to(-1, map[string]any{"state": 1, "listen": []int{0}, "player": []int{}, "content": []string{}}))
	}
	m := newMatch(t, "")
	s := &script{t: t, turn: func([]byte) [][]byte { return round() }}
	if err := m.Attach(s); err != nil {
		t.Fatalf("a round of 33 MiB: %v", err)
	}
	if st := m.Step(); st.Done || len(st.Send) != 33 {
		t.Fatalf("the first round: done %v, %d messages to the bots", st.Done, len(st.Send))
	}
	m.Submit([]engine.Reply{{Seat: 0, Data: []byte("ok\n"), Time: time.Millisecond}})
	if err := m.Err(); err == nil || !strings.Contains(err.Error(), "more than 64 MiB in the match") {
		t.Errorf("a second round of 33 MiB: %v, want the match's cap", err)
	}
	if !m.Step().Done {
		t.Error("the match goes on past its cap")
	}
}

// A title is for the page: printable, one line, not too long.
func TestTheTitleOfALogic(t *testing.T) {
	for label, want := range map[string]string{
		"":                          "",
		"  Tic-tac-toe ":            "Tic-tac-toe",
		"Go\n\tfish\x00\u202e!":     "Go fish!",
		strings.Repeat("é", 100):    strings.Repeat("é", MaxTitle),
		"Snakes\u00a0and   ladders": "Snakes and ladders",
	} {
		if got := Title(map[string]string{TitleLabel: label}); got != want {
			t.Errorf("Title(%q) = %q, want %q", label, got, want)
		}
	}
	if g := Named("ttt", "x/ttt", 2, "Tic-tac-toe"); g.Title() != "Tic-tac-toe" || g.Name() != "ttt" {
		t.Errorf("a named game: %q, %q", g.Name(), g.Title())
	}
}

// An image offered or named as a game must say it is a logic; one run by
// its author (logic:IMAGE on the command line) need not.
func TestALogicSaysWhatItIs(t *testing.T) {
	for _, tt := range []struct {
		labels   map[string]string
		n        int
		lenient  string
		labelled string
	}{
		{map[string]string{LogicLabel: "saiblo", PlayersLabel: "3"}, 3, "", ""},
		{map[string]string{}, 2, "", "no label io.arena.logic=saiblo"},
		{map[string]string{LogicLabel: "botzone"}, 0, `label io.arena.logic="botzone"`, `label io.arena.logic="botzone"`},
		{map[string]string{LogicLabel: "saiblo", PlayersLabel: "0"}, 0, "want a number of bots from 1 to 16", "want a number of bots from 1 to 16"},
	} {
		n, err := CheckLabels(tt.labels)
		if tt.lenient == "" && (err != nil || n != tt.n) || tt.lenient != "" && (err == nil || !strings.Contains(err.Error(), tt.lenient)) {
			t.Errorf("CheckLabels(%v) = %d, %v", tt.labels, n, err)
		}
		n, err = CheckLabelled(tt.labels)
		if tt.labelled == "" && (err != nil || n != tt.n) || tt.labelled != "" && (err == nil || !strings.Contains(err.Error(), tt.labelled)) {
			t.Errorf("CheckLabelled(%v) = %d, %v", tt.labels, n, err)
		}
	}
}

// deadlines is a host that records the deadlines it is given and never
// answers.
type deadlines struct{ got []time.Time }

func (d *deadlines) Send(_ []byte, deadline time.Time) error {
	d.got = append(d.got, deadline)
	return nil
}

func (d *deadlines) Receive(deadline time.Time) ([]byte, error) {
	d.got = append(d.got, deadline)
	return nil, errors.New("no answer within its time")
}

// A logic's limits: the server's fill what its game sets not; each is
// bounded; the time for a round is what the logic is given, and its
// memory, CPU quota and longest message are its container's; its labels
// only propose.
func TestALogicsLimits(t *testing.T) {
	for _, c := range []struct {
		l    Limits
		want string
	}{
		{Limits{RoundMS: 50}, "round_ms 50"},
		{Limits{MemoryBytes: 1 << 20}, "memory_bytes 1048576"},
		{Limits{CPUs: 100}, "cpus 100"},
		{Limits{MessageBytes: 10}, "message_bytes 10"},
		{Limits{RoundMS: -1}, "round_ms -1"},
	} {
		if err := c.l.Check(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.l, err, c.want)
		}
	}
	if err := (Limits{}).Check(); err != nil {
		t.Errorf("no limits (the defaults): %v", err)
	}
	g := New("x/logic", 2).WithLimits(Limits{RoundMS: 1500, CPUs: 0.5}.Or(Limits{MemoryBytes: 64 << 20}))
	if l := g.Limits(); l != (Limits{RoundMS: 1500, MemoryBytes: 64 << 20, CPUs: 0.5, MessageBytes: MaxLogicMessage}) {
		t.Errorf("the limits: %+v", l)
	}
	if h := g.HostLimits(); h.MemoryBytes != 64<<20 || h.NanoCPUs != 5e8 || h.MaxMessageBytes != MaxLogicMessage {
		t.Errorf("the container's: %+v", h)
	}
	m, err := g.NewMatch(engine.Config{Map: theMap{g.Maps()[0]}, Players: []string{"a", "b"}})
	if err != nil {
		t.Fatal(err)
	}
	host := &deadlines{}
	start := time.Now()
	err = m.(*match).Attach(host)
	if err == nil || len(host.got) != 2 {
		t.Errorf("a logic that sends nothing: %v, deadlines %v", err, host.got)
	}
	for _, d := range host.got {
		if d.Sub(start) < 1500*time.Millisecond || d.Sub(start) > 2500*time.Millisecond {
			t.Errorf("a deadline %v after the start, want 1.5 s", d.Sub(start))
		}
	}
	if ref, id := g.Pinned("sha256:" + strings.Repeat("a", 64)).HostImage(); ref != "x/logic" || id != "sha256:"+strings.Repeat("a", 64) {
		t.Errorf("pinned: %s %s", ref, id)
	}

	p, err := Proposed(map[string]string{MemoryLabel: "512m", RoundLabel: "2000", CPUsLabel: "2", MessageLabel: "4m"})
	if err != nil || p != (Limits{RoundMS: 2000, MemoryBytes: 512 << 20, CPUs: 2, MessageBytes: 4 << 20}) {
		t.Errorf("proposed: %+v %v", p, err)
	}
	if _, err := Proposed(map[string]string{RoundLabel: "soon"}); err == nil || !strings.Contains(err.Error(), RoundLabel) {
		t.Errorf("a round time that is no number: %v", err)
	}
	if _, err := Proposed(map[string]string{MemoryLabel: "1k"}); err == nil || !strings.Contains(err.Error(), "memory_bytes") {
		t.Errorf("a memory below the engine's: %v", err)
	}
}
