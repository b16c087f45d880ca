package contest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"arena/engine"
	"arena/ladder"
	"arena/ladder/skill"
	"arena/matches"
	"arena/store"
)

// Deps are the contests' collaborators.
type Deps struct {
	Store *store.Store
	// Games are the games on offer.
	Games *engine.Catalog
	// Queue plays the final's matches (the server's queue).
	Queue ladder.Queue
	// Image resolves an image reference to its id, fetching a pushed bot
	// onto the engine; errors wrap matches.ErrImageNotFound.
	Image func(ctx context.Context, ref string) (string, error)
	// Labels reads an image's io.arena.game and
	// org.opencontainers.image.authors labels.
	Labels func(ctx context.Context, id string) (game, authors string)
	// Notify tells an entry's owner (a user or a team) what happened:
	// the deadline (final false) or the final standings (final true);
	// nil: nobody is told.
	Notify func(ctx context.Context, owner string, final bool, text, link string, fields map[string]any)
	Log    *zap.Logger
	Now    func() time.Time
}

// Config is the contests' policy.
type Config struct {
	// InFlight bounds each final's matches waiting or playing at once
	// (0: 2).
	InFlight int
	// Tries bounds how often a game the platform could not play is
	// played again before it is void (0: 5).
	Tries int
	// Tick is how often the runner looks at the clock (0: 1 s).
	Tick time.Duration
	// PracticeInFlight bounds each open contest's practice matches
	// waiting or playing at once (0: 1); NoPractice turns practice off.
	PracticeInFlight int
	NoPractice       bool
	// Model rates the practice ladder (zero: skill.Default()).
	Model skill.Model
}

// Contests runs every contest: their freezes and finals.
type Contests struct {
	cfg  Config
	deps Deps
	log  *zap.Logger
	kick chan struct{}
	// mu: one step at a time (the loop's, a staff action's).
	mu sync.Mutex
}

// New returns the contests; Run plays their finals.
func New(cfg Config, deps Deps) *Contests {
	if cfg.InFlight <= 0 {
		cfg.InFlight = 2
	}
	if cfg.Tries <= 0 {
		cfg.Tries = 5
	}
	if cfg.Tick <= 0 {
		cfg.Tick = time.Second
	}
	if cfg.PracticeInFlight <= 0 {
		cfg.PracticeInFlight = 1
	}
	if cfg.Model == (skill.Model{}) {
		cfg.Model = skill.Default()
	}
	if deps.Log == nil {
		deps.Log = zap.NewNop()
	}
	if deps.Now == nil {
		deps.Now = time.Now
	}
	return &Contests{cfg: cfg, deps: deps, log: deps.Log, kick: make(chan struct{}, 1)}
}

func (c *Contests) wake() {
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

// Observe is told every change of a match's state: a match that is over
// wakes the runner (it settles the final's games from the store).
func (c *Contests) Observe(u matches.Update) {
	if u.State.Final() {
		c.wake()
	}
}

// Run freezes contests at their deadlines and plays their finals until
// ctx ends. A final is resumable: each of its games is a row that names
// the match playing it, so after a restart finished games stay scored,
// interrupted ones are played again, and none is played twice.
func (c *Contests) Run(ctx context.Context) {
	t := time.NewTicker(c.cfg.Tick)
	defer t.Stop()
	for {
		if err := c.Step(ctx); err != nil && ctx.Err() == nil {
			c.log.Warn("contests", zap.Error(err))
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-c.kick:
		}
	}
}

// Step does what is due: freezes the open contests past their deadline,
// settles and feeds the finals, and closes the finals whose games are
// all over.
func (c *Contests) Step(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	open, err := c.deps.Store.Contests(ctx, store.ContestOpen)
	if err != nil {
		return err
	}
	var errs []error
	for _, ct := range open {
		if !c.deps.Now().Before(ct.FreezeAt) {
			if err := c.freeze(ctx, ct); err != nil {
				errs = append(errs, fmt.Errorf("contest %d: freeze: %w", ct.ID, err))
			}
			continue
		}
		if err := c.practice(ctx, ct); err != nil {
			errs = append(errs, fmt.Errorf("contest %d: practice: %w", ct.ID, err))
		}
	}
	finals, err := c.deps.Store.Contests(ctx, store.ContestFinal)
	if err != nil {
		return err
	}
	for _, ct := range finals {
		if err := c.play(ctx, ct); err != nil {
			errs = append(errs, fmt.Errorf("contest %d: final: %w", ct.ID, err))
		}
	}
	done, err := c.deps.Store.Contests(ctx, store.ContestDone)
	if err != nil {
		return err
	}
	// Practice games that straddled the freeze are settled once over
	// (an open contest's, by its practice above).
	pending, err := c.deps.Store.PendingPracticeGames(ctx)
	if err != nil {
		return err
	}
	pending = slices.DeleteFunc(pending, func(p store.PracticeGame) bool {
		return slices.ContainsFunc(open, func(ct store.Contest) bool { return ct.ID == p.ContestID })
	})
	if _, err := c.settlePractice(ctx, pending); err != nil {
		errs = append(errs, fmt.Errorf("practice after the freeze: %w", err))
	}
	// The gates: those entrants asked for, and the final versions'.
	for _, ct := range append(open, done...) {
		if err := c.gates(ctx, ct); err != nil {
			errs = append(errs, fmt.Errorf("contest %d: gates: %w", ct.ID, err))
		}
	}
	return errors.Join(errs...)
}

// spec reads a contest's settings.
func spec(ct store.Contest) (Spec, error) {
	var s Spec
	if err := json.Unmarshal(ct.Spec, &s); err != nil {
		return Spec{}, fmt.Errorf("contest %d: its settings: %w", ct.ID, err)
	}
	return s, nil
}

// Create records a new contest, its settings checked; a seed is picked
// when none is given.
func (c *Contests) Create(ctx context.Context, s Spec, by string) (store.Contest, error) {
	if err := s.Check(c.deps.Games.List()); err != nil {
		return store.Contest{}, err
	}
	if s.Entrants == Invited && s.Invite == "" {
		code, err := newInvite()
		if err != nil {
			return store.Contest{}, err
		}
		s.Invite = code
	}
	if s.Seed == 0 {
		var b [8]byte
		if _, err := rand.Read(b[:]); err != nil {
			return store.Contest{}, err
		}
		s.Seed = Seed(max(1, binary.BigEndian.Uint64(b[:])>>11))
	}
	data, err := json.Marshal(s)
	if err != nil {
		return store.Contest{}, err
	}
	ct, err := c.deps.Store.CreateContest(ctx, store.Contest{Name: s.Name, Game: s.Game, Spec: data, FreezeAt: s.FreezeAt, CreatedBy: by, CreatedAt: c.deps.Now()})
	if err == nil {
		c.log.Info("contest created", zap.Int64("contest", ct.ID), zap.String("name", ct.Name), zap.Time("freeze_at", ct.FreezeAt))
		c.wake()
	}
	return ct, err
}

// Update changes an open contest's settings (a staff action, audited):
// patch is a JSON object of Spec's fields to set (a merge patch), and
// "new_invite": true replaces the invitation code. Its game and seed are
// fixed (clone it instead); settings are checked as at creation.
func (c *Contests) Update(ctx context.Context, id int64, patch json.RawMessage, by string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	ct, err := c.deps.Store.Contest(ctx, id)
	if err != nil {
		return err
	}
	old, err := spec(ct)
	if err != nil {
		return err
	}
	fields, rotate, err := patchFields(patch)
	if err != nil {
		return err
	}
	rest, err := json.Marshal(fields)
	if err != nil {
		return err
	}
	s := old
	clearLists(&s, fields)
	dec := json.NewDecoder(bytes.NewReader(rest))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return invalid("%v", err)
	}
	if rotate || s.Entrants == Invited && s.Invite == "" {
		if s.Invite, err = newInvite(); err != nil {
			return err
		}
	}
	if err := s.Check(c.deps.Games.List()); err != nil {
		return err
	}
	what := specChanges(old, s)
	if len(what) == 0 {
		return nil
	}
	data, err := json.Marshal(s)
	if err != nil {
		return err
	}
	if err := c.deps.Store.UpdateContest(ctx, id, data, s.FreezeAt, c.deps.Now(), by, "update", strings.Join(what, "; ")); err != nil {
		return err
	}
	c.wake()
	return nil
}

// patchFields reads an update's patch: the settings it sets, none of them
// fixed, and whether it asks for a new invitation code ("new_invite", taken
// out of the fields).
func patchFields(patch json.RawMessage) (fields map[string]json.RawMessage, rotate bool, err error) {
	if err := json.Unmarshal(patch, &fields); err != nil || fields == nil {
		return nil, false, invalid("send a JSON object of the settings to change, e.g. {\"freeze_at\": \"2027-01-31T18:00:00Z\"}")
	}
	if len(fields) == 0 {
		return nil, false, invalid("no setting to change")
	}
	for _, fixed := range []string{"game", "seed", "invite"} {
		if _, ok := fields[fixed]; ok {
			if fixed == "invite" {
				return nil, false, invalid(`invite: the invitation code is made by the server: send {"new_invite": true} to replace it`)
			}
			return nil, false, invalid("%s: a contest's %s is fixed once it is made: clone it to change it", fixed, fixed)
		}
	}
	if raw, ok := fields["new_invite"]; ok {
		if err := json.Unmarshal(raw, &rotate); err != nil {
			return nil, false, invalid("new_invite: true or false")
		}
		delete(fields, "new_invite")
	}
	return fields, rotate, nil
}

// clearLists empties the lists a patch sets: lists are replaced, not
// merged.
func clearLists(s *Spec, fields map[string]json.RawMessage) {
	for k, empty := range map[string]func(){
		"maps":           func() { s.Maps = nil },
		"allowed":        func() { s.Allowed = nil },
		"tiebreak":       func() { s.TieBreak = nil },
		"gates":          func() { s.Gates = nil },
		"reference_bots": func() { s.ReferenceBots = nil },
	} {
		if _, ok := fields[k]; ok {
			empty()
		}
	}
}

// specChanges names what changed between two settings, field by field
// (the invitation code is not written out).
func specChanges(old, cur Spec) []string {
	fields := func(s Spec) map[string]json.RawMessage {
		s.Invite = ""
		data, _ := json.Marshal(s)
		var m map[string]json.RawMessage
		json.Unmarshal(data, &m)
		return m
	}
	a, b := fields(old), fields(cur)
	keys := map[string]bool{}
	for k := range a {
		keys[k] = true
	}
	for k := range b {
		keys[k] = true
	}
	var out []string
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		if bytes.Equal(a[k], b[k]) {
			continue
		}
		switch {
		case k == "rules":
			out = append(out, "rules changed")
		case a[k] == nil:
			out = append(out, fmt.Sprintf("%s set to %s", k, b[k]))
		case b[k] == nil:
			out = append(out, fmt.Sprintf("%s %s → the default", k, a[k]))
		default:
			out = append(out, fmt.Sprintf("%s %s → %s", k, a[k], b[k]))
		}
	}
	if old.Invite != "" && cur.Invite != "" && old.Invite != cur.Invite {
		out = append(out, "a new invitation code (the old one no longer admits)")
	}
	return out
}

// Entry is what an entrant enters: a pushed bot's repository (with the
// tag to play in the final, "" for the latest ready one), or an image of
// the engine (Image, pinned now).
type Entry struct {
	Owner, By  string
	Repository string
	Tag        string
	Image      string
	// Invite is the invitation code the entrant brings ("" for none).
	Invite string
}

// Enter enters a bot in an open contest. The entry is its owner's (a
// user, or a team; an image staff enter is theirs, or their team's) and
// counts against the contest's entries per person (Spec.MayCount), as
// anyone's does.
func (c *Contests) Enter(ctx context.Context, id int64, e Entry) (store.ContestEntry, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ct, err := c.deps.Store.Contest(ctx, id)
	if err != nil {
		return store.ContestEntry{}, err
	}
	if ct.State != store.ContestOpen || !c.deps.Now().Before(ct.FreezeAt) {
		return store.ContestEntry{}, fmt.Errorf("%w: the deadline (%s) has passed: no new entry plays the final", store.ErrContestClosed, ct.FreezeAt.UTC().Format(time.RFC3339))
	}
	s, err := spec(ct)
	if err != nil {
		return store.ContestEntry{}, err
	}
	if err := s.MayEnter(e.Owner, e.Invite); err != nil {
		return store.ContestEntry{}, err
	}
	entries, err := c.deps.Store.ContestEntries(ctx, id)
	if err != nil {
		return store.ContestEntry{}, err
	}
	rec := store.ContestEntry{ContestID: id, Owner: e.Owner, CreatedBy: e.By, CreatedAt: c.deps.Now()}
	switch {
	case e.Repository != "":
		err = c.botEntry(ctx, s, e, &rec)
	case e.Image != "":
		err = c.imageEntry(ctx, s, e, &rec)
	default:
		err = invalid(`send {"bot": "NAME/bot[:tag]"} (a pushed bot) or {"image": …}`)
	}
	if err != nil {
		return store.ContestEntry{}, err
	}
	for _, o := range entries {
		if o.State == store.EntryEntered && o.Image == rec.Image {
			return store.ContestEntry{}, invalid("%s is entered already (entry %d)", rec.Image, o.ID)
		}
	}
	// Entries per person: checked in the insert's transaction, with the
	// teams' members as they are now. Who joins a team after entering
	// (or after the team entered) is not checked again: both entries
	// stay.
	out, err := c.deps.Store.AddContestEntry(ctx, rec, func(ct store.Contest, entered []store.ContestEntry, persons map[string][]string) error {
		s, err := spec(ct)
		if err != nil {
			return err
		}
		return s.MayCount(rec.Owner, entered, persons)
	})
	if err == nil {
		c.log.Info("contest entry", zap.Int64("contest", id), zap.Int64("entry", out.ID), zap.String("bot", out.Image), zap.String("owner", out.Owner))
	}
	return out, err
}

// botEntry fills the record of an entry of a pushed bot: the entrant's,
// with a version, all of them for the contest's game, the tag asked among
// them.
func (c *Contests) botEntry(ctx context.Context, s Spec, e Entry, rec *store.ContestEntry) error {
	tags, err := c.versions(ctx, e.Repository, time.Time{})
	if err != nil {
		return err
	}
	if len(tags) == 0 {
		return invalid("bot: %s has no pushed version", e.Repository)
	}
	if tags[0].Owner != e.Owner {
		return invalid("bot: %s is %s's, not %s's", e.Repository, tags[0].Owner, e.Owner)
	}
	for _, t := range tags {
		if t.Game != "" && t.Game != s.Game {
			return invalid("bot: %s:%s is labelled for %s (io.arena.game), not %s", t.Repository, t.Tag, t.Game, s.Game)
		}
	}
	if e.Tag != "" && !hasTag(tags, e.Tag) {
		return invalid("bot: %s has no version %q", e.Repository, e.Tag)
	}
	rec.Bot, rec.Image, rec.Version = e.Repository, e.Repository, e.Tag
	return nil
}

// imageEntry fills the record of an entry of an engine image, pinned now,
// its labels (when read) naming the contest's game.
func (c *Contests) imageEntry(ctx context.Context, s Spec, e Entry, rec *store.ContestEntry) error {
	imgID, err := c.deps.Image(ctx, e.Image)
	if err != nil {
		return err
	}
	rec.Image, rec.FinalRef, rec.FinalID = e.Image, e.Image, imgID
	if c.deps.Labels != nil {
		game, authors := c.deps.Labels(ctx, imgID)
		if game != "" && game != s.Game {
			return invalid("image: %s is labelled for %s (io.arena.game), not %s", e.Image, game, s.Game)
		}
		rec.Authors = authors
	}
	return nil
}

// hasTag says whether tag is among the versions.
func hasTag(tags []store.Tag, tag string) bool {
	for _, t := range tags {
		if t.Tag == tag {
			return true
		}
	}
	return false
}

// versions are a repository's pushed versions, newest first; with
// before set, only the ready ones pushed by then.
func (c *Contests) versions(ctx context.Context, repo string, before time.Time) ([]store.Tag, error) {
	owner, _, _ := strings.Cut(repo, "/")
	all, err := c.deps.Store.Tags(ctx, owner)
	if err != nil {
		return nil, err
	}
	var out []store.Tag
	for _, t := range all {
		if t.Repository != repo {
			continue
		}
		if !before.IsZero() && (t.State != store.TagReady || t.PushedAt.After(before)) {
			continue
		}
		out = append(out, t)
	}
	return out, nil
}

// Versions are the versions of an entry that may play its contest's
// final: the ready ones pushed before its deadline, newest first.
func (c *Contests) Versions(ctx context.Context, ct store.Contest, e store.ContestEntry) ([]store.Tag, error) {
	if e.Bot == "" {
		return nil, nil
	}
	return c.versions(ctx, e.Bot, ct.FreezeAt)
}

// Change is an entry's change: the version chosen for the final, a
// withdrawal (owner), a disqualification with its reason (staff).
type Change struct {
	Version    *string
	Withdraw   bool
	Disqualify *string
	By         string
}

// ChangeEntry changes an entry. Its version and withdrawal, only before
// the freeze; a disqualification, at any time (audited).
func (c *Contests) ChangeEntry(ctx context.Context, id, eid int64, ch Change) (store.ContestEntry, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ct, err := c.deps.Store.Contest(ctx, id)
	if err != nil {
		return store.ContestEntry{}, err
	}
	e, err := c.Entry(ctx, id, eid)
	if err != nil {
		return store.ContestEntry{}, err
	}
	open := ct.State == store.ContestOpen && c.deps.Now().Before(ct.FreezeAt)
	action, detail := "", ""
	switch {
	case ch.Disqualify != nil:
		why := strings.TrimSpace(*ch.Disqualify)
		if why == "" {
			return store.ContestEntry{}, invalid("disqualify: give the reason")
		}
		e.State, e.Reason = store.EntryDisqualified, why
		action, detail = "disqualify", fmt.Sprintf("entry %d (%s): %s", e.ID, e.Image, why)
	case !open:
		return store.ContestEntry{}, fmt.Errorf("%w: the deadline (%s) has passed: versions are final", store.ErrContestClosed, ct.FreezeAt.UTC().Format(time.RFC3339))
	case ch.Withdraw:
		e.State, e.Reason = store.EntryWithdrawn, "withdrawn by "+ch.By
	case ch.Version != nil:
		if e.Bot == "" {
			return store.ContestEntry{}, invalid("version: entry %d is an image of the engine, pinned when it was entered", e.ID)
		}
		v := strings.TrimSpace(*ch.Version)
		if v != "" {
			tags, err := c.versions(ctx, e.Bot, time.Time{})
			if err != nil {
				return store.ContestEntry{}, err
			}
			if !hasTag(tags, v) {
				return store.ContestEntry{}, invalid("version: %s has no version %q", e.Bot, v)
			}
		}
		e.Version = v
	default:
		return store.ContestEntry{}, invalid(`send {"version": "TAG"}, {"withdraw": true} or (staff) {"disqualify": "why"}`)
	}
	if err := c.deps.Store.SetContestEntry(ctx, e, ch.Disqualify != nil, c.deps.Now(), ch.By, action, detail); err != nil {
		return store.ContestEntry{}, err
	}
	return e, nil
}

// Entry is an entry of a contest (store.ErrNoContest if there is none).
func (c *Contests) Entry(ctx context.Context, id, eid int64) (store.ContestEntry, error) {
	entries, err := c.deps.Store.ContestEntries(ctx, id)
	if err != nil {
		return store.ContestEntry{}, err
	}
	for _, e := range entries {
		if e.ID == eid {
			return e, nil
		}
	}
	return store.ContestEntry{}, fmt.Errorf("%w: no entry %d in contest %d", store.ErrNoContest, eid, id)
}

// freeze pins each entry's final version and starts the final.
func (c *Contests) freeze(ctx context.Context, ct store.Contest) error {
	s, err := spec(ct)
	if err != nil {
		return err
	}
	entries, err := c.deps.Store.ContestEntries(ctx, ct.ID)
	if err != nil {
		return err
	}
	var playing []int64
	for i, e := range entries {
		if e.State != store.EntryEntered {
			continue
		}
		if e.Bot != "" {
			entries[i] = c.pin(ctx, ct, e)
		}
		if entries[i].State == store.EntryEntered {
			playing = append(playing, e.ID)
		}
	}
	format, err := s.format()
	if err != nil {
		return err
	}
	schedule, err := format.Start(c.final(ctx, ct, s, playing, nil, nil))
	if err != nil {
		return err
	}
	started, err := c.deps.Store.StartFinal(ctx, ct.ID, entries, storeGames(schedule), c.deps.Now())
	if started {
		c.log.Info("contest frozen: the final starts", zap.Int64("contest", ct.ID), zap.Int("entries", len(playing)), zap.Int("games", len(schedule)))
		c.notifyFreeze(ctx, ct, entries)
	}
	return err
}

// notifyFreeze tells each entrant what plays the final.
func (c *Contests) notifyFreeze(ctx context.Context, ct store.Contest, entries []store.ContestEntry) {
	if c.deps.Notify == nil {
		return
	}
	for _, e := range entries {
		text := ""
		switch e.State {
		case store.EntryEntered:
			what := e.Image
			if e.FinalRef != "" {
				what = e.FinalRef
			}
			text = fmt.Sprintf("Contest %d (%s): the deadline has passed; your entry %d plays the final with %s.", ct.ID, ct.Name, e.ID, what)
		case store.EntryNoVersion:
			text = fmt.Sprintf("Contest %d (%s): the deadline has passed; your entry %d plays no final: %s.", ct.ID, ct.Name, e.ID, e.Reason)
		default:
			continue
		}
		c.deps.Notify(ctx, e.Owner, false, text, fmt.Sprintf("#/contest/%d", ct.ID), map[string]any{"contest": ct.ID, "entry": e.ID, "state": e.State, "version": e.FinalRef})
	}
}

// notifyFinal tells each entrant their place in the final standings.
func (c *Contests) notifyFinal(ctx context.Context, ct store.Contest) {
	if c.deps.Notify == nil {
		return
	}
	board, err := c.Standings(ctx, ct.ID)
	if err != nil {
		c.log.Warn("contest: the standings to tell", zap.Int64("contest", ct.ID), zap.Error(err))
		return
	}
	for _, r := range board.Rows {
		place := fmt.Sprintf("placed %d of %d with %g points (%d won, %d drawn, %d lost)", r.Rank, len(board.Rows), r.Points, r.Wins, r.Draws, r.Losses)
		if r.Rank == 0 {
			place = "is disqualified"
		}
		text := fmt.Sprintf("Contest %d (%s) is over: your entry %d %s.", ct.ID, ct.Name, r.Entry, place)
		c.deps.Notify(ctx, r.Owner, true, text, fmt.Sprintf("#/contest/%d", ct.ID), map[string]any{"contest": ct.ID, "entry": r.Entry, "rank": r.Rank, "points": r.Points})
	}
}

// storeGames are a schedule's games as the store keeps them: a bye (no
// second seat) is won at once.
func storeGames(schedule []Game) []store.ContestGame {
	var out []store.ContestGame
	for _, g := range schedule {
		rec := store.ContestGame{Idx: g.Idx, First: g.First, Second: g.Second, Map: g.Map, Seed: g.Seed}
		if g.Second == 0 {
			rec.State, rec.Outcome, rec.Note = store.GameScored, OutcomeBye, "a bye: no opponent this round"
		}
		out = append(out, rec)
	}
	return out
}

// seeding is the entries in the order a Swiss system seeds them: by the
// practice board (the strongest first), then those that played no
// practice, in the order they entered.
func (c *Contests) seeding(ctx context.Context, id int64, playing []int64) ([]int64, error) {
	practice, err := c.deps.Store.PracticeGames(ctx, id)
	if err != nil {
		return nil, err
	}
	var ents []Entrant
	for _, e := range playing {
		ents = append(ents, Entrant{ID: e})
	}
	board := PracticeBoard(c.cfg.Model, ents, practice)
	var order []int64
	for _, r := range board {
		if r.Played > 0 {
			order = append(order, r.Entry)
		}
	}
	rest := slices.Clone(playing)
	slices.Sort(rest)
	for _, e := range rest {
		if !slices.Contains(order, e) {
			order = append(order, e)
		}
	}
	return order, nil
}

// final is what a format sees of a contest's final.
func (c *Contests) final(ctx context.Context, ct store.Contest, s Spec, playing []int64, games []store.ContestGame, entries map[int64]store.ContestEntry) Final {
	out := map[int64]bool{}
	for id, e := range entries {
		if e.State == store.EntryDisqualified {
			out[id] = true
		}
	}
	return Final{
		Spec: s, Entries: playing, Games: games, Disqualified: out,
		Seeding: func(ids []int64) ([]int64, error) { return c.seeding(ctx, ct.ID, ids) },
	}
}

// nextRound adds the final's next round, as its format pairs it, once
// every game so far is over; false when the final is done.
func (c *Contests) nextRound(ctx context.Context, ct store.Contest, s Spec, games []store.ContestGame, entries map[int64]store.ContestEntry) (bool, error) {
	// The final's entries are those of its first round.
	var first []int64
	for _, g := range games {
		if g.Round == 0 {
			for _, e := range []int64{g.First, g.Second} {
				if e != 0 && !slices.Contains(first, e) {
					first = append(first, e)
				}
			}
		}
	}
	format, err := s.format()
	if err != nil {
		return false, err
	}
	r, more, err := format.Next(c.final(ctx, ct, s, first, games, entries))
	if err != nil || !more {
		return false, err
	}
	added, err := c.deps.Store.AddContestRound(ctx, ct.ID, r.N, storeGames(r.Games), c.deps.Now(), r.Detail)
	if added {
		c.log.Info("contest: the next round", zap.Int64("contest", ct.ID), zap.String("format", format.Name()), zap.String("round", r.Detail))
	}
	return true, err
}

// pin is an entry of a pushed bot with its final version pinned: the
// chosen tag if it is ready and was pushed before the deadline, else
// the newest that is; none: the entry plays no final.
func (c *Contests) pin(ctx context.Context, ct store.Contest, e store.ContestEntry) store.ContestEntry {
	tags, err := c.versions(ctx, e.Bot, ct.FreezeAt)
	if err != nil || len(tags) == 0 {
		e.State, e.Reason = store.EntryNoVersion, "no ready version was pushed before the deadline"
		return e
	}
	pick := tags[0]
	for _, t := range tags {
		if t.Tag == e.Version {
			pick = t
		}
	}
	if e.Version != "" && pick.Tag != e.Version {
		e.Reason = fmt.Sprintf("the chosen version %s was not ready before the deadline (or was pushed again since): %s plays", e.Version, pick.Tag)
	}
	// The tag names the same image as at the deadline: a tag pushed
	// again since would have been left out of the versions.
	ref := pick.Repository + ":" + pick.Tag
	id, err := c.deps.Image(ctx, ref)
	if err == nil && id != pick.ImageID {
		err = fmt.Errorf("the engine holds %s as %s, not %s", ref, id, pick.ImageID)
	}
	if err != nil {
		e.State, e.Reason = store.EntryNoVersion, fmt.Sprintf("its version %s could not be fetched: %v", ref, err)
		return e
	}
	e.FinalRef, e.FinalID, e.FinalDigest, e.Authors = ref, pick.ImageID, pick.Repository+"@"+pick.Digest, pick.Authors
	return e
}

// play settles a final's games whose matches are over, plays the next
// ones, and closes the final when every game is over.
// settle judges the match playing a game that was tried tries times:
// over or not, and how it counts (scored; pending, to be played again,
// with why in the note; void past the tries).
func (c *Contests) settle(ctx context.Context, matchID string, tries int) (state, outcome, note string, over bool, err error) {
	state, outcome, over, err = c.judge(ctx, matchID)
	if err != nil || !over {
		return "", "", "", false, err
	}
	switch {
	case state == store.GamePending && tries >= c.cfg.Tries:
		state, outcome, note = store.GameVoid, "", fmt.Sprintf("not scored: the platform could not play it in %d tries; the last: %s", tries, outcome)
	case state == store.GamePending:
		outcome, note = "", outcome
	}
	return state, outcome, note, true, nil
}

func (c *Contests) play(ctx context.Context, ct store.Contest) error {
	s, err := spec(ct)
	if err != nil {
		return err
	}
	g, err := c.deps.Games.Find(s.Game)
	if err != nil {
		return err
	}
	games, err := c.deps.Store.ContestGames(ctx, ct.ID)
	if err != nil {
		return err
	}
	entries, err := c.deps.Store.ContestEntries(ctx, ct.ID)
	if err != nil {
		return err
	}
	byID := map[int64]store.ContestEntry{}
	for _, e := range entries {
		byID[e.ID] = e
	}
	busy, open := 0, 0
	for i := range games {
		gm := &games[i]
		if gm.State != store.GamePending {
			continue
		}
		open++
		if gm.MatchID == "" {
			continue
		}
		state, outcome, note, over, err := c.settle(ctx, gm.MatchID, gm.Tries)
		if err != nil {
			return err
		}
		if !over {
			busy++
			continue
		}
		if _, err := c.deps.Store.SettleContestGame(ctx, ct.ID, gm.Idx, gm.MatchID, state, outcome, note); err != nil {
			return err
		}
		// The format's next round is paired on these games too.
		gm.State, gm.Outcome, gm.Note = state, outcome, note
		if state == store.GamePending {
			c.log.Warn("contest game to be played again", zap.Int64("contest", ct.ID), zap.Int("game", gm.Idx), zap.String("match", gm.MatchID), zap.String("why", note))
			gm.MatchID = ""
		} else {
			open--
		}
	}
	if open == 0 {
		more, err := c.nextRound(ctx, ct, s, games, byID)
		if err != nil || more {
			// Its games are played from the next step.
			c.wake()
			return err
		}
		if err := c.deps.Store.FinishContest(ctx, ct.ID, c.deps.Now()); err != nil {
			return err
		}
		c.log.Info("contest done: the standings are final", zap.Int64("contest", ct.ID))
		c.notifyFinal(ctx, ct)
		return nil
	}
	for i := range games {
		if busy >= c.cfg.InFlight {
			break
		}
		gm := games[i]
		if gm.State != store.GamePending || gm.MatchID != "" {
			continue
		}
		m, err := g.Map(gm.Map)
		if err != nil {
			return err
		}
		a, b := byID[gm.First], byID[gm.Second]
		req := matches.Request{
			Game: g, Map: m, Seed: gm.Seed, Limits: s.Limits(), MatchID: matches.NewMatchID(), Priority: matches.Background, Kind: matches.KindContest,
			// Pinned to the images of the freeze; the queue finds the
			// digests a worker pulls them by.
			Images:   []string{a.FinalRef, b.FinalRef},
			ImageIDs: []string{a.FinalID, b.FinalID},
		}
		err = c.deps.Queue.Submit(ctx, req, func(ctx context.Context, m store.Match) error {
			return c.deps.Store.InsertContestMatch(ctx, m, ct.ID, gm.Idx)
		})
		if errors.Is(err, store.ErrGameTaken) {
			continue
		}
		if err != nil {
			// Recorded and refused by the queue: settled (and played
			// again) at the next step.
			c.log.Warn("queue a contest game", zap.Int64("contest", ct.ID), zap.Int("game", gm.Idx), zap.Error(err))
			return err
		}
		busy++
	}
	return nil
}
