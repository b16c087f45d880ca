package contest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"go.uber.org/zap"

	"arena/engine"
	"arena/internal/errs"
	"arena/matches"
	"arena/store"
)

// Gates: bars a version must clear, for a course's grades ("beats the
// hunter in 8 of 10 games"). A gate is Games games against a reference bot
// (Against: an image on the server's engine, or a pushed bot), on Maps
// (none: the contest's), the seats swapped every other game, seeds derived
// from the contest's (published once it is done); it is passed with Wins
// of them won. Gates are played for each final version after the final,
// through the queue as the final is; before the deadline an entrant may
// ask for them on their newest ready version (RequestGates, at most every
// GateRequestEvery), to know where they stand.

// Gate is one gate of a contest.
type Gate struct {
	Name    string   `json:"name"`
	Against string   `json:"against"`
	Maps    []string `json:"maps,omitempty"`
	Games   int      `json:"games"`
	Wins    int      `json:"wins"`
}

// MaxGates bounds a contest's gates, MaxGateGames a gate's games.
const (
	MaxGates     = 8
	MaxGateGames = 100
)

// GateRequestEvery is how often an entrant may ask for their gates.
const GateRequestEvery = 10 * time.Minute

// checkGates checks a contest's gates against its game and maps.
func checkGates(s *Spec, g engine.Game) error {
	if len(s.Gates) > MaxGates {
		return invalid("gates: at most %d", MaxGates)
	}
	names := map[string]bool{}
	for i := range s.Gates {
		gt := &s.Gates[i]
		gt.Name, gt.Against = strings.TrimSpace(gt.Name), strings.TrimSpace(gt.Against)
		if gt.Name == "" || len(gt.Name) > 40 || strings.ContainsAny(gt.Name, ",\"\n") {
			return invalid("gates[%d]: name: 1 to 40 characters, no comma or quote", i)
		}
		if names[gt.Name] {
			return invalid("gates[%d]: the name %q is given twice", i, gt.Name)
		}
		names[gt.Name] = true
		if gt.Against == "" {
			return invalid("gates[%d] (%s): against: the reference bot's image is needed, e.g. arena/tanks-hunter", i, gt.Name)
		}
		if len(gt.Maps) == 0 {
			gt.Maps = slices.Clone(s.Maps)
		}
		for _, m := range gt.Maps {
			if _, err := g.Map(m); err != nil {
				return invalid("gates[%d] (%s): maps: %v", i, gt.Name, err)
			}
		}
		if gt.Games < 2 || gt.Games%2 != 0 || gt.Games > MaxGateGames {
			return invalid("gates[%d] (%s): games: %d: an even number from 2 to %d (each seat order plays half)", i, gt.Name, gt.Games, MaxGateGames)
		}
		if gt.Wins < 1 || gt.Wins > gt.Games {
			return invalid("gates[%d] (%s): wins: %d: from 1 to its %d games", i, gt.Name, gt.Wins, gt.Games)
		}
	}
	return nil
}

// gateGames are the games of a contest's gates for one entry's version.
func gateGames(ct store.Contest, s Spec, entry int64, kind, ref, version string, at time.Time) []store.GateGame {
	var out []store.GateGame
	for gi, gt := range s.Gates {
		for i := range gt.Games {
			m := gt.Maps[(i/2)%len(gt.Maps)]
			out = append(out, store.GateGame{ContestID: ct.ID, Entry: entry, Kind: kind, Gate: gi, Idx: i, Ref: ref, Version: version,
				Map: m, Seed: SeedOf(uint64(s.Seed), "gate/"+gt.Name+"/"+m, i/2), Seat: i % 2, MadeAt: at})
		}
	}
	return out
}

// GateResult is how an entry's version stands at a gate: its games won
// of those played, and, once every game is over, whether it passed.
type GateResult struct {
	Entry  int64  `json:"entry"`
	Kind   string `json:"kind"`
	Gate   string `json:"gate"`
	Games  int    `json:"games"`
	Played int    `json:"played"`
	Won    int    `json:"won"`
	Wins   int    `json:"wins"`
	// Passed is set once every game is over (a void game is not won).
	Passed *bool `json:"passed,omitempty"`
	// Version is the image id the games played.
	Version string `json:"version"`
	// Matches are the games' matches, to watch.
	Matches []string `json:"matches"`
}

// gateResults tallies gate games by entry, kind and gate.
func gateResults(s Spec, games []store.GateGame) []GateResult {
	type key struct {
		entry int64
		kind  string
		gate  int
	}
	byKey := map[key]*GateResult{}
	var order []key
	for _, g := range games {
		if g.Gate >= len(s.Gates) {
			continue
		}
		k := key{g.Entry, g.Kind, g.Gate}
		r := byKey[k]
		if r == nil {
			gt := s.Gates[g.Gate]
			r = &GateResult{Entry: g.Entry, Kind: g.Kind, Gate: gt.Name, Games: gt.Games, Wins: gt.Wins, Version: g.Version, Matches: []string{}}
			byKey[k] = r
			order = append(order, k)
		}
		if g.MatchID != "" {
			r.Matches = append(r.Matches, g.MatchID)
		}
		switch g.State {
		case store.GameScored:
			r.Played++
			if res, err := DecodeOutcome(g.Outcome); err == nil {
				mine := res.First
				if g.Seat == 1 {
					mine = res.Second
				}
				if mine == 1 {
					r.Won++
				}
			}
		case store.GameVoid:
			r.Played++
		}
	}
	out := make([]GateResult, 0, len(order))
	for _, k := range order {
		r := byKey[k]
		if r.Played == r.Games {
			passed := r.Won >= r.Wins
			r.Passed = &passed
		}
		out = append(out, *r)
	}
	return out
}

// gates makes the gate games of a done contest's final versions (once)
// and plays them, and plays the games entrants asked for.
func (c *Contests) gates(ctx context.Context, ct store.Contest) error {
	s, err := spec(ct)
	if err != nil || len(s.Gates) == 0 {
		return err
	}
	games, err := c.deps.Store.GateGames(ctx, ct.ID)
	if err != nil {
		return err
	}
	if ct.State == store.ContestDone && !slices.ContainsFunc(games, func(g store.GateGame) bool { return g.Kind == store.GateFinal }) {
		if games, err = c.makeFinalGates(ctx, ct, s); err != nil {
			return err
		}
	}
	return c.playGates(ctx, ct, s, games)
}

// makeFinalGates makes the gate games of every final version (those that
// played the final and were not disqualified).
func (c *Contests) makeFinalGates(ctx context.Context, ct store.Contest, s Spec) ([]store.GateGame, error) {
	entries, err := c.deps.Store.ContestEntries(ctx, ct.ID)
	if err != nil {
		return nil, err
	}
	var made []store.GateGame
	for _, e := range entries {
		if e.FinalID == "" || e.State != store.EntryEntered {
			continue
		}
		made = append(made, gateGames(ct, s, e.ID, store.GateFinal, e.FinalRef, e.FinalID, c.deps.Now())...)
	}
	if len(made) == 0 {
		return nil, nil
	}
	if err := c.deps.Store.AddGateGames(ctx, made); err != nil {
		return nil, err
	}
	c.log.Info("contest gates made", zap.Int64("contest", ct.ID), zap.Int("games", len(made)))
	return c.deps.Store.GateGames(ctx, ct.ID)
}

// playGates settles the gate games whose match is over and queues the
// next, at most InFlight at once.
func (c *Contests) playGates(ctx context.Context, ct store.Contest, s Spec, games []store.GateGame) error {
	g, err := c.deps.Games.Find(s.Game)
	if err != nil {
		return err
	}
	busy := 0
	for i := range games {
		gm := &games[i]
		if gm.State != store.GamePending || gm.MatchID == "" {
			continue
		}
		state, outcome, note, over, err := c.settle(ctx, gm.MatchID, gm.Tries)
		if err != nil {
			return err
		}
		if !over {
			busy++
			continue
		}
		if err := c.deps.Store.SettleGateGame(ctx, *gm, gm.MatchID, state, outcome, note); err != nil {
			return err
		}
		gm.State = state
		if state == store.GamePending {
			gm.MatchID = ""
		}
	}
	refs := map[string]string{}
	for _, gm := range games {
		if busy >= c.cfg.InFlight {
			break
		}
		if gm.State != store.GamePending || gm.MatchID != "" {
			continue
		}
		gt := s.Gates[gm.Gate]
		refID, ok := refs[gt.Against]
		if !ok {
			if refID, err = c.deps.Image(ctx, gt.Against); err != nil {
				return fmt.Errorf("gate %s: its reference bot %s: %w", gt.Name, gt.Against, err)
			}
			refs[gt.Against] = refID
		}
		m, err := g.Map(gm.Map)
		if err != nil {
			return err
		}
		images, ids := []string{gm.Ref, gt.Against}, []string{gm.Version, refID}
		if gm.Seat == 1 {
			images, ids = []string{gt.Against, gm.Ref}, []string{refID, gm.Version}
		}
		req := matches.Request{Game: g, Map: m, Seed: gm.Seed, Limits: s.Limits(), MatchID: matches.NewMatchID(), Priority: matches.Background, Kind: matches.KindGate, Images: images, ImageIDs: ids}
		err = c.deps.Queue.Submit(ctx, req, func(ctx context.Context, m store.Match) error {
			return c.deps.Store.InsertGateMatch(ctx, m, gm)
		})
		if errors.Is(err, store.ErrGameTaken) {
			continue
		}
		if err != nil {
			c.log.Warn("queue a gate game", zap.Int64("contest", ct.ID), zap.Int64("entry", gm.Entry), zap.String("gate", gt.Name), zap.Error(err))
			return err
		}
		busy++
	}
	return nil
}

// RequestGates plays the contest's gates for the newest ready version of
// an entry of owners' (before the deadline): a new request replaces the
// last, at most every GateRequestEvery, never while the last plays.
func (c *Contests) RequestGates(ctx context.Context, id int64, owners []string) (store.ContestEntry, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ct, err := c.deps.Store.Contest(ctx, id)
	if err != nil {
		return store.ContestEntry{}, err
	}
	s, err := spec(ct)
	if err != nil {
		return store.ContestEntry{}, err
	}
	if len(s.Gates) == 0 {
		return store.ContestEntry{}, invalid("contest %q has no gates", ct.Name)
	}
	if ct.State != store.ContestOpen || !c.deps.Now().Before(ct.FreezeAt) {
		return store.ContestEntry{}, errs.Errorf(errs.ErrConflict, "contest %q is past its deadline: its gates are played for the final versions", ct.Name)
	}
	entries, err := c.deps.Store.ContestEntries(ctx, id)
	if err != nil {
		return store.ContestEntry{}, err
	}
	i := slices.IndexFunc(entries, func(e store.ContestEntry) bool {
		return e.State == store.EntryEntered && slices.Contains(owners, e.Owner)
	})
	if i < 0 {
		return store.ContestEntry{}, errs.Errorf(errs.ErrNotFound, "you have no entry in contest %q", ct.Name)
	}
	e := entries[i]
	games, err := c.deps.Store.GateGames(ctx, id)
	if err != nil {
		return store.ContestEntry{}, err
	}
	for _, g := range games {
		if g.Entry == e.ID && g.Kind == store.GateRequest && c.deps.Now().Sub(g.MadeAt) < GateRequestEvery {
			wait := GateRequestEvery - c.deps.Now().Sub(g.MadeAt)
			return store.ContestEntry{}, errs.TooMany(fmt.Errorf("your gates were asked for %s ago: ask again in %s", c.deps.Now().Sub(g.MadeAt).Round(time.Second), wait.Round(time.Second)), wait)
		}
	}
	ref, version, ok := c.practiceVersion(ctx, e)
	if !ok {
		return store.ContestEntry{}, errs.Errorf(errs.ErrConflict, "entry %d has no ready version yet: push one, and ask once My bots says ready", e.ID)
	}
	if err := c.deps.Store.RequestGates(ctx, id, e.ID, gateGames(ct, s, e.ID, store.GateRequest, ref, version, c.deps.Now())); err != nil {
		return store.ContestEntry{}, err
	}
	c.log.Info("contest gates asked for", zap.Int64("contest", id), zap.Int64("entry", e.ID), zap.String("version", ref))
	c.wake()
	return e, nil
}

// Gates are a contest's gate results: each entry's, for its final
// version and its last request.
func (c *Contests) Gates(ctx context.Context, id int64) ([]GateResult, error) {
	ct, err := c.deps.Store.Contest(ctx, id)
	if err != nil {
		return nil, err
	}
	s, err := spec(ct)
	if err != nil {
		return nil, err
	}
	games, err := c.deps.Store.GateGames(ctx, id)
	if err != nil {
		return nil, err
	}
	return gateResults(s, games), nil
}
