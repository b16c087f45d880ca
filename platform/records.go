package platform

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"regexp"

	"arena/accounts"
	"arena/internal/errs"
	"arena/ladder"
	"arena/matches"
	"arena/store"
)

// The matches' records as people read them: one match, the list, a
// replay and its frames, the live view of a match playing here.

// MatchInfo is a match as people see it: its record, its state and
// place in the queue while it waits or plays here, and the ladder
// entries by seat of a ladder's match.
type MatchInfo struct {
	store.Match
	Position int
	Ladder   []ladder.Entrant
}

var matchIDPattern = regexp.MustCompile(`^[0-9a-f]{12}$`)

// record is a match's record; a malformed id is no match.
func (s *Platform) matchRecord(ctx context.Context, id string) (store.Match, error) {
	if !matchIDPattern.MatchString(id) {
		return store.Match{}, errs.Errorf(errs.ErrNotFound, "no match %q", id)
	}
	m, err := s.deps.Store.Get(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return store.Match{}, errs.Errorf(errs.ErrNotFound, "no match %q", id)
	}
	return m, err
}

// info is a match's record as people see it.
func (s *Platform) info(ctx context.Context, m store.Match) MatchInfo {
	v := MatchInfo{Match: m}
	if st, pos, ok := s.queue.Status(m.ID); ok {
		v.Status, v.Position = string(st), pos
	}
	v.Ladder, _ = s.ladder.Entrants(ctx, m.ID)
	return v
}

// Get is a match.
func (ms *Matches) Get(ctx context.Context, id string) (MatchInfo, error) {
	m, err := ms.p.matchRecord(ctx, id)
	if err != nil {
		return MatchInfo{}, err
	}
	return ms.p.info(ctx, m), nil
}

// ListQuery says which matches a list shows: newest first, older than
// the cursor Before (0: from the newest), Limit of them (1 to 100, 20
// when 0); Mine keeps the visitor's own and their teams', Owner one
// owner's, Game one game's; NoLadder leaves the ladders' out.
type ListQuery struct {
	Before   int64
	Limit    int
	Mine     bool
	Owner    string
	Game     string
	NoLadder bool
}

// List is a page of matches, and the cursor of the next (0: none).
func (ms *Matches) List(ctx context.Context, p accounts.Principal, q ListQuery) ([]MatchInfo, int64, error) {
	s := ms.p
	if q.Limit == 0 {
		q.Limit = 20
	}
	if q.Limit < 1 || q.Limit > 100 {
		return nil, 0, errs.New(errs.ErrInvalid, "limit must be a number from 1 to 100")
	}
	if q.Before < 0 {
		return nil, 0, errs.New(errs.ErrInvalid, "before must be a cursor from a previous page")
	}
	f := store.Filter{NoLadder: q.NoLadder}
	if q.Mine {
		if err := signedIn(p, "see your matches"); err != nil {
			return nil, 0, err
		}
		f.Owners = p.Owners()
	}
	if q.Owner != "" {
		f.Owners = []string{q.Owner}
	}
	if q.Game != "" {
		if _, err := s.deps.Games.Find(q.Game); err != nil {
			return nil, 0, errs.Errorf(errs.ErrInvalid, "game: %v", err)
		}
		f.Game = q.Game
	}
	list, next, err := s.deps.Store.List(ctx, f, q.Before, q.Limit)
	if err != nil {
		return nil, 0, err
	}
	out := make([]MatchInfo, 0, len(list))
	for _, m := range list {
		out = append(out, s.info(ctx, m))
	}
	return out, next, nil
}

// Replay is a finished match and its replay, as JSON (the caller closes
// it); a replay that expired, or a match without one, is not found, with
// why.
func (ms *Matches) Replay(ctx context.Context, id string) (store.Match, io.ReadCloser, error) {
	s := ms.p
	m, err := s.matchRecord(ctx, id)
	if err != nil {
		return store.Match{}, nil, err
	}
	if m.ReplayExpired {
		return m, nil, errs.Errorf(errs.ErrNotFound, "match %s has no replay: it expired (%s replays are kept %s; see ARENA_KEEP_REPLAYS)", m.ID, m.Kind, s.keepReplays())
	}
	if !m.HasReplay {
		return m, nil, errs.Errorf(errs.ErrNotFound, "match %s has no replay (it is %s)", m.ID, s.info(ctx, m).Status)
	}
	f, err := s.deps.Store.OpenReplay(m.ID)
	return m, f, err
}

// Frames reads a finished match's replay from frame from on, frame by
// frame (a long replay is never in memory whole), until each returns an
// error. A match without a replay has no frames.
func (ms *Matches) Frames(ctx context.Context, m store.Match, from int, each func(i int, frame json.RawMessage) error) error {
	if !m.HasReplay {
		return nil
	}
	f, err := ms.p.deps.Store.OpenReplay(m.ID)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	return matches.ReplayFrames(f, from, each)
}

// Live is the record of a match queued here that is not over (the
// database is not read), if it is one.
func (ms *Matches) Live(id string) (store.Match, bool) {
	v, ok := ms.p.live.Load(id)
	if !ok {
		return store.Match{}, false
	}
	return v.(store.Match), true
}

// Follow is a match playing here from frame from on: its state, the
// frames so far, and a channel closed at its next change; false once it
// is over (or was never here).
func (ms *Matches) Follow(id string, from int) (matches.Live, bool) {
	return ms.p.queue.Follow(id, from)
}

// Entrants are the ladder entries by seat of a ladder's match (none for
// another).
func (ms *Matches) Entrants(ctx context.Context, id string) []ladder.Entrant {
	e, _ := ms.p.ladder.Entrants(ctx, id)
	return e
}
