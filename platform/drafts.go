package platform

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"arena/accounts"
	"arena/botkits"
	"arena/internal/errs"
	"arena/sourcebuild"
	"arena/store"
)

// Drafts are the bots people write in the page (issue #61), kept on the
// server per owner (a user, or a team for a team's bot): a draft has a
// name, a game, a kit and a main file, starts as the kit's starter for
// the game, and is saved whole with a version number, each save naming
// the version it was made from; a save made from an older one is
// refused (ChangedElsewhere), so two tabs never silently lose work. Its
// last saves are kept (DraftsConfig.History) to restore from, and count
// against the owner's quota (ARENA_REGISTRY_QUOTA) as kept uploads do.
// Its files are checked as an upload's are (sourcebuild.Check), and are
// text. Members of a team edit the team's drafts; admins read any;
// another's draft is as absent as one that never was.

// DraftsConfig is the drafts' policy.
type DraftsConfig struct {
	// History is how many saves of a draft are kept (0: 20).
	History int
	// Limits bound a draft's files (zero: an upload's,
	// sourcebuild.DefaultLimits).
	Limits sourcebuild.Limits
}

// DefaultDraftHistory is how many saves of a draft are kept unless told.
const DefaultDraftHistory = 20

// DraftView is a draft as it is listed: its newest version, and who
// saved it when.
type DraftView struct {
	ID        int64     `json:"id"`
	Name      string    `json:"name"`
	Owner     string    `json:"owner"`
	Game      string    `json:"game"`
	Kit       string    `json:"kit"`
	Main      string    `json:"main"`
	Version   int64     `json:"version"`
	Size      int64     `json:"size"`
	UpdatedAt time.Time `json:"updated_at"`
	UpdatedBy string    `json:"updated_by"`
}

// DraftPage is a draft with its newest files (path → text) and the
// saves kept, newest first: the restore list.
type DraftPage struct {
	DraftView
	Files map[string]string `json:"files"`
	Saves []DraftSaveView   `json:"saves"`
}

// DraftSaveView is a save in the restore list.
type DraftSaveView struct {
	Version int64     `json:"version"`
	SavedAt time.Time `json:"saved_at"`
	SavedBy string    `json:"saved_by"`
	Size    int64     `json:"size"`
}

// DraftVersion is a save of a draft with its files, to restore.
type DraftVersion struct {
	Version int64             `json:"version"`
	Files   map[string]string `json:"files"`
	Main    string            `json:"main"`
	SavedAt time.Time         `json:"saved_at"`
	SavedBy string            `json:"saved_by"`
}

// DraftRequest makes a draft: its name, game and kit, and the team it
// is for ("": the person's own).
type DraftRequest struct {
	Name string `json:"name"`
	Game string `json:"game"`
	Kit  string `json:"kit"`
	Team string `json:"team,omitempty"`
}

// DraftSaveRequest is a save: the version it was made from, the files
// (path → text, the whole project) and the main file ("": as it was).
type DraftSaveRequest struct {
	Base  int64             `json:"base"`
	Files map[string]string `json:"files"`
	Main  string            `json:"main,omitempty"`
}

// ChangedElsewhere refuses a save whose base is not the draft's newest
// version (a conflict): it says which is, who saved it and when.
type ChangedElsewhere struct {
	Version int64
	SavedBy string
	SavedAt time.Time
}

func (e *ChangedElsewhere) Error() string {
	return fmt.Sprintf("changed elsewhere: version %d was saved by %s at %s; reload it or keep yours", e.Version, e.SavedBy, e.SavedAt.UTC().Format(time.RFC3339))
}

// IsConflict marks it a conflict (errs.ErrConflict).
func (e *ChangedElsewhere) IsConflict() bool { return true }

// KitView is a kit as the page offers it: by game, its starter's main
// file and files.
type KitView struct {
	Name  string             `json:"name"`
	Games map[string]KitGame `json:"games"`
}

// KitGame is a kit's starter for a game.
type KitGame struct {
	Main  string   `json:"main"`
	Files []string `json:"files"`
}

// draftName is a draft's name: a short plain name.
var draftName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

func checkDraftName(name string) error {
	if !draftName.MatchString(name) || strings.Contains(name, "..") {
		return errs.Errorf(errs.ErrInvalid, `name %q: 1 to 64 letters, digits, ".", "_" or "-", starting with a letter or a digit (no "..")`, name)
	}
	return nil
}

// Kits are the kits' starters for the games this server offers.
func (ds *Drafts) Kits() []KitView {
	out := []KitView{}
	at := map[string]int{}
	for _, st := range botkits.Starters() {
		if _, err := ds.p.deps.Games.Find(st.Game); err != nil {
			continue
		}
		i, ok := at[st.Kit]
		if !ok {
			i, at[st.Kit] = len(out), len(out)
			out = append(out, KitView{Name: st.Kit, Games: map[string]KitGame{}})
		}
		g := KitGame{Main: st.Main, Files: []string{}}
		for _, f := range st.Files {
			g.Files = append(g.Files, f.Name)
		}
		out[i].Games[st.Game] = g
	}
	return out
}

// draftLimits are the store's bounds on a save: the history kept, and
// the owner's quota.
func (s *Platform) draftLimits() store.DraftLimits {
	h := s.cfg.Drafts.History
	if h <= 0 {
		h = DefaultDraftHistory
	}
	return store.DraftLimits{History: h, MaxBytes: s.cfg.Registry.MaxBytes}
}

// FileLimits bound a draft's files: an upload's, unless told.
func (ds *Drafts) FileLimits() sourcebuild.Limits {
	if l := ds.p.cfg.Drafts.Limits; l.Files > 0 && l.Bytes > 0 {
		return l
	}
	return sourcebuild.DefaultLimits
}

// checkFiles checks a draft's files as an upload's are (sourcebuild.Check:
// names, count, bytes), and that they are text; it returns them under
// their clean names.
func (ds *Drafts) checkFiles(files map[string]string) (map[string]string, error) {
	names := slices.Sorted(func(yield func(string) bool) {
		for n := range files {
			if !yield(n) {
				return
			}
		}
	})
	var src sourcebuild.Source
	for _, n := range names {
		if text := files[n]; !utf8.ValidString(text) || strings.ContainsRune(text, 0) {
			return nil, errs.Errorf(errs.ErrInvalid, "file %q is not text: a draft holds UTF-8 text files only (send a binary file with arena submit)", n)
		}
		src.Files = append(src.Files, sourcebuild.File{Name: n, Data: []byte(files[n])})
	}
	src, err := sourcebuild.Check(src, ds.FileLimits())
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(src.Files))
	for _, f := range src.Files {
		out[f.Name] = string(f.Data)
	}
	return out, nil
}

// checkMain refuses a main file that is neither a file of the draft nor
// a folder of its files (Go's main package).
func checkMain(main string, files map[string]string) error {
	if main == "" {
		return errs.New(errs.ErrInvalid, "main: name the file (or the Go package's folder) the bot starts from")
	}
	if _, ok := files[main]; ok {
		return nil
	}
	for n := range files {
		if strings.HasPrefix(n, strings.TrimSuffix(main, "/")+"/") {
			return nil
		}
	}
	return errs.Errorf(errs.ErrInvalid, "main: %q is not a file of the draft, nor a folder of its files", main)
}

// quota words a save past the owner's quota.
func (s *Platform) quota(err error) error {
	var qe *store.QuotaError
	if !errors.As(err, &qe) {
		return err
	}
	return errs.Errorf(errs.ErrDenied, "quota: %s holds %s (%s of it in drafts' saves) and this save adds %s, past the %s one may hold (ARENA_REGISTRY_QUOTA; a draft keeps its last %d saves); delete a draft, or a repository on My bots",
		qe.Owner, mib(qe.Bytes), mib(qe.Drafts), mib(qe.Adding), mib(qe.Max), s.draftLimits().History)
}

// readable is a draft p may read: theirs or their team's, any for an
// admin. Another's is as absent as one that never was.
func readable(p accounts.Principal, d store.Draft, err error, id int64) (store.Draft, error) {
	if errors.Is(err, store.ErrNoDraft) || (err == nil && !p.Owns(d.Owner) && !p.Admin()) {
		return store.Draft{}, errs.Errorf(errs.ErrNotFound, "no draft %d", id)
	}
	return d, err
}

// writable is a draft p may change: theirs or their team's. An admin may
// read another's but not change it; to anyone else it is absent.
func (ds *Drafts) writable(ctx context.Context, p accounts.Principal, id int64) (store.Draft, error) {
	if err := signedIn(p, "change a draft"); err != nil {
		return store.Draft{}, err
	}
	d, err := ds.p.deps.Store.DraftOf(ctx, id)
	if d, err = readable(p, d, err, id); err != nil {
		return store.Draft{}, err
	}
	if !p.Owns(d.Owner) {
		return store.Draft{}, errs.Errorf(errs.ErrDenied, "draft %d belongs to %s: an admin may read it, only its owner (or a member of that team) may change it", id, d.Owner)
	}
	return d, nil
}

func viewDraft(d store.Draft) DraftView {
	return DraftView{ID: d.ID, Name: d.Name, Owner: d.Owner, Game: d.Game, Kit: d.Kit, Main: d.Main, Version: d.Version, Size: d.Size, UpdatedAt: d.UpdatedAt, UpdatedBy: d.UpdatedBy}
}

func draftPage(d store.Draft, files map[string]string, saves []store.DraftSave) DraftPage {
	page := DraftPage{DraftView: viewDraft(d), Files: files, Saves: []DraftSaveView{}}
	for _, v := range saves {
		page.Saves = append(page.Saves, DraftSaveView{Version: v.Version, SavedAt: v.SavedAt, SavedBy: v.SavedBy, Size: v.Size})
	}
	return page
}

// List is p's drafts and their teams', the last saved first.
func (ds *Drafts) List(ctx context.Context, p accounts.Principal) ([]DraftView, error) {
	if err := signedIn(p, "see your drafts"); err != nil {
		return nil, err
	}
	drafts, err := ds.p.deps.Store.Drafts(ctx, p.Owners()...)
	if err != nil {
		return nil, err
	}
	out := make([]DraftView, 0, len(drafts))
	for _, d := range drafts {
		out = append(out, viewDraft(d))
	}
	return out, nil
}

// Create makes a draft of p's (or of a team of theirs), its files the
// kit's starter for the game, as version 1; its kit's builds are readied
// meanwhile (prepareKit).
func (ds *Drafts) Create(ctx context.Context, p accounts.Principal, r DraftRequest) (DraftPage, error) {
	s := ds.p
	if err := signedIn(p, "make a draft"); err != nil {
		return DraftPage{}, err
	}
	owner := p.Name
	if r.Team != "" {
		if !p.Owns(r.Team) {
			return DraftPage{}, errs.Errorf(errs.ErrDenied, "team %q: you make drafts for yourself and the teams you are a member of", r.Team)
		}
		owner = r.Team
	}
	if err := checkDraftName(r.Name); err != nil {
		return DraftPage{}, err
	}
	if _, err := s.deps.Games.Find(r.Game); err != nil {
		return DraftPage{}, errs.Errorf(errs.ErrInvalid, "game: %v", err)
	}
	st, err := botkits.StarterOf(r.Kit, r.Game)
	if err != nil {
		return DraftPage{}, errs.Errorf(errs.ErrInvalid, "kit %q for %s: %v", r.Kit, r.Game, err)
	}
	files := map[string]string{}
	for _, f := range st.Files {
		files[f.Name] = string(f.Data)
	}
	if files, err = ds.checkFiles(files); err != nil {
		return DraftPage{}, fmt.Errorf("the %s kit's starter for %s: %w", r.Kit, r.Game, err)
	}
	now := s.now()
	d, err := s.deps.Store.CreateDraft(ctx, store.Draft{Owner: owner, Name: r.Name, Game: r.Game, Kit: r.Kit, CreatedBy: p.Name, CreatedAt: now},
		store.DraftSave{Main: st.Main, Files: files, SavedBy: p.Name, SavedAt: now}, s.draftLimits())
	if errors.Is(err, store.ErrDraftName) {
		return DraftPage{}, errs.Errorf(errs.ErrConflict, "%s has a draft named %s already", owner, r.Name)
	}
	if err != nil {
		return DraftPage{}, s.quota(err)
	}
	s.prepareKit(r.Kit)
	return draftPage(d, files, []store.DraftSave{{Version: d.Version, Main: d.Main, Size: d.Size, SavedBy: d.UpdatedBy, SavedAt: d.UpdatedAt}}), nil
}

// Draft is a draft p may read, with its newest files and the saves kept;
// its kit's builds are readied meanwhile (prepareKit).
func (ds *Drafts) Draft(ctx context.Context, p accounts.Principal, id int64) (DraftPage, error) {
	if err := signedIn(p, "see a draft"); err != nil {
		return DraftPage{}, err
	}
	d, files, saves, err := ds.p.deps.Store.DraftWhole(ctx, id)
	if d, err = readable(p, d, err, id); err != nil {
		return DraftPage{}, err
	}
	ds.p.prepareKit(d.Kit)
	return draftPage(d, files, saves), nil
}

// Save saves a draft's next version from r.Base, the whole project; a
// base that is not the newest is refused (*ChangedElsewhere), and so is
// a save past the owner's quota. It returns the draft saved, without its
// files.
func (ds *Drafts) Save(ctx context.Context, p accounts.Principal, id int64, r DraftSaveRequest) (DraftView, error) {
	s := ds.p
	d, err := ds.writable(ctx, p, id)
	if err != nil {
		return DraftView{}, err
	}
	files, err := ds.checkFiles(r.Files)
	if err != nil {
		return DraftView{}, err
	}
	main := r.Main
	if main == "" {
		main = d.Main
	}
	if err := checkMain(main, files); err != nil {
		return DraftView{}, err
	}
	saved, err := s.deps.Store.SaveDraft(ctx, id, r.Base, store.DraftSave{Main: main, Files: files, SavedBy: p.Name, SavedAt: s.now()}, s.draftLimits())
	if errors.Is(err, store.ErrDraftStale) {
		return DraftView{}, &ChangedElsewhere{Version: saved.Version, SavedBy: saved.UpdatedBy, SavedAt: saved.UpdatedAt}
	}
	if err != nil {
		return DraftView{}, s.quota(err)
	}
	return viewDraft(saved), nil
}

// Version is a save of a draft p may read, with its files.
func (ds *Drafts) Version(ctx context.Context, p accounts.Principal, id, version int64) (DraftVersion, error) {
	if err := signedIn(p, "see a draft"); err != nil {
		return DraftVersion{}, err
	}
	d, err := ds.p.deps.Store.DraftOf(ctx, id)
	if _, err = readable(p, d, err, id); err != nil {
		return DraftVersion{}, err
	}
	v, err := ds.p.deps.Store.DraftSaveOf(ctx, id, version)
	if errors.Is(err, store.ErrNoDraft) {
		return DraftVersion{}, errs.Errorf(errs.ErrNotFound, "draft %d keeps no version %d (it keeps its last %d saves)", id, version, ds.p.draftLimits().History)
	}
	if err != nil {
		return DraftVersion{}, err
	}
	return DraftVersion{Version: v.Version, Files: v.Files, Main: v.Main, SavedAt: v.SavedAt, SavedBy: v.SavedBy}, nil
}

// Rename renames a draft of p's.
func (ds *Drafts) Rename(ctx context.Context, p accounts.Principal, id int64, name string) (DraftView, error) {
	d, err := ds.writable(ctx, p, id)
	if err != nil {
		return DraftView{}, err
	}
	if err := checkDraftName(name); err != nil {
		return DraftView{}, err
	}
	renamed, err := ds.p.deps.Store.RenameDraft(ctx, id, name)
	if errors.Is(err, store.ErrDraftName) {
		return DraftView{}, errs.Errorf(errs.ErrConflict, "%s has a draft named %s already", d.Owner, name)
	}
	if err != nil {
		return DraftView{}, err
	}
	return viewDraft(renamed), nil
}

// Delete deletes a draft of p's, and its saves.
func (ds *Drafts) Delete(ctx context.Context, p accounts.Principal, id int64) error {
	if _, err := ds.writable(ctx, p, id); err != nil {
		return err
	}
	return ds.p.deps.Store.DeleteDraft(ctx, id)
}
