// Package orchestrator plays matches: it starts the bots, runs the turn
// loop between a game's engine and the bots' sandboxes, turns faults into
// bot statuses, and records the replay and the result.
package orchestrator

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"arena/engine"
	"arena/framing"
	"arena/sandbox"
)

// Bot is a running bot as the orchestrator uses it.
type Bot interface {
	Send(p []byte, deadline time.Time) error
	Receive(ctx context.Context, deadline time.Time) ([]byte, error)
	TakeStderr() sandbox.Stderr
	CPUTime() (time.Duration, bool)
	Usage() sandbox.Usage
	Started() time.Time
	// Stop ends the bot and says how it ended; Exit only waits for that.
	Stop(ctx context.Context) sandbox.Exit
	Exit(ctx context.Context) sandbox.Exit
	Close(ctx context.Context) error
}

// Launcher finds images and starts bots.
type Launcher interface {
	// Check tells whether ref is a well-formed bot reference this launcher
	// accepts, without looking it up.
	Check(ref string) error
	Image(ctx context.Context, ref string) (sandbox.Image, error)
	Launch(ctx context.Context, s sandbox.Spec) (Bot, error)
}

// Docker adapts the Docker sandbox to a Launcher.
func Docker(d *sandbox.Docker) Launcher { return Launchers(d, nil) }

// Launchers routes bots: references with the "exec:" prefix run as local
// processes when local is set (and are refused when it is not), all
// others as Docker containers.
func Launchers(d *sandbox.Docker, local *sandbox.Local) Launcher {
	return router{docker: d, local: local}
}

type router struct {
	docker *sandbox.Docker
	local  *sandbox.Local
}

func (r router) Check(ref string) error {
	if sandbox.IsLocalRef(ref) {
		if r.local == nil {
			return fmt.Errorf("%w: local bots (%s) are not enabled here", sandbox.ErrBadReference, ref)
		}
		return nil
	}
	return sandbox.ParseImageRef(ref)
}

func (r router) Image(ctx context.Context, ref string) (sandbox.Image, error) {
	if err := r.Check(ref); err != nil {
		return sandbox.Image{}, err
	}
	if sandbox.IsLocalRef(ref) {
		return r.local.Image(ref)
	}
	return r.docker.Image(ctx, ref)
}

func (r router) Launch(ctx context.Context, s sandbox.Spec) (Bot, error) {
	if sandbox.IsLocalRef(s.Image.Ref) && r.local != nil {
		p, err := r.local.Start(ctx, s)
		if err != nil {
			return nil, err
		}
		return p, nil
	}
	c, err := r.docker.Start(ctx, s)
	if err != nil {
		return nil, err
	}
	return c, nil
}

// Request is one match to play.
type Request struct {
	Game engine.Game
	Map  engine.Map
	Seed uint64
	// Images are the bots' image references, one per seat.
	Images   []string
	Settings json.RawMessage
	// Limits override the game's defaults where non-zero.
	Limits Limits
	// MatchID names the match; empty picks a random one.
	MatchID string
	// OnFrame, when set, gets every frame as it is recorded (for live
	// viewers). It runs on the match's goroutine and must not block.
	OnFrame func(Frame)
}

// Limits are the time and size limits of a match.
type Limits struct {
	AnswerTimeout   time.Duration
	WarmUp          time.Duration
	MaxMessageBytes int
}

// InputError is a request that cannot be played as given: a usage error,
// not a platform failure.
type InputError struct{ Err error }

func (e *InputError) Error() string { return e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

// Orchestrator plays matches with one launcher.
type Orchestrator struct {
	launcher Launcher
	log      *zap.Logger
	now      func() time.Time
	grace    time.Duration // for stopping a bot
}

// Option configures an Orchestrator.
type Option func(*Orchestrator)

// WithLogger sets the logger (default: none).
func WithLogger(l *zap.Logger) Option { return func(o *Orchestrator) { o.log = l } }

// WithClock sets the clock used for timings (default: time.Now).
func WithClock(now func() time.Time) Option { return func(o *Orchestrator) { o.now = now } }

// New returns an orchestrator that starts bots with l.
func New(l Launcher, opts ...Option) *Orchestrator {
	o := &Orchestrator{launcher: l, log: zap.NewNop(), now: time.Now, grace: 5 * time.Second}
	for _, opt := range opts {
		opt(o)
	}
	return o
}

// BotIDs gives each image its id in a match: the reference as entered,
// with #2, #3… when the same image plays more than once.
func BotIDs(images []string) []string {
	ids := make([]string, len(images))
	seen := map[string]int{}
	for i, img := range images {
		seen[img]++
		ids[i] = img
		if n := seen[img]; n > 1 {
			ids[i] = fmt.Sprintf("%s#%d", img, n)
		}
	}
	return ids
}

// RandomSeed picks a seed for a match that was given none. It has 53 bits,
// so it survives JavaScript's numbers in the viewer.
func RandomSeed() uint64 {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand never fails on Linux
	return binary.LittleEndian.Uint64(b[:]) >> 11
}

// NewMatchID returns a random match id.
func NewMatchID() string {
	var b [6]byte
	_, _ = rand.Read(b[:]) // crypto/rand never fails on Linux
	return hex.EncodeToString(b[:])
}

// seat is one bot's state during a match.
type seat struct {
	n       int
	id      string
	image   sandbox.Image
	bot     Bot // nil if it never started
	status  engine.Status
	turn    int // the turn of the fault
	detail  string
	times   []time.Duration
	asked   bool // answered at least once (the warm-up is over)
	out     bool // the game is done with it
	stopped bool // its container is being or has been stopped
	final   sandbox.Usage
	drop    int64
	// lastStderr is the last line the bot wrote to stderr, to explain a
	// crash in the result.
	lastStderr string
}

func (s *seat) fault(st engine.Status, turn int, detail string) {
	if s.status != engine.StatusOK {
		return
	}
	s.status, s.turn, s.detail = st, turn, detail
}

// Validate checks a request without starting anything: the game accepts
// the map, the bots and the settings, and every bot reference is well
// formed. With images, every image must also be available. Input
// problems are InputErrors.
func (o *Orchestrator) Validate(ctx context.Context, req Request, images bool) error {
	_, _, err := o.prepare(ctx, req, images)
	return err
}

// prepare validates a request and resolves its images (when asked to).
func (o *Orchestrator) prepare(ctx context.Context, req Request, resolve bool) (engine.Match, []sandbox.Image, error) {
	if req.Game == nil || req.Map == nil {
		return nil, nil, &InputError{errors.New("no game or map given")}
	}
	if len(req.Images) == 0 {
		return nil, nil, &InputError{errors.New("no bots given")}
	}
	for i, ref := range req.Images {
		if err := o.launcher.Check(ref); err != nil {
			return nil, nil, &InputError{fmt.Errorf("bot %d: %w", i+1, err)}
		}
	}
	match, err := req.Game.NewMatch(engine.Config{Map: req.Map, Seed: req.Seed, Players: BotIDs(req.Images), Settings: req.Settings})
	if err != nil {
		return nil, nil, &InputError{err}
	}
	if !resolve {
		return match, nil, nil
	}
	images := make([]sandbox.Image, len(req.Images))
	for i, ref := range req.Images {
		if j := slices.Index(req.Images, ref); j < i {
			images[i] = images[j]
			continue
		}
		if images[i], err = o.launcher.Image(ctx, ref); err != nil {
			if errors.Is(err, sandbox.ErrBadReference) {
				return nil, nil, &InputError{fmt.Errorf("bot %d: %w", i+1, err)}
			}
			return nil, nil, err
		}
	}
	return match, images, nil
}

// Play runs a match to its end and returns its replay (whose Result is the
// outcome). Every container is removed before it returns, also when ctx
// is cancelled; then the error is ctx's.
func (o *Orchestrator) Play(ctx context.Context, req Request) (*Replay, error) {
	match, images, err := o.prepare(ctx, req, true)
	if err != nil {
		return nil, err
	}
	proto := req.Game.Protocol()
	lim := req.Limits
	if lim.AnswerTimeout <= 0 {
		lim.AnswerTimeout = proto.AnswerTimeout
	}
	if lim.WarmUp <= 0 {
		lim.WarmUp = proto.WarmUp
	}
	if lim.MaxMessageBytes <= 0 || lim.MaxMessageBytes > proto.MaxMessageBytes {
		lim.MaxMessageBytes = proto.MaxMessageBytes
	}
	matchID := req.MatchID
	if matchID == "" {
		matchID = NewMatchID()
	}
	log := o.log.With(zap.String("match", matchID))
	ids := BotIDs(req.Images)
	seats := make([]*seat, len(ids))
	for i := range seats {
		seats[i] = &seat{n: i, id: ids[i], image: images[i], status: engine.StatusOK}
	}
	rep := &Replay{
		Format: ReplayFormat, MatchID: matchID, Game: req.Game.Name(),
		Map: req.Map.Info().Name, MapData: string(req.Map.Data()), Seed: req.Seed,
		Settings: match.Settings(),
		Limits:   LimitsRecord{AnswerTimeoutMS: ms(lim.AnswerTimeout), WarmUpMS: ms(lim.WarmUp), MaxMessageBytes: lim.MaxMessageBytes},
	}
	for _, s := range seats {
		rep.Bots = append(rep.Bots, ReplayBot{Seat: s.n, ID: s.id, Image: s.image.Ref, ImageID: s.image.ID})
	}

	r := &run{o: o, log: log, match: match, seats: seats, lim: lim, rep: rep, matchID: matchID, onFrame: req.OnFrame}
	defer r.closeAll(ctx)

	start := o.now()
	if err := r.startAll(ctx, proto.Framing); err != nil {
		return nil, err
	}
	r.record(nil)
	if err := r.loop(ctx); err != nil {
		return nil, err
	}
	r.finish(ctx)
	r.lateStderr()
	rep.Result = r.result(o.now().Sub(start))
	log.Info("match finished", zap.Int("turns", rep.Result.Turns), zap.Strings("winners", rep.Result.Winners))
	return rep, nil
}

// run is the state of one match being played.
type run struct {
	o       *Orchestrator
	log     *zap.Logger
	match   engine.Match
	seats   []*seat
	lim     Limits
	rep     *Replay
	matchID string
	onFrame func(Frame)
	pending map[int]*FrameBot // this turn's records, by seat
	stops   sync.WaitGroup
}

// startAll starts every bot at once. A bot that cannot start is
// start_failed; the match goes on without it.
func (r *run) startAll(ctx context.Context, framing framing.Framing) error {
	var wg sync.WaitGroup
	for _, s := range r.seats {
		wg.Add(1)
		go func() {
			defer wg.Done()
			bot, err := r.o.launcher.Launch(ctx, sandbox.Spec{
				Image:           s.image,
				Name:            fmt.Sprintf("arena-%s-%d", r.matchID, s.n),
				MatchID:         r.matchID,
				BotID:           s.id,
				Framing:         framing,
				MaxMessageBytes: r.lim.MaxMessageBytes,
			})
			if err != nil {
				s.fault(engine.StatusStartFailed, 0, err.Error())
				r.log.Warn("bot did not start", zap.String("bot", s.id), zap.Error(err))
				return
			}
			s.bot = bot
		}()
	}
	wg.Wait()
	return ctx.Err()
}

// loop plays until the game is done.
func (r *run) loop(ctx context.Context) error {
	r.pending = map[int]*FrameBot{}
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		st := r.match.Step()
		if st.Done {
			r.deliverFinal(st.Send)
			return nil
		}
		turn := r.match.Turn() + 1
		replies := r.exchange(ctx, st, turn)
		if err := ctx.Err(); err != nil {
			return err
		}
		for _, rej := range r.match.Submit(replies) {
			s := r.seats[rej.Seat]
			s.fault(engine.StatusBadOutput, turn, rej.Reason)
			r.note(s).Status = s.status
			r.note(s).Detail = rej.Reason
			r.stop(s)
		}
		if r.match.Turn() >= turn {
			r.record(r.pending)
			r.pending = map[int]*FrameBot{}
		}
		for _, s := range r.seats {
			if r.match.Out(s.n) && !s.out {
				s.out = true
				r.stop(s)
			}
		}
	}
}

// deliverFinal sends the game's last messages, best effort: the match is
// over, so a bot that cannot take them is not at fault.
func (r *run) deliverFinal(msgs []engine.Message) {
	deadline := r.o.now().Add(r.lim.AnswerTimeout)
	for _, m := range msgs {
		if s := r.seats[m.Seat]; s.bot != nil && s.status == engine.StatusOK && !s.stopped {
			_ = s.bot.Send(m.Data, deadline)
		}
	}
}

func (r *run) note(s *seat) *FrameBot {
	fb := r.pending[s.n]
	if fb == nil {
		fb = &FrameBot{Seat: s.n}
		r.pending[s.n] = fb
	}
	return fb
}

// exchange delivers one step's messages and collects the awaited replies.
// Each seat is served on its own goroutine, so a slow or stuck bot never
// delays another's messages or eats into its time.
func (r *run) exchange(ctx context.Context, st engine.Step, turn int) []engine.Reply {
	bySeat := map[int][][]byte{}
	for _, m := range st.Send {
		bySeat[m.Seat] = append(bySeat[m.Seat], m.Data)
	}
	involved := map[int]bool{}
	for seat := range bySeat {
		involved[seat] = true
	}
	for _, seat := range st.Await {
		involved[seat] = true
	}
	awaitIndex := map[int]int{}
	for i, seat := range st.Await {
		awaitIndex[seat] = i
	}
	type outcome struct {
		reply  engine.Reply
		record FrameBot
	}
	results := make([]outcome, len(st.Await))
	var wg sync.WaitGroup
	for seatN := range involved {
		s := r.seats[seatN]
		i, awaited := awaitIndex[seatN]
		if s.status != engine.StatusOK || s.bot == nil {
			if awaited {
				results[i].reply = engine.Reply{Seat: seatN, Fault: s.status}
				results[i].record = FrameBot{Seat: seatN, Asked: true, Fault: s.status, Status: s.status}
			}
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			data, rec, st, detail := r.serve(ctx, s, bySeat[seatN], awaited)
			if st != engine.StatusOK {
				s.fault(st, turn, detail)
				r.stop(s)
			}
			if awaited {
				rec.Seat, rec.Asked, rec.Status, rec.Detail = seatN, true, s.status, detail
				reply := engine.Reply{Seat: seatN, Data: data}
				if st != engine.StatusOK {
					reply.Fault, rec.Fault = st, st
				}
				results[i] = outcome{reply: reply, record: rec}
			}
		}()
	}
	wg.Wait()
	replies := make([]engine.Reply, len(results))
	for i, res := range results {
		replies[i] = res.reply
		*r.note(r.seats[res.reply.Seat]) = res.record
	}
	return replies
}

// serve sends a seat its messages and, when awaited, reads its answer.
// It returns the answer or the fault (status and detail).
func (r *run) serve(ctx context.Context, s *seat, msgs [][]byte, awaited bool) ([]byte, FrameBot, engine.Status, string) {
	var rec FrameBot
	now := r.o.now()
	deadline := now.Add(r.lim.AnswerTimeout)
	if !s.asked {
		// The warm-up window runs from container start to the first answer.
		deadline = s.bot.Started().Add(r.lim.WarmUp)
	}
	cpuBefore, cpuOK := s.bot.CPUTime()
	for _, m := range msgs {
		if err := s.bot.Send(m, deadline); err != nil {
			st, detail := r.classify(ctx, s, err, "writing its input")
			return nil, rec, st, detail
		}
	}
	if !awaited {
		return nil, rec, engine.StatusOK, ""
	}
	sent := r.o.now()
	if s.asked {
		deadline = sent.Add(r.lim.AnswerTimeout)
	}
	data, err := s.bot.Receive(ctx, deadline)
	took := r.o.now().Sub(sent)
	rec.TimeUS = took.Microseconds()
	if u := s.bot.Usage(); u.Source != "" {
		rec.MemPeakBytes = u.MemPeakBytes
		if cpuOK {
			us := (u.CPU - cpuBefore).Microseconds()
			rec.CPUUS = &us
		}
	}
	if err != nil {
		st, detail := r.classify(ctx, s, err, "reading its answer")
		return nil, rec, st, detail
	}
	s.asked = true
	s.times = append(s.times, took)
	rec.setAnswer(data)
	return data, rec, engine.StatusOK, ""
}

// classify turns a stdio error into a bot status. A closed stream means
// the bot ended: the exit tells a crash from an OOM kill.
func (r *run) classify(ctx context.Context, s *seat, err error, doing string) (engine.Status, string) {
	switch {
	case errors.Is(err, sandbox.ErrTimeout):
		// A bot that died just before its deadline may not have been seen
		// dying yet: give the engine a moment to report the exit.
		waitCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), exitGrace)
		defer cancel()
		if exit := s.bot.Exit(waitCtx); exit.Err == nil {
			return exitStatus(exit)
		}
		limit := r.lim.AnswerTimeout
		if !s.asked {
			limit = r.lim.WarmUp
		}
		return engine.StatusTimeout, fmt.Sprintf("no answer within %v", limit)
	case errors.Is(err, sandbox.ErrOutputLimit):
		return engine.StatusOutputLimit, err.Error()
	case ctx.Err() != nil:
		return engine.StatusCrashed, "match cancelled"
	}
	// The output ended: the bot exited (or is exiting), or it closed its
	// output and lives on, which is a crash of the protocol.
	waitCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), closeGrace)
	defer cancel()
	exit := s.bot.Exit(waitCtx)
	if exit.Err != nil {
		return engine.StatusCrashed, fmt.Sprintf("closed its output while %s and kept running", doing)
	}
	return exitStatus(exit)
}

// closeGrace is how long a bot whose output ended is given to be seen
// exiting.
const closeGrace = time.Second

// exitGrace is how long a timed-out bot is given to be seen exiting, so
// a crash is not reported as a timeout.
const exitGrace = 250 * time.Millisecond

func exitStatus(exit sandbox.Exit) (engine.Status, string) {
	if exit.OOMKilled {
		return engine.StatusOOM, "killed for exceeding its memory limit"
	}
	return engine.StatusCrashed, fmt.Sprintf("exited with code %d", exit.Code)
}

// stop ends a bot's container in the background, once; its figures are
// taken first.
func (r *run) stop(s *seat) {
	if s.bot == nil || s.stopped {
		return
	}
	s.stopped = true
	r.stops.Add(1)
	go func() {
		defer r.stops.Done()
		s.final = s.bot.Usage()
		ctx, cancel := context.WithTimeout(context.Background(), r.o.grace)
		defer cancel()
		s.bot.Stop(ctx)
	}()
}

// record appends a frame for the turn just played, with the bots' stderr.
func (r *run) record(bots map[int]*FrameBot) {
	fr := Frame{Turn: r.match.Turn(), State: r.match.Frame()}
	for _, s := range r.seats {
		if s.bot == nil {
			continue
		}
		fb := bots[s.n]
		stderr := s.bot.TakeStderr()
		s.drop += stderr.Dropped
		if len(stderr.Text) > 0 || stderr.Dropped > 0 {
			if fb == nil {
				fb = &FrameBot{Seat: s.n, Status: s.status}
			}
			fb.Stderr = strings.ToValidUTF8(string(stderr.Text), "\uFFFD")
			fb.StderrDropped = stderr.Dropped
			if line := lastLine(fb.Stderr); line != "" {
				s.lastStderr = line
			}
		}
		if fb != nil {
			fr.Bots = append(fr.Bots, *fb)
		}
	}
	r.rep.Frames = append(r.rep.Frames, fr)
	if r.onFrame != nil {
		r.onFrame(fr)
	}
}

// finish stops every bot still running and waits for all stops.
func (r *run) finish(ctx context.Context) {
	for _, s := range r.seats {
		r.stop(s)
	}
	r.stops.Wait()
}

// lateStderr adds what the bots wrote to stderr after the last frame was
// recorded (while they were being stopped) to that frame.
func (r *run) lateStderr() {
	last := &r.rep.Frames[len(r.rep.Frames)-1]
	for _, s := range r.seats {
		if s.bot == nil {
			continue
		}
		stderr := s.bot.TakeStderr()
		if len(stderr.Text) == 0 && stderr.Dropped == 0 {
			continue
		}
		i := slices.IndexFunc(last.Bots, func(fb FrameBot) bool { return fb.Seat == s.n })
		if i < 0 {
			last.Bots = append(last.Bots, FrameBot{Seat: s.n, Status: s.status})
			i = len(last.Bots) - 1
		}
		dropped := stderr.Dropped
		if last.Bots[i].Stderr != "" {
			// The frame has its turn's share already: the rest is counted.
			dropped += int64(len(stderr.Text))
		} else {
			last.Bots[i].Stderr = strings.ToValidUTF8(string(stderr.Text), "\uFFFD")
		}
		last.Bots[i].StderrDropped += dropped
		s.drop += dropped
	}
}

// closeAll removes every container; it runs even when ctx was cancelled.
func (r *run) closeAll(ctx context.Context) {
	r.stops.Wait()
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	for _, s := range r.seats {
		if s.bot == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := s.bot.Close(cctx); err != nil {
				r.log.Error("container not removed", zap.String("bot", s.id), zap.Error(err))
			}
		}()
	}
	wg.Wait()
}

// lastLine is the last non-empty line of s, at most 200 bytes of it.
func lastLine(s string) string {
	s = strings.TrimRight(s, "\r\n \t")
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	if len(s) > 200 {
		s = strings.ToValidUTF8(s[len(s)-200:], "")
	}
	return s
}

func (r *run) result(took time.Duration) Result {
	er := r.match.Result()
	res := Result{
		MatchID: r.matchID, Game: r.rep.Game, Map: r.rep.Map, Seed: r.rep.Seed,
		Turns: r.match.Turn(), Winners: []string{}, DurationMS: ms(took),
	}
	for _, w := range er.Winners {
		res.Winners = append(res.Winners, r.seats[w].id)
	}
	for _, s := range r.seats {
		br := BotResult{
			Seat: s.n, ID: s.id, Image: s.image.Ref, ImageID: s.image.ID,
			Status: s.status, FaultTurn: s.turn, FaultDetail: s.detail,
			Answers: len(s.times), StderrDropped: s.drop,
		}
		if s.status == engine.StatusCrashed && s.lastStderr != "" {
			br.FaultDetail += "; its last words on stderr: " + s.lastStderr
		}
		if s.n < len(er.Seats) {
			sr := er.Seats[s.n]
			br.Score, br.DeathReason, br.DeathTurn = sr.Score, sr.DeathReason, sr.DeathTurn
		}
		if len(s.times) > 0 {
			sorted := slices.Clone(s.times)
			slices.Sort(sorted)
			br.AnswerMSP50 = ms(sorted[(len(sorted)-1)/2])
			br.AnswerMSMax = ms(sorted[len(sorted)-1])
		}
		switch u := s.final; {
		case s.bot == nil:
			br.Accounting = "unavailable: the bot did not start"
		case u.Source == "":
			br.Accounting = "unavailable: " + u.Unavailable
		default:
			cpu := ms(u.CPU)
			peak := u.MemPeakBytes
			br.CPUMS, br.MemPeakBytes = &cpu, &peak
			br.OOMKills, br.PidsLimitHits = u.OOMKills, u.PidsLimitHits
			br.Accounting = u.Source
		}
		res.Bots = append(res.Bots, br)
	}
	return res
}
