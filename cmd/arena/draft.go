package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"arena/platform"
	"arena/sourcebuild"
)

// The drafts written in the page, carried between the server and a
// folder (platform/drafts.go, GET/POST/PUT /api/drafts).

const draftUsage = `Usage:
  arena draft list [--json] [SERVER]
  arena draft pull NAME DIR [SERVER]
  arena draft push DIR NAME [--game GAME --kit KIT] [--main FILE] [--base N] [SERVER]

Drafts are the bots written in the page's editor, kept on the server
with their last saves (docs/drafts.md). These commands carry one between
the server and a folder, to work on it with one's own tools.

  list   your drafts and your teams', the last saved first
  pull   writes the draft's files into DIR (made if need be; an existing
         DIR must be empty, or hold a pull of the same draft) and
         DIR/.arena-draft.json: the draft's id, owner, name and version
  push   saves DIR's files (read as arena submit reads a folder: links
         refused, .git and the like left out) as the draft's next
         version, made from the version .arena-draft.json names. When the
         draft was saved since, the server refuses it as changed
         elsewhere, naming the version: pull it into another folder to
         compare, or push again with --base N to save yours over it.
         A NAME that is not a draft yet is made first, from the starter
         of --kit (go, cpp, python, javascript) for --game, which is its
         version 1; DIR's files are then version 2.

  --main  the main file (or the Go package's folder) the bot starts from,
          when it changes
  --base  the version DIR's files were made from, instead of the one
          .arena-draft.json names

NAME is the draft's name, or OWNER/NAME for a team's draft (or when a
name is both yours and a team's). The commands use the token of arena
login for SERVER (by default ARENA_SERVER, else http://localhost:5006),
or ARENA_TOKEN on a server in local mode.
`

// draftMetaFile is where arena draft pull keeps what DIR holds.
const draftMetaFile = ".arena-draft.json"

// draftMeta is what a folder holds of a draft: the server, the draft
// and the version its files were pulled or pushed as.
type draftMeta struct {
	Server  string `json:"server"`
	ID      int64  `json:"id"`
	Owner   string `json:"owner"`
	Name    string `json:"name"`
	Version int64  `json:"version"`
}

// draftInfo is a draft as the server lists it; Files only in a draft's
// own answer.
type draftInfo struct {
	platform.DraftView
	Files map[string]string `json:"files,omitempty"`
}

// draftPushOptions are arena draft push's flags.
type draftPushOptions struct {
	game, kit, main string
	base            int64
}

func cmdDraft(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("arena draft", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "list: print the server's answer as JSON")
	var push draftPushOptions
	fs.StringVar(&push.game, "game", "", "push: the game of a draft to make")
	fs.StringVar(&push.kit, "kit", "", "push: the kit of a draft to make (go, cpp, python, javascript)")
	fs.StringVar(&push.main, "main", "", "push: the main file")
	fs.Int64Var(&push.base, "base", 0, "push: the version DIR's files were made from")
	fs.Usage = func() { fmt.Fprint(stderr, draftUsage) }
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageErr("%v (see arena help draft)", err)
	}
	if len(pos) == 0 {
		return usageErr("arena draft list|pull|push (see arena help draft)")
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	switch pos[0] {
	case "list":
		return draftList(ctx, pos[1:], *asJSON, stdout)
	case "pull":
		return draftPull(ctx, pos[1:], stdout, stderr)
	case "push":
		return draftPush(ctx, pos[1:], push, stdout)
	}
	return usageErr("unknown draft command %q: list, pull or push", pos[0])
}

// draftClient is an API client for SERVER (pos[0], if given), as the
// contest commands' (contestClient), for answers and saves as large as
// a draft.
func draftClient(pos []string) (*apiClient, error) {
	api, err := contestClient(pos)
	if err != nil {
		return nil, err
	}
	api.http.Timeout = 5 * time.Minute
	api.answerMax = 256 << 20
	return api, nil
}

// draftList is arena draft list [--json] [SERVER].
func draftList(ctx context.Context, args []string, asJSON bool, stdout io.Writer) error {
	if len(args) > 1 {
		return usageErr("usage: arena draft list [--json] [SERVER]")
	}
	api, err := draftClient(args)
	if err != nil {
		return err
	}
	var raw json.RawMessage
	if err := api.call(ctx, "GET", "/api/drafts", nil, &raw); err != nil {
		return platformErr(err)
	}
	if asJSON {
		_, err := fmt.Fprintf(stdout, "%s\n", raw)
		return err
	}
	var list struct{ Drafts []draftInfo }
	if err := json.Unmarshal(raw, &list); err != nil {
		return platformErr(err)
	}
	if len(list.Drafts) == 0 {
		fmt.Fprintf(stdout, "no drafts on %s yet\n", api.server)
		return nil
	}
	w := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "DRAFT\tGAME\tKIT\tVERSION\tSIZE\tSAVED\tBY")
	for _, d := range list.Drafts {
		fmt.Fprintf(w, "%s/%s\t%s\t%s\t%d\t%.1f kB\t%s\t%s\n", d.Owner, d.Name, d.Game, d.Kit, d.Version, float64(d.Size)/1e3,
			d.UpdatedAt.Local().Format("2006-01-02 15:04"), d.UpdatedBy)
	}
	return w.Flush()
}

// findDraft is the draft a NAME (or OWNER/NAME) names among the
// visitor's; false when there is none.
func findDraft(ctx context.Context, api *apiClient, name string) (draftInfo, bool, error) {
	owner, plain, ok := strings.Cut(name, "/")
	if !ok {
		owner, plain = "", name
	}
	var list struct{ Drafts []draftInfo }
	if err := api.call(ctx, "GET", "/api/drafts", nil, &list); err != nil {
		return draftInfo{}, false, platformErr(err)
	}
	var found []draftInfo
	for _, d := range list.Drafts {
		if d.Name == plain && (owner == "" || d.Owner == owner) {
			found = append(found, d)
		}
	}
	switch len(found) {
	case 0:
		return draftInfo{}, false, nil
	case 1:
		return found[0], true, nil
	}
	var names []string
	for _, d := range found {
		names = append(names, d.Owner+"/"+d.Name)
	}
	return draftInfo{}, false, usageErr("%d drafts are named %s: name one as OWNER/%s (%s)", len(found), plain, plain, strings.Join(names, ", "))
}

// readDraftMeta reads DIR's .arena-draft.json; false when it has none.
func readDraftMeta(dir string) (draftMeta, bool, error) {
	data, err := os.ReadFile(filepath.Join(dir, draftMetaFile))
	if errors.Is(err, os.ErrNotExist) {
		return draftMeta{}, false, nil
	}
	var m draftMeta
	if err == nil {
		err = json.Unmarshal(data, &m)
	}
	if err != nil {
		return draftMeta{}, false, usageErr("%s: %v", filepath.Join(dir, draftMetaFile), err)
	}
	return m, true, nil
}

// writeDraftMeta writes DIR's .arena-draft.json.
func writeDraftMeta(root *os.Root, m draftMeta) error {
	data, _ := json.MarshalIndent(m, "", "  ")
	return root.WriteFile(draftMetaFile, append(data, '\n'), 0o644)
}

// draftPull is arena draft pull NAME DIR [SERVER].
func draftPull(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) < 2 || len(args) > 3 {
		return usageErr("usage: arena draft pull NAME DIR [SERVER]")
	}
	name, dir := args[0], args[1]
	api, err := draftClient(args[2:])
	if err != nil {
		return err
	}
	d, ok, err := findDraft(ctx, api, name)
	if err != nil {
		return err
	}
	if !ok {
		return platformErr(fmt.Errorf("no draft %s on %s (arena draft list)", name, api.server))
	}
	if err := pullInto(dir, d, api.server); err != nil {
		return err
	}
	if err := api.call(ctx, "GET", fmt.Sprintf("/api/drafts/%d", d.ID), nil, &d); err != nil {
		return platformErr(err)
	}
	root, err := writeDraft(dir, d)
	if err != nil {
		return err
	}
	defer root.Close()
	if err := writeDraftMeta(root, draftMeta{Server: api.server, ID: d.ID, Owner: d.Owner, Name: d.Name, Version: d.Version}); err != nil {
		return platformErr(err)
	}
	if extra := extraFiles(dir, d.Files); len(extra) > 0 {
		fmt.Fprintf(stderr, "arena: %s also holds %s, which the draft does not: arena draft push would save them with it\n", dir, strings.Join(extra, ", "))
	}
	fmt.Fprintf(stdout, "pulled %s/%s version %d (%d files) into %s\n", d.Owner, d.Name, d.Version, len(d.Files), dir)
	return nil
}

// pullInto refuses a DIR that holds anything but a pull of the same
// draft from the same server.
func pullInto(dir string, d draftInfo, server string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) || (err == nil && len(entries) == 0) {
		return nil
	}
	if err != nil {
		return usageErr("%v", err)
	}
	m, ok, err := readDraftMeta(dir)
	if err != nil {
		return err
	}
	if !ok || m.ID != d.ID || m.Server != server {
		return usageErr("%s is not empty, and holds no pull of %s/%s from %s: pull into an empty folder", dir, d.Owner, d.Name, server)
	}
	return nil
}

// writeDraft writes a draft's files into dir, within it whatever their
// names (the server's are checked again, as an upload's), and returns
// the folder opened.
func writeDraft(dir string, d draftInfo) (*os.Root, error) {
	var src sourcebuild.Source
	for name, text := range d.Files {
		if name == draftMetaFile {
			return nil, platformErr(fmt.Errorf("the draft holds a file named %s, where arena draft keeps its place: rename it in the page", draftMetaFile))
		}
		src.Files = append(src.Files, sourcebuild.File{Name: name, Data: []byte(text)})
	}
	src, err := sourcebuild.Check(src, sourcebuild.DefaultLimits)
	if err != nil {
		return nil, platformErr(fmt.Errorf("the server's draft: %w", err))
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, usageErr("%v", err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, usageErr("%v", err)
	}
	for _, f := range src.Files {
		if parent := path.Dir(f.Name); parent != "." {
			err = root.MkdirAll(parent, 0o755)
		}
		if err == nil {
			err = root.WriteFile(f.Name, f.Data, 0o644)
		}
		if err != nil {
			root.Close()
			return nil, platformErr(fmt.Errorf("write %s: %w", filepath.Join(dir, f.Name), err))
		}
	}
	return root, nil
}

// extraFiles are the files of dir a draft does not hold (but its place).
func extraFiles(dir string, files map[string]string) []string {
	have, _ := folderFiles(dir)
	var extra []string
	for _, f := range have {
		if _, ok := files[f.Name]; !ok && f.Name != draftMetaFile {
			extra = append(extra, f.Name)
		}
	}
	slices.Sort(extra)
	return extra
}

// draftPush is arena draft push DIR NAME [SERVER].
func draftPush(ctx context.Context, args []string, o draftPushOptions, stdout io.Writer) error {
	if len(args) < 2 || len(args) > 3 {
		return usageErr("usage: arena draft push DIR NAME [--game GAME --kit KIT] [--main FILE] [--base N] [SERVER]")
	}
	dir, name := args[0], args[1]
	files, err := draftFolder(dir)
	if err != nil {
		return err
	}
	meta, hasMeta, err := readDraftMeta(dir)
	if err != nil {
		return err
	}
	api, err := draftClient(args[2:])
	if err != nil {
		return err
	}
	d, base, err := draftToPush(ctx, api, name, o, meta, hasMeta)
	if err != nil {
		return err
	}
	var saved draftInfo
	err = api.call(ctx, "PUT", fmt.Sprintf("/api/drafts/%d", d.ID), map[string]any{"base": base, "files": files, "main": o.main}, &saved)
	if err != nil && strings.HasSuffix(err.Error(), "(409)") {
		return platformErr(fmt.Errorf("%w\n(arena draft pull %s/%s into another folder to compare; arena draft push --base N to save yours over version N)", err, d.Owner, d.Name))
	}
	if err != nil {
		return platformErr(err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return platformErr(err)
	}
	defer root.Close()
	if err := writeDraftMeta(root, draftMeta{Server: api.server, ID: saved.ID, Owner: saved.Owner, Name: saved.Name, Version: saved.Version}); err != nil {
		return platformErr(err)
	}
	fmt.Fprintf(stdout, "saved %s/%s version %d (%d files, %d bytes)\n", saved.Owner, saved.Name, saved.Version, len(files), saved.Size)
	return nil
}

// draftFolder reads DIR's files for a draft (as arena submit reads a
// folder), but its place file; each must be text.
func draftFolder(dir string) (map[string]string, error) {
	read, err := folderFiles(dir)
	if err != nil {
		return nil, usageErr("%v", err)
	}
	files := map[string]string{}
	for _, f := range read {
		if f.Name == draftMetaFile {
			continue
		}
		if !utf8.Valid(f.Data) || slices.Contains(f.Data, 0) {
			return nil, usageErr("%s is not text: a draft holds UTF-8 text files only (arena submit sends a folder with binary files)", filepath.Join(dir, f.Name))
		}
		files[f.Name] = string(f.Data)
	}
	if len(files) == 0 {
		return nil, usageErr("%s holds no file", dir)
	}
	return files, nil
}

// draftToPush is the draft a push saves and the version it saves from:
// the draft NAME names, from the version DIR's place file says (or
// --base); else a draft made of --game and --kit, from its version 1.
func draftToPush(ctx context.Context, api *apiClient, name string, o draftPushOptions, meta draftMeta, hasMeta bool) (draftInfo, int64, error) {
	d, ok, err := findDraft(ctx, api, name)
	if err != nil {
		return draftInfo{}, 0, err
	}
	switch {
	case ok && o.base > 0:
		return d, o.base, nil
	case ok && hasMeta && meta.ID == d.ID && meta.Server == api.server:
		return d, meta.Version, nil
	case ok:
		return draftInfo{}, 0, usageErr("the folder holds no pull of %s/%s from %s (no %s of it): arena draft pull it first, or --base N to save over version N", d.Owner, d.Name, api.server, draftMetaFile)
	case o.game == "" || o.kit == "":
		return draftInfo{}, 0, usageErr("no draft %s on %s: to make it, name its --game and --kit (go, cpp, python, javascript)", name, api.server)
	}
	req := map[string]string{"name": name, "game": o.game, "kit": o.kit}
	if owner, plain, ok := strings.Cut(name, "/"); ok {
		req["name"], req["team"] = plain, owner
	}
	if err := api.call(ctx, "POST", "/api/drafts", req, &d); err != nil {
		return draftInfo{}, 0, platformErr(err)
	}
	return d, d.Version, nil
}
