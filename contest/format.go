package contest

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"arena/store"
)

// Format is a final's format: how it pairs its games and when it is
// done. Each format is a file of its own that registers itself
// (roundrobin.go, swiss.go, auto.go); a spec names it (Spec.Format).
type Format interface {
	// Name is the format's name in a spec.
	Name() string
	// Start is the final's first games, made at the freeze (f has no
	// games yet).
	Start(f Final) ([]Game, error)
	// Next is the final's next round, once every game so far is over.
	// false: the final is done.
	Next(f Final) (Round, bool, error)
}

// Final is what a format sees of a final.
type Final struct {
	Spec Spec
	// Entries are the entries that play it: at the freeze, the entered
	// entries with a version; later, those of its first round's games.
	Entries []int64
	// Games are its games so far (none at the freeze).
	Games []store.ContestGame
	// Disqualified are the entries that play no more games.
	Disqualified map[int64]bool
	// Seeding orders entries by strength, the strongest first (the
	// practice board).
	Seeding func(entries []int64) ([]int64, error)
}

// Round is the games a format adds to a final after its first ones.
type Round struct {
	// N is the round's number (the first round is 0).
	N int
	// Games are its games; their Idx counts on from the final's games.
	Games []Game
	// Detail says what the round is, for the contest's log.
	Detail string
}

// formats are the registered formats by name.
var formats = map[string]Format{}

// register adds a format; each format's file calls it from init.
func register(f Format) {
	if _, ok := formats[f.Name()]; ok {
		panic("contest: format " + f.Name() + " is registered twice")
	}
	formats[f.Name()] = f
}

// FormatNames are the registered formats' names, sorted.
func FormatNames() []string {
	return slices.Sorted(maps.Keys(formats))
}

// LookupFormat is the format of that name (an error of errs.ErrInvalid
// if there is none).
func LookupFormat(name string) (Format, error) {
	if f, ok := formats[name]; ok {
		return f, nil
	}
	return nil, invalid("format: %q: %s", name, oneOf(FormatNames()))
}

// oneOf lists names quoted, the last after "or".
func oneOf(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	if len(q) < 2 {
		return strings.Join(q, "")
	}
	return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}

// format is the spec's final format. A contest made before there were
// formats names none: it plays a round robin.
func (s Spec) format() (Format, error) {
	if s.Format == "" {
		return LookupFormat(FormatRoundRobin)
	}
	return LookupFormat(s.Format)
}
