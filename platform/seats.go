package platform

import (
	"context"
	"strings"
	"sync"
	"time"

	"arena/accounts"
	"arena/internal/errs"
	"arena/matches"
)

// Seats people play: a person plays one seat of a match against bots, from
// the page. Their moves come through Move, one per turn they are asked;
// the match judges each as a bot's answer, with the person's turn time
// (SeatsConfig.Turn) instead of the bots' answer time. Such a match
// plays on this server beside the match slots (matches.WithPeople).

// SeatsConfig is the policy of matches people play.
type SeatsConfig struct {
	// Turn is the time a person has for a move (0: DefaultHumanTurn).
	Turn time.Duration
	// Matches bounds the matches with people playing at once (0: none is
	// taken); PerUser those one user plays at once (0: no bound; an
	// admin's are not bounded).
	Matches int
	PerUser int
}

// DefaultHumanTurn is a person's time for a move unless set otherwise.
const DefaultHumanTurn = 30 * time.Second

// person is a person's seat in a match: the question they are asked, if
// any, and the channel their answer goes by.
type person struct {
	match, name string
	// admin: the player is an admin, whose matches are not bounded.
	admin   bool
	seat    int
	turn    time.Duration
	mu      sync.Mutex
	asked   *matches.Question
	answer  chan []byte
	over    bool
	changed chan struct{}
}

func newPerson(match, name string, seat int, turn time.Duration) *person {
	return &person{match: match, name: name, seat: seat, turn: turn, changed: make(chan struct{})}
}

// touchLocked wakes those who wait for the seat to change; p.mu is held.
func (p *person) touchLocked() {
	close(p.changed)
	p.changed = make(chan struct{})
}

func (p *person) Turn() time.Duration { return p.turn }

// Ask puts a question to the person and waits for their move.
func (p *person) Ask(ctx context.Context, q matches.Question) ([]byte, error) {
	ch := make(chan []byte, 1)
	p.mu.Lock()
	p.asked, p.answer = &q, ch
	p.touchLocked()
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		if p.answer == ch {
			p.asked, p.answer = nil, nil
			p.touchLocked()
		}
		p.mu.Unlock()
	}()
	select {
	case a := <-ch:
		return a, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// move answers the question of a turn, once.
func (p *person) move(turn int, answer []byte) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.over:
		return errs.Errorf(errs.ErrConflict, "match %s is over: it takes no more moves", p.match)
	case p.asked == nil:
		return errs.Errorf(errs.ErrConflict, "turn %d: your seat is not asked for a move now (the bots are playing, or your last move was taken)", turn)
	case p.asked.Turn != turn:
		return errs.Errorf(errs.ErrConflict, "turn %d: your seat is asked for turn %d", turn, p.asked.Turn)
	}
	p.answer <- answer
	p.asked, p.answer = nil, nil
	p.touchLocked()
	return nil
}

// end marks the seat's match over.
func (p *person) end() {
	p.mu.Lock()
	p.over = true
	p.touchLocked()
	p.mu.Unlock()
}

// SeatState is a person's seat as its player sees it: the question they
// are asked now, if any.
type SeatState struct {
	Match  string `json:"match"`
	Seat   int    `json:"seat"`
	Player string `json:"player"`
	// Turn is the turn asked (0: none now); Input the seat's input since
	// its last move, as a bot would read it; Deadline when the move is
	// due; TurnMS the time a person has for a move.
	Turn     int        `json:"turn"`
	Input    string     `json:"input,omitempty"`
	Deadline *time.Time `json:"deadline,omitempty"`
	TurnMS   int64      `json:"turn_ms"`
	Over     bool       `json:"over"`
	// Changed is closed at the seat's next change.
	Changed <-chan struct{} `json:"-"`
}

// seatOf is the person's seat of a live match, for its player only.
func (s *Platform) seatOf(ctx context.Context, p accounts.Principal, matchID string) (*person, error) {
	v, ok := s.people.Load(matchID)
	if !ok {
		m, err := s.matchRecord(ctx, matchID)
		if err != nil {
			return nil, err
		}
		for _, b := range m.Bots {
			if matches.IsHumanRef(b) {
				return nil, errs.Errorf(errs.ErrConflict, "match %s is %s: it takes no more moves", m.ID, m.Status)
			}
		}
		return nil, errs.Errorf(errs.ErrConflict, "match %s is played by bots only: it takes no moves", m.ID)
	}
	h := v.(*person)
	if !p.SignedIn() || p.Name != h.name {
		return nil, errs.Errorf(errs.ErrDenied, "only %s plays seat %d of match %s", h.name, h.seat, matchID)
	}
	return h, nil
}

// Seat is the state of p's seat in a match.
func (ms *Matches) Seat(ctx context.Context, p accounts.Principal, matchID string) (SeatState, error) {
	s := ms.p
	h, err := s.seatOf(ctx, p, matchID)
	if err != nil {
		return SeatState{}, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	st := SeatState{Match: matchID, Seat: h.seat, Player: h.name, TurnMS: h.turn.Milliseconds(), Over: h.over, Changed: h.changed}
	if h.asked != nil {
		d := h.asked.Deadline
		st.Turn, st.Input, st.Deadline = h.asked.Turn, string(h.asked.Input), &d
	}
	return st, nil
}

// Move is p's move for a turn of their seat: the line a bot would print
// (without its newline). The match judges it as a bot's answer.
func (ms *Matches) Move(ctx context.Context, p accounts.Principal, matchID string, turn int, answer string) error {
	s := ms.p
	h, err := s.seatOf(ctx, p, matchID)
	if err != nil {
		return err
	}
	answer = strings.TrimSuffix(strings.TrimSuffix(answer, "\n"), "\r")
	if strings.ContainsAny(answer, "\r\n") {
		return errs.New(errs.ErrInvalid, "answer: one line, as a bot prints it")
	}
	if turn < 1 {
		return errs.Errorf(errs.ErrInvalid, "turn: %d: the turn your seat is asked for (from 1)", turn)
	}
	return h.move(turn, []byte(answer))
}

// seatPeople gives a match's person seats their players: the seats of
// req.Images named human:NAME. Only the requester plays.
func (s *Platform) seatPeople(p accounts.Principal, req *matches.Request, seats []int) error {
	if len(seats) == 0 {
		return nil
	}
	if !p.SignedIn() {
		return errs.New(errs.ErrUnauthenticated, "sign in to play a seat yourself")
	}
	if len(seats) > 1 {
		return errs.New(errs.ErrInvalid, "bots: one seat at most is yours to play; bots play the others")
	}
	if len(seats) == len(req.Images) {
		return errs.New(errs.ErrInvalid, "bots: a match needs a bot to play against")
	}
	turn := s.cfg.Seats.Turn
	if turn <= 0 {
		turn = DefaultHumanTurn
	}
	req.People = map[int]matches.Person{}
	for _, i := range seats {
		req.Images[i] = matches.HumanRef(p.Name)
		h := newPerson(req.MatchID, p.Name, i, turn)
		h.admin = p.Admin()
		req.People[i] = h
	}
	return nil
}

// holdPeople keeps a match's people's seats while it plays, or refuses
// it when its player plays SeatsConfig.PerUser matches already (an
// admin is not bounded).
func (s *Platform) holdPeople(req matches.Request) error {
	s.peopleMu.Lock()
	defer s.peopleMu.Unlock()
	for _, pp := range req.People {
		h, ok := pp.(*person)
		if !ok {
			continue
		}
		if most := s.cfg.Seats.PerUser; most > 0 && !h.admin {
			playing := 0
			s.people.Range(func(_, v any) bool {
				if v.(*person).name == h.name {
					playing++
				}
				return true
			})
			if playing >= most {
				return errs.Errorf(errs.ErrTooMany, "%s plays %d matches already, the most one may at once (ARENA_HUMAN_MATCHES_PER_USER): finish one first", h.name, playing)
			}
		}
		s.people.Store(req.MatchID, h)
	}
	return nil
}

// endPeople ends the people's seats of a match that is over.
func (s *Platform) endPeople(id string) {
	if v, ok := s.people.LoadAndDelete(id); ok {
		v.(*person).end()
	}
}
