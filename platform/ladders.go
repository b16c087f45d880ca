package platform

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"arena/accounts"
	"arena/internal/errs"
	"arena/ladder"
	"arena/store"
)

// The ladders as people use them: the boards (with each upcoming match's
// place in the queue), registering a bot as oneself or a team, an
// entry's page, and its owner's changes. Package ladder plays and rates;
// this says who may do what.

// Summaries are every game's ladder in brief.
func (ls *Ladders) Summaries(ctx context.Context) ([]ladder.Summary, error) {
	return ls.p.ladder.Summaries(ctx)
}

// Board is a game's leaderboard, with each waiting or playing match's
// place in the queue.
func (ls *Ladders) Board(ctx context.Context, game string) (ladder.Board, error) {
	b, err := ls.p.ladder.Leaderboard(ctx, game)
	if err != nil {
		return ladder.Board{}, err
	}
	for i, u := range b.Upcoming {
		if st, pos, ok := ls.p.queue.Status(u.MatchID); ok {
			b.Upcoming[i].Status, b.Upcoming[i].Position = string(st), pos
		}
	}
	return b, nil
}

// Changed is closed at the ladders' next change.
func (ls *Ladders) Changed() <-chan struct{} { return ls.p.ladder.Changed() }

// EntryRequest is a bot put on a game's ladder: its name there, its
// image, and the team it is for (empty: the user's own).
type EntryRequest struct {
	Name  string `json:"name"`
	Image string `json:"image"`
	Team  string `json:"team,omitempty"`
}

// Register puts p's bot on a game's ladder (or a team's of p's), and
// returns its page; created is false when it was registered already. An
// admin's entries are not bounded per owner.
func (ls *Ladders) Register(ctx context.Context, p accounts.Principal, game string, r EntryRequest) (ladder.Page, bool, error) {
	s := ls.p
	img := strings.TrimSpace(r.Image)
	if img == "" {
		return ladder.Page{}, false, errs.New(errs.ErrInvalid, "image: empty image name")
	}
	if err := s.mayPlayAll(p, "image", img); err != nil {
		return ladder.Page{}, false, err
	}
	owner, err := ownerFor(p, r.Team)
	if err != nil {
		return ladder.Page{}, false, err
	}
	e, created, err := s.ladder.Register(ctx, ladder.Registration{Game: game, Name: r.Name, Image: img, Owner: owner, By: p.Name, Unbounded: p.Admin()})
	if err != nil {
		return ladder.Page{}, false, err
	}
	page, err := s.ladder.EntryPage(ctx, e.Game, e.ID, 20)
	return page, created, err
}

// ownerFor is whose a thing p makes is: p's own, or the team's (p must
// be a member).
func ownerFor(p accounts.Principal, team string) (string, error) {
	if team == "" {
		return p.Name, nil
	}
	if !slices.Contains(p.Teams, team) {
		return "", errs.Errorf(errs.ErrDenied, "team: you are not a member of team %s", team)
	}
	return team, nil
}

// Entry is an entry's page, with its last recent matches (1 to 500).
func (ls *Ladders) Entry(ctx context.Context, game string, id int64, recent int) (ladder.Page, error) {
	if recent < 1 || recent > 500 {
		return ladder.Page{}, errs.New(errs.ErrInvalid, "matches must be a number from 1 to 500")
	}
	page, err := ls.p.ladder.EntryPage(ctx, game, id, recent)
	return page, entryErr(game, id, err)
}

// entryErr names the entry an error is about.
func entryErr(game string, id int64, err error) error {
	if errors.Is(err, store.ErrNoEntry) {
		return errs.Errorf(errs.ErrNotFound, "no entry %d on the %s ladder", id, game)
	}
	return err
}

// EntryChange is a change of an entry: paused (Active false) or let play,
// renamed.
type EntryChange struct {
	Active *bool   `json:"active"`
	Name   *string `json:"name"`
}

// mayChangeEntry checks that p may change an entry: its owner, a member
// of its team, or an admin.
func (s *Platform) mayChangeEntry(ctx context.Context, p accounts.Principal, game string, id int64) error {
	e, err := s.ladder.Entry(ctx, game, id)
	if err != nil {
		return entryErr(game, id, err)
	}
	return p.MayChange(fmt.Sprintf("entry %d (%s)", e.ID, e.Name), e.Owner)
}

// Change changes an entry of p's (or any, for an admin), and returns its
// page.
func (ls *Ladders) Change(ctx context.Context, p accounts.Principal, game string, id int64, ch EntryChange) (ladder.Page, error) {
	s := ls.p
	if ch.Active == nil && ch.Name == nil {
		return ladder.Page{}, errs.New(errs.ErrInvalid, `send {"active": false} to pause the entry, true to let it play, or {"name": "…"} to rename it`)
	}
	if err := s.mayChangeEntry(ctx, p, game, id); err != nil {
		return ladder.Page{}, err
	}
	if ch.Name != nil {
		if _, err := s.ladder.Rename(ctx, game, id, *ch.Name); err != nil {
			return ladder.Page{}, entryErr(game, id, err)
		}
	}
	if ch.Active != nil {
		if _, err := s.ladder.SetActive(ctx, game, id, *ch.Active); err != nil {
			return ladder.Page{}, entryErr(game, id, err)
		}
	}
	return s.ladder.EntryPage(ctx, game, id, 20)
}

// Remove takes an entry of p's (or any, for an admin) off its ladder;
// its matches stay.
func (ls *Ladders) Remove(ctx context.Context, p accounts.Principal, game string, id int64) (store.Entry, error) {
	s := ls.p
	if err := s.mayChangeEntry(ctx, p, game, id); err != nil {
		return store.Entry{}, err
	}
	e, err := s.ladder.Remove(ctx, game, id)
	return e, entryErr(game, id, err)
}
