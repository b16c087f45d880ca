package orchestrator_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"arena/engine"
	"arena/framing"
	"arena/internal/testsupport/dockertest"
	"arena/judger"
	"arena/matches"
)

// relay is a built-in game of the shape of the judger's benchmark logic
// (internal/testsupport/testbots/relaylogic): each round one seat, in turn, is sent
// "go\n" and answers, length-prefixed; {"rounds": N} rounds (100 by
// default), then a draw. It is the baseline a logic game's round is
// measured against: the same bots, the same exchanges, no logic.
type relay struct{}

type relayMap struct{}

func (relayMap) Info() engine.MapInfo {
	return engine.MapInfo{Name: "default", MinPlayers: 2, MaxPlayers: 2}
}
func (relayMap) Data() []byte { return nil }

func (relay) Name() string                                { return "relay" }
func (relay) Maps() []engine.MapInfo                      { return []engine.MapInfo{relayMap{}.Info()} }
func (relay) Map(string) (engine.Map, error)              { return relayMap{}, nil }
func (relay) ParseMap(string, []byte) (engine.Map, error) { return nil, errors.New("no map files") }
func (relay) Protocol() engine.Protocol {
	return engine.Protocol{Framing: framing.LengthPrefixed, MaxMessageBytes: 64, AnswerTimeout: time.Second, WarmUp: 20 * time.Second}
}

func (relay) NewMatch(cfg engine.Config) (engine.Match, error) {
	s := struct {
		Rounds int `json:"rounds"`
	}{100}
	if err := engine.DecodeSettings(cfg.Settings, &s); err != nil {
		return nil, err
	}
	return &relayMatch{rounds: s.Rounds, frame: json.RawMessage(`{"round":0}`)}, nil
}

type relayMatch struct {
	rounds, round int
	frame         json.RawMessage
}

func (m *relayMatch) Step() engine.Step {
	if m.round >= m.rounds {
		return engine.Step{Done: true}
	}
	p := (m.round + 1) % 2
	return engine.Step{Send: []engine.Message{{Seat: p, Data: []byte("go\n")}}, Await: []int{p}}
}

func (m *relayMatch) Submit(replies []engine.Reply) []engine.Rejection {
	m.round++
	m.frame = fmt.Appendf(nil, `{"round":%d,"listen":[%d]}`, m.round, m.round%2)
	return nil
}

func (m *relayMatch) Turn() int                 { return m.round }
func (m *relayMatch) Frame() json.RawMessage    { return m.frame }
func (m *relayMatch) Out(int) bool              { return false }
func (m *relayMatch) Settings() json.RawMessage { return fmt.Appendf(nil, `{"rounds":%d}`, m.rounds) }
func (m *relayMatch) Result() engine.Result {
	return engine.Result{Winners: []int{}, Seats: []engine.SeatResult{{}, {}}}
}

// BenchmarkJudgerAgainstBuiltIn is what the judger adds to a round: the
// same Go bots (relaybot) play relaylogic, a Saiblo logic in its own
// container whose work per round is a few microseconds, and relay, a
// built-in game of the same shape (one seat asked per round, in turn),
// in this process, on the FIFO stdio path as arena run plays them. Each
// game's round is the difference in duration between a match of 2,000
// rounds and one of 200, over the 1,800 rounds (container starts cancel
// out). Reported: both rounds, the bots' answer (p50, from the moment a
// bot may run to its answer read), added-ms (logic round − built-in
// round) and added/answer, the judger's added cost in bots' round trips.
func BenchmarkJudgerAgainstBuiltIn(b *testing.B) {
	cli := dockertest.Client(b)
	logic, bot := dockertest.RelayImages(b, cli)
	o := newOrchestrator(b, cli, "fifo")
	play := func(game engine.Game, rounds int) matches.Result {
		m, err := game.Map("default")
		if err != nil {
			b.Fatal(err)
		}
		rep, err := o.Play(b.Context(), matches.Request{Game: game, Map: m, Images: []string{bot, bot},
			Settings: fmt.Appendf(nil, `{"rounds":%d}`, rounds)})
		if err != nil {
			b.Fatalf("%s, %d rounds: %v", game.Name(), rounds, err)
		}
		res := rep.Result
		if res.Turns < rounds || res.Bots[0].Status != engine.StatusOK || res.Bots[1].Status != engine.StatusOK {
			b.Fatalf("%s, %d rounds: %+v", game.Name(), rounds, res)
		}
		return res
	}
	cost := func(game engine.Game) (round, answer float64) {
		s, l := play(game, 200), play(game, 2000)
		return (l.DurationMS - s.DurationMS) / float64(l.Turns-s.Turns), (l.Bots[0].AnswerMSP50 + l.Bots[1].AnswerMSP50) / 2
	}
	var builtin, hosted, answer float64
	for b.Loop() {
		r, a := cost(relay{})
		builtin, answer = builtin+r, answer+a
		r, a = cost(judger.New(logic, 2))
		hosted, answer = hosted+r, answer+a
	}
	n := float64(b.N)
	builtin, hosted, answer = builtin/n, hosted/n, answer/(2*n)
	b.ReportMetric(builtin, "builtin-round-ms")
	b.ReportMetric(hosted, "logic-round-ms")
	b.ReportMetric(answer, "answer-ms")
	b.ReportMetric(hosted-builtin, "added-ms")
	b.ReportMetric((hosted-builtin)/answer, "added/answer")
}

// BenchmarkLogicVerify is what a server pays to believe a worker's
// result of a logic game, beside what playing the match cost: relaylogic
// played by two relaybots for 2,000 rounds (play-ms, containers started
// and removed), then verified as the server verifies it (verify-ms:
// VerifyHosted, the logic alone in one container on the recorded
// answers).
func BenchmarkLogicVerify(b *testing.B) {
	cli := dockertest.Client(b)
	logic, bot := dockertest.RelayImages(b, cli)
	o := newOrchestrator(b, cli, "fifo")
	game := judger.New(logic, 2)
	m, err := game.Map("default")
	if err != nil {
		b.Fatal(err)
	}
	var play, verify time.Duration
	for b.Loop() {
		start := time.Now()
		rep, err := o.Play(b.Context(), matches.Request{Game: game, Map: m, Images: []string{bot, bot}, Settings: []byte(`{"rounds":2000}`)})
		if err != nil {
			b.Fatal(err)
		}
		play += time.Since(start)
		start = time.Now()
		if err := o.VerifyHosted(b.Context(), game, rep); err != nil {
			b.Fatal(err)
		}
		verify += time.Since(start)
	}
	n := float64(b.N)
	b.ReportMetric(float64(play.Milliseconds())/n, "play-ms")
	b.ReportMetric(float64(verify.Milliseconds())/n, "verify-ms")
	b.ReportMetric(float64(verify)/float64(play), "verify/play")
}
