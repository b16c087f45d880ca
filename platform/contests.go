package platform

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"arena/accounts"
	"arena/contest"
	"arena/internal/errs"
	"arena/store"
)

// The contests as people use them: staff make and change them and see
// the class and the grades; entrants enter a bot of theirs (or a team's),
// change or withdraw their entry and ask for its gates; anyone who may
// read matches reads the pages and standings. Package contest runs them;
// this says who may do what.

// viewerOf is who reads a contest's page: staff see every entry's
// details, an entrant their own.
func viewerOf(p accounts.Principal) contest.Viewer {
	return contest.Viewer{Staff: p.Admin(), Owners: p.Owners()}
}

// List is every contest.
func (cs *Contests) List(ctx context.Context) ([]contest.View, error) {
	return cs.p.contests.List(ctx)
}

// Page is a contest's page, as p may see it.
func (cs *Contests) Page(ctx context.Context, p accounts.Principal, id int64) (contest.View, error) {
	return cs.p.contests.Page(ctx, id, viewerOf(p))
}

// Create makes a contest (staff), and returns its page.
func (cs *Contests) Create(ctx context.Context, p accounts.Principal, spec contest.Spec) (contest.View, error) {
	if err := staff(p, "make a contest"); err != nil {
		return contest.View{}, err
	}
	ct, err := cs.p.contests.Create(ctx, spec, p.Name)
	if err != nil {
		return contest.View{}, err
	}
	return cs.Page(ctx, p, ct.ID)
}

// Update changes a contest's settings before its freeze (staff).
func (cs *Contests) Update(ctx context.Context, p accounts.Principal, id int64, patch json.RawMessage) error {
	if err := staff(p, "change a contest"); err != nil {
		return err
	}
	return cs.p.contests.Update(ctx, id, patch, p.Name)
}

// Rerun plays the final's games of two entries again (staff), and says
// how many.
func (cs *Contests) Rerun(ctx context.Context, p accounts.Principal, id int64, entries []int64) (int, error) {
	if err := staff(p, "play a contest's games again"); err != nil {
		return 0, err
	}
	if len(entries) != 2 || entries[0] == entries[1] {
		return 0, errs.New(errs.ErrInvalid, `entries: name the two entries whose games are played again, {"entries": [A, B]}`)
	}
	return cs.p.contests.Rerun(ctx, id, entries[0], entries[1], p.Name)
}

// Clone makes a new contest with another's settings (staff), and
// returns its page.
func (cs *Contests) Clone(ctx context.Context, p accounts.Principal, id int64, name string, freezeAt time.Time) (contest.View, error) {
	if err := staff(p, "make a contest"); err != nil {
		return contest.View{}, err
	}
	ct, err := cs.p.contests.Clone(ctx, id, name, freezeAt, p.Name)
	if err != nil {
		return contest.View{}, err
	}
	return cs.Page(ctx, p, ct.ID)
}

// ContestEntryRequest is an entry: a bot pushed to this server
// (NAME/bot or NAME/bot:tag, the entry its namespace's user's or team's),
// or (staff) an image of the engine, for a team of theirs or their own;
// with the contest's invitation code when it takes entries by one.
type ContestEntryRequest struct {
	Bot    string `json:"bot"`
	Image  string `json:"image"`
	Team   string `json:"team,omitempty"`
	Invite string `json:"invite,omitempty"`
}

// Enter enters p's bot (or a team's) in an open contest.
func (cs *Contests) Enter(ctx context.Context, p accounts.Principal, id int64, r ContestEntryRequest) (store.ContestEntry, error) {
	if err := signedIn(p, "enter a contest"); err != nil {
		return store.ContestEntry{}, err
	}
	owner, err := ownerFor(p, r.Team)
	if err != nil {
		return store.ContestEntry{}, err
	}
	e := contest.Entry{Owner: owner, By: p.Name, Invite: strings.TrimSpace(r.Invite)}
	switch bot, img := strings.TrimSpace(r.Bot), strings.TrimSpace(r.Image); {
	case bot != "" && img != "":
		return store.ContestEntry{}, errs.New(errs.ErrInvalid, `send either "bot" or "image", not both`)
	case bot != "":
		repo, tag, ns, err := pushedBotName(bot)
		if err != nil {
			return store.ContestEntry{}, err
		}
		// The entry is the bot's owner's: its namespace's user or team.
		if err := p.MayChange("bot "+repo, ns); err != nil {
			return store.ContestEntry{}, err
		}
		if r.Team != "" && r.Team != ns {
			return store.ContestEntry{}, errs.Errorf(errs.ErrInvalid, "team: %s is %s's bot, not team %s's", repo, ns, r.Team)
		}
		e.Repository, e.Tag, e.Owner = repo, tag, ns
	case img != "":
		if !p.Admin() {
			return store.ContestEntry{}, errs.New(errs.ErrDenied, `image: only staff enter an image of the engine; push your bot and enter it as {"bot": "NAME/bot"}`)
		}
		e.Image = img
	default:
		return store.ContestEntry{}, errs.New(errs.ErrInvalid, `send {"bot": "NAME/bot[:tag]"}, a bot pushed to this server`)
	}
	return cs.p.contests.Enter(ctx, id, e)
}

// pushedBotName reads NAME/bot or NAME/bot:tag, a bot pushed to this
// server: its repository, its tag (empty: the newest) and its namespace.
func pushedBotName(bot string) (repo, tag, ns string, err error) {
	repo, tag, _ = strings.Cut(bot, ":")
	if strings.Contains(repo, "@") || strings.Count(repo, "/") != 1 {
		return "", "", "", errs.Errorf(errs.ErrInvalid, "bot: %q: a bot pushed to this server, NAME/bot or NAME/bot:tag", bot)
	}
	ns, _, _ = strings.Cut(repo, "/")
	return repo, tag, ns, nil
}

// ContestEntryChange is a change of an entry: its owner's new version
// (a tag) or withdrawal, or staff's disqualification (why).
type ContestEntryChange struct {
	Version    *string `json:"version"`
	Withdraw   bool    `json:"withdraw"`
	Disqualify *string `json:"disqualify"`
}

// ChangeEntry changes an entry, for its owner (a member of its team) or
// staff; a disqualification is staff's alone.
func (cs *Contests) ChangeEntry(ctx context.Context, p accounts.Principal, id, eid int64, ch ContestEntryChange) (store.ContestEntry, error) {
	entry, err := cs.p.contests.Entry(ctx, id, eid)
	if err != nil {
		return store.ContestEntry{}, err
	}
	if ch.Disqualify != nil {
		if err := staff(p, "disqualify an entry"); err != nil {
			return store.ContestEntry{}, err
		}
	}
	if err := p.MayChange(fmt.Sprintf("entry %d", eid), entry.Owner); err != nil {
		return store.ContestEntry{}, err
	}
	return cs.p.contests.ChangeEntry(ctx, id, eid, contest.Change{Version: ch.Version, Withdraw: ch.Withdraw, Disqualify: ch.Disqualify, By: p.Name})
}

// Standings are a contest's standings (final once it is done).
func (cs *Contests) Standings(ctx context.Context, id int64) (contest.Board, error) {
	return cs.p.contests.Standings(ctx, id)
}

// Class is a contest's class (staff): one row per user or team who may
// enter, entered or not, filtered (not-entered, no-ready; "": all).
func (cs *Contests) Class(ctx context.Context, p accounts.Principal, id int64, filter string) ([]contest.ClassRow, error) {
	if err := staff(p, "see a contest's class"); err != nil {
		return nil, err
	}
	return cs.p.contests.Class(ctx, id, filter)
}

// Grades are a contest's grades (staff): a row per user who may enter,
// and the gates' names.
func (cs *Contests) Grades(ctx context.Context, p accounts.Principal, id int64) ([]contest.GradeRow, []string, error) {
	if err := staff(p, "see a contest's grades"); err != nil {
		return nil, nil, err
	}
	return cs.p.contests.Grades(ctx, id)
}

// RequestGates plays the contest's gates on the newest ready version of
// p's entry (theirs or a team's), at most every ten minutes.
func (cs *Contests) RequestGates(ctx context.Context, p accounts.Principal, id int64) (store.ContestEntry, error) {
	if err := signedIn(p, "run your entry's gates"); err != nil {
		return store.ContestEntry{}, err
	}
	return cs.p.contests.RequestGates(ctx, id, p.Owners())
}
