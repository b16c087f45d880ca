package ladder

import (
	"cmp"
	"context"
	"encoding/json"
	"slices"
	"time"

	"arena/ladder/skill"
	"arena/matches"
	"arena/store"
)

// Summary is one game's ladder in the list of ladders.
type Summary struct {
	Game string `json:"game"`
	// Entries counts the listed entries, Active those that play.
	Entries int `json:"entries"`
	Active  int `json:"active"`
	// Running: the ladder makes this game's matches now.
	Running bool `json:"running"`
}

// Summaries lists every game's ladder; its counts are one statement's
// (store.LadderGames), which reads one state of the store.
func (l *Ladder) Summaries(ctx context.Context) ([]Summary, error) {
	listed, active, err := l.deps.Store.LadderGames(ctx)
	if err != nil {
		return nil, err
	}
	var out []Summary
	for _, g := range l.deps.Games.List() {
		n := g.Name()
		out = append(out, Summary{Game: n, Entries: listed[n], Active: active[n], Running: l.cfg.Enabled && active[n] >= 2})
	}
	return out, nil
}

// Standing is an entry on the leaderboard.
type Standing struct {
	Rank    int    `json:"rank"`
	ID      int64  `json:"id"`
	Name    string `json:"name"`
	Version int    `json:"version"`
	Image   string `json:"image"`
	ImageID string `json:"image_id"`
	State   string `json:"state"`
	Note    string `json:"note,omitempty"`
	// Owner is the user or team the entry belongs to.
	Owner string `json:"owner"`
	// Rating is the conservative figure the board sorts by, μ − 3σ.
	Rating  float64   `json:"rating"`
	Mu      float64   `json:"mu"`
	Sigma   float64   `json:"sigma"`
	Matches int       `json:"matches"`
	Wins    int       `json:"wins"`
	Draws   int       `json:"draws"`
	Losses  int       `json:"losses"`
	Faults  FaultRate `json:"faults"`
	Created time.Time `json:"created_at"`
}

// FaultRate is how often an entry faulted, by kind, over its rated
// matches.
type FaultRate struct {
	Timeout   Rate `json:"timeout"`
	Crash     Rate `json:"crash"`
	BadOutput Rate `json:"bad_output"`
}

// Rate is a share of an entry's matches, with the latest such match.
type Rate struct {
	N       int     `json:"n"`
	Percent float64 `json:"percent"`
	Latest  string  `json:"latest_match,omitempty"`
}

// faultKinds groups bot statuses into the board's three kinds.
var faultKinds = map[string][]string{
	"timeout":    {"timeout"},
	"crash":      {"crashed", "oom"},
	"bad_output": {"bad_output", "output_limit"},
}

func faultRate(st store.EntryStats) FaultRate {
	kind := func(statuses []string) Rate {
		var r Rate
		var seq int64 = -1
		for _, s := range statuses {
			f := st.Faults[s]
			r.N += f.N
			if f.N > 0 && f.LatestSeq > seq {
				r.Latest, seq = f.Latest, f.LatestSeq
			}
		}
		r.Percent = percent(r.N, st.Matches)
		return r
	}
	return FaultRate{Timeout: kind(faultKinds["timeout"]), Crash: kind(faultKinds["crash"]), BadOutput: kind(faultKinds["bad_output"])}
}

// percent is n matches' share of all, in percent (0 of none). A fault is
// counted only in a rated match, which all counts too, and a page reads
// both in one snapshot (store.Snapshot), so n ≤ all; the rate is clamped
// at 100% all the same, as a guard: should counts ever be read apart
// again, a person is still never shown a bot faulting in more matches
// than it played (issue #60's "crash 107%").
func percent(n, all int) float64 {
	if all <= 0 {
		return 0
	}
	return min(100, 100*float64(n)/float64(all))
}

// Planned is a ladder match waiting or playing, with why it was made.
type Planned struct {
	MatchID string   `json:"match_id"`
	Map     string   `json:"map"`
	Entries []string `json:"entries"`
	Reason  string   `json:"reason"`
	// Status is filled by the server (queued, starting, running).
	Status   string `json:"status,omitempty"`
	Position int    `json:"position,omitempty"`
}

// Played is a settled ladder match.
type Played struct {
	MatchID string    `json:"match_id"`
	Map     string    `json:"map"`
	State   string    `json:"state"` // rated or void
	Note    string    `json:"note,omitempty"`
	At      time.Time `json:"at"`
	Seats   []SeatRef `json:"seats"`
}

// SeatRef is an entry's part in a match as the pages list it.
type SeatRef struct {
	EntryID int64  `json:"entry_id"`
	Name    string `json:"name"`
	Place   int    `json:"place"`
	Outcome string `json:"outcome,omitempty"`
	Status  string `json:"status,omitempty"`
	// Change is the change of the entry's rating (μ − 3σ).
	Change float64 `json:"change"`
}

// Board is a game's leaderboard.
type Board struct {
	Game    string `json:"game"`
	Running bool   `json:"running"`
	// Why says why the ladder is not running, when it is not.
	Why        string      `json:"why,omitempty"`
	MaxEntries int         `json:"max_entries"`
	Model      skill.Model `json:"model"`
	Entries    []Standing  `json:"entries"`
	Upcoming   []Planned   `json:"upcoming"`
	Recent     []Played    `json:"recent"`
	// Rated counts the rated matches.
	Rated int `json:"rated"`
}

// Leaderboard is a game's board: the listed entries ranked by their
// conservative rating, the matches in flight with why they were made, and
// the latest settled ones. It is read in one snapshot, so that its figures
// agree (a match settled meanwhile is on the board whole or not at all).
func (l *Ladder) Leaderboard(ctx context.Context, game string) (Board, error) {
	g, err := l.game(game)
	if err != nil {
		return Board{}, err
	}
	game = g.Name()
	var (
		all             []store.Entry
		stats           map[int64]store.EntryStats
		pending, recent []store.LadderMatch
		rated           int
	)
	err = l.deps.Store.Snapshot(ctx, func(r store.Reader) error {
		var err error
		if all, err = r.Entries(ctx, game); err != nil {
			return err
		}
		if stats, err = r.LadderStats(ctx, game); err != nil {
			return err
		}
		if pending, err = r.LadderMatches(ctx, game, store.LadderPending); err != nil {
			return err
		}
		if recent, err = r.RecentLadderMatches(ctx, game, 12); err != nil {
			return err
		}
		rated, err = r.CountLadderMatches(ctx, game, store.LadderRated)
		return err
	})
	if err != nil {
		return Board{}, err
	}
	b := Board{Game: game, MaxEntries: l.cfg.MaxEntries, Model: l.cfg.Model, Entries: []Standing{}, Upcoming: []Planned{}, Recent: []Played{}}
	names := map[int64]string{}
	active := 0
	for _, e := range all {
		names[e.ID] = entryName(e)
		if !e.Listed() {
			continue
		}
		if e.State == store.EntryActive {
			active++
		}
		b.Entries = append(b.Entries, standing(e, stats[e.ID]))
	}
	rank(b.Entries)
	switch {
	case !l.cfg.Enabled:
		b.Why = "the ladder is off (ARENA_LADDER=off)"
	case active < 2:
		b.Why = "the ladder plays when two entries or more are active; " + map[int]string{0: "none is yet", 1: "one is"}[active]
	default:
		b.Running = true
	}
	for _, lm := range pending {
		p := Planned{MatchID: lm.MatchID, Map: lm.Map, Reason: lm.Note, Entries: []string{}}
		for _, s := range lm.Seats {
			p.Entries = append(p.Entries, names[s.EntryID])
		}
		b.Upcoming = append(b.Upcoming, p)
	}
	for _, lm := range recent {
		b.Recent = append(b.Recent, played(lm, names))
	}
	b.Rated = rated
	return b, nil
}

func standing(e store.Entry, st store.EntryStats) Standing {
	r := skill.Rating{Mu: e.Mu, Sigma: e.Sigma}
	return Standing{ID: e.ID, Name: entryName(e), Version: e.Version, Image: e.Image, ImageID: e.ImageID, State: e.State, Note: e.Note, Owner: e.Owner,
		Rating: r.Ordinal(), Mu: e.Mu, Sigma: e.Sigma, Matches: st.Matches, Wins: st.Wins, Draws: st.Draws, Losses: st.Losses,
		Faults: faultRate(st), Created: e.CreatedAt}
}

// rank sorts standings by rating, best first, and numbers them (equal
// ratings share a rank).
func rank(list []Standing) {
	slices.SortStableFunc(list, func(a, b Standing) int { return cmp.Or(cmp.Compare(b.Rating, a.Rating), cmp.Compare(a.ID, b.ID)) })
	for i := range list {
		list[i].Rank = i + 1
		if i > 0 && list[i].Rating == list[i-1].Rating {
			list[i].Rank = list[i-1].Rank
		}
	}
}

func played(lm store.LadderMatch, names map[int64]string) Played {
	p := Played{MatchID: lm.MatchID, Map: lm.Map, State: lm.State, At: lm.SettledAt, Seats: []SeatRef{}}
	if lm.State != store.LadderRated {
		p.Note = lm.Note
	}
	for _, s := range lm.Seats {
		ref := SeatRef{EntryID: s.EntryID, Name: names[s.EntryID], Place: s.Place, Outcome: s.Outcome, Status: s.Status}
		if lm.State == store.LadderRated {
			ref.Change = skill.Rating{Mu: s.Mu, Sigma: s.Sigma}.Ordinal() - skill.Rating{Mu: s.MuBefore, Sigma: s.SigmaBefore}.Ordinal()
		}
		p.Seats = append(p.Seats, ref)
	}
	return p
}

// Page is an entry's page: its standing, its rating over time, its
// matches, its results against each opponent and its faults.
type Page struct {
	Standing
	Game      string        `json:"game"`
	History   []Point       `json:"history"`
	Recent    []EntryMatch  `json:"recent_matches"`
	Opponents []HeadToHead  `json:"opponents"`
	Faults    []FaultDetail `json:"fault_breakdown"`
	Versions  []VersionRef  `json:"versions"`
}

// Point is the entry's rating after a match (the first: at registration).
type Point struct {
	MatchID string    `json:"match_id,omitempty"`
	At      time.Time `json:"at"`
	Mu      float64   `json:"mu"`
	Sigma   float64   `json:"sigma"`
	Rating  float64   `json:"rating"`
}

// EntryMatch is one of the entry's matches.
type EntryMatch struct {
	Played
	Created time.Time `json:"created_at"`
	Place   int       `json:"place"`
	Outcome string    `json:"outcome,omitempty"`
	Status  string    `json:"status,omitempty"`
	Change  float64   `json:"change"`
}

// HeadToHead is the entry's record against one opponent: in a match of
// more than two, each opponent placed below it is a win against that
// opponent, above it a loss, level a draw.
type HeadToHead struct {
	EntryID int64  `json:"entry_id"`
	Name    string `json:"name"`
	Matches int    `json:"matches"`
	Wins    int    `json:"wins"`
	Draws   int    `json:"draws"`
	Losses  int    `json:"losses"`
}

// FaultDetail is how often the entry ended a rated match with one status.
type FaultDetail struct {
	Status  string  `json:"status"`
	N       int     `json:"n"`
	Percent float64 `json:"percent"`
	Latest  string  `json:"latest_match"`
	// Reason is what the latest such match says of the fault (for a
	// crash: the exit code or signal, and the last meaningful stderr, a
	// Go or Python traceback's first frame).
	Reason string `json:"reason,omitempty"`
}

// VersionRef is another version of the same name.
type VersionRef struct {
	ID      int64  `json:"id"`
	Version int    `json:"version"`
	State   string `json:"state"`
}

// EntryPage is an entry's page, with up to recent of its latest matches.
// It is read in one snapshot, as a board is (Leaderboard).
func (l *Ladder) EntryPage(ctx context.Context, game string, id int64, recent int) (p Page, err error) {
	if _, err := l.game(game); err != nil {
		return Page{}, err
	}
	err = l.deps.Store.Snapshot(ctx, func(r store.Reader) error {
		e, err := r.Entry(ctx, id)
		if err == nil && e.Game != game {
			err = ErrNoEntry
		}
		if err != nil {
			return err
		}
		p, err = l.entryPage(ctx, r, e, recent)
		return err
	})
	return p, err
}

// entryPage is e's page, read through r.
func (l *Ladder) entryPage(ctx context.Context, r store.Reader, e store.Entry, recent int) (Page, error) {
	all, err := r.Entries(ctx, e.Game)
	if err != nil {
		return Page{}, err
	}
	stats, err := r.LadderStats(ctx, e.Game)
	if err != nil {
		return Page{}, err
	}
	names := map[int64]string{}
	var listed []Standing
	p := Page{Game: e.Game, History: []Point{}, Recent: []EntryMatch{}, Opponents: []HeadToHead{}, Faults: []FaultDetail{}, Versions: []VersionRef{}}
	for _, x := range all {
		names[x.ID] = entryName(x)
		if x.Listed() {
			listed = append(listed, standing(x, stats[x.ID]))
		}
		if x.Name == e.Name && x.ID != e.ID {
			p.Versions = append(p.Versions, VersionRef{ID: x.ID, Version: x.Version, State: x.State})
		}
	}
	rank(listed)
	p.Standing = standing(e, stats[e.ID])
	for _, s := range listed {
		if s.ID == e.ID {
			p.Rank = s.Rank
		}
	}
	matches, err := r.EntryMatches(ctx, e.ID, 0)
	if err != nil {
		return Page{}, err
	}
	init := l.cfg.Model.New()
	p.History = append(p.History, Point{At: e.CreatedAt, Mu: init.Mu, Sigma: init.Sigma, Rating: init.Ordinal()})
	var rated []store.LadderMatch
	for _, lm := range matches {
		if lm.State == store.LadderRated {
			rated = append(rated, lm)
		}
	}
	slices.SortFunc(rated, func(a, b store.LadderMatch) int { return cmp.Compare(a.RatedSeq, b.RatedSeq) })
	h2h := map[int64]*HeadToHead{}
	for _, lm := range rated {
		mine := seatOf(lm, e.ID)
		r := skill.Rating{Mu: mine.Mu, Sigma: mine.Sigma}
		p.History = append(p.History, Point{MatchID: lm.MatchID, At: lm.SettledAt, Mu: r.Mu, Sigma: r.Sigma, Rating: r.Ordinal()})
		for _, s := range lm.Seats {
			if s.EntryID == e.ID {
				continue
			}
			h := h2h[s.EntryID]
			if h == nil {
				h = &HeadToHead{EntryID: s.EntryID, Name: names[s.EntryID]}
				h2h[s.EntryID] = h
			}
			h.Matches++
			switch {
			case mine.Place < s.Place:
				h.Wins++
			case mine.Place > s.Place:
				h.Losses++
			default:
				h.Draws++
			}
		}
	}
	for _, h := range h2h {
		p.Opponents = append(p.Opponents, *h)
	}
	slices.SortFunc(p.Opponents, func(a, b HeadToHead) int {
		return cmp.Or(cmp.Compare(b.Matches, a.Matches), cmp.Compare(a.EntryID, b.EntryID))
	})
	for i, lm := range matches {
		if recent > 0 && i >= recent {
			break
		}
		mine := seatOf(lm, e.ID)
		em := EntryMatch{Played: played(lm, names), Created: lm.CreatedAt, Place: mine.Place, Outcome: mine.Outcome, Status: mine.Status}
		if lm.State == store.LadderRated {
			em.Change = skill.Rating{Mu: mine.Mu, Sigma: mine.Sigma}.Ordinal() - skill.Rating{Mu: mine.MuBefore, Sigma: mine.SigmaBefore}.Ordinal()
		}
		p.Recent = append(p.Recent, em)
	}
	st := stats[e.ID]
	for status, f := range st.Faults {
		p.Faults = append(p.Faults, FaultDetail{Status: status, N: f.N, Percent: percent(f.N, st.Matches), Latest: f.Latest, Reason: faultReason(ctx, r, f.Latest, e.ID)})
	}
	slices.SortFunc(p.Faults, func(a, b FaultDetail) int { return cmp.Or(cmp.Compare(b.N, a.N), cmp.Compare(a.Status, b.Status)) })
	return p, nil
}

func seatOf(lm store.LadderMatch, entry int64) store.LadderSeat {
	for _, s := range lm.Seats {
		if s.EntryID == entry {
			return s
		}
	}
	return store.LadderSeat{}
}

// Entrants names the entries that play a ladder match, by seat; ok is
// false for a match the ladder did not make. The match and its entries
// are read in one snapshot.
func (l *Ladder) Entrants(ctx context.Context, matchID string) (entrants []Entrant, ok bool) {
	err := l.deps.Store.Snapshot(ctx, func(r store.Reader) error {
		lm, err := r.LadderMatchOf(ctx, matchID)
		if err != nil {
			return err
		}
		for _, s := range lm.Seats {
			en := Entrant{EntryID: s.EntryID}
			if e, err := r.Entry(ctx, s.EntryID); err == nil {
				en.Name = entryName(e)
			}
			entrants = append(entrants, en)
		}
		return nil
	})
	if err != nil {
		return nil, false
	}
	return entrants, true
}

// Entrant is an entry playing a seat of a ladder match.
type Entrant struct {
	EntryID int64  `json:"entry_id"`
	Name    string `json:"name"`
}

// faultReason is the fault detail of the entry's bot in a match, from
// its stored result read through r ("" when there is none).
func faultReason(ctx context.Context, r store.Reader, matchID string, entry int64) string {
	if matchID == "" {
		return ""
	}
	lm, err := r.LadderMatchOf(ctx, matchID)
	if err != nil {
		return ""
	}
	seat := -1
	for _, s := range lm.Seats {
		if s.EntryID == entry {
			seat = s.Seat
		}
	}
	m, err := r.Get(ctx, matchID)
	if err != nil || seat < 0 || len(m.Result) == 0 {
		return ""
	}
	var res matches.Result
	if json.Unmarshal(m.Result, &res) != nil {
		return ""
	}
	for _, b := range res.Bots {
		if b.Seat == seat {
			return b.FaultDetail
		}
	}
	return ""
}
