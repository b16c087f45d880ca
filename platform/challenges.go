package platform

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/distribution/reference"
	"go.uber.org/zap"

	"arena/accounts"
	"arena/contest"
	"arena/engine"
	"arena/internal/errs"
	"arena/ladder"
	"arena/matches"
	"arena/store"
)

// Challenges: a user's bot against another's bot for a number of games,
// unranked unless a ladder allows ranked ones. The opponent is named by
// its ladder entry, its contest entry or its pushed repository; its
// image is pinned by id and played like any match's, never handed to the
// challenger. The matches wait behind those started by hand and ahead of
// the ladders' (matches.Challenge).

// ChallengeConfig is the challenges' policy.
type ChallengeConfig struct {
	// PerDay bounds the challenges one user makes in 24 hours (0: no
	// bound; admins are not bounded).
	PerDay int
	// Ranked lets a challenge between two entries of a ladder be rated
	// by it (ARENA_LADDER_RANKED_CHALLENGES).
	Ranked bool
}

// MaxChallengeGames is the most games one challenge plays.
const MaxChallengeGames = 20

// ChallengeRequest is a challenge someone makes.
type ChallengeRequest struct {
	// Bot is the challenger's bot, an image they may play.
	Bot      string
	Opponent Opponent
	// Map is every game's map ("": each of the game's maps in turn).
	Map   string
	Games int
	// Ranked asks the opponent's ladder to rate the games (Bot must then
	// be the challenger's entry on it).
	Ranked bool
}

// Opponent names a challenge's opponent: a ladder entry (Ladder, Entry),
// a contest entry (Contest, Entry) or a bot (Bot: a pushed repository,
// NAME/bot or NAME/bot:TAG, or an image the challenger may play).
type Opponent struct {
	Ladder  string `json:"ladder,omitempty"`
	Contest int64  `json:"contest,omitempty"`
	Entry   int64  `json:"entry,omitempty"`
	Bot     string `json:"bot,omitempty"`
}

// opponent is a challenge's opponent resolved: the game it plays, how it
// was named, its owner, the name its matches give it (and the id it is
// pinned to, when known), and its ladder entry (for a ranked challenge).
type opponent struct {
	game, named, owner, ref, id string
	entry                       int64
}

// Create makes a challenge for p and queues its games: seats swapped
// from one game to the next, each pair of games on the same map and seed.
func (cs *Challenges) Create(ctx context.Context, p accounts.Principal, r ChallengeRequest) (ChallengeView, error) {
	s := cs.p
	if err := checkChallenge(p, &r); err != nil {
		return ChallengeView{}, err
	}
	opp, err := s.challengeOpponent(ctx, p, r.Opponent)
	if err != nil {
		return ChallengeView{}, err
	}
	game, err := s.deps.Games.Find(opp.game)
	if err != nil {
		return ChallengeView{}, errs.Errorf(errs.ErrConflict, "the opponent plays %s, which is not on offer now", opp.game)
	}
	maps, err := challengeMaps(game, r.Map)
	if err != nil {
		return ChallengeView{}, err
	}
	if err := s.challengerBot(ctx, p, r.Bot, game); err != nil {
		return ChallengeView{}, err
	}
	if err := s.challengeOpen(ctx, p, game.Name(), opp); err != nil {
		return ChallengeView{}, err
	}
	var mine int64
	if r.Ranked {
		if mine, err = s.rankedEntry(ctx, p, r.Bot, opp); err != nil {
			return ChallengeView{}, err
		}
	}
	if err := s.challengeRoom(ctx, p, r.Games); err != nil {
		return ChallengeView{}, err
	}
	c, err := s.deps.Store.CreateChallenge(ctx, store.Challenge{
		Game: game.Name(), CreatedBy: p.Name, Owner: s.ownerOf(p, r.Bot), Bot: r.Bot, Opponent: opp.named, OpponentOwner: opp.owner,
		OpponentBot: opp.ref, Map: r.Map, Games: r.Games, Ranked: r.Ranked, CreatedAt: s.now(),
	})
	if err != nil {
		return ChallengeView{}, err
	}
	if err := s.queueChallenge(ctx, p, c, r, game, maps, opp, mine); err != nil {
		return ChallengeView{}, err
	}
	return cs.Get(ctx, p, c.ID)
}

// checkChallenge checks what a challenge asks for by itself: who asks,
// their bot's name, how many games.
func checkChallenge(p accounts.Principal, r *ChallengeRequest) error {
	if err := signedIn(p, "challenge a bot"); err != nil {
		return err
	}
	r.Bot = strings.TrimSpace(r.Bot)
	if r.Bot == "" {
		return errs.New(errs.ErrInvalid, `bot: name your bot, e.g. "bob/tank:v2"`)
	}
	if r.Games < 1 || r.Games > MaxChallengeGames {
		return errs.Errorf(errs.ErrInvalid, "games: %d: 1 to %d", r.Games, MaxChallengeGames)
	}
	return nil
}

// challengeMaps are the maps of two bots a challenge plays: the one
// named, or each of the game's.
func challengeMaps(game engine.Game, named string) ([]string, error) {
	var maps []string
	for _, m := range game.Maps() {
		if (named == "" || m.Name == named) && m.CheckPlayers(2) == nil {
			maps = append(maps, m.Name)
		}
	}
	if named != "" && len(maps) == 0 {
		m, err := game.Map(named)
		if err == nil {
			err = m.Info().CheckPlayers(2)
		}
		return nil, errs.Errorf(errs.ErrInvalid, "map: %v", err)
	}
	if len(maps) == 0 {
		return nil, errs.Errorf(errs.ErrInvalid, "%s has no map for two bots: a challenge is one bot against another", game.Name())
	}
	return maps, nil
}

// challengerBot checks the challenger's bot: theirs to play, not
// rejected by its check, labelled for the opponent's game if at all.
func (s *Platform) challengerBot(ctx context.Context, p accounts.Principal, bot string, game engine.Game) error {
	if err := s.mayPlayAll(p, "bot", bot); err != nil {
		return err
	}
	if err := s.pushedState(ctx, bot, ""); err != nil {
		return err
	}
	if labelled := s.gameLabel(ctx, bot); labelled != "" && labelled != game.Name() {
		return errs.Errorf(errs.ErrInvalid, "bot: %s is labelled for %s (io.arena.game), and the opponent plays %s", bot, labelled, game.Name())
	}
	return nil
}

// queueChallenge queues a challenge's games. None queued: the challenge
// is not made (forgotten, and the error returned); some: those play, and
// its view says the others were not.
func (s *Platform) queueChallenge(ctx context.Context, p accounts.Principal, c store.Challenge, r ChallengeRequest, game engine.Game, maps []string, opp opponent, mine int64) error {
	var seed uint64
	for i := range r.Games {
		if i%2 == 0 {
			seed = matches.RandomSeed()
		}
		err := s.queueChallengeGame(ctx, p, c, r, game, maps[(i/2)%len(maps)], seed, i, opp, mine)
		if err == nil {
			continue
		}
		if i == 0 {
			if derr := s.deps.Store.DeleteChallenge(context.WithoutCancel(ctx), c.ID); derr != nil {
				s.log.Error("forget a challenge none of whose games was queued", zap.Int64("challenge", c.ID), zap.Error(derr))
			}
			return err
		}
		s.log.Warn("a challenge's game was not queued", zap.Int64("challenge", c.ID), zap.Int("game", i), zap.Error(err))
		break
	}
	return nil
}

// queueChallengeGame queues game i of a challenge: the challenger in seat
// 0 of the even games, 1 of the odd; rated on the ladder when ranked.
func (s *Platform) queueChallengeGame(ctx context.Context, p accounts.Principal, c store.Challenge, r ChallengeRequest, game engine.Game, mapName string, seed uint64, i int, opp opponent, mine int64) error {
	m, err := game.Map(mapName)
	if err != nil {
		return err
	}
	seat := i % 2
	images := []string{r.Bot, opp.ref}
	ids := []string{"", opp.id}
	entries := []int64{mine, opp.entry}
	if seat == 1 {
		slices.Reverse(images)
		slices.Reverse(ids)
		slices.Reverse(entries)
	}
	req := matches.Request{Game: game, Map: m, Seed: seed, Images: images, ImageIDs: ids, Limits: s.cfg.Limits,
		MatchID: matches.NewMatchID(), Priority: matches.Challenge, Kind: matches.KindChallenge, Owner: p.Name}
	cm := store.ChallengeMatch{Idx: i, MatchID: req.MatchID, Seat: seat, Map: mapName, Seed: seed}
	if r.Ranked {
		return s.ladder.SubmitRated(ctx, req, entries, fmt.Sprintf("challenge %d by %s", c.ID, p.Name), func(ctx context.Context, _ store.Match) error {
			return s.deps.Store.LinkChallengeMatch(ctx, c.ID, cm)
		})
	}
	_, err = s.submit(ctx, req, func(ctx context.Context, rec store.Match) error {
		return s.deps.Store.InsertChallengeMatch(ctx, rec, c.ID, cm)
	})
	return err
}

// ownerOf is who owns a bot p plays: the namespace of its name when it is
// p's or one of p's teams', else p.
func (s *Platform) ownerOf(p accounts.Principal, ref string) string {
	if ns := s.images.Namespace(ref); ns != "" && p.Owns(ns) {
		return ns
	}
	return p.Name
}

// challengeOpponent resolves a challenge's opponent.
func (s *Platform) challengeOpponent(ctx context.Context, p accounts.Principal, o Opponent) (opponent, error) {
	named := 0
	for _, set := range []bool{o.Ladder != "", o.Contest != 0, o.Bot != ""} {
		if set {
			named++
		}
	}
	if named != 1 {
		return opponent{}, errs.New(errs.ErrInvalid, `opponent: name one: {"ladder": GAME, "entry": ID}, {"contest": ID, "entry": ID} or {"bot": "NAME/bot"}`)
	}
	switch {
	case o.Ladder != "":
		e, err := s.ladder.Entry(ctx, o.Ladder, o.Entry)
		if err != nil {
			return opponent{}, fmt.Errorf("opponent: %w", err)
		}
		if e.State != store.EntryActive {
			return opponent{}, errs.Errorf(errs.ErrConflict, "opponent: %s's ladder entry %d (%s) is %s, not active", e.Owner, e.ID, e.Name, e.State)
		}
		return opponent{game: e.Game, named: fmt.Sprintf("ladder %s entry %d (%s)", e.Game, e.ID, e.Name), owner: e.Owner, ref: e.Image, id: e.ImageID, entry: e.ID}, nil
	case o.Contest != 0:
		ct, err := s.deps.Store.Contest(ctx, o.Contest)
		if err != nil {
			return opponent{}, fmt.Errorf("opponent: %w", err)
		}
		e, err := s.contests.Entry(ctx, o.Contest, o.Entry)
		if err != nil {
			return opponent{}, fmt.Errorf("opponent: %w", err)
		}
		if e.State != store.EntryEntered {
			return opponent{}, errs.Errorf(errs.ErrConflict, "opponent: entry %d of contest %d is %s", e.ID, ct.ID, e.State)
		}
		ref, id, ok := s.contests.EntryVersion(ctx, e)
		if !ok {
			return opponent{}, errs.Errorf(errs.ErrConflict, "opponent: entry %d of contest %d has no version ready to play", e.ID, ct.ID)
		}
		if e.Bot != "" && e.FinalID == "" {
			id = "" // a pushed tag: the match pins the version it names then
		}
		return opponent{game: ct.Game, named: fmt.Sprintf("contest %d entry %d", ct.ID, e.ID), owner: e.Owner, ref: ref, id: id}, nil
	}
	ref := strings.TrimSpace(o.Bot)
	if repo, tag, ok := s.pushedName(ref); ok {
		t, found, err := s.challengeTag(ctx, ref, repo, tag)
		if err != nil {
			return opponent{}, err
		}
		if found {
			if t.State != store.TagReady {
				return opponent{}, errs.Errorf(errs.ErrConflict, "opponent: %s:%s is %s, not ready: only a version that passed its check may be challenged", t.Repository, t.Tag, t.State)
			}
			named := t.Repository + ":" + t.Tag
			return opponent{game: t.Game, named: "bot " + named, owner: t.Owner, ref: named}, nil
		}
	}
	// An image of the engine: one the challenger may play anyway (an
	// example bot, an allowed image).
	if err := p.MayPlay(ref, s.images); err != nil {
		return opponent{}, errs.Errorf(errs.ErrNotFound, "opponent: no pushed bot %s here, and %v", ref, err)
	}
	img, err := s.deps.Orchestrator.Image(ctx, ref)
	if err != nil {
		return opponent{}, fmt.Errorf("opponent: %w", err)
	}
	if img.Game == "" {
		return opponent{}, errs.Errorf(errs.ErrInvalid, "opponent: image %s says no game (io.arena.game): challenge it by its ladder or contest entry", ref)
	}
	return opponent{game: img.Game, named: "bot " + ref, ref: ref, id: img.ID}, nil
}

// challengeTag is the pushed version a challenge names: its tag, or with
// none given, the repository's newest ready one.
func (s *Platform) challengeTag(ctx context.Context, ref, repo, tag string) (store.Tag, bool, error) {
	if named, err := reference.ParseNormalizedNamed(ref); err == nil && !reference.IsNameOnly(named) {
		return s.deps.Store.TagOf(ctx, repo, tag)
	}
	owner, _, _ := strings.Cut(repo, "/")
	tags, err := s.deps.Store.Tags(ctx, owner)
	if err != nil {
		return store.Tag{}, false, err
	}
	var any *store.Tag
	for i, t := range tags { // newest first
		if t.Repository != repo {
			continue
		}
		if t.State == store.TagReady {
			return t, true, nil
		}
		if any == nil {
			any = &tags[i]
		}
	}
	if any != nil {
		return *any, true, nil
	}
	return store.Tag{}, false, nil
}

// challengeOpen refuses a challenge in a game one of whose contests is in
// its freeze or final, unless its opponent is one of that contest's
// reference bots (admins are not bound).
func (s *Platform) challengeOpen(ctx context.Context, p accounts.Principal, game string, opp opponent) error {
	if p.Admin() {
		return nil
	}
	freezes, err := s.contests.Freezes(ctx, game)
	if err != nil {
		return err
	}
	for _, f := range freezes {
		if slices.ContainsFunc(f.ReferenceBots, func(ref string) bool { return sameImage(ref, opp.ref) }) {
			continue
		}
		allowed := "none are named"
		if len(f.ReferenceBots) > 0 {
			allowed = "you may challenge " + strings.Join(f.ReferenceBots, ", ")
		}
		return errs.Errorf(errs.ErrConflict, "challenges in %s are closed during contest %d (%s)'s freeze and final: %s", game, f.ID, f.Name, allowed)
	}
	return nil
}

// sameImage says whether two image references name the same image name
// (alice/tank and docker.io/alice/tank:latest do).
func sameImage(a, b string) bool {
	norm := func(ref string) string {
		named, err := reference.ParseNormalizedNamed(ref)
		if err != nil {
			return ref
		}
		return reference.TagNameOnly(named).String()
	}
	return norm(a) == norm(b)
}

// rankedEntry is the challenger's ladder entry a ranked challenge rates:
// the server must allow ranked challenges, the opponent be a ladder
// entry, and the bot one of p's active entries on that ladder.
func (s *Platform) rankedEntry(ctx context.Context, p accounts.Principal, bot string, opp opponent) (int64, error) {
	if !s.cfg.Challenges.Ranked {
		return 0, errs.New(errs.ErrInvalid, "ranked: this server's ladders rate no challenges (ARENA_LADDER_RANKED_CHALLENGES is off)")
	}
	if opp.entry == 0 {
		return 0, errs.New(errs.ErrInvalid, "ranked: only a challenge of a ladder entry is ranked")
	}
	entries, err := s.deps.Store.Entries(ctx, opp.game, store.EntryActive)
	if err != nil {
		return 0, err
	}
	for _, e := range entries {
		if p.Owns(e.Owner) && (e.Image == bot || sameImage(e.Image, bot)) {
			if e.ID == opp.entry {
				return 0, errs.New(errs.ErrInvalid, "opponent: your entry cannot challenge itself")
			}
			return e.ID, nil
		}
	}
	return 0, errs.Errorf(errs.ErrInvalid, "ranked: %s is not one of your active entries on the %s ladder: register it there first", bot, opp.game)
}

// challengeRoom checks p's limits: the challenges of the last 24 hours
// (ARENA_CHALLENGES_PER_DAY) and the room left in their line of waiting
// matches (ARENA_USER_QUEUE_MAX).
func (s *Platform) challengeRoom(ctx context.Context, p accounts.Principal, games int) error {
	if p.Admin() {
		return nil
	}
	if most := s.cfg.Challenges.PerDay; most > 0 {
		since := s.now().Add(-24 * time.Hour)
		n, err := s.deps.Store.ChallengesSince(ctx, p.Name, since)
		if err != nil {
			return err
		}
		if n >= most {
			return errs.TooMany(fmt.Errorf("you made %d challenges in the last 24 hours, the most one may (ARENA_CHALLENGES_PER_DAY)", n), time.Hour)
		}
	}
	if n, most := s.queue.Waiting(p.Name); most > 0 && n+games > most {
		return errs.TooMany(fmt.Errorf("you have %d matches waiting: %d more would pass the %d one may have waiting (ARENA_USER_QUEUE_MAX)", n, games, most), 30*time.Second)
	}
	return nil
}

// ChallengeView is a challenge as its parties see it: its games and how
// they went for the challenger's bot.
type ChallengeView struct {
	ID            int64     `json:"id"`
	Game          string    `json:"game"`
	CreatedBy     string    `json:"created_by"`
	Owner         string    `json:"owner"`
	Bot           string    `json:"bot"`
	Opponent      string    `json:"opponent"`
	OpponentOwner string    `json:"opponent_owner,omitempty"`
	OpponentBot   string    `json:"opponent_bot"`
	Map           string    `json:"map,omitempty"`
	Games         int       `json:"games"`
	Ranked        bool      `json:"ranked"`
	CreatedAt     time.Time `json:"created_at"`
	// Wins, Draws and Losses are the challenger's, over the games decided;
	// Void counts the games that count for neither (failed, cancelled, a
	// bot that did not start), Pending those not over.
	Wins    int `json:"wins"`
	Draws   int `json:"draws"`
	Losses  int `json:"losses"`
	Void    int `json:"void"`
	Pending int `json:"pending"`
	// Points is the challenger's points per game decided (a draw counts
	// half), Interval its 95% Wilson score interval.
	Points   float64         `json:"points"`
	Interval [2]float64      `json:"interval"`
	Matches  []ChallengeGame `json:"matches"`
	// Mine says the visitor made it, or owns the challenging bot.
	Mine bool `json:"mine"`
	// Note says what went wrong making it (games not queued).
	Note string `json:"note,omitempty"`
}

// ChallengeGame is one game of a challenge.
type ChallengeGame struct {
	Idx int    `json:"idx"`
	ID  string `json:"id"`
	// Seat is the challenger's seat.
	Seat     int    `json:"seat"`
	Map      string `json:"map"`
	Seed     string `json:"seed"`
	Status   string `json:"status"`
	Outcome  string `json:"outcome,omitempty"`
	Void     string `json:"void,omitempty"`
	Position int    `json:"position,omitempty"`
}

// Get is a challenge for p: its challenger, the owners of either
// bot and admins may see it.
func (cs *Challenges) Get(ctx context.Context, p accounts.Principal, id int64) (ChallengeView, error) {
	s := cs.p
	c, err := s.deps.Store.Challenge(ctx, id)
	if err != nil {
		return ChallengeView{}, err
	}
	if !maySee(p, c) {
		return ChallengeView{}, errs.Errorf(errs.ErrNotFound, "no challenge %d", id)
	}
	return s.challengeView(ctx, p, c)
}

// List lists, newest first, the challenges p made or that involve
// their bots (at most limit).
func (cs *Challenges) List(ctx context.Context, p accounts.Principal, limit int) ([]ChallengeView, error) {
	s := cs.p
	if !p.SignedIn() {
		return nil, errs.New(errs.ErrUnauthenticated, "sign in to see your challenges")
	}
	list, err := s.deps.Store.Challenges(ctx, p.Owners(), limit)
	if err != nil {
		return nil, err
	}
	out := []ChallengeView{}
	for _, c := range list {
		v, err := s.challengeView(ctx, p, c)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// maySee says whether p may see a challenge: its challenger, the owners
// of either bot and admins may.
func maySee(p accounts.Principal, c store.Challenge) bool {
	return p.Admin() || p.Name == c.CreatedBy || p.Owns(c.Owner) || c.OpponentOwner != "" && p.Owns(c.OpponentOwner)
}

// challengeView counts a challenge's games from their matches.
func (s *Platform) challengeView(ctx context.Context, p accounts.Principal, c store.Challenge) (ChallengeView, error) {
	v := ChallengeView{ID: c.ID, Game: c.Game, CreatedBy: c.CreatedBy, Owner: c.Owner, Bot: c.Bot, Opponent: c.Opponent, OpponentOwner: c.OpponentOwner,
		OpponentBot: c.OpponentBot, Map: c.Map, Games: c.Games, Ranked: c.Ranked, CreatedAt: c.CreatedAt, Matches: []ChallengeGame{},
		Mine: p.Name == c.CreatedBy || p.Owns(c.Owner)}
	if len(c.Matches) < c.Games {
		v.Note = fmt.Sprintf("%d of its %d games were queued", len(c.Matches), c.Games)
	}
	points := 0.0
	for _, cm := range c.Matches {
		g := ChallengeGame{Idx: cm.Idx, ID: cm.MatchID, Seat: cm.Seat, Map: cm.Map, Seed: fmt.Sprint(cm.Seed)}
		m, err := s.deps.Store.Get(ctx, cm.MatchID)
		if err != nil {
			return ChallengeView{}, err
		}
		g.Status = m.Status
		// What the store says is over is (the queue may not know yet).
		if st, pos, ok := s.queue.Status(cm.MatchID); ok && !matches.State(m.Status).Final() {
			g.Status, g.Position = string(st), pos
		}
		if !matches.State(g.Status).Final() {
			v.Pending++
			v.Matches = append(v.Matches, g)
			continue
		}
		var res *matches.Result
		if len(m.Result) > 0 {
			res = new(matches.Result)
			if err := json.Unmarshal(m.Result, res); err != nil {
				res = nil
			}
		}
		verdict := ladder.Judge(m.Status, m.Error, res, 2)
		switch {
		case verdict.Void != "":
			g.Void = verdict.Void
			v.Void++
		default:
			g.Outcome = verdict.Outcomes[cm.Seat]
			switch g.Outcome {
			case ladder.Win:
				v.Wins++
				points++
			case ladder.Draw:
				v.Draws++
				points += 0.5
			default:
				v.Losses++
			}
		}
		v.Matches = append(v.Matches, g)
	}
	decided := v.Wins + v.Draws + v.Losses
	if decided > 0 {
		v.Points = points / float64(decided)
	}
	v.Interval = contest.Wilson(points, decided)
	return v, nil
}

// notifyChallenge tells both sides of a challenge that it is over, once
// the last of its games (matchID) is.
func (s *Platform) notifyChallenge(ctx context.Context, matchID string) {
	id, err := s.deps.Store.ChallengeOf(ctx, matchID)
	if err != nil {
		return // not a challenge's game (or the store failed: nothing to say)
	}
	c, err := s.deps.Store.Challenge(ctx, id)
	if err != nil {
		return
	}
	s.notify.once.Lock()
	defer s.notify.once.Unlock()
	v, err := s.challengeView(ctx, accounts.Principal{Name: c.CreatedBy}, c)
	if err != nil || v.Pending > 0 || len(c.Matches) < c.Games {
		return
	}
	if told, err := s.deps.Store.Notified(ctx, c.CreatedBy, NotifyChallenge, "challenge", c.ID, time.Time{}); err != nil || told {
		return // its last two games ended together
	}
	text := fmt.Sprintf("Challenge %d is over: %s's %s against %s, %d won, %d drawn, %d lost", c.ID, c.CreatedBy, c.Bot, c.OpponentBot, v.Wins, v.Draws, v.Losses)
	if v.Void > 0 {
		text += fmt.Sprintf(", %d void", v.Void)
	}
	fields := map[string]any{"challenge": c.ID, "bot": c.Bot, "opponent_bot": c.OpponentBot, "wins": v.Wins, "draws": v.Draws, "losses": v.Losses, "void": v.Void}
	people := append([]string{c.CreatedBy}, s.peopleOf(ctx, c.OpponentOwner)...)
	s.notifyAll(ctx, people, NotifyChallenge, text+".", fmt.Sprintf("#/challenges/%d", c.ID), fields)
}
