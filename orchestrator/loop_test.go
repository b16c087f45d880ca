package orchestrator_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"arena/engine"
	"arena/engine/pacman"
	"arena/engine/snake"
	"arena/engine/tanks"
	"arena/internal/errs"
	"arena/matches"
	"arena/orchestrator"
	"arena/orchestrator/fake"
)

var games = []engine.Game{tanks.New(), snake.New(), pacman.New()}

func tanksMap(t *testing.T, name string) engine.Map {
	t.Helper()
	m, err := tanks.New().Map(name)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// playFake plays a Tanks match on the classic map (the zone closes
// quickly) between the scripted bots "bots/a" and "bots/b".
func playFake(t *testing.T, a, b fake.Script) (*matches.Replay, *fake.Launcher) {
	t.Helper()
	l := fake.NewLauncher(map[string]fake.Script{"bots/a": a, "bots/b": b})
	o := orchestrator.New(l, orchestrator.WithLogger(zaptest.NewLogger(t)))
	rep, err := o.Play(t.Context(), matches.Request{
		Game: tanks.New(), Map: tanksMap(t, "classic"), Seed: 3, Images: []string{"bots/a", "bots/b"},
		Settings: json.RawMessage(`{"zone_radius":20}`),
	})
	if err != nil {
		t.Fatalf("play: %v", err)
	}
	checkPlayed(t, rep, l)
	return rep, l
}

// checkPlayed checks what every played match must hold: every bot was
// removed, the frames are numbered by turn, and the replay verifies.
func checkPlayed(t *testing.T, rep *matches.Replay, l *fake.Launcher) {
	t.Helper()
	if n := l.Running(); n != 0 {
		t.Errorf("%d bots were not removed", n)
	}
	for i, f := range rep.Frames {
		if f.Turn != i {
			t.Fatalf("frame %d is turn %d", i, f.Turn)
		}
	}
	if len(rep.Frames) != rep.Result.Turns+1 {
		t.Errorf("%d frames for %d turns", len(rep.Frames), rep.Result.Turns)
	}
	if err := matches.Verify(games, rep); err != nil {
		t.Errorf("the replay does not verify: %v", err)
	}
}

// record is a seat's record in a turn's frame.
func record(t *testing.T, rep *matches.Replay, turn, seat int) matches.FrameBot {
	t.Helper()
	if turn >= len(rep.Frames) {
		t.Fatalf("no frame %d (%d frames)", turn, len(rep.Frames))
	}
	for _, fb := range rep.Frames[turn].Bots {
		if fb.Seat == seat {
			return fb
		}
	}
	return matches.FrameBot{Seat: -1}
}

// Every fault path of the turn loop, through a scripted bot against a
// normal one: the status, its turn and detail, the frame that records it,
// and the normal bot unharmed.
func TestFaults(t *testing.T) {
	at := func(n int, f fake.Fault) fake.Script { return fake.Script{Faults: map[int]fake.Fault{n: f}} }
	tests := []struct {
		name   string
		bot    fake.Script
		status engine.Status
		turn   int
		detail string
	}{
		{"answers", fake.Script{}, engine.StatusOK, 0, ""},
		// Time spent waiting for a CPU does not count against the cap.
		{"answers late on a busy host", at(3, fake.Starved), engine.StatusOK, 0, ""},
		{"still kept from a CPU at the cap", at(3, fake.StarvedNow), engine.StatusOK, 0, ""},
		// A bot at work but not kept from a CPU (it drips its output) is
		// given no more than the cap.
		{"still at work at the cap, not kept from a CPU", at(3, fake.Crawling), engine.StatusTimeout, 3, "no answer within 1s"},
		// Past the wall-clock cap: ten times the answer time, at least 1 s.
		{"timeout", at(3, fake.Timeout), engine.StatusTimeout, 3, "no answer within 1s"},
		{"timeout in the warm-up", at(1, fake.Timeout), engine.StatusTimeout, 1, "no answer within 20s"},
		{"does not read its input", at(2, fake.NoRead), engine.StatusTimeout, 2, "no answer within 1s"},
		// Over the CPU time of an answer: still thinking, or answered late.
		{"thinks too long", at(3, fake.Think), engine.StatusTimeout, 3, "no answer within 100ms of CPU time"},
		{"answers after too much CPU", at(4, fake.ThinkTooLong), engine.StatusTimeout, 4, "answered after 150ms of CPU time, over the 100ms limit"},
		{"crash", at(2, fake.Crash), engine.StatusCrashed, 2, "exited with code 3"},
		{"crash seen after the deadline", at(2, fake.DieWhileSilent), engine.StatusCrashed, 2, "exited with code 2"},
		{"out of memory", at(4, fake.OOM), engine.StatusOOM, 4, "killed for exceeding its memory limit"},
		{"closes its output", at(2, fake.CloseOutput), engine.StatusCrashed, 2, "closed its output while reading its answer and kept running"},
		{"output over the limit", at(2, fake.OutputLimit), engine.StatusOutputLimit, 2, "a line longer than 4096 bytes"},
		{"garbage", fake.Script{Answer: func(n int, _ [][]byte) []byte {
			if n == 3 {
				return []byte("this is not JSON")
			}
			return []byte("[]")
		}}, engine.StatusBadOutput, 3, "not a JSON array"},
		{"start fails", fake.Script{StartErr: errors.New("create container: no space left")}, engine.StatusStartFailed, 0, "create container: no space left"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep, l := playFake(t, tt.bot, fake.Script{})
			bad, good := rep.Result.Bots[0], rep.Result.Bots[1]
			if bad.Status != tt.status || bad.FaultTurn != tt.turn || !strings.Contains(bad.FaultDetail, tt.detail) {
				t.Errorf("bot: %s at turn %d (%q), want %s at turn %d (%q)", bad.Status, bad.FaultTurn, bad.FaultDetail, tt.status, tt.turn, tt.detail)
			}
			if good.Status != engine.StatusOK {
				t.Errorf("the normal bot is %s (%s)", good.Status, good.FaultDetail)
			}
			if tt.status == engine.StatusOK || tt.status == engine.StatusStartFailed {
				return
			}
			// The fault's turn records it; later turns tell the game the
			// fault again; the bot was stopped once.
			fb := record(t, rep, tt.turn, 0)
			if !fb.Asked || fb.Status != tt.status || fb.Detail == "" || (fb.Answer != "") != (tt.status == engine.StatusBadOutput) {
				t.Errorf("turn %d record: %+v", tt.turn, fb)
			}
			if tt.status != engine.StatusBadOutput && fb.Fault != tt.status {
				t.Errorf("turn %d: the game was told %q, want %q", tt.turn, fb.Fault, tt.status)
			}
			// Every later frame says the bot was not asked, with no answer
			// and no figures.
			for turn := tt.turn + 1; turn < len(rep.Frames); turn++ {
				if next := record(t, rep, turn, 0); next.Seat == 0 && (next.Fault != tt.status || next.Detail != "" || next.Asked || next.Answer != "" || next.TimeUS != 0 || next.CPUUS != nil) {
					t.Errorf("turn %d record: %+v, want the earlier fault told to the game, the bot not asked", turn, next)
					break
				}
			}
			if stops := l.Bots()[0].Stops(); stops != 1 {
				t.Errorf("the faulty bot was stopped %d times", stops)
			}
		})
	}
}

// A bot that never started is still a seat: the game is told of its
// fault every turn, the replay records that, and it verifies.
func TestStartFailedSeatIsRecorded(t *testing.T) {
	rep, _ := playFake(t, fake.Script{StartErr: errors.New("no")}, fake.Script{})
	b := rep.Result.Bots[0]
	if b.Accounting != "unavailable: the bot did not start" || b.CPUMS != nil || b.Answers != 0 {
		t.Errorf("result: %+v", b)
	}
	if fb := record(t, rep, 1, 0); fb.Asked || fb.Fault != engine.StatusStartFailed {
		t.Errorf("turn 1 record: %+v", fb)
	}
}

// A last line written in pieces that land in different frames (as an
// unbuffered C stderr writes it: tini's "[FATAL tini (7)] " then the
// reason) is the whole line in the crash's explanation.
func TestLastWordsWrittenInPieces(t *testing.T) {
	rep, _ := playFake(t, fake.Script{
		Stderr: func(n int) string {
			switch n {
			case 3:
				return "first line\n[FATAL "
			case 4:
				return "tini (7)] "
			case 5:
				return "exec /bot failed"
			}
			return ""
		},
		Faults: map[int]fake.Fault{5: fake.Crash},
	}, fake.Script{})
	if d := rep.Result.Bots[0].FaultDetail; d != "exited with code 3; its last words on stderr: [FATAL tini (7)] exec /bot failed" {
		t.Errorf("fault detail %q", d)
	}
}

// What a bot writes to stderr is filed with the turn it was written in; a
// crashing bot's last line explains its crash; what it writes while being
// stopped lands in the last frame.
func TestStderr(t *testing.T) {
	rep, _ := playFake(t, fake.Script{
		Stderr:    func(n int) string { return fmt.Sprintf("thinking about turn %d\n", n) },
		Faults:    map[int]fake.Fault{5: fake.Crash},
		LastWords: "never said\n",
	}, fake.Script{LastWords: "bye\n"})
	for turn := 1; turn <= 5; turn++ {
		if got, want := record(t, rep, turn, 0).Stderr, fmt.Sprintf("thinking about turn %d\n", turn); got != want {
			t.Errorf("turn %d stderr %q, want %q", turn, got, want)
		}
	}
	if d := rep.Result.Bots[0].FaultDetail; d != "exited with code 3; its last words on stderr: thinking about turn 5" {
		t.Errorf("fault detail %q", d)
	}
	last := rep.Frames[len(rep.Frames)-1]
	if fb := record(t, rep, last.Turn, 1); fb.Stderr != "bye\n" {
		t.Errorf("the last frame's stderr of seat 1: %+v", fb)
	}
}

// The figures of each answer are recorded; without accounting the result
// says why.
func TestFigures(t *testing.T) {
	rep, _ := playFake(t, fake.Script{}, fake.Script{NoAccounting: true})
	fb := record(t, rep, 2, 0)
	if fb.CPUUS == nil || *fb.CPUUS != 1000 || fb.MemPeakBytes != 1<<20 {
		t.Errorf("turn 2 figures: cpu %v, mem %d", fb.CPUUS, fb.MemPeakBytes)
	}
	if fb := record(t, rep, 2, 1); fb.CPUUS != nil || fb.MemPeakBytes != 0 {
		t.Errorf("figures without accounting: %+v", fb)
	}
	a, b := rep.Result.Bots[0], rep.Result.Bots[1]
	if a.CPUMS == nil || a.Accounting != "fake" || a.Answers != rep.Result.Turns {
		t.Errorf("result with accounting: %+v", a)
	}
	if a.AnswerCPUMSP50 == nil || *a.AnswerCPUMSP50 != 1 || a.WaitMS == nil || a.Timing != "cpu time, frozen between answers" {
		t.Errorf("answer figures with accounting: %+v", a)
	}
	if fb := record(t, rep, 2, 0); fb.WaitUS == nil || *fb.WaitUS != 0 {
		t.Errorf("turn 2 wait: %v", fb.WaitUS)
	}
	if b.CPUMS != nil || b.Accounting != "unavailable: the fake bot has no cgroup" || b.AnswerCPUMSP50 != nil || b.Timing != "wall clock: its CPU time could not be read" {
		t.Errorf("result without accounting: %+v", b)
	}
}

// Bad requests fail before any bot starts, with an error of the right
// kind that names the problem.
func TestBadRequests(t *testing.T) {
	l := fake.NewLauncher(map[string]fake.Script{"bots/a": {}})
	o := orchestrator.New(l)
	classic := tanksMap(t, "classic")
	imageNotFound := func(err error) bool { return errors.Is(err, matches.ErrImageNotFound) }
	tests := []struct {
		name string
		req  matches.Request
		kind func(error) bool
		want string
	}{
		{"no game", matches.Request{Images: []string{"bots/a", "bots/a"}}, errs.IsInvalid, "no game or map given"},
		{"no bots", matches.Request{Game: tanks.New(), Map: classic}, errs.IsInvalid, "no bots given"},
		{"one bot", matches.Request{Game: tanks.New(), Map: classic, Images: []string{"bots/a"}}, errs.IsInvalid, "map classic takes 2 bots, got 1"},
		{"bad settings", matches.Request{Game: tanks.New(), Map: classic, Images: []string{"bots/a", "bots/a"}, Settings: json.RawMessage(`{"x":1}`)}, errs.IsInvalid, `unknown field "x"`},
		{"bad reference", matches.Request{Game: tanks.New(), Map: classic, Images: []string{"bots/a", "Not An Image"}}, errs.IsInvalid, "bot 2:"},
		{"local bot", matches.Request{Game: tanks.New(), Map: classic, Images: []string{"bots/a", "exec:./bot"}}, errs.IsInvalid, "not enabled"},
		{"missing image", matches.Request{Game: tanks.New(), Map: classic, Images: []string{"bots/a", "bots/missing"}}, imageNotFound, "bots/missing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := o.Play(t.Context(), tt.req)
			if !tt.kind(err) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want one of its kind naming %q", err, tt.want)
			}
			if len(l.Bots()) != 0 {
				t.Errorf("%d bots started", len(l.Bots()))
			}
		})
	}
	// The request's own check needs no launcher.
	if err := (matches.Request{Game: tanks.New(), Map: classic, Images: []string{"x"}}).Check(); !errs.IsInvalid(err) {
		t.Errorf("Check: %v", err)
	}
	if err := o.Validate(t.Context(), matches.Request{Game: tanks.New(), Map: classic, Images: []string{"bots/a", "bots/missing"}}, false); err != nil {
		t.Errorf("Validate without images: %v", err)
	}
}

// A cancelled match ends with ctx's error and removes every bot.
func TestCancel(t *testing.T) {
	l := fake.NewLauncher(map[string]fake.Script{"bots/a": {}})
	o := orchestrator.New(l)
	ctx, cancel := context.WithCancel(t.Context())
	frames := 0
	_, err := o.Play(ctx, matches.Request{Game: tanks.New(), Map: tanksMap(t, "classic"), Images: []string{"bots/a", "bots/a"},
		OnFrame: func(matches.Frame) {
			if frames++; frames == 3 {
				cancel()
			}
		}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if n := l.Running(); n != 0 || len(l.Bots()) != 2 {
		t.Errorf("%d of %d bots left running", n, len(l.Bots()))
	}
}

// pacmanBot claims its seat's role and stays put.
func pacmanBot(role int) fake.Script {
	action := map[int]string{0: "0", 1: "0 0 0"}[role]
	return fake.Script{Answer: func(int, [][]byte) []byte {
		return []byte(fmt.Sprintf(`{"role":%d,"action":%q}`, role, action))
	}}
}

// Pac-Man's sequential protocol: two exchanges make a turn, and a fault
// of the second seat mid-turn ends the game within that turn's frame.
func TestPacmanSequentialTurns(t *testing.T) {
	pm, err := pacman.New().Map("saiblo")
	if err != nil {
		t.Fatal(err)
	}
	play := func(t *testing.T, ghosts fake.Script) *matches.Replay {
		l := fake.NewLauncher(map[string]fake.Script{"bots/pacman": pacmanBot(0), "bots/ghosts": ghosts})
		rep, err := orchestrator.New(l).Play(t.Context(), matches.Request{Game: pacman.New(), Map: pm, Seed: 2, Images: []string{"bots/pacman", "bots/ghosts"}})
		if err != nil {
			t.Fatal(err)
		}
		checkPlayed(t, rep, l)
		return rep
	}
	t.Run("whole match", func(t *testing.T) {
		rep := play(t, pacmanBot(1))
		if rep.Result.Turns < 100 {
			t.Errorf("%d turns", rep.Result.Turns)
		}
		for _, seat := range []int{0, 1} {
			if fb := record(t, rep, 5, seat); !fb.Asked || fb.Answer == "" {
				t.Errorf("turn 5, seat %d: %+v", seat, fb)
			}
		}
	})
	t.Run("the ghosts time out", func(t *testing.T) {
		ghosts := pacmanBot(1)
		ghosts.Faults = map[int]fake.Fault{4: fake.Timeout}
		rep := play(t, ghosts)
		g := rep.Result.Bots[1]
		if g.Status != engine.StatusTimeout || g.DeathReason != "TLE" || rep.Result.Winners[0] != "bots/pacman" {
			t.Errorf("ghosts: %+v; winners %v", g, rep.Result.Winners)
		}
		fb := record(t, rep, g.FaultTurn, 1)
		if pm := record(t, rep, g.FaultTurn, 0); !pm.Asked || pm.Answer == "" || fb.Fault != engine.StatusTimeout {
			t.Errorf("the fault's turn: pacman %+v, ghosts %+v", pm, fb)
		}
	})
}

// The last round's actions line reaches both seats before their bots are
// stopped, also when a bot takes a while to read its input (the original
// judger always sent it; the seat written to last used to be stopped
// before it read it).
func TestPacmanFinalLineIsRead(t *testing.T) {
	pm, err := pacman.New().Map("saiblo")
	if err != nil {
		t.Fatal(err)
	}
	pac, ghosts := pacmanBot(0), pacmanBot(1)
	pac.ReadDelay, ghosts.ReadDelay = 30*time.Millisecond, 30*time.Millisecond
	l := fake.NewLauncher(map[string]fake.Script{"bots/pacman": pac, "bots/ghosts": ghosts})
	rep, err := orchestrator.New(l).Play(t.Context(), matches.Request{Game: pacman.New(), Map: pm, Seed: 2, Images: []string{"bots/pacman", "bots/ghosts"}})
	if err != nil {
		t.Fatal(err)
	}
	checkPlayed(t, rep, l)
	for _, b := range l.Bots() {
		read := b.Read()
		actions := 0
		for _, m := range read {
			if strings.HasPrefix(string(m), `{"pacman_action"`) {
				actions++
			}
		}
		if last := string(read[len(read)-1]); actions != rep.Result.Turns || !strings.HasPrefix(last, `{"pacman_action"`) {
			t.Errorf("%s read %d actions lines in %d turns, the last line %.80q", b.Spec().Image.Ref, actions, rep.Result.Turns, last)
		}
	}
}

// The warm-up answer (the first) has its own figure and stays out of the
// answer times: a slow start does not make the slowest answer.
func TestWarmUpAnswerApart(t *testing.T) {
	rep, _ := playFake(t, fake.Script{Faults: map[int]fake.Fault{1: fake.ThinkTooLong}}, fake.Script{})
	a, b := rep.Result.Bots[0], rep.Result.Bots[1]
	if a.Status != engine.StatusOK || a.Answers != rep.Result.Turns {
		t.Fatalf("the slow starter: %+v", a)
	}
	if a.AnswerCPUMSMax == nil || *a.AnswerCPUMSMax != 1 || a.WarmUpMS == nil || b.WarmUpMS == nil {
		t.Errorf("answer CPU max %v, warm-up %v and %v; want 1 ms, the 150 ms warm-up apart", a.AnswerCPUMSMax, a.WarmUpMS, b.WarmUpMS)
	}
	if fb := record(t, rep, 1, 0); fb.CPUUS == nil || *fb.CPUUS != 150000 {
		t.Errorf("turn 1 still records the warm-up answer's CPU time: %v", fb.CPUUS)
	}
}

// CPU a bot's cgroup uses between its answer and its next input, while it
// should be stopped (a process its freeze missed), is charged to its next
// answer: in that answer's figures and against its limit. A little of it
// every turn is charged and no more; beyond a millisecond a turn it adds
// up to a fault once it passes one answer time.
func TestCPUWhileStoppedIsCharged(t *testing.T) {
	t.Run("a little, charged", func(t *testing.T) {
		rep, _ := playFake(t, fake.Script{StoppedCPU: 500 * time.Microsecond}, fake.Script{})
		a := rep.Result.Bots[0]
		if a.Status != engine.StatusOK {
			t.Fatalf("the bot is %s (%s)", a.Status, a.FaultDetail)
		}
		fb := record(t, rep, 3, 0)
		if fb.CPUUS == nil || *fb.CPUUS != 1000 || fb.StoppedCPUUS != 500 {
			t.Errorf("turn 3: cpu %v, stopped %d µs, want 1000 and 500", fb.CPUUS, fb.StoppedCPUUS)
		}
		// Every answer after the first is charged its 0.5 ms: 1.5 ms each.
		if a.AnswerCPUMSP50 == nil || *a.AnswerCPUMSP50 != 1.5 {
			t.Errorf("answer CPU p50 %v, want 1.5 ms", a.AnswerCPUMSP50)
		}
		if want := 0.5 * float64(a.Answers-1); a.StoppedCPUMS != want {
			t.Errorf("stopped CPU %v ms, want %v", a.StoppedCPUMS, want)
		}
	})
	t.Run("over the answer's limit", func(t *testing.T) {
		rep, _ := playFake(t, fake.Script{StoppedCPU: 30 * time.Millisecond, Faults: map[int]fake.Fault{2: fake.ThinkTooLong}}, fake.Script{})
		a, b := rep.Result.Bots[0], rep.Result.Bots[1]
		if a.Status != engine.StatusTimeout || a.FaultTurn != 2 ||
			a.FaultDetail != "answered after 180ms of CPU time, over the 100ms limit (30ms of it charged for running while it should have been stopped)" {
			t.Errorf("bot: %s at turn %d (%s)", a.Status, a.FaultTurn, a.FaultDetail)
		}
		if b.Status != engine.StatusOK {
			t.Errorf("its opponent is %s", b.Status)
		}
	})
	t.Run("over the limit in one go", func(t *testing.T) {
		rep, _ := playFake(t, fake.Script{StoppedCPU: 150 * time.Millisecond}, fake.Script{})
		a := rep.Result.Bots[0]
		if a.Status != engine.StatusTimeout || a.FaultTurn != 2 ||
			!strings.HasPrefix(a.FaultDetail, "ran while it should have been stopped, between its answers: 149ms of CPU time beyond 1ms a turn") {
			t.Errorf("bot: %s at turn %d (%s)", a.Status, a.FaultTurn, a.FaultDetail)
		}
	})
	// A bot that can be let run between its answers is, until it runs
	// there past the tolerance: frozen from then on, it runs no more
	// there. What it ran is charged either way.
	t.Run("let run within the tolerance", func(t *testing.T) {
		rep, l := playFake(t, fake.Script{Switch: true, StoppedCPU: 500 * time.Microsecond}, fake.Script{Switch: true})
		for i, a := range rep.Result.Bots {
			if a.Status != engine.StatusOK || a.Timing != "cpu time; let run between answers, as it ran no more there than the tolerance" {
				t.Errorf("bot %d: %s (%s), timing %q", i, a.Status, a.FaultDetail, a.Timing)
			}
		}
		for _, b := range l.Bots() {
			if b.FrozenAtAnswers() {
				t.Errorf("%s is frozen at its answers", b.Spec().BotID)
			}
		}
		if a := rep.Result.Bots[0]; a.StoppedCPUMS != 0.5*float64(a.Answers-1) {
			t.Errorf("stopped CPU %v ms over %d answers, want 0.5 ms each after the first", a.StoppedCPUMS, a.Answers)
		}
	})
	t.Run("let run, then frozen", func(t *testing.T) {
		rep, l := playFake(t, fake.Script{Switch: true, StoppedCPU: 2 * time.Millisecond}, fake.Script{Switch: true})
		a := rep.Result.Bots[0]
		if a.Status != engine.StatusOK || a.StoppedCPUMS != 2 || a.Timing != "cpu time, frozen between answers from turn 2, having run there" {
			t.Errorf("bot: %s (%s), stopped %v ms, timing %q", a.Status, a.FaultDetail, a.StoppedCPUMS, a.Timing)
		}
		if fb := record(t, rep, 1, 0); fb.MemPeakBytes != 1<<20 {
			t.Errorf("turn 1: memory %d, want 1 MiB read at its answer", fb.MemPeakBytes)
		}
		// Frozen at its answers from turn 2, its wait and memory are
		// those its freeze read, off the answer's path.
		for turn := 2; turn <= 3; turn++ {
			if fb := record(t, rep, turn, 0); fb.StoppedCPUUS != 2000*int64(3-turn) || fb.MemPeakBytes != 2<<20 || fb.WaitUS == nil || fb.CPUUS == nil {
				t.Errorf("turn %d: stopped %d µs, memory %d, wait %v, cpu %v; want %d, 2 MiB as its freeze read it, a wait and a CPU time",
					turn, fb.StoppedCPUUS, fb.MemPeakBytes, fb.WaitUS, fb.CPUUS, 2000*(3-turn))
			}
		}
		if fb := record(t, rep, 3, 1); fb.MemPeakBytes != 1<<20 {
			t.Errorf("turn 3, the bot let run: memory %d, want 1 MiB read at its answer", fb.MemPeakBytes)
		}
		for _, b := range l.Bots() { // started at once, in any order
			if frozen := b.FrozenAtAnswers(); frozen != (b.Spec().BotID == "bots/a") {
				t.Errorf("%s frozen at its answers: %v", b.Spec().BotID, frozen)
			}
		}
	})
	t.Run("adding up", func(t *testing.T) {
		// 21 ms a turn: 20 ms beyond the tolerance, over 100 ms at the
		// sixth answer after the warm-up, the seventh in all.
		rep, _ := playFake(t, fake.Script{StoppedCPU: 21 * time.Millisecond}, fake.Script{})
		a := rep.Result.Bots[0]
		if a.Status != engine.StatusTimeout || a.FaultTurn != 7 ||
			!strings.HasPrefix(a.FaultDetail, "ran while it should have been stopped, between its answers: 120ms of CPU time beyond 1ms a turn") {
			t.Errorf("bot: %s at turn %d (%s)", a.Status, a.FaultTurn, a.FaultDetail)
		}
	})
}

// No figure of an answer is negative, and the window's wait is never
// longer than the window.
func TestFiguresAreNeverNegative(t *testing.T) {
	rep, _ := playFake(t, fake.Script{Faults: map[int]fake.Fault{3: fake.Starved}}, fake.Script{})
	for _, f := range rep.Frames {
		for _, fb := range f.Bots {
			if fb.TimeUS < 0 || fb.CPUUS != nil && *fb.CPUUS < 0 || fb.StoppedCPUUS < 0 ||
				fb.WaitUS != nil && (*fb.WaitUS < 0 || *fb.WaitUS > fb.TimeUS) {
				t.Errorf("turn %d seat %d: time %d, cpu %v, stopped %d, wait %v", f.Turn, fb.Seat, fb.TimeUS, fb.CPUUS, fb.StoppedCPUUS, fb.WaitUS)
			}
		}
	}
}

// A bot whose answers pass its share of the match's replay budget is
// faulted output_limit; its opponent plays on, and the replay verifies.
func TestReplayBudget(t *testing.T) {
	l := fake.NewLauncher(map[string]fake.Script{
		"bots/a": {Answer: func(int, [][]byte) []byte { return []byte("[" + strings.Repeat(" ", 298) + "]") }},
		"bots/b": {},
	})
	o := orchestrator.New(l, orchestrator.WithLogger(zaptest.NewLogger(t)), orchestrator.WithReplayBudget(2<<10))
	rep, err := o.Play(t.Context(), matches.Request{
		Game: tanks.New(), Map: tanksMap(t, "classic"), Seed: 3, Images: []string{"bots/a", "bots/b"},
		Settings: json.RawMessage(`{"zone_radius":20}`),
	})
	if err != nil {
		t.Fatal(err)
	}
	checkPlayed(t, rep, l)
	a, b := rep.Result.Bots[0], rep.Result.Bots[1]
	// 300 bytes an answer against a share of 1 KiB: the fourth passes it.
	if a.Status != engine.StatusOutputLimit || a.FaultTurn != 4 ||
		a.FaultDetail != "its answers passed its share of the match's replay budget: 1 KiB of 2 KiB" {
		t.Errorf("bot: %s at turn %d (%s)", a.Status, a.FaultTurn, a.FaultDetail)
	}
	if b.Status != engine.StatusOK {
		t.Errorf("its opponent is %s (%s)", b.Status, b.FaultDetail)
	}
	if fb := record(t, rep, 4, 0); fb.Answer != "" || fb.Fault != engine.StatusOutputLimit {
		t.Errorf("the answer over the budget is kept: %+v", fb)
	}
}
