// Package contest runs contests: a game, its maps and limits, entries by
// users and teams, a deadline (the freeze) after which no new version
// enters, a final tournament every pair of entries plays on every map
// with the seats swapped and the same seeds, and standings.
//
//   - spec.go: a contest's settings, checked; its phase.
//   - format.go: the final's format, a seam: one file per format
//     (roundrobin.go, swiss.go, auto.go), found by name.
//   - schedule.go: a final's game and its seed (pure).
//   - standings.go: points, tie-breaks, intervals, head to head (pure).
//   - runner.go: the freeze, the final played through the server's queue
//     (resumable: each game is a row naming the match that plays it),
//     settling.
package contest

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"arena/engine"
	"arena/internal/errs"
	"arena/matches"
	"arena/store"
)

// Spec is a contest's settings, as created (POST /api/contests, arena
// contest create) and kept.
type Spec struct {
	Name string   `json:"name"`
	Game string   `json:"game"`
	Maps []string `json:"maps"`
	// Rounds is how many games each pair of entries plays on each map,
	// half with each seat order: an even number.
	Rounds   int       `json:"rounds"`
	FreezeAt time.Time `json:"freeze_at"`
	// Format is the final's, a registered Format: "round-robin",
	// "swiss", or "auto" (the default: a round robin up to RoundRobinMax
	// entries, else Swiss).
	// SwissRounds is a Swiss system's number of rounds (0: SwissRounds
	// of the entries).
	Format      string `json:"format,omitempty"`
	SwissRounds int    `json:"swiss_rounds,omitempty"`
	// Seed is the contest's: every final game's seed derives from it
	// (published once the contest is done). 0 picks one at creation. It
	// is written as a string (exact in JavaScript) and read as a string or
	// a number.
	Seed Seed `json:"seed,omitempty"`
	// The limits of its matches (0: the game's own).
	AnswerTimeoutMS int `json:"answer_timeout_ms,omitempty"`
	WarmUpMS        int `json:"warm_up_ms,omitempty"`
	MaxMessageBytes int `json:"max_message_bytes,omitempty"`
	// MemoryMB is each bot's memory limit in MiB (0: the platform's).
	MemoryMB int `json:"memory_mb,omitempty"`
	// Entrants says who may enter: "everyone" signed in (the default),
	// "listed": the users and teams of Allowed, or "invite": those of
	// Allowed and whoever brings the invitation code (Invite, made when
	// the contest is, shown to staff only).
	Entrants string   `json:"entrants,omitempty"`
	Allowed  []string `json:"allowed,omitempty"`
	Invite   string   `json:"invite,omitempty"`
	// EntriesPerPerson is how many entered entries may count for one
	// person (0: 1, one entry per person; at most 100). A user's entry
	// counts for the user, a team's for each of its members (those in
	// it when an entry is made). Staff raise it, e.g. to enter several
	// house bots; lowered, it refuses new entries only.
	EntriesPerPerson int `json:"entries_per_person,omitempty"`
	// TieBreak orders entries with equal points: "head-to-head" (points
	// between the tied entries), "sonneborn-berger" (each opponent's
	// points times the points scored against it), "rating" (μ − 3σ of a
	// Weng–Lin rating of the final's games in their order, as the ladders
	// rate), in the order given.
	TieBreak []string `json:"tiebreak,omitempty"`
	// Rules is free text shown to entrants.
	Rules string `json:"rules,omitempty"`
	// Gates are the bars a version must clear (gates.go).
	Gates []Gate `json:"gates,omitempty"`
	// ReferenceBots are the bots of the game that may still be
	// challenged during the contest's freeze and final (image
	// references, as a challenge names them: "arena/tanks-hunter",
	// "staff/tank:v2"); every other challenge in its game waits for the
	// contest to be done.
	ReferenceBots []string `json:"reference_bots,omitempty"`
}

// Seed is a contest's seed: any uint64, a JSON string or number.
type Seed uint64

func (s Seed) MarshalJSON() ([]byte, error) {
	return json.Marshal(strconv.FormatUint(uint64(s), 10))
}

func (s *Seed) UnmarshalJSON(b []byte) error {
	text := strings.Trim(string(b), `"`)
	v, err := strconv.ParseUint(text, 10, 64)
	if err != nil {
		return fmt.Errorf("seed: %s: an integer from 0 to 18446744073709551615", b)
	}
	*s = Seed(v)
	return nil
}

// The tie-breaks a contest may declare.
const (
	HeadToHead      = "head-to-head"
	SonnebornBerger = "sonneborn-berger"
	Rating          = "rating"
)

// invalid is an error of errs.ErrInvalid: a contest's settings or an
// entry that is not acceptable.
func invalid(format string, args ...any) error {
	return errs.Errorf(errs.ErrInvalid, "invalid contest input: "+format, args...)
}

// Check fills a spec's defaults and says what is wrong with it, naming
// the field.
func (s *Spec) Check(games []engine.Game) error {
	s.Name = strings.TrimSpace(s.Name)
	if s.Name == "" || len(s.Name) > 80 {
		return invalid("name: 1 to 80 characters")
	}
	g, err := engine.Find(games, s.Game)
	if err != nil {
		return invalid("game: %v", err)
	}
	s.Game = g.Name()
	if err := s.checkMaps(g); err != nil {
		return err
	}
	if err := s.checkFinal(); err != nil {
		return err
	}
	if s.FreezeAt.IsZero() {
		return invalid("freeze_at: the deadline is needed (RFC 3339, e.g. 2027-01-31T18:00:00Z)")
	}
	if err := s.checkLimits(); err != nil {
		return err
	}
	if err := s.checkEntrants(); err != nil {
		return err
	}
	if err := s.checkTieBreak(); err != nil {
		return err
	}
	if err := s.checkReferenceBots(); err != nil {
		return err
	}
	if len(s.Rules) > 20_000 {
		return invalid("rules: at most 20,000 characters")
	}
	return checkGates(s, g)
}

// checkMaps checks the maps, all of the game's when none is named.
func (s *Spec) checkMaps(g engine.Game) error {
	if len(s.Maps) == 0 {
		for _, m := range g.Maps() {
			s.Maps = append(s.Maps, m.Name)
		}
	}
	for _, m := range s.Maps {
		if _, err := g.Map(m); err != nil {
			return invalid("maps: %v", err)
		}
	}
	if len(s.Maps) > 32 {
		return invalid("maps: at most 32")
	}
	return nil
}

// checkFinal checks the final's rounds and format, filling their defaults.
func (s *Spec) checkFinal() error {
	if s.Rounds == 0 {
		s.Rounds = 2
	}
	if s.Rounds < 2 || s.Rounds%2 != 0 || s.Rounds > 100 {
		return invalid("rounds: %d: an even number from 2 to 100 (each seat order plays half of them)", s.Rounds)
	}
	if s.Format == "" {
		s.Format = FormatAuto
	}
	if _, err := LookupFormat(s.Format); err != nil {
		return err
	}
	if s.SwissRounds < 0 || s.SwissRounds > 50 {
		return invalid("swiss_rounds: %d: 0 (as many as the entries need) to 50", s.SwissRounds)
	}
	return nil
}

// checkLimits checks the limits of the contest's matches.
func (s *Spec) checkLimits() error {
	if s.AnswerTimeoutMS < 0 || s.AnswerTimeoutMS > 60_000 || s.WarmUpMS < 0 || s.WarmUpMS > 120_000 || s.MaxMessageBytes < 0 {
		return invalid("limits: answer_timeout_ms 0 to 60000, warm_up_ms 0 to 120000, max_message_bytes 0 or more")
	}
	if s.MemoryMB != 0 && (s.MemoryMB < MinMemoryMB || s.MemoryMB > MaxMemoryMB) {
		return invalid("memory_mb: %d: 0 (the platform's) or %d to %d MiB", s.MemoryMB, MinMemoryMB, MaxMemoryMB)
	}
	return nil
}

// checkEntrants checks who may enter and how many entries count for one
// person, filling their defaults.
func (s *Spec) checkEntrants() error {
	switch s.Entrants {
	case "":
		s.Entrants = Everyone
	case Everyone, Listed, Invited:
	default:
		return invalid(`entrants: %q: %q, %q or %q`, s.Entrants, Everyone, Listed, Invited)
	}
	if s.Entrants == Listed && len(s.Allowed) == 0 {
		return invalid(`allowed: entrants %q needs the users and teams who may enter`, Listed)
	}
	if len(s.Allowed) > 10_000 {
		return invalid("allowed: at most 10,000 users and teams")
	}
	if s.EntriesPerPerson == 0 {
		s.EntriesPerPerson = 1
	}
	if s.EntriesPerPerson < 1 || s.EntriesPerPerson > MaxEntriesPerPerson {
		return invalid("entries_per_person: %d: 1 (the default) to %d entries that may count for one person", s.EntriesPerPerson, MaxEntriesPerPerson)
	}
	return nil
}

// checkTieBreak checks the tie-breaks, each known and given once, filling
// the default.
func (s *Spec) checkTieBreak() error {
	if len(s.TieBreak) == 0 {
		s.TieBreak = []string{HeadToHead, SonnebornBerger}
	}
	seen := map[string]bool{}
	for _, t := range s.TieBreak {
		if t != HeadToHead && t != SonnebornBerger && t != Rating {
			return invalid("tiebreak: %q: %q, %q or %q", t, HeadToHead, SonnebornBerger, Rating)
		}
		if seen[t] {
			return invalid("tiebreak: %q is given twice", t)
		}
		seen[t] = true
	}
	return nil
}

// checkReferenceBots trims the reference bots' names and checks them.
func (s *Spec) checkReferenceBots() error {
	if len(s.ReferenceBots) > 100 {
		return invalid("reference_bots: at most 100")
	}
	for i, ref := range s.ReferenceBots {
		if s.ReferenceBots[i] = strings.TrimSpace(ref); s.ReferenceBots[i] == "" {
			return invalid("reference_bots[%d]: an empty image name", i)
		}
	}
	return nil
}

// The memory a contest may give each bot, in MiB.
const (
	MinMemoryMB = 16
	MaxMemoryMB = 8192
)

// Who may enter a contest.
const (
	Everyone = "everyone" // every signed-in user
	Listed   = "listed"   // the users and teams of Allowed
	Invited  = "invite"   // those of Allowed, and whoever has the code
)

// Limits are the limits of the contest's matches.
func (s Spec) Limits() matches.Limits {
	return matches.Limits{
		AnswerTimeout:   time.Duration(s.AnswerTimeoutMS) * time.Millisecond,
		WarmUp:          time.Duration(s.WarmUpMS) * time.Millisecond,
		MaxMessageBytes: s.MaxMessageBytes,
		MemoryBytes:     int64(s.MemoryMB) << 20,
	}
}

// ErrNotInvited: an owner may not enter the contest.
var ErrNotInvited = errs.New(errs.ErrDenied, "not invited")

// MayEnter says why an owner (a user, or a team) may not enter, bringing
// an invitation code (or ""); nil: they may.
func (s Spec) MayEnter(owner, code string) error {
	switch {
	case s.Entrants == Everyone || slices.Contains(s.Allowed, owner):
		return nil
	case s.Entrants == Invited && code == "":
		return fmt.Errorf("%w: %q takes entries by invitation: bring its invitation code (the link staff sent)", ErrNotInvited, s.Name)
	case s.Entrants == Invited:
		if subtle.ConstantTimeCompare([]byte(code), []byte(s.Invite)) == 1 {
			return nil
		}
		return fmt.Errorf("%w: that is not %q's invitation code (it may have been replaced)", ErrNotInvited, s.Name)
	}
	return fmt.Errorf("%w: %s is not on the list of who may enter %q", ErrNotInvited, owner, s.Name)
}

// MaxEntriesPerPerson bounds a contest's EntriesPerPerson.
const MaxEntriesPerPerson = 100

// perPerson is how many entered entries may count for one person (a
// contest made before the setting had none: one).
func (s Spec) perPerson() int {
	return max(1, s.EntriesPerPerson)
}

// MayCount says why a new entry of owner may not join a contest's
// entered entries (nil: it may): a person it counts for has
// EntriesPerPerson of them already. persons are the people each owner's
// entry counts for (a user, or a team's members). Withdrawn and
// disqualified entries are not among the entered: they free their
// people.
func (s Spec) MayCount(owner string, entered []store.ContestEntry, persons map[string][]string) error {
	limit := s.perPerson()
	for _, p := range persons[owner] {
		var through []string
		team := p != owner
		for _, e := range entered {
			if !slices.Contains(persons[e.Owner], p) {
				continue
			}
			if e.Owner == p {
				through = append(through, fmt.Sprintf("with entry %d (%s)", e.ID, e.Image))
			} else {
				through = append(through, fmt.Sprintf("through team %s's entry %d (%s)", e.Owner, e.ID, e.Image))
				team = true
			}
		}
		if len(through) < limit {
			continue
		}
		who, why := p, "it takes one entry per person"
		if p != owner {
			who = fmt.Sprintf("%s (of team %s)", p, owner)
		}
		if limit > 1 {
			why = fmt.Sprintf("it takes %d entries per person", limit)
		}
		if team {
			why += ", and a team's entry counts for each of its members"
		}
		return errs.Errorf(errs.ErrConflict, "%s is already in contest %q %s: %s", who, s.Name, strings.Join(through, " and "), why)
	}
	return nil
}

// newInvite is a fresh invitation code: 128 random bits.
func newInvite() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b[:]), nil
}

// The phases a contest's page shows.
const (
	PhasePractice = "practice" // open, before the freeze
	PhaseFreeze   = "freeze"   // past the deadline, the final not yet started
	PhaseFinal    = "final"
	PhaseDone     = "done"
)
