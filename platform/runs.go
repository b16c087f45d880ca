package platform

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"go.uber.org/zap"

	"arena/accounts"
	"arena/internal/errs"
	"arena/matches"
	"arena/sourcebuild"
	"arena/store"
)

// Runs: a draft built with its kit's recipe (the sandbox, limits and
// refusals of an upload's build, no check match: a Run is a private test)
// and played against an opponent chosen in the page's run bar (the
// example bots, the owner's own versions, a contest's reference bots), or
// against the person who runs it. A draft's owner (a user, or a team) has
// one Run at a time: a new one cancels the last (its build or its
// match). Its image is one tag per owner (RunRepository), the newest
// replacing the last (which leaves the registry and the engine), counted
// against the quota as any tag, exported to workers as pushed bots are;
// it is no version: no check plays it, no list shows it, nothing but its
// Run's match names it.

// RunRepository is the repository of an owner's Run image: OWNER/arena-run.
const RunRepository = "arena-run"

// runTag is the Run image's one tag.
const runTag = "latest"

// isRunRepo says whether a repository holds an owner's Run image.
func isRunRepo(repo string) bool {
	_, name, ok := cutNamespace(repo)
	return ok && name == RunRepository
}

// cutNamespace splits NAME/repo.
func cutNamespace(repo string) (ns, name string, ok bool) {
	for i := 0; i < len(repo); i++ {
		if repo[i] == '/' {
			return repo[:i], repo[i+1:], true
		}
	}
	return "", repo, false
}

// runPushKey marks the platform's own push of a Run image: the only push
// to OWNER/arena-run the registry takes.
type runPushKey struct{}

// The states of a Run.
const (
	RunBuilding  = "building"
	RunPlaying   = "playing"
	RunDone      = "done"
	RunFailed    = "failed"
	RunCancelled = "cancelled"
)

// RunRequest is a Run: the draft's version (0: its newest), the opponent
// (an image the run bar offers), the map (none: the game's first for two
// bots), and whether the person plays the opponent's seat themselves.
type RunRequest struct {
	Base     int64  `json:"base"`
	Opponent string `json:"opponent"`
	Map      string `json:"map,omitempty"`
	Human    bool   `json:"human,omitempty"`
}

// RunView is a Run as its owner sees it: its state, why it failed, its
// match once it plays, and its build's log so far.
type RunView struct {
	ID       string     `json:"id"`
	Draft    int64      `json:"draft"`
	Version  int64      `json:"version"`
	By       string     `json:"by"`
	Opponent string     `json:"opponent"`
	State    string     `json:"state"`
	Error    string     `json:"error,omitempty"`
	Match    string     `json:"match,omitempty"`
	Human    bool       `json:"human,omitempty"`
	Log      string     `json:"log"`
	Started  time.Time  `json:"started_at"`
	Finished *time.Time `json:"finished_at,omitempty"`
}

// run is a Run in flight or done: its view, its log, what stops it, and
// a channel closed at its next change.
type run struct {
	mu      sync.Mutex
	view    RunView
	log     boundedLog
	cancel  context.CancelFunc
	changed chan struct{}
	owner   string
}

func (r *run) touchLocked() {
	close(r.changed)
	r.changed = make(chan struct{})
}

// set changes a Run's view under its lock.
func (r *run) set(f func(v *RunView)) {
	r.mu.Lock()
	f(&r.view)
	r.touchLocked()
	r.mu.Unlock()
}

// Write adds to the Run's log (its build's), waking who follows it.
func (r *run) Write(p []byte) (int, error) {
	r.log.Write(p)
	r.mu.Lock()
	r.touchLocked()
	r.mu.Unlock()
	return len(p), nil
}

// snapshot is the Run's view with its log, and the channel its next
// change closes.
func (r *run) snapshot() (RunView, <-chan struct{}) {
	r.mu.Lock()
	defer r.mu.Unlock()
	v := r.view
	v.Log = r.log.String()
	return v, r.changed
}

// runs are the Runs: each owner's last, and the match each plays; and
// the kits being prepared.
type runs struct {
	mu        sync.Mutex
	byOwner   map[string]*run
	byMatch   map[string]*run
	preparing map[string]bool
}

func (rs *runs) init() {
	rs.byOwner, rs.byMatch, rs.preparing = map[string]*run{}, map[string]*run{}, map[string]bool{}
}

// prepareKit readies a kit's builds in the background (its base image,
// saved and compressed once: kitBases in cmd/arena), as a draft of the
// kit opens: its first Run does not wait for that. One at a time per
// kit; a kit ready already is ready at once.
func (s *Platform) prepareKit(kit string) {
	if !s.buildsOn() {
		return
	}
	s.runs.mu.Lock()
	busy := s.runs.preparing[kit]
	s.runs.preparing[kit] = true
	s.runs.mu.Unlock()
	if busy {
		return
	}
	s.untilShutdown(func(ctx context.Context) {
		defer func() {
			s.runs.mu.Lock()
			delete(s.runs.preparing, kit)
			s.runs.mu.Unlock()
		}()
		if err := s.deps.Builder.Prepare(ctx, kit); err != nil && ctx.Err() == nil {
			s.log.Info("prepare a kit's builds", zap.String("kit", kit), zap.Error(err))
		}
	})
}

// RunOpponent is an image the run bar offers: an example bot, a version of
// the owner's, a contest's reference bot.
type RunOpponent struct {
	Image string `json:"image"`
	Label string `json:"label"`
	Kind  string `json:"kind"`
}

// Opponents are what a draft's Run may play against: the game's example
// bots on the engine, the owner's (and p's teams') versions that are
// ready, and the reference bots of the game's contests that are not over
// (other people's bots are for Challenges).
func (ds *Drafts) Opponents(ctx context.Context, p accounts.Principal, id int64) ([]RunOpponent, error) {
	s := ds.p
	d, err := ds.writable(ctx, p, id)
	if err != nil {
		return nil, err
	}
	out := []RunOpponent{}
	seen := map[string]bool{}
	add := func(o RunOpponent) {
		if !seen[o.Image] {
			seen[o.Image] = true
			out = append(out, o)
		}
	}
	for _, b := range s.checkOpponents(ctx, d.Game, "") {
		if b != "" {
			add(RunOpponent{Image: b, Label: b + " (an example bot)", Kind: "example"})
		}
	}
	if s.registry != nil {
		tags, err := s.deps.Store.Tags(ctx, p.Owners()...)
		if err != nil {
			return nil, err
		}
		for _, t := range tags {
			if t.State == store.TagReady && t.Game == d.Game && !isRunRepo(t.Repository) {
				ref := t.Repository + ":" + t.Tag
				add(RunOpponent{Image: ref, Label: ref + " (yours)", Kind: "mine"})
			}
		}
	}
	refs, err := s.contests.ReferenceBots(ctx, d.Game)
	if err != nil {
		return nil, err
	}
	for _, r := range refs {
		add(RunOpponent{Image: r.Image, Label: fmt.Sprintf("%s (contest %s's reference bot)", r.Image, r.Contest), Kind: "reference"})
	}
	return out, nil
}

// Run builds a draft of p's and plays it, cancelling its owner's last
// Run; it returns the Run as it starts (building).
func (ds *Drafts) Run(ctx context.Context, p accounts.Principal, id int64, r RunRequest) (RunView, error) {
	s := ds.p
	if !s.buildsOn() {
		return RunView{}, errs.New(errs.ErrNotFound, "this server builds no drafts (it needs its registry, ARENA_REGISTRY=on)")
	}
	d, err := ds.writable(ctx, p, id)
	if err != nil {
		return RunView{}, err
	}
	v, err := ds.version(ctx, d, r.Base)
	if err != nil {
		return RunView{}, err
	}
	game, m, err := s.runMap(d.Game, r.Map)
	if err != nil {
		return RunView{}, err
	}
	if !r.Human {
		opponents, err := ds.Opponents(ctx, p, id)
		if err != nil {
			return RunView{}, err
		}
		if !slices.ContainsFunc(opponents, func(o RunOpponent) bool { return o.Image == r.Opponent }) {
			return RunView{}, errs.Errorf(errs.ErrInvalid, "opponent %q: one of the run bar's (the example bots, your versions, a contest's reference bots): other people's bots are for Challenges", r.Opponent)
		}
	}
	src := sourcebuild.Source{}
	for name, text := range v.Files {
		src.Files = append(src.Files, sourcebuild.File{Name: name, Data: []byte(text)})
	}
	kit, err := sourcebuild.FindKit(d.Kit, src)
	if err != nil {
		return RunView{}, errs.Mark(errs.ErrInvalid, err)
	}
	rn := &run{owner: d.Owner, changed: make(chan struct{}),
		view: RunView{ID: matches.NewMatchID(), Draft: d.ID, Version: v.Version, By: p.Name, Opponent: r.Opponent, Human: r.Human, State: RunBuilding, Started: s.now()}}
	if r.Human {
		rn.view.Opponent = "you"
	}
	rctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	rn.cancel = cancel
	s.replaceRun(rn)
	plan := runPlan{p: p, d: d, main: v.Main, kit: kit, src: src, game: game.Name(), m: m, opponent: r.Opponent, human: r.Human}
	s.loops.Go(func() { s.playRun(rctx, rn, plan) })
	view, _ := rn.snapshot()
	return view, nil
}

// version is a draft's save to run or submit: base, or its newest (0).
func (ds *Drafts) version(ctx context.Context, d store.Draft, base int64) (store.DraftSave, error) {
	if base == 0 {
		base = d.Version
	}
	v, err := ds.p.deps.Store.DraftSaveOf(ctx, d.ID, base)
	if errors.Is(err, store.ErrNoDraft) {
		return store.DraftSave{}, errs.Errorf(errs.ErrNotFound, "draft %d keeps no version %d", d.ID, base)
	}
	return v, err
}

// replaceRun makes rn its owner's Run, cancelling the last: its build
// stops, its match is cancelled.
func (s *Platform) replaceRun(rn *run) {
	s.runs.mu.Lock()
	last := s.runs.byOwner[rn.owner]
	s.runs.byOwner[rn.owner] = rn
	s.runs.mu.Unlock()
	if last == nil {
		return
	}
	last.cancel()
	last.mu.Lock()
	match, over := last.view.Match, last.view.Finished != nil
	last.mu.Unlock()
	if match != "" && !over {
		s.queue.Cancel(match)
	}
}

// RunOf is the Run of a draft p may change: its owner's last, when it is
// of this draft; with a channel closed at its next change.
func (ds *Drafts) RunOf(ctx context.Context, p accounts.Principal, id int64) (RunView, <-chan struct{}, error) {
	d, err := ds.writable(ctx, p, id)
	if err != nil {
		return RunView{}, nil, err
	}
	ds.p.runs.mu.Lock()
	rn := ds.p.runs.byOwner[d.Owner]
	ds.p.runs.mu.Unlock()
	if rn == nil {
		return RunView{}, nil, errs.Errorf(errs.ErrNotFound, "draft %d has no Run (press Run)", id)
	}
	v, changed := rn.snapshot()
	if v.Draft != id {
		return RunView{}, nil, errs.Errorf(errs.ErrNotFound, "draft %d has no Run: %s's last Run is of another draft", id, d.Owner)
	}
	return v, changed, nil
}

// runPlan is what a Run builds and plays.
type runPlan struct {
	p        accounts.Principal
	d        store.Draft
	main     string
	kit      sourcebuild.Kit
	src      sourcebuild.Source
	game     string
	m        string
	opponent string
	human    bool
}

// playRun builds a Run's image, pushes it as its owner's Run image and
// plays its match; a cancelled Run stops where it is.
func (s *Platform) playRun(ctx context.Context, rn *run, plan runPlan) {
	id, err := s.buildRun(ctx, rn, plan)
	if err == nil {
		err = s.startRunMatch(ctx, rn, plan, id)
	}
	if err == nil {
		return // the match's end finishes it (observeRun)
	}
	state := RunFailed
	if ctx.Err() != nil {
		state = RunCancelled
	}
	fmt.Fprintf(rn, "%s: %v\n", state, err)
	now := s.now()
	rn.set(func(v *RunView) { v.State, v.Error, v.Finished = state, err.Error(), &now })
}

// buildRun builds the draft with its kit's recipe (in the builds' line
// when the kit has a build step), pushes it as the owner's Run image and
// pulls it onto the engine: its id there.
func (s *Platform) buildRun(ctx context.Context, rn *run, plan runPlan) (id string, err error) {
	req := sourcebuild.Request{ID: rn.view.ID, Source: plan.src, Kit: plan.kit.Name, Game: plan.game, Main: plan.main}
	build := func(ctx context.Context) error {
		img, err := s.deps.Builder.Build(ctx, req, rn)
		if err != nil {
			return err
		}
		repo := plan.d.Owner + "/" + RunRepository
		last, _, _ := s.deps.Store.TagOf(ctx, repo, runTag)
		fmt.Fprintf(rn, "pushing %s:%s (the Run's image: no check, no version)\n", repo, runTag)
		digest, err := s.registry.Push(context.WithValue(ctx, runPushKey{}, true), plan.p, repo, runTag, img)
		if err != nil {
			return err
		}
		if _, id, err = s.pullVersion(ctx, repo, digest); err != nil {
			return err
		}
		if last.Digest != "" && last.Digest != digest {
			s.dropRunImage(ctx, repo, last.Digest)
		}
		return nil
	}
	if plan.kit.Build == nil {
		err = build(ctx)
	} else {
		err = s.inBuildLine(ctx, build)
	}
	return id, err
}

// inBuildLine runs f in the builds' line (BuildsConfig.Parallel at once)
// and waits for it, or for ctx.
func (s *Platform) inBuildLine(ctx context.Context, f func(context.Context) error) error {
	done := make(chan error, 1)
	job := func(lineCtx context.Context) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		stop := context.AfterFunc(lineCtx, cancel)
		defer stop()
		done <- f(ctx)
	}
	select {
	case s.builds.line <- job:
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		<-done // the job sees ctx end too
		return ctx.Err()
	}
}

// dropRunImage removes an owner's last Run image, replaced: from the
// registry (its blobs at the next collection) and from the engine.
func (s *Platform) dropRunImage(ctx context.Context, repo, digest string) {
	if err := s.registry.Delete(ctx, repo, digest); err != nil {
		s.log.Warn("remove a replaced Run image from the registry", zap.String("repository", repo), zap.Error(err))
	}
	if err := s.deps.Engine.Remove(ctx, s.heldRef(repo, digest)); err != nil {
		s.log.Info("remove a replaced Run image from the engine", zap.String("repository", repo), zap.Error(err))
	}
}

// runMap is a Run's game and map: the one named, or the game's first for
// two players.
func (s *Platform) runMap(gameName, mapName string) (gameOfRun, string, error) {
	g, err := s.deps.Games.Find(gameName)
	if err != nil {
		return nil, "", errs.Errorf(errs.ErrConflict, "the draft's game %s is not on offer now", gameName)
	}
	for _, m := range g.Maps() {
		if (mapName == "" || m.Name == mapName) && m.CheckPlayers(2) == nil {
			return g, m.Name, nil
		}
	}
	if mapName != "" {
		return nil, "", errs.Errorf(errs.ErrInvalid, "map %q: no map of %s for two bots by that name", mapName, gameName)
	}
	return nil, "", errs.Errorf(errs.ErrInvalid, "%s has no map for two bots: a Run is the draft against one opponent", gameName)
}

// gameOfRun is a Run's game.
type gameOfRun = interface{ Name() string }

// startRunMatch queues a Run's match: the draft in seat 0, its opponent
// (or the person) in seat 1, ahead of ladder, contest and practice work
// in its owner's line.
func (s *Platform) startRunMatch(ctx context.Context, rn *run, plan runPlan, id string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	game, err := s.deps.Games.Find(plan.game)
	if err != nil {
		return err
	}
	m, err := game.Map(plan.m)
	if err != nil {
		return err
	}
	// The draft plays as OWNER/arena-run:latest, pinned to the image
	// pulled (its name on the engine is the registry's host's).
	draft := plan.d.Owner + "/" + RunRepository + ":" + runTag
	req := matches.Request{Game: game, Map: m, Seed: matches.RandomSeed(), Images: []string{draft, plan.opponent}, ImageIDs: []string{id, ""},
		Limits: s.cfg.Limits, MatchID: rn.view.ID, Owner: plan.p.Name, Kind: matches.KindRun, Priority: matches.Challenge}
	if plan.human {
		if err := s.seatPeople(plan.p, &req, []int{1}); err != nil {
			return err
		}
	}
	s.runs.mu.Lock()
	s.runs.byMatch[req.MatchID] = rn
	s.runs.mu.Unlock()
	rn.set(func(v *RunView) { v.State, v.Match = RunPlaying, req.MatchID })
	if _, err := s.submit(ctx, req, s.deps.Store.Insert); err != nil {
		s.runs.mu.Lock()
		delete(s.runs.byMatch, req.MatchID)
		s.runs.mu.Unlock()
		return err
	}
	fmt.Fprintf(rn, "playing match %s against %s\n", req.MatchID, rn.view.Opponent)
	return nil
}

// observeRun finishes a Run once its match is over.
func (s *Platform) observeRun(u matches.Update) {
	if !u.State.Final() {
		return
	}
	s.runs.mu.Lock()
	rn := s.runs.byMatch[u.ID]
	delete(s.runs.byMatch, u.ID)
	s.runs.mu.Unlock()
	if rn == nil {
		return
	}
	now := s.now()
	rn.set(func(v *RunView) {
		v.Finished = &now
		switch u.State {
		case matches.StateFinished:
			v.State = RunDone
		case matches.StateCancelled:
			v.State = RunCancelled
		default:
			v.State = RunFailed
			if u.Err != nil {
				v.Error = u.Err.Error()
			}
		}
	})
}

// SubmitRequest makes a version of a draft: its version (0: the newest),
// and the repository and tag it is pushed as (NAME/bot of the user's or
// a team's; a tag of latest when none).
type SubmitRequest struct {
	Base       int64  `json:"base"`
	Repository string `json:"repository"`
	Tag        string `json:"tag"`
}

// Submit turns a draft into a version exactly as an upload does: built
// in the builds' line, pushed as p, checked, followed by the ladder
// entries of its tag and a contest's entry (epoch: p's session's, when
// the request came in one). It returns the build as it stands.
func (ds *Drafts) Submit(ctx context.Context, p accounts.Principal, id, epoch int64, r SubmitRequest) (Build, error) {
	s := ds.p
	d, err := ds.writable(ctx, p, id)
	if err != nil {
		return Build{}, err
	}
	v, err := ds.version(ctx, d, r.Base)
	if err != nil {
		return Build{}, err
	}
	if isRunRepo(r.Repository) {
		return Build{}, errs.Errorf(errs.ErrInvalid, "repository %s holds your drafts' Runs: name your bot's repository otherwise", r.Repository)
	}
	req := BuildRequest{Repository: r.Repository, Tag: r.Tag, Game: d.Game, Kit: d.Kit, Main: v.Main}
	rs := s.services.Registry
	if err := rs.CheckBuild(p, &req); err != nil {
		return Build{}, err
	}
	if err := rs.HoldBuildPlace(p.Name, d.Kit); err != nil {
		return Build{}, err
	}
	src := sourcebuild.Source{}
	for name, text := range v.Files {
		src.Files = append(src.Files, sourcebuild.File{Name: name, Data: []byte(text)})
	}
	b, err := rs.QueueBuild(p, epoch, req, src)
	if err != nil {
		rs.ReleaseBuildPlace(p.Name)
	}
	return b, err
}
