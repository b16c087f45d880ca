package contest

import (
	"cmp"
	"context"
	"io"
	"slices"
	"strings"
	"time"

	"arena/internal/csvsafe"
	"arena/store"
)

// The class, as staff see it: one row per user or team who may enter
// (everyone signed up but admins, for entrants: everyone; the listed users
// and teams, and whoever entered, otherwise), entered or not, with the
// newest version of the bot that counts for them, its check, and its
// practice rating. Staff find there who has not entered, and who entered
// with nothing that can play.

// ClassRow is one user or team who may enter a contest.
type ClassRow struct {
	Name string `json:"name"`
	// Kind is "user" or "team".
	Kind  string   `json:"kind"`
	Email string   `json:"email,omitempty"`
	Teams []string `json:"teams,omitempty"`
	// Entry is the entry that counts for them (their own, else one of a
	// team of theirs), 0 when none.
	Entry      int64  `json:"entry,omitempty"`
	EntryOwner string `json:"entry_owner,omitempty"`
	Bot        string `json:"bot,omitempty"`
	// The entry's newest version: its tag and digest, its check
	// (pending, ready, rejected) and why, and when it was pushed; Ready
	// says whether any version of it can play (a ready one, pushed before
	// the deadline once the contest is frozen).
	Version  string     `json:"version,omitempty"`
	Digest   string     `json:"digest,omitempty"`
	Check    string     `json:"check,omitempty"`
	Reason   string     `json:"reason,omitempty"`
	PushedAt *time.Time `json:"pushed_at,omitempty"`
	Ready    bool       `json:"ready"`
	// Practice is the entry's place and rating (μ − 3σ) on the practice
	// board, when it played there.
	PracticeRank   int      `json:"practice_rank,omitempty"`
	PracticeRating *float64 `json:"practice_rating,omitempty"`
}

// Class filters.
const (
	ClassNotEntered = "not-entered" // no entry counts for them
	ClassNoReady    = "no-ready"    // entered, with no version that can play
)

// Class is a contest's class (see above), by name, keeping the rows
// filter names ("": all).
func (c *Contests) Class(ctx context.Context, id int64, filter string) ([]ClassRow, error) {
	switch filter {
	case "", ClassNotEntered, ClassNoReady:
	default:
		return nil, invalid("filter %q: %s or %s (or none)", filter, ClassNotEntered, ClassNoReady)
	}
	ct, err := c.deps.Store.Contest(ctx, id)
	if err != nil {
		return nil, err
	}
	s, err := spec(ct)
	if err != nil {
		return nil, err
	}
	users, err := c.deps.Store.Users(ctx)
	if err != nil {
		return nil, err
	}
	members, err := c.deps.Store.Memberships(ctx)
	if err != nil {
		return nil, err
	}
	entries, err := c.deps.Store.ContestEntries(ctx, id)
	if err != nil {
		return nil, err
	}
	email, role := map[string]string{}, map[string]string{}
	for _, u := range users {
		email[u.Name], role[u.Name] = u.Email, u.Role
	}
	teamsOf := map[string][]string{}
	for team, us := range members {
		for _, u := range us {
			teamsOf[u] = append(teamsOf[u], team)
		}
	}
	names := classNames(s, users, role, entries)
	entered := enteredBy(entries)
	practice, err := c.practiceRows(ctx, id, entries)
	if err != nil {
		return nil, err
	}
	var out []ClassRow
	for _, name := range names {
		row := ClassRow{Name: name, Kind: "user", Email: email[name], Teams: slices.Clone(teamsOf[name])}
		slices.Sort(row.Teams)
		if _, isUser := role[name]; !isUser {
			if _, isTeam := members[name]; isTeam {
				row.Kind = "team"
			}
		}
		if e, ok := countingEntry(entered, row); ok {
			row.Entry, row.EntryOwner, row.Bot = e.ID, e.Owner, e.Image
			if err := c.classVersion(ctx, ct, e, &row); err != nil {
				return nil, err
			}
			if p, ok := practice[e.ID]; ok {
				row.PracticeRank, row.PracticeRating = p.Rank, &p.Rating
			}
		}
		switch {
		case filter == ClassNotEntered && row.Entry != 0:
		case filter == ClassNoReady && (row.Entry == 0 || row.Ready):
		default:
			out = append(out, row)
		}
	}
	slices.SortFunc(out, func(a, b ClassRow) int { return cmp.Compare(a.Name, b.Name) })
	return out, nil
}

// classNames are who may enter: every user but admins, or those allowed
// and whoever entered (role: each user's role by name).
func classNames(s Spec, users []store.User, role map[string]string, entries []store.ContestEntry) []string {
	var names []string
	if s.Entrants == Everyone {
		for _, u := range users {
			if role[u.Name] != "admin" {
				names = append(names, u.Name)
			}
		}
		return names
	}
	names = append(names, s.Allowed...)
	for _, e := range entries {
		if !slices.Contains(names, e.Owner) {
			names = append(names, e.Owner)
		}
	}
	return names
}

// enteredBy is each owner's first entered entry.
func enteredBy(entries []store.ContestEntry) map[string]store.ContestEntry {
	entered := map[string]store.ContestEntry{}
	for _, e := range entries {
		if e.State == store.EntryEntered {
			if _, ok := entered[e.Owner]; !ok {
				entered[e.Owner] = e
			}
		}
	}
	return entered
}

// countingEntry is the entry that counts for a row's owner: its own, else
// one of its teams'.
func countingEntry(entered map[string]store.ContestEntry, row ClassRow) (store.ContestEntry, bool) {
	e, ok := entered[row.Name]
	for _, team := range row.Teams {
		if ok {
			break
		}
		e, ok = entered[team]
	}
	return e, ok
}

// classVersion fills a row with its entry's newest version and whether
// any can play. An entry of an engine image (staff's) is ready as it is.
func (c *Contests) classVersion(ctx context.Context, ct store.Contest, e store.ContestEntry, row *ClassRow) error {
	if e.Bot == "" {
		row.Version, row.Ready = e.Image, true
		return nil
	}
	tags, err := c.versions(ctx, e.Bot, time.Time{})
	if err != nil {
		return err
	}
	if len(tags) == 0 {
		return nil
	}
	newest := tags[0] // the store lists the newest first
	row.Version, row.Digest, row.Check, row.Reason = newest.Tag, newest.Digest, newest.State, newest.Reason
	at := newest.PushedAt
	row.PushedAt = &at
	playable, err := c.versions(ctx, e.Bot, c.deadline(ct))
	row.Ready = len(playable) > 0
	return err
}

// deadline is the time a version must be pushed before to play: the
// freeze, or now while the contest is open.
func (c *Contests) deadline(ct store.Contest) time.Time {
	if now := c.deps.Now(); now.Before(ct.FreezeAt) {
		return now
	}
	return ct.FreezeAt
}

// practiceRows are the practice board's rows by entry.
func (c *Contests) practiceRows(ctx context.Context, id int64, entries []store.ContestEntry) (map[int64]PracticeRow, error) {
	rows, _, err := c.practiceBoard(ctx, id, entries)
	out := map[int64]PracticeRow{}
	for _, r := range rows {
		out[r.Entry] = r
	}
	return out, err
}

// practiceBoard is a contest's practice board, of every entry that
// played practice, and its games.
func (c *Contests) practiceBoard(ctx context.Context, id int64, entries []store.ContestEntry) ([]PracticeRow, []store.PracticeGame, error) {
	games, err := c.deps.Store.PracticeGames(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	in := map[int64]bool{}
	for _, g := range games {
		in[g.First], in[g.Second] = true, true
	}
	var ents []Entrant
	for _, e := range entries {
		if in[e.ID] {
			ents = append(ents, Entrant{ID: e.ID, Name: e.Image, Owner: e.Owner})
		}
	}
	return PracticeBoard(c.cfg.Model, ents, games), games, nil
}

// WriteClassCSV writes a class as CSV, with a header.
func WriteClassCSV(w io.Writer, rows []ClassRow) error {
	cw := csvsafe.NewWriter(w)
	cw.Header("name", "kind", "email", "teams", "entry", "entry_owner", "bot", "version", "digest", "check", "reason", "pushed_at", "ready", "practice_rank", "practice_rating")
	for _, r := range rows {
		entry, pushed, rank, rating := csvsafe.None, csvsafe.None, csvsafe.None, csvsafe.None
		if r.Entry != 0 {
			entry = csvsafe.Int(r.Entry)
		}
		if r.PushedAt != nil {
			pushed = csvsafe.Time(r.PushedAt.UTC(), time.RFC3339)
		}
		if r.PracticeRating != nil {
			rank, rating = csvsafe.Int(r.PracticeRank), csvsafe.Float(*r.PracticeRating, 'f', 2)
		}
		cw.Write(csvsafe.Text(r.Name), csvsafe.Text(r.Kind), csvsafe.Text(r.Email), csvsafe.Text(strings.Join(r.Teams, " ")), entry,
			csvsafe.Text(r.EntryOwner), csvsafe.Text(r.Bot), csvsafe.Text(r.Version), csvsafe.Text(r.Digest), csvsafe.Text(r.Check),
			csvsafe.Text(r.Reason), pushed, csvsafe.Bool(r.Ready), rank, rating)
	}
	cw.Flush()
	return cw.Error()
}
