package contest

import (
	"context"
	"fmt"
	"io"
	"time"

	"arena/internal/csvsafe"
	"arena/store"
)

// View is a contest's page: its settings and limits, its phase and
// deadline, its entries, the final's progress and (for staff) its audit
// log. The seed is published once the contest is done.
type View struct {
	ID       int64     `json:"id"`
	Name     string    `json:"name"`
	Game     string    `json:"game"`
	Phase    string    `json:"phase"`
	FreezeAt time.Time `json:"freeze_at"`
	Now      time.Time `json:"now"`
	// Spec is the contest's settings: its invitation code for staff
	// only, its seed zeroed until it is done unless the viewer is staff.
	Spec    Spec        `json:"spec"`
	Entries []EntryView `json:"entries"`
	// Games and Played count the final's games and those over.
	Games  int `json:"games"`
	Played int `json:"played"`
	// Audit is the staff's actions, for staff only.
	Audit     []store.AuditRecord `json:"audit,omitempty"`
	CreatedBy string              `json:"created_by"`
}

// EntryView is an entry as its contest's page shows it. Authors (the
// image's org.opencontainers.image.authors label: the contact for the
// awards) is shown to staff only.
type EntryView struct {
	ID       int64    `json:"id"`
	Owner    string   `json:"owner"`
	Bot      string   `json:"bot"`
	Version  string   `json:"version,omitempty"`
	State    string   `json:"state"`
	Reason   string   `json:"reason,omitempty"`
	Final    string   `json:"final,omitempty"`
	Authors  string   `json:"authors,omitempty"`
	Versions []string `json:"versions,omitempty"`
	// Warning, for its owner and staff, says why nothing of the entry
	// can play yet (nothing pushed, every version rejected, still being
	// checked): before the deadline, when it can still be fixed.
	Warning string `json:"warning,omitempty"`
}

// Viewer is who looks: staff sees the audit log, the authors and the
// seed; an entrant sees the versions of their own entries.
type Viewer struct {
	Staff  bool
	Owners []string
}

func (v Viewer) owns(o string) bool {
	for _, x := range v.Owners {
		if x == o {
			return true
		}
	}
	return false
}

// Phase is a contest's phase now.
func Phase(ct store.Contest, now time.Time) string {
	switch ct.State {
	case store.ContestFinal:
		return PhaseFinal
	case store.ContestDone:
		return PhaseDone
	}
	if now.Before(ct.FreezeAt) {
		return PhasePractice
	}
	return PhaseFreeze
}

// List is every contest, newest first, as pages without entries.
func (c *Contests) List(ctx context.Context) ([]View, error) {
	all, err := c.deps.Store.Contests(ctx)
	if err != nil {
		return nil, err
	}
	out := []View{}
	for _, ct := range all {
		s, err := spec(ct)
		if err != nil {
			return nil, err
		}
		if ct.State != store.ContestDone {
			s.Seed = 0
		}
		s.Invite = ""
		out = append(out, View{ID: ct.ID, Name: ct.Name, Game: ct.Game, Phase: Phase(ct, c.deps.Now()), FreezeAt: ct.FreezeAt, Now: c.deps.Now(), Spec: s, Entries: []EntryView{}, CreatedBy: ct.CreatedBy})
	}
	return out, nil
}

// Page is a contest's page for a viewer.
func (c *Contests) Page(ctx context.Context, id int64, v Viewer) (View, error) {
	ct, err := c.deps.Store.Contest(ctx, id)
	if err != nil {
		return View{}, err
	}
	s, err := spec(ct)
	if err != nil {
		return View{}, err
	}
	if ct.State != store.ContestDone && !v.Staff {
		s.Seed = 0
	}
	if !v.Staff {
		s.Invite = ""
	}
	out := View{ID: ct.ID, Name: ct.Name, Game: ct.Game, Phase: Phase(ct, c.deps.Now()), FreezeAt: ct.FreezeAt, Now: c.deps.Now(), Spec: s, Entries: []EntryView{}, CreatedBy: ct.CreatedBy}
	entries, err := c.deps.Store.ContestEntries(ctx, id)
	if err != nil {
		return View{}, err
	}
	for _, e := range entries {
		ev := EntryView{ID: e.ID, Owner: e.Owner, Bot: e.Image, Version: e.Version, State: e.State, Reason: e.Reason, Final: e.FinalRef}
		if v.Staff {
			ev.Authors = e.Authors
		}
		if (v.Staff || v.owns(e.Owner)) && e.Bot != "" {
			tags, err := c.versions(ctx, e.Bot, time.Time{})
			if err != nil {
				return View{}, err
			}
			for _, t := range tags {
				ev.Versions = append(ev.Versions, fmt.Sprintf("%s (%s, pushed %s)", t.Tag, t.State, t.PushedAt.UTC().Format(time.RFC3339)))
			}
			if e.State == store.EntryEntered {
				ev.Warning = versionsWarning(e.Bot, tags)
			}
		}
		out.Entries = append(out.Entries, ev)
	}
	games, err := c.deps.Store.ContestGames(ctx, id)
	if err != nil {
		return View{}, err
	}
	out.Games = len(games)
	for _, g := range games {
		if g.State != store.GamePending {
			out.Played++
		}
	}
	if v.Staff {
		if out.Audit, err = c.deps.Store.AuditLog(ctx, id); err != nil {
			return View{}, err
		}
	}
	return out, nil
}

// Board is GET /api/contests/{id}/standings: the phase, whether the
// standings are final (the contest is done), the rows, the head-to-head
// matrix, and each scored game with its match (so anyone can watch or
// rerun it: the seed is in the match).
type Board struct {
	Contest int64  `json:"contest"`
	Phase   string `json:"phase"`
	Final   bool   `json:"final"`
	Standings
	Games []GameView `json:"games"`
	// Practice is the practice ladder's board (its last, once the
	// contest is frozen), PracticeMatches its latest matches, newest
	// first.
	Practice        []PracticeRow   `json:"practice"`
	PracticeMatches []PracticeMatch `json:"practice_matches"`
	// Gates are each entry's results at the contest's gates: for its
	// final version, and for the version its owner last asked for.
	Gates []GateResult `json:"gates"`
}

// GameView is a final's game.
type GameView struct {
	Idx int `json:"idx"`
	// Round is its Swiss round (0 in a round robin); Second is 0 for a
	// bye.
	Round   int    `json:"round"`
	First   int64  `json:"first"`
	Second  int64  `json:"second"`
	Map     string `json:"map"`
	Seed    uint64 `json:"seed,string"`
	MatchID string `json:"match_id,omitempty"`
	State   string `json:"state"`
	Outcome string `json:"outcome,omitempty"`
	Note    string `json:"note,omitempty"`
}

// Standings are a contest's standings: those of its final's scored games
// (none before the final).
func (c *Contests) Standings(ctx context.Context, id int64) (Board, error) {
	ct, err := c.deps.Store.Contest(ctx, id)
	if err != nil {
		return Board{}, err
	}
	s, err := spec(ct)
	if err != nil {
		return Board{}, err
	}
	entries, err := c.deps.Store.ContestEntries(ctx, id)
	if err != nil {
		return Board{}, err
	}
	games, err := c.deps.Store.ContestGames(ctx, id)
	if err != nil {
		return Board{}, err
	}
	inFinal := map[int64]bool{}
	for _, g := range games {
		inFinal[g.First] = true
		if g.Second != 0 {
			inFinal[g.Second] = true
		}
	}
	var ents []Entrant
	for _, e := range entries {
		if !inFinal[e.ID] {
			continue
		}
		name := e.FinalRef
		if name == "" {
			name = e.Image
		}
		ents = append(ents, Entrant{ID: e.ID, Name: name, Owner: e.Owner, Disqualified: e.State == store.EntryDisqualified})
	}
	var played []Played
	b := Board{Contest: id, Phase: Phase(ct, c.deps.Now()), Final: ct.State == store.ContestDone, Games: []GameView{}}
	for _, g := range games {
		b.Games = append(b.Games, GameView{Idx: g.Idx, Round: g.Round, First: g.First, Second: g.Second, Map: g.Map, Seed: g.Seed, MatchID: g.MatchID, State: g.State, Outcome: g.Outcome, Note: g.Note})
		if g.State != store.GameScored {
			continue
		}
		if g.Second == 0 && g.Outcome == OutcomeBye {
			played = append(played, Played{First: g.First, Bye: true})
			continue
		}
		r, err := DecodeOutcome(g.Outcome)
		if err != nil {
			return Board{}, fmt.Errorf("contest %d, game %d: %w", id, g.Idx, err)
		}
		played = append(played, Played{First: g.First, Second: g.Second, MatchID: g.MatchID, Result: r})
	}
	b.Standings = Compute(ents, played, s.TieBreak, c.cfg.Model)
	// The practice board: every entry that played practice.
	var practice []store.PracticeGame
	if b.Practice, practice, err = c.practiceBoard(ctx, id, entries); err != nil {
		return Board{}, err
	}
	gates, err := c.deps.Store.GateGames(ctx, id)
	if err != nil {
		return Board{}, err
	}
	b.Gates = gateResults(s, gates)
	b.PracticeMatches = []PracticeMatch{}
	for i := len(practice) - 1; i >= 0 && len(b.PracticeMatches) < 30; i-- {
		p := practice[i]
		b.PracticeMatches = append(b.PracticeMatches, PracticeMatch{MatchID: p.MatchID, First: p.First, Second: p.Second, State: p.State, Outcome: p.Outcome})
	}
	return b, nil
}

// WriteCSV writes the standings' rows as CSV, with a header.
func (b Board) WriteCSV(w io.Writer) error {
	cw := csvsafe.NewWriter(w)
	cw.Header("rank", "entry", "name", "owner", "points", "played", "wins", "draws", "losses", "faults", "interval_low", "interval_high", "disqualified", "byes")
	f := func(v float64) csvsafe.Cell { return csvsafe.Float(v, 'f', -1) }
	for _, r := range b.Rows {
		cw.Write(csvsafe.Int(r.Rank), csvsafe.Int(r.Entry), csvsafe.Text(r.Name), csvsafe.Text(r.Owner), f(r.Points), csvsafe.Int(r.Played),
			csvsafe.Int(r.Wins), csvsafe.Int(r.Draws), csvsafe.Int(r.Losses), csvsafe.Int(r.Faults), f(r.Interval[0]), f(r.Interval[1]), csvsafe.Bool(r.Disqualified), csvsafe.Int(r.Byes))
	}
	cw.Flush()
	return cw.Error()
}

// Rerun gives the games between two entries back to be played again (a
// staff action, audited): the final is open again until they are over.
func (c *Contests) Rerun(ctx context.Context, id, a, b int64, by string) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ct, err := c.deps.Store.Contest(ctx, id)
	if err != nil {
		return 0, err
	}
	if ct.State == store.ContestOpen {
		return 0, invalid("rerun: the final has not started")
	}
	games, err := c.deps.Store.ContestGames(ctx, id)
	if err != nil {
		return 0, err
	}
	var idxs []int
	for _, g := range games {
		if (g.First == a && g.Second == b || g.First == b && g.Second == a) && g.State != store.GamePending {
			idxs = append(idxs, g.Idx)
		}
	}
	if len(idxs) == 0 {
		return 0, invalid("rerun: entries %d and %d have no game over to play again", a, b)
	}
	if err := c.deps.Store.ReopenContestGames(ctx, id, idxs, c.deps.Now(), by, fmt.Sprintf("the %d games between entries %d and %d", len(idxs), a, b)); err != nil {
		return 0, err
	}
	c.wake()
	return len(idxs), nil
}

// Clone makes a new contest with another's settings, a new name and
// deadline, and a new seed.
func (c *Contests) Clone(ctx context.Context, id int64, name string, freezeAt time.Time, by string) (store.Contest, error) {
	ct, err := c.deps.Store.Contest(ctx, id)
	if err != nil {
		return store.Contest{}, err
	}
	s, err := spec(ct)
	if err != nil {
		return store.Contest{}, err
	}
	s.Name, s.FreezeAt, s.Seed, s.Invite = name, freezeAt, 0, ""
	out, err := c.Create(ctx, s, by)
	if err == nil {
		err = c.deps.Store.Audit(ctx, out.ID, c.deps.Now(), by, "clone", fmt.Sprintf("cloned from contest %d", id))
	}
	return out, err
}

// versionsWarning says why none of a bot's versions (newest first) can
// play, or "" when one is ready.
func versionsWarning(bot string, tags []store.Tag) string {
	if len(tags) == 0 {
		return fmt.Sprintf("nothing is pushed to %s yet: push a version before the deadline", bot)
	}
	rejected := 0
	for _, t := range tags {
		switch t.State {
		case store.TagReady:
			return ""
		case store.TagRejected:
			rejected++
		}
	}
	if rejected == len(tags) {
		return fmt.Sprintf("every version of %s was rejected by its check (the newest, %s: %s): push a fixed version before the deadline", bot, tags[0].Tag, tags[0].Reason)
	}
	return fmt.Sprintf("no version of %s is ready yet: its newest is still being checked", bot)
}

// Freeze is a contest of a game in its freeze or final, and the
// reference bots that may still be challenged in that game.
type Freeze struct {
	ID            int64
	Name          string
	ReferenceBots []string
}

// Freezes lists the contests of a game in their freeze or final: while
// one is, challenges in the game may name only its reference bots.
func (c *Contests) Freezes(ctx context.Context, game string) ([]Freeze, error) {
	all, err := c.deps.Store.Contests(ctx)
	if err != nil {
		return nil, err
	}
	var out []Freeze
	for _, ct := range all {
		if ct.Game != game {
			continue
		}
		if ph := Phase(ct, c.deps.Now()); ph != PhaseFreeze && ph != PhaseFinal {
			continue
		}
		s, err := spec(ct)
		if err != nil {
			return nil, err
		}
		out = append(out, Freeze{ID: ct.ID, Name: ct.Name, ReferenceBots: s.ReferenceBots})
	}
	return out, nil
}

// ReferenceBot is a contest's reference bot: an image the contest names,
// with the contest's name.
type ReferenceBot struct {
	Contest string
	Image   string
}

// ReferenceBots are the reference bots of a game's contests that are not
// over, as a draft's Run may play against them.
func (c *Contests) ReferenceBots(ctx context.Context, game string) ([]ReferenceBot, error) {
	all, err := c.deps.Store.Contests(ctx)
	if err != nil {
		return nil, err
	}
	var out []ReferenceBot
	for _, ct := range all {
		if ct.Game != game || ct.State == store.ContestDone {
			continue
		}
		s, err := spec(ct)
		if err != nil {
			return nil, err
		}
		for _, b := range s.ReferenceBots {
			out = append(out, ReferenceBot{Contest: ct.Name, Image: b})
		}
	}
	return out, nil
}
