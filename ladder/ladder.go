// Package ladder runs a ladder per game: bots registered under a name,
// pinned to an image id, play each other continuously in rated matches,
// and a leaderboard ranks them.
//
// A ladder is a producer of matches for the server's queue, like a person
// pressing Start, only in the background: it chooses the next match
// (matchmaking.go), submits it with every bot resolved to its image id and
// its seed fixed, and when the match is over, whoever played it, it
// settles the match from its stored result, keyed by match id
// (judge.go decides how it counts, package skill moves the ratings, the
// store writes both in one transaction). Ratings are a pure function of
// the rated matches in the order they were rated, so Recompute gives the
// same numbers from the history.
//
//   - ladder.go: the Ladder: registration, the loop that keeps the queue
//     fed, settling.
//   - judge.go: how a match that is over counts (pure, table-tested).
//   - matchmaking.go: who plays next, on which map and seats (pure).
//   - views.go: the leaderboard and an entry's page.
//   - recompute.go: ratings recomputed from the history.
//   - skill: the rating model (Weng–Lin, Plackett–Luce).
package ladder

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"arena/engine"
	"arena/internal/errs"
	"arena/ladder/skill"
	"arena/matches"
	"arena/store"
)

// Queue is where ladder matches are played: the server's match queue.
type Queue interface {
	// Submit checks req as for a match started by hand, records it with
	// insert and queues it.
	Submit(ctx context.Context, req matches.Request, insert func(context.Context, store.Match) error) error
}

// Config is a ladder's policy.
type Config struct {
	// Enabled lets the ladder make matches; registration and the
	// leaderboard work either way.
	Enabled bool
	// MaxEntries bounds the listed entries of a game (0: no limit), and
	// MaxPerOwner those of one owner in a game (0: no limit; see
	// Registration.Unbounded).
	MaxEntries, MaxPerOwner int
	// InFlight bounds the ladder matches waiting or playing at once
	// (0: 2).
	InFlight int
	// Limits are the limits its matches run under.
	Limits matches.Limits
	// Model is the rating model (zero: skill.Default()).
	Model skill.Model
	// Retry is how long the ladder waits after a failure to make a match
	// (0: 10 s).
	Retry time.Duration
}

// Deps are a ladder's collaborators.
type Deps struct {
	Store *store.Store
	// Games are the games on offer: a ladder of a game no longer there
	// keeps its board, and plays no match.
	Games *engine.Catalog
	Queue Queue
	// Image resolves an image reference to its id; errors wrap
	// matches.ErrImageNotFound when the image is absent.
	Image func(ctx context.Context, ref string) (string, error)
	// Game, when set, says which game an image is labelled for
	// (io.arena.game; "" if none): an image labelled for another game
	// is refused.
	Game func(ctx context.Context, ref string) (string, error)
	// Faulted, when set, is told of each entry that faulted (status:
	// timeout, crash, …) in a match as it is settled.
	Faulted func(ctx context.Context, e store.Entry, status, matchID string)
	Log     *zap.Logger
	Now     func() time.Time
}

// Ladder runs the ladders of every game.
type Ladder struct {
	cfg  Config
	deps Deps
	log  *zap.Logger
	now  func() time.Time
	mm   Matchmaker
	kick chan struct{}

	mu       sync.Mutex
	inFlight map[string]string // match id → game
	next     int               // the game whose turn it is to make a match
	changed  chan struct{}
}

// New returns the ladders; Run makes their matches.
func New(cfg Config, deps Deps) *Ladder {
	if cfg.InFlight <= 0 {
		cfg.InFlight = 2
	}
	if cfg.Model == (skill.Model{}) {
		cfg.Model = skill.Default()
	}
	if cfg.Retry <= 0 {
		cfg.Retry = 10 * time.Second
	}
	if deps.Log == nil {
		deps.Log = zap.NewNop()
	}
	if deps.Now == nil {
		deps.Now = time.Now
	}
	return &Ladder{cfg: cfg, deps: deps, log: deps.Log, now: deps.Now, mm: Matchmaker{Model: cfg.Model},
		kick: make(chan struct{}, 1), inFlight: map[string]string{}, changed: make(chan struct{})}
}

// Errors of the ladder's input, each of its class (package errs); a name
// or image that is not acceptable is of errs.ErrInvalid.
var (
	// ErrUnknownGame: no such game.
	ErrUnknownGame = errs.New(errs.ErrNotFound, "unknown game")
	// ErrNoEntry: no such entry in this game's ladder.
	ErrNoEntry = store.ErrNoEntry
)

// Model is the rating model in use.
func (l *Ladder) Model() skill.Model { return l.cfg.Model }

// Enabled reports whether the ladder makes matches.
func (l *Ladder) Enabled() bool { return l.cfg.Enabled }

// Changed is closed at the next change of any leaderboard: a match
// queued, started or settled, an entry registered or changed.
func (l *Ladder) Changed() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.changed
}

func (l *Ladder) touch() {
	l.mu.Lock()
	close(l.changed)
	l.changed = make(chan struct{})
	l.mu.Unlock()
}

// wake asks the loop to make matches now.
func (l *Ladder) wake() {
	select {
	case l.kick <- struct{}{}:
	default:
	}
}

func (l *Ladder) game(name string) (engine.Game, error) {
	g, err := l.deps.Games.Find(name)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnknownGame, err)
	}
	return g, nil
}

var namePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9 ._-]{0,39}$`)

// checkName says why an entry's name is not acceptable.
func checkName(name string) error {
	if !namePattern.MatchString(name) {
		return errs.Errorf(errs.ErrInvalid, "invalid ladder input: name %q: 1 to 40 letters, digits, spaces, dots, dashes or underscores, starting with a letter or digit", name)
	}
	return nil
}

// Registration is a bot put on a ladder: its game, name and image, and
// the user or team it belongs to (Owner), registered by the user By.
type Registration struct {
	Game, Name, Image string
	Owner, By         string
	// Unbounded: an entry an admin registers, which MaxPerOwner does not
	// bound.
	Unbounded bool
}

// Register puts a bot on a game's ladder under a name: its image is
// resolved to its id now, and the entry plays that image from then on.
// The same name with the same image id returns the existing entry
// (created false); with a new id of the same reference, a new version
// replaces the old one, whose history stays. A name listed by another
// owner is taken.
func (l *Ladder) Register(ctx context.Context, r Registration) (store.Entry, bool, error) {
	game, name, image := r.Game, r.Name, r.Image
	g, err := l.game(game)
	if err != nil {
		return store.Entry{}, false, err
	}
	name = strings.TrimSpace(name)
	if err := checkName(name); err != nil {
		return store.Entry{}, false, err
	}
	image = strings.TrimSpace(image)
	if image == "" {
		return store.Entry{}, false, errs.Errorf(errs.ErrInvalid, "invalid ladder input: image: empty image name")
	}
	id, err := l.deps.Image(ctx, image)
	if err != nil {
		return store.Entry{}, false, err
	}
	if l.deps.Game != nil {
		labelled, err := l.deps.Game(ctx, id)
		if err != nil {
			return store.Entry{}, false, err
		}
		if labelled != "" && labelled != g.Name() {
			return store.Entry{}, false, errs.Errorf(errs.ErrInvalid, "invalid ladder input: image: %s is labelled for %s (io.arena.game=%s), not %s: it would fault every match here; register it on the %s ladder", image, labelled, labelled, g.Name(), labelled)
		}
	}
	rating := l.cfg.Model.New()
	lim := store.EntryLimits{Listed: l.cfg.MaxEntries, PerOwner: l.cfg.MaxPerOwner}
	if r.Unbounded {
		lim.PerOwner = 0
	}
	e, created, err := l.deps.Store.RegisterEntry(ctx, store.Entry{Game: g.Name(), Name: name, Image: image, ImageID: id, Mu: rating.Mu, Sigma: rating.Sigma, CreatedAt: l.now(), Owner: r.Owner, CreatedBy: r.By}, lim)
	if err != nil {
		return store.Entry{}, false, err
	}
	if created {
		l.log.Info("ladder entry registered", zap.String("game", e.Game), zap.String("name", e.Name), zap.Int("version", e.Version), zap.String("image_id", e.ImageID), zap.String("owner", e.Owner))
		l.touch()
		l.wake()
	}
	return e, created, nil
}

// Entry returns an entry of a game's ladder.
func (l *Ladder) Entry(ctx context.Context, game string, id int64) (store.Entry, error) {
	if _, err := l.game(game); err != nil {
		return store.Entry{}, err
	}
	e, err := l.deps.Store.Entry(ctx, id)
	if err == nil && e.Game != game {
		err = ErrNoEntry
	}
	return e, err
}

// SetActive pauses an entry (it plays no new match) or lets it play
// again.
func (l *Ladder) SetActive(ctx context.Context, game string, id int64, active bool) (store.Entry, error) {
	e, err := l.Entry(ctx, game, id)
	if err != nil {
		return store.Entry{}, err
	}
	if !e.Listed() {
		return store.Entry{}, errs.Errorf(errs.ErrInvalid, "invalid ladder input: entry %d is %s", id, e.State)
	}
	state := store.EntryPaused
	if active {
		state = store.EntryActive
		if most := l.cfg.MaxPerOwner; most > 0 {
			person, n, err := l.deps.Store.OverCount(ctx, e, most)
			if err != nil {
				return store.Entry{}, err
			}
			if person != "" {
				return store.Entry{}, fmt.Errorf("%w: entry %d may not play: %s counts %d entries on the %s ladder with their teams', the most one may is %d (ARENA_LADDER_ENTRIES_PER_OWNER); remove one first", store.ErrLadderFull, id, person, n, e.Game, most)
			}
		}
	}
	if e, err = l.deps.Store.SetEntryState(ctx, id, state, ""); err != nil {
		return store.Entry{}, err
	}
	l.touch()
	l.wake()
	return e, nil
}

// PauseOverCount pauses the entries past MaxPerOwner of a person, with
// their teams' (entries made before a team's counted for each member, or
// a person who joined a team): they stay listed, with a note, and play
// again once the person has removed enough.
func (l *Ladder) PauseOverCount(ctx context.Context) error {
	paused, err := l.deps.Store.PauseOverCount(ctx, l.cfg.MaxPerOwner)
	for _, e := range paused {
		l.log.Info("ladder entry paused: its people have too many", zap.String("game", e.Game), zap.String("name", e.Name), zap.Int64("entry", e.ID), zap.String("note", e.Note))
	}
	if len(paused) > 0 {
		l.touch()
	}
	return err
}

// Rename gives an entry (all its versions) a new name.
func (l *Ladder) Rename(ctx context.Context, game string, id int64, name string) (store.Entry, error) {
	e, err := l.Entry(ctx, game, id)
	if err != nil {
		return store.Entry{}, err
	}
	name = strings.TrimSpace(name)
	if err := checkName(name); err != nil {
		return store.Entry{}, err
	}
	if e, err = l.deps.Store.RenameEntry(ctx, e.ID, name); err != nil {
		return store.Entry{}, err
	}
	l.touch()
	return e, nil
}

// Remove takes an entry off its ladder; its matches stay in the history.
func (l *Ladder) Remove(ctx context.Context, game string, id int64) (store.Entry, error) {
	e, err := l.Entry(ctx, game, id)
	if err != nil {
		return store.Entry{}, err
	}
	if e.State == store.EntryRemoved {
		return e, nil
	}
	if e, err = l.deps.Store.SetEntryState(ctx, id, store.EntryRemoved, ""); err != nil {
		return store.Entry{}, err
	}
	l.touch()
	return e, nil
}

// Observe is told every change of a match's state (the queue's updates,
// after the history recorded them): a ladder match that is over is
// settled; other changes of a ladder match wake the leaderboards'
// watchers.
func (l *Ladder) Observe(u matches.Update) {
	l.mu.Lock()
	_, mine := l.inFlight[u.ID]
	l.mu.Unlock()
	if !mine {
		return
	}
	if !u.State.Final() {
		l.touch()
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := l.Settle(ctx, u.ID); err != nil {
		l.log.Error("settle a ladder match", zap.String("match", u.ID), zap.Error(err))
	}
}

// errNotOver is how settling says a match is still being played.
var errNotOver = errors.New("the match is not over")

// Settle counts a ladder match that is over, once: void, or rated with
// its entries' ratings moved. A match that is not over, or not a ladder
// match, is left alone.
func (l *Ladder) Settle(ctx context.Context, id string) error {
	var verdict Verdict
	var seated []store.Entry
	settled, err := l.deps.Store.SettleLadderMatch(ctx, id, l.now(), func(lm store.LadderMatch, m store.Match, entries []store.Entry) (store.Settlement, error) {
		if !matches.State(m.Status).Final() {
			return store.Settlement{}, errNotOver
		}
		var err error
		var set store.Settlement
		verdict, set, err = l.rate(lm, m, entries)
		seated = entries
		return set, err
	})
	switch {
	case errors.Is(err, errNotOver):
		return nil
	case errors.Is(err, store.ErrNotFound):
		l.forget(id)
		return nil
	case err != nil:
		return err
	}
	l.forget(id)
	if settled {
		l.log.Info("ladder match settled", zap.String("match", id), zap.Ints("places", verdict.Places), zap.String("void", verdict.Void))
		if l.deps.Faulted != nil && verdict.Void == "" {
			for i, st := range verdict.Statuses {
				if i < len(seated) && st != "" && st != string(engine.StatusOK) {
					l.deps.Faulted(ctx, seated[i], st, id)
				}
			}
		}
	}
	l.touch()
	l.wake()
	return nil
}

// rate judges a match that is over and, unless it is void, rates it.
func (l *Ladder) rate(lm store.LadderMatch, m store.Match, entries []store.Entry) (Verdict, store.Settlement, error) {
	var res *matches.Result
	if len(m.Result) > 0 {
		res = new(matches.Result)
		if err := json.Unmarshal(m.Result, res); err != nil {
			res = nil
		}
	}
	v := Judge(m.Status, m.Error, res, len(lm.Seats))
	if v.Void != "" {
		return v, store.Settlement{Void: v.Void}, nil
	}
	before := make([]skill.Rating, len(entries))
	for i, e := range entries {
		before[i] = skill.Rating{Mu: e.Mu, Sigma: e.Sigma}
	}
	after, err := l.cfg.Model.Rate(before, v.Places)
	if err != nil {
		return v, store.Settlement{}, err
	}
	set := store.Settlement{}
	for i := range lm.Seats {
		set.Seats = append(set.Seats, store.LadderSeat{Place: v.Places[i], Outcome: v.Outcomes[i], Status: v.Statuses[i], Mu: after[i].Mu, Sigma: after[i].Sigma})
	}
	return v, set, nil
}

func (l *Ladder) forget(id string) {
	l.mu.Lock()
	delete(l.inFlight, id)
	l.mu.Unlock()
}

// InFlight lists the ladder matches waiting or playing, by game.
func (l *Ladder) InFlight() map[string][]string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := map[string][]string{}
	for id, g := range l.inFlight {
		out[g] = append(out[g], id)
	}
	return out
}

// Run makes the ladders' matches until ctx is done: first it settles the
// matches that ended while no ladder watched (a restart), then it keeps
// up to InFlight ladder matches waiting or playing, taking the games that
// have two active entries or more in turn.
func (l *Ladder) Run(ctx context.Context) {
	if err := l.settlePending(ctx); err != nil {
		l.log.Error("settle the ladder matches of the last run", zap.Error(err))
	}
	if err := l.PauseOverCount(ctx); err != nil {
		l.log.Error("pause the ladder entries over the count", zap.Error(err))
	}
	for {
		wait := time.Duration(0)
		if l.cfg.Enabled {
			if err := l.fill(ctx); err != nil {
				if ctx.Err() != nil {
					return
				}
				l.log.Warn("make a ladder match", zap.Error(err))
				wait = l.cfg.Retry
			}
		}
		var retry <-chan time.Time
		if wait > 0 {
			retry = time.After(wait)
		}
		select {
		case <-ctx.Done():
			return
		case <-l.kick:
			if wait > 0 {
				// After a failure, wait out the retry anyway.
				select {
				case <-ctx.Done():
					return
				case <-retry:
				}
			}
		case <-retry:
		}
	}
}

// settlePending settles the pending ladder matches that are over and
// keeps the others in flight.
func (l *Ladder) settlePending(ctx context.Context) error {
	ids, err := l.deps.Store.PendingLadderMatches(ctx)
	if err != nil {
		return err
	}
	for _, id := range ids {
		lm, err := l.deps.Store.LadderMatchOf(ctx, id)
		if err != nil {
			return err
		}
		l.mu.Lock()
		l.inFlight[id] = lm.Game
		l.mu.Unlock()
		if err := l.Settle(ctx, id); err != nil {
			return err
		}
	}
	return nil
}

// fill makes matches while fewer than InFlight are waiting or playing.
func (l *Ladder) fill(ctx context.Context) error {
	for {
		l.mu.Lock()
		busy := len(l.inFlight)
		l.mu.Unlock()
		if busy >= l.cfg.InFlight {
			return nil
		}
		_, active, err := l.deps.Store.LadderGames(ctx)
		if err != nil {
			return err
		}
		var g engine.Game
		offered := l.deps.Games.List()
		for i := range offered {
			cand := offered[(l.next+i)%len(offered)]
			if active[cand.Name()] >= 2 {
				g = cand
				l.next = (l.next + i + 1) % len(offered)
				break
			}
		}
		if g == nil {
			return nil
		}
		if err := l.start(ctx, g); err != nil {
			return fmt.Errorf("%s ladder: %w", g.Name(), err)
		}
	}
}

// start makes one match of a game's ladder and submits it.
func (l *Ladder) start(ctx context.Context, g engine.Game) error {
	entries, err := l.deps.Store.Entries(ctx, g.Name(), store.EntryActive)
	if err != nil {
		return err
	}
	history, err := l.deps.Store.LadderMatches(ctx, g.Name(), store.LadderPending, store.LadderRated)
	if err != nil {
		return err
	}
	inFlight := map[int64]int{}
	for _, lm := range history {
		if lm.State == store.LadderPending {
			for _, s := range lm.Seats {
				inFlight[s.EntryID]++
			}
		}
	}
	byID := map[int64]store.Entry{}
	var cands []Candidate
	for _, e := range entries {
		byID[e.ID] = e
		cands = append(cands, Candidate{ID: e.ID, Name: entryName(e), Rating: skill.Rating{Mu: e.Mu, Sigma: e.Sigma}, InFlight: inFlight[e.ID]})
	}
	seq, err := l.deps.Store.NextLadderSeq(ctx, g.Name())
	if err != nil {
		return err
	}
	rng := matchRand(g.Name(), seq)
	p, err := l.mm.Pick(cands, g.Maps(), NewTally(history), rng)
	if err != nil {
		return err
	}
	// An entry whose image is gone cannot play: it is paused, saying why.
	for _, id := range p.Entries {
		e := byID[id]
		if _, err := l.deps.Image(ctx, e.ImageID); errors.Is(err, matches.ErrImageNotFound) {
			note := fmt.Sprintf("paused by the ladder: its image %s (%s) is no longer on the engine", e.ImageID, e.Image)
			if _, err := l.deps.Store.SetEntryState(ctx, id, store.EntryPaused, note); err != nil {
				return err
			}
			l.log.Warn("ladder entry paused", zap.String("game", g.Name()), zap.String("name", e.Name), zap.String("why", note))
			l.touch()
			return nil
		} else if err != nil {
			return err
		}
	}
	m, err := g.Map(p.Map)
	if err != nil {
		return err
	}
	// Each bot plays under its image's reference as its entry was
	// registered (NAME/bot:v3), as in a match started by hand, pinned to
	// its version's image: a bot that finds itself by its image's name
	// (as the original TankFight bots do) finds itself.
	images := make([]string, len(p.Entries))
	ids := make([]string, len(p.Entries))
	seats := make([]store.LadderSeat, len(p.Entries))
	for i, id := range p.Entries {
		images[i], ids[i] = byID[id].Image, byID[id].ImageID
		seats[i] = store.LadderSeat{Seat: i, EntryID: id}
	}
	id := matches.NewMatchID()
	req := matches.Request{Game: g, Map: m, Seed: rng.Uint64() >> 11, Images: images, ImageIDs: ids, Limits: l.cfg.Limits, MatchID: id, Priority: matches.Background, Kind: matches.KindLadder}
	l.mu.Lock()
	l.inFlight[id] = g.Name()
	l.mu.Unlock()
	err = l.deps.Queue.Submit(ctx, req, func(ctx context.Context, m store.Match) error {
		return l.deps.Store.InsertLadderMatch(ctx, m, store.LadderMatch{Seq: seq, Note: p.Reason, Seats: seats})
	})
	if err != nil {
		// Recorded and refused by the queue: it is over, and void.
		if serr := l.Settle(context.WithoutCancel(ctx), id); serr != nil {
			l.log.Error("settle a refused ladder match", zap.String("match", id), zap.Error(serr))
		}
		l.forget(id)
		return err
	}
	l.log.Info("ladder match queued", zap.String("game", g.Name()), zap.String("match", id), zap.String("map", p.Map), zap.String("why", p.Reason))
	l.touch()
	return nil
}

// entryName is an entry's name as the leaderboard shows it: with its
// version from the second on.
func entryName(e store.Entry) string {
	if e.Version > 1 {
		return fmt.Sprintf("%s v%d", e.Name, e.Version)
	}
	return e.Name
}

// SubmitRated queues a rated match of entries (by seat) that someone
// asked for rather than the matchmaker (a ranked challenge): the ladder
// records it with its note and settles it as its own. then, when set,
// runs once the match is recorded (the challenge links it).
func (l *Ladder) SubmitRated(ctx context.Context, req matches.Request, entries []int64, note string, then func(context.Context, store.Match) error) error {
	seq, err := l.deps.Store.NextLadderSeq(ctx, req.Game.Name())
	if err != nil {
		return err
	}
	seats := make([]store.LadderSeat, len(entries))
	for i, id := range entries {
		seats[i] = store.LadderSeat{Seat: i, EntryID: id}
	}
	l.mu.Lock()
	l.inFlight[req.MatchID] = req.Game.Name()
	l.mu.Unlock()
	err = l.deps.Queue.Submit(ctx, req, func(ctx context.Context, m store.Match) error {
		if err := l.deps.Store.InsertLadderMatch(ctx, m, store.LadderMatch{Seq: seq, Note: note, Seats: seats}); err != nil {
			return err
		}
		if then != nil {
			return then(ctx, m)
		}
		return nil
	})
	if err != nil {
		if serr := l.Settle(context.WithoutCancel(ctx), req.MatchID); serr != nil {
			l.log.Error("settle a refused ladder match", zap.String("match", req.MatchID), zap.Error(serr))
		}
		l.forget(req.MatchID)
		return err
	}
	l.touch()
	return nil
}
