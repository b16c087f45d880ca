package contest

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"go.uber.org/zap"

	"arena/ladder"
	"arena/ladder/skill"
	"arena/matches"
	"arena/store"
)

// The practice ladder: while a contest is open, its entries play each
// other continuously (the pair that met least often first, a map of the
// contest at random, a fresh seed), each with its current version (the
// chosen one, else its newest ready one), under the contest's limits.
// Its board rates them with the ladders' model (Weng–Lin), recomputed
// from the scored practice games in order. It stops at the freeze; its
// last board stays beside the final's standings.

// practiceVersion is what an entry plays in practice now: its image
// reference and id, read from the store (the queue fetches a pushed bot
// when its match is submitted); ok is false when it has nothing ready.
func (c *Contests) practiceVersion(ctx context.Context, e store.ContestEntry) (ref, id string, ok bool) {
	if e.Bot == "" {
		return e.FinalRef, e.FinalID, e.FinalID != ""
	}
	tags, err := c.versions(ctx, e.Bot, c.deps.Now())
	if err != nil || len(tags) == 0 {
		return "", "", false
	}
	pick := tags[0]
	for _, t := range tags {
		if t.Tag == e.Version {
			pick = t
		}
	}
	return pick.Repository + ":" + pick.Tag, pick.ImageID, true
}

// settlePractice records which of games, practice games, are over; it
// returns how many still play.
func (c *Contests) settlePractice(ctx context.Context, games []store.PracticeGame) (int, error) {
	busy := 0
	for _, p := range games {
		if p.State != store.GamePending {
			continue
		}
		state, outcome, over, err := c.judge(ctx, p.MatchID)
		if err != nil {
			return 0, err
		}
		if !over {
			busy++
			continue
		}
		if state == store.GamePending {
			state = store.GameVoid // practice is not played again
		}
		if err := c.deps.Store.SettlePracticeGame(ctx, p.MatchID, state, outcome); err != nil {
			return 0, err
		}
	}
	return busy, nil
}

// practice settles an open contest's practice matches that are over and
// starts the next one when none is playing.
func (c *Contests) practice(ctx context.Context, ct store.Contest) error {
	if c.cfg.NoPractice {
		return nil
	}
	s, err := spec(ct)
	if err != nil {
		return err
	}
	games, err := c.deps.Store.PracticeGames(ctx, ct.ID)
	if err != nil {
		return err
	}
	busy, err := c.settlePractice(ctx, games)
	if err != nil {
		return err
	}
	met := map[[2]int64]int{}
	for _, p := range games {
		met[pairOf(p.First, p.Second)]++
	}
	if busy >= c.cfg.PracticeInFlight {
		return nil
	}
	entries, err := c.deps.Store.ContestEntries(ctx, ct.ID)
	if err != nil {
		return err
	}
	type player struct {
		e       store.ContestEntry
		ref, id string
	}
	var ready []player
	for _, e := range entries {
		if e.State != store.EntryEntered {
			continue
		}
		if ref, id, ok := c.practiceVersion(ctx, e); ok {
			ready = append(ready, player{e, ref, id})
		}
	}
	if len(ready) < 2 {
		return nil
	}
	// The pair that met least often, the earliest entries first.
	var a, b player
	least := -1
	for i := range ready {
		for j := i + 1; j < len(ready); j++ {
			if n := met[pairOf(ready[i].e.ID, ready[j].e.ID)]; least < 0 || n < least {
				least, a, b = n, ready[i], ready[j]
			}
		}
	}
	var rnd [16]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return err
	}
	if rnd[8]&1 == 1 {
		a, b = b, a // seats at random
	}
	g, err := c.deps.Games.Find(s.Game)
	if err != nil {
		return err
	}
	m, err := g.Map(s.Maps[int(binary.BigEndian.Uint32(rnd[12:]))%len(s.Maps)])
	if err != nil {
		return err
	}
	req := matches.Request{
		Game: g, Map: m, Seed: binary.BigEndian.Uint64(rnd[:8]) >> 11, Limits: s.Limits(), MatchID: matches.NewMatchID(), Priority: matches.Background, Kind: matches.KindPractice,
		Images: []string{a.ref, b.ref}, ImageIDs: []string{a.id, b.id},
	}
	err = c.deps.Queue.Submit(ctx, req, func(ctx context.Context, rec store.Match) error {
		return c.deps.Store.InsertPracticeMatch(ctx, rec, store.PracticeGame{ContestID: ct.ID, First: a.e.ID, Second: b.e.ID})
	})
	if errors.Is(err, store.ErrContestClosed) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("queue a practice match: %w", err)
	}
	c.log.Debug("practice match queued", zap.Int64("contest", ct.ID), zap.String("match", req.MatchID))
	return nil
}

func pairOf(a, b int64) [2]int64 {
	if a > b {
		a, b = b, a
	}
	return [2]int64{a, b}
}

// judge is how a contest's match counts (see judgeGame), once it is over
// (over false: it is not).
func (c *Contests) judge(ctx context.Context, matchID string) (state, outcome string, over bool, err error) {
	m, err := c.deps.Store.Get(ctx, matchID)
	if err != nil || !matches.State(m.Status).Final() {
		return "", "", false, err
	}
	state, outcome = judgeGame(m)
	return state, outcome, true, nil
}

// judgeGame is how a two-seat match that is over counts: scored with its
// outcome, or pending (void: the platform could not play it; the outcome
// says why).
func judgeGame(m store.Match) (state, outcome string) {
	var res *matches.Result
	if len(m.Result) > 0 {
		res = new(matches.Result)
		if json.Unmarshal(m.Result, res) != nil {
			res = nil
		}
	}
	v := ladder.Judge(m.Status, m.Error, res, 2)
	if v.Void != "" {
		return store.GamePending, v.Void
	}
	r := Result{FirstStatus: v.Statuses[0], SecondStatus: v.Statuses[1]}
	switch {
	case v.Places[0] < v.Places[1]:
		r.First = 1
	case v.Places[0] > v.Places[1]:
		r.Second = 1
	default:
		r.First, r.Second = 0.5, 0.5
	}
	return store.GameScored, EncodeOutcome(r)
}

// PracticeRow is an entry on the practice board.
type PracticeRow struct {
	Rank   int     `json:"rank"`
	Entry  int64   `json:"entry"`
	Name   string  `json:"name"`
	Owner  string  `json:"owner"`
	Rating float64 `json:"rating"` // μ − 3σ
	Mu     float64 `json:"mu"`
	Sigma  float64 `json:"sigma"`
	Played int     `json:"played"`
	Wins   int     `json:"wins"`
	Draws  int     `json:"draws"`
	Losses int     `json:"losses"`
	Faults int     `json:"faults"`
}

// PracticeMatch is a practice game as the page lists it.
type PracticeMatch struct {
	MatchID string `json:"match_id"`
	First   int64  `json:"first"`
	Second  int64  `json:"second"`
	State   string `json:"state"`
	Outcome string `json:"outcome,omitempty"`
}

// PracticeBoard rates the entries from the scored practice games, in the
// order they were made (pure).
func PracticeBoard(model skill.Model, entrants []Entrant, games []store.PracticeGame) []PracticeRow {
	idx := map[int64]int{}
	rows := make([]PracticeRow, len(entrants))
	ratings := make([]skill.Rating, len(entrants))
	for i, e := range entrants {
		idx[e.ID] = i
		rows[i] = PracticeRow{Entry: e.ID, Name: e.Name, Owner: e.Owner}
		ratings[i] = model.New()
	}
	tally := func(i int, pts float64, status string) {
		rows[i].Played++
		switch pts {
		case 1:
			rows[i].Wins++
		case 0.5:
			rows[i].Draws++
		default:
			rows[i].Losses++
		}
		if status != "ok" {
			rows[i].Faults++
		}
	}
	for _, g := range games {
		a, okA := idx[g.First]
		b, okB := idx[g.Second]
		if g.State != store.GameScored || !okA || !okB {
			continue
		}
		r, err := DecodeOutcome(g.Outcome)
		if err != nil {
			continue
		}
		places := []int{0, 0}
		if r.First > r.Second {
			places[1] = 1
		} else if r.Second > r.First {
			places[0] = 1
		}
		after, err := model.Rate([]skill.Rating{ratings[a], ratings[b]}, places)
		if err != nil {
			continue
		}
		ratings[a], ratings[b] = after[0], after[1]
		tally(a, r.First, r.FirstStatus)
		tally(b, r.Second, r.SecondStatus)
	}
	for i := range rows {
		rows[i].Mu, rows[i].Sigma, rows[i].Rating = ratings[i].Mu, ratings[i].Sigma, ratings[i].Ordinal()
	}
	slices.SortStableFunc(rows, func(x, y PracticeRow) int {
		return cmp.Or(cmp.Compare(y.Rating, x.Rating), cmp.Compare(x.Entry, y.Entry))
	})
	for i := range rows {
		rows[i].Rank = i + 1
	}
	return rows
}

// EntryVersion is the version an entry of a contest plays now: its final
// one once pinned, else the one its practice games play (ok false: it
// has none ready).
func (c *Contests) EntryVersion(ctx context.Context, e store.ContestEntry) (ref, id string, ok bool) {
	if e.FinalID != "" {
		return e.FinalRef, e.FinalID, true
	}
	return c.practiceVersion(ctx, e)
}
