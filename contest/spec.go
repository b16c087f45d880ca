// Package contest runs contests: a game, its maps and limits, entries by
// users and teams, a deadline (the freeze) after which no new version
// enters, a final tournament every pair of entries plays on every map
// with the seats swapped and the same seeds, and standings.
//
//   - spec.go: a contest's settings, checked; its phase.
//   - schedule.go: the final's games and their seeds (pure).
//   - standings.go: points, tie-breaks, intervals, head to head (pure).
//   - runner.go: the freeze, the final played through the server's queue
//     (resumable: each game is a row naming the match that plays it),
//     settling.
package contest

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"arena/engine"
	"arena/orchestrator"
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
	// Seed is the contest's: every final game's seed derives from it
	// (published once the contest is done). 0 picks one at creation. It
	// is written as a string (exact in JavaScript) and read as a string or
	// a number.
	Seed Seed `json:"seed,omitempty"`
	// The limits of its matches (0: the game's own).
	AnswerTimeoutMS int `json:"answer_timeout_ms,omitempty"`
	WarmUpMS        int `json:"warm_up_ms,omitempty"`
	MaxMessageBytes int `json:"max_message_bytes,omitempty"`
	// Entrants says who may enter: "everyone" signed in (the default),
	// or "listed": the users and teams of Allowed.
	Entrants string   `json:"entrants,omitempty"`
	Allowed  []string `json:"allowed,omitempty"`
	// TieBreak orders entries with equal points: "head-to-head" (points
	// between the tied entries), "sonneborn-berger" (each opponent's
	// points times the points scored against it), in the order given.
	TieBreak []string `json:"tiebreak,omitempty"`
	// Rules is free text shown to entrants.
	Rules string `json:"rules,omitempty"`
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
)

// ErrInvalid: a contest's settings or an entry that is not acceptable.
var ErrInvalid = errors.New("invalid contest input")

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
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
	if s.Rounds == 0 {
		s.Rounds = 2
	}
	if s.Rounds < 2 || s.Rounds%2 != 0 || s.Rounds > 100 {
		return invalid("rounds: %d: an even number from 2 to 100 (each seat order plays half of them)", s.Rounds)
	}
	if s.FreezeAt.IsZero() {
		return invalid("freeze_at: the deadline is needed (RFC 3339, e.g. 2027-01-31T18:00:00Z)")
	}
	if s.AnswerTimeoutMS < 0 || s.AnswerTimeoutMS > 60_000 || s.WarmUpMS < 0 || s.WarmUpMS > 120_000 || s.MaxMessageBytes < 0 {
		return invalid("limits: answer_timeout_ms 0 to 60000, warm_up_ms 0 to 120000, max_message_bytes 0 or more")
	}
	switch s.Entrants {
	case "":
		s.Entrants = "everyone"
	case "everyone", "listed":
	default:
		return invalid(`entrants: %q: "everyone" or "listed"`, s.Entrants)
	}
	if len(s.TieBreak) == 0 {
		s.TieBreak = []string{HeadToHead, SonnebornBerger}
	}
	for _, t := range s.TieBreak {
		if t != HeadToHead && t != SonnebornBerger {
			return invalid("tiebreak: %q: %q or %q", t, HeadToHead, SonnebornBerger)
		}
	}
	if len(s.Rules) > 20_000 {
		return invalid("rules: at most 20,000 characters")
	}
	return nil
}

// Limits are the limits of the contest's matches.
func (s Spec) Limits() orchestrator.Limits {
	return orchestrator.Limits{
		AnswerTimeout:   time.Duration(s.AnswerTimeoutMS) * time.Millisecond,
		WarmUp:          time.Duration(s.WarmUpMS) * time.Millisecond,
		MaxMessageBytes: s.MaxMessageBytes,
	}
}

// MayEnter reports whether an owner (a user, or a team) may enter.
func (s Spec) MayEnter(owner string) bool {
	return s.Entrants != "listed" || slices.Contains(s.Allowed, owner)
}

// The phases a contest's page shows.
const (
	PhasePractice = "practice" // open, before the freeze
	PhaseFreeze   = "freeze"   // past the deadline, the final not yet started
	PhaseFinal    = "final"
	PhaseDone     = "done"
)
