package orchestrator

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"go.uber.org/zap"

	"arena/engine"
	"arena/internal/errs"
	"arena/matches"
	"arena/sandbox"
)

// RerunRequest asks to play a recorded bot again: a fresh container of
// the exact image the replay recorded for Seat (by id) is fed the inputs
// that bot received, turn by turn, up to Turn.
type RerunRequest struct {
	Replay *matches.Replay
	Seat   int
	// Turn is the last turn to replay (0: the seat's last answered turn).
	Turn int
	// AnswerTimeout is how long the bot may take for each answer after
	// its first (0: five seconds; the first gets the replay's warm-up):
	// a rerun checks what a bot answers, not how fast.
	AnswerTimeout time.Duration
}

// RerunStep is one of the seat's answers, then and now.
type RerunStep struct {
	Turn int
	// Input is what the bot was sent before this answer.
	Input [][]byte
	// Then is the recorded answer, or ThenFault the recorded fault (with
	// ThenDetail); ThenStderr what it wrote to stderr that turn.
	Then       []byte
	ThenFault  engine.Status
	ThenDetail string
	ThenStderr string
	// Now is the answer of the fresh container, or NowErr why there is
	// none; NowStderr what it wrote to stderr meanwhile.
	Now       []byte
	NowErr    string
	NowStderr string
	Took      time.Duration
	// Same is true when the answers (or the lack of one) agree.
	Same bool
}

// RerunResult is how a rerun ended.
type RerunResult struct {
	ImageID string
	// Steps are the seat's answers compared, in order; the last differs
	// when Differs.
	Steps   []RerunStep
	Differs bool
	// LastTurn is the last turn replayed.
	LastTurn int
}

// ErrRerunImageGone is matched by the error of a rerun whose recorded
// image is no longer present (errs.ErrNotFound).
var ErrRerunImageGone = errs.New(errs.ErrNotFound, "the recorded image is no longer present")

// Rerun replays a recorded bot against its own inputs (see RerunRequest)
// and stops at the first answer that differs from the recording. The
// other seats' recorded answers drive the engine, so every game works,
// Pac-Man's sequential protocol included; the inputs are re-derived from
// the engine, which is deterministic given the seed. report, when set,
// gets each step as it is compared. The container is removed before
// Rerun returns.
func (o *Orchestrator) Rerun(ctx context.Context, games []engine.Game, rr RerunRequest, report func(RerunStep)) (*RerunResult, error) {
	r := rr.Replay
	game, match, err := rerunMatch(games, rr)
	if err != nil {
		return nil, err
	}
	frames, until, err := rerunTurns(rr)
	if err != nil {
		return nil, err
	}
	rb := r.Bots[rr.Seat]
	img, err := o.rerunImage(ctx, rb)
	if err != nil {
		return nil, err
	}
	proto := game.Protocol()
	lim := r.Limits.Limits().Resolve(proto)
	runID := "rerun-" + matches.NewMatchID()
	// A hosted game's rules run in its program, started anew and given
	// the recorded answers (and their times) to bring the match to the
	// turns asked.
	hm, _ := match.(engine.HostedMatch)
	if hm != nil {
		host, _, err := o.startHost(ctx, matches.Request{Game: game}, runID, hm)
		if host != nil {
			defer o.closeHost(ctx, host)
		}
		if err != nil {
			return nil, err
		}
	}
	bot, err := o.launcher.Launch(ctx, sandbox.Spec{
		Image: img, Name: fmt.Sprintf("arena-%s-%d", runID, rr.Seat), MatchID: runID, BotID: rb.ID,
		Framing: proto.Framing, MaxMessageBytes: lim.MaxMessageBytes, MemoryBytes: lim.MemoryBytes,
	})
	if err != nil {
		return nil, fmt.Errorf("start %s (%s): %w", rb.Image, rb.ImageID, err)
	}
	defer o.removeRerunBot(ctx, bot)

	timeout := rr.AnswerTimeout
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	x := &rerun{
		o: o, bot: bot, seat: rr.Seat, until: until, frames: frames,
		timeout: timeout, warmUp: lim.WarmUp,
		report: report, res: &RerunResult{ImageID: img.ID}, first: true,
	}
	for match.Turn() < until {
		if err := ctx.Err(); err != nil {
			return x.res, err
		}
		st := match.Step()
		if st.Done {
			break
		}
		replies, differs, err := x.turn(ctx, match.Turn()+1, st)
		if err != nil || differs {
			return x.res, err
		}
		match.Submit(replies)
		if hm != nil && hm.Err() != nil {
			return x.res, errs.Mark(matches.ErrGameHost, fmt.Errorf("the game's logic failed, played again: %w", hm.Err()))
		}
	}
	x.res.LastTurn = match.Turn()
	return x.res, nil
}

// rerunMatch finds the replay's game and starts its match anew, on the
// recorded map, seed, bots and settings.
func rerunMatch(games []engine.Game, rr RerunRequest) (engine.Game, engine.Match, error) {
	r := rr.Replay
	game, err := engine.Find(games, r.Game)
	if err != nil {
		return nil, nil, errs.Mark(errs.ErrInvalid, err)
	}
	if r.Format == matches.ReplayFormatV1 && r.Game == "pacman" {
		return nil, nil, errs.Errorf(errs.ErrInvalid, "this Pac-Man replay is in format %s, whose frames the engine no longer writes: it cannot be rerun", matches.ReplayFormatV1)
	}
	if rr.Seat < 0 || rr.Seat >= len(r.Bots) {
		return nil, nil, errs.Errorf(errs.ErrInvalid, "--seat %d: the match has seats 0 to %d", rr.Seat, len(r.Bots)-1)
	}
	var m engine.Map
	if _, hosted := game.(engine.Hosted); hosted {
		m, err = game.Map(r.Map) // the program makes its own world
	} else {
		m, err = game.ParseMap(r.Map, []byte(r.MapData))
	}
	if err != nil {
		return nil, nil, errs.Errorf(errs.ErrInvalid, "replay map: %w", err)
	}
	ids := make([]string, len(r.Bots))
	for i, b := range r.Bots {
		ids[i] = b.ID
	}
	match, err := game.NewMatch(engine.Config{Map: m, Seed: r.Seed, Players: ids, Settings: r.Settings})
	if err != nil {
		return nil, nil, errs.Errorf(errs.ErrInvalid, "replay settings: %w", err)
	}
	return game, match, nil
}

// rerunTurns indexes the replay's frames by turn and says the last turn to
// replay: the one asked for, else the seat's last answered turn.
func rerunTurns(rr RerunRequest) (map[int]matches.Frame, int, error) {
	r := rr.Replay
	frames := map[int]matches.Frame{}
	lastAsked := 0
	for _, fr := range r.Frames {
		frames[fr.Turn] = fr
		for _, b := range fr.Bots {
			if b.Seat == rr.Seat && b.Asked {
				lastAsked = fr.Turn
			}
		}
	}
	if lastAsked == 0 {
		return nil, 0, errs.Errorf(errs.ErrInvalid, "seat %d (%s) was never asked for an answer in this replay", rr.Seat, r.Bots[rr.Seat].ID)
	}
	until := rr.Turn
	if until == 0 {
		until = lastAsked
	}
	if until < 1 || until > lastAsked {
		return nil, 0, errs.Errorf(errs.ErrInvalid, "--turn %d: seat %d answered in turns 1 to %d", until, rr.Seat, lastAsked)
	}
	return frames, until, nil
}

// rerunImage looks up the exact image the replay recorded for a bot.
func (o *Orchestrator) rerunImage(ctx context.Context, rb matches.ReplayBot) (sandbox.Image, error) {
	img, err := o.launcher.Image(ctx, rb.ImageID)
	if errors.Is(err, matches.ErrImageNotFound) || errors.Is(err, sandbox.ErrImageNotFound) {
		return img, fmt.Errorf("%w: %s was %s when the match was played; rebuild that exact image (or load it with docker load) to rerun it", ErrRerunImageGone, rb.ImageID, rb.Image)
	} else if err != nil {
		return img, err
	}
	img.Ref = rb.Image // for names and messages; the container runs img.ID
	return img, nil
}

// removeRerunBot stops and removes a rerun's container, even when ctx is
// done.
func (o *Orchestrator) removeRerunBot(ctx context.Context, bot Bot) {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	bot.Stop(cctx)
	if err := bot.Close(cctx); err != nil {
		o.log.Error("rerun bot not removed", zap.Error(err))
	}
}

// rerun is a rerun under way: the fresh bot of one seat, fed the inputs the
// engine sends that seat, its answers compared with the recorded ones.
type rerun struct {
	o      *Orchestrator
	bot    Bot
	seat   int
	until  int
	frames map[int]matches.Frame
	// timeout is the wait for an answer, warmUp the least wait for the first.
	timeout, warmUp time.Duration
	report          func(RerunStep)
	res             *RerunResult
	pending         [][]byte // sent since the last answer
	first           bool
}

// turn plays one step of the engine's turn: it passes the seat's input to
// the bot, compares the bot's answer when the seat is awaited, and gives the
// recorded replies to submit; differs says the rerun stops here.
func (x *rerun) turn(ctx context.Context, turn int, st engine.Step) (replies []engine.Reply, differs bool, err error) {
	fr, ok := x.frames[turn]
	if !ok {
		return nil, false, &matches.Mismatch{Turn: turn, Reason: "the replay has no frame for this turn"}
	}
	records := map[int]matches.FrameBot{}
	for _, b := range fr.Bots {
		records[b.Seat] = b
	}
	for _, msg := range st.Send {
		if msg.Seat == x.seat {
			x.pending = append(x.pending, slices.Clone(msg.Data))
		}
	}
	replies = make([]engine.Reply, len(st.Await))
	for i, seat := range st.Await {
		rec, ok := records[seat]
		if !ok || !(rec.Asked || rec.Fault != "") {
			return nil, false, &matches.Mismatch{Turn: turn, Reason: fmt.Sprintf("the engine asks seat %d, the replay has no answer from it", seat)}
		}
		data, err := rec.Message()
		if err != nil {
			return nil, false, &matches.Mismatch{Turn: turn, Reason: fmt.Sprintf("seat %d: undecodable answer: %v", seat, err)}
		}
		replies[i] = engine.Reply{Seat: seat, Data: data, Fault: rec.Fault, Time: rec.Counted()}
		if seat != x.seat || !rec.Asked {
			continue
		}
		if !x.compare(ctx, turn, rec, data) {
			return nil, true, nil
		}
	}
	return replies, false, nil
}

// compare asks the bot for its answer to the input pending and records the
// step; it says whether the answer is the recorded one.
func (x *rerun) compare(ctx context.Context, turn int, rec matches.FrameBot, then []byte) bool {
	wait := x.timeout
	if x.first {
		wait = max(x.timeout, x.warmUp)
	}
	step := x.o.rerunStep(ctx, x.bot, turn, x.pending, rec, then, wait)
	x.pending, x.first = nil, false
	if !step.Same || turn == x.until {
		// The turn shown in full: stderr travels apart from the
		// answer, so give what the bot wrote just before its
		// answer a moment to arrive.
		step.NowStderr += x.o.lateStderr(ctx, x.bot)
	}
	x.res.Steps = append(x.res.Steps, step)
	x.res.LastTurn = turn
	if x.report != nil {
		x.report(step)
	}
	if !step.Same {
		x.res.Differs = true
	}
	return step.Same
}

// stderrSettle is how long a rerun waits for the stderr of the turn it
// shows in full.
const stderrSettle = 50 * time.Millisecond

// lateStderr is what the bot writes to stderr within stderrSettle.
func (o *Orchestrator) lateStderr(ctx context.Context, bot Bot) string {
	t := time.NewTimer(stderrSettle)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
	return validText(bot.TakeStderr().Text)
}

// rerunStep delivers a turn's input to the fresh bot and compares its
// answer with the recorded one.
func (o *Orchestrator) rerunStep(ctx context.Context, bot Bot, turn int, input [][]byte, rec matches.FrameBot, then []byte, wait time.Duration) RerunStep {
	step := RerunStep{Turn: turn, Input: input, ThenStderr: rec.Stderr}
	if rec.Fault != "" {
		step.ThenFault, step.ThenDetail = rec.Fault, rec.Detail
	} else {
		step.Then = then
	}
	_ = bot.Thaw() // a bot that cannot be frozen just runs
	start := o.now()
	deadline := start.Add(wait)
	var err error
	for _, m := range input {
		if err = bot.Send(m, deadline); err != nil {
			break
		}
	}
	if err == nil {
		step.Now, err = bot.Receive(ctx, deadline)
	}
	step.Took = o.now().Sub(start)
	if err != nil {
		step.NowErr = err.Error()
	}
	step.NowStderr = validText(bot.TakeStderr().Text)
	switch {
	case rec.Fault != "":
		step.Same = err != nil // a fault then, no answer now
	default:
		step.Same = err == nil && bytes.Equal(step.Now, then)
	}
	return step
}
