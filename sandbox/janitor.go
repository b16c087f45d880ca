package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"go.uber.org/zap"
)

// The janitor: Arena's clean-up policy, in one place. Every container
// Arena starts is labelled (labels.go) with its match and its owner, the
// Arena process that started it; its owner removes it when the match
// ends. What an owner that died (kill -9, power loss) left behind — its
// containers, their FIFO folders, copies of its launcher — is removed by
// the next Arena process that sweeps.

// Ages in the FIFO folder.
const (
	// stdioFolderGrace: a bot's FIFO folder is made just before its
	// container, so one without a container is a leftover only once it
	// is older than this.
	stdioFolderGrace = time.Minute
)

// CleanupAPI is the part of the Docker client the janitor uses.
type CleanupAPI interface {
	ContainerList(ctx context.Context, opts container.ListOptions) ([]container.Summary, error)
	ContainerRemove(ctx context.Context, id string, opts container.RemoveOptions) error
}

// Janitor removes Arena's leftovers: containers, FIFO folders and
// launcher copies.
type Janitor struct {
	api   CleanupAPI
	alive func(Owner) bool
	// The FIFO folder (FIFO.Dir) and the launcher whose copy in it is
	// current; no folder: nothing to sweep there.
	stdioDir, launcher string
	// The cgroup mount where local bots' cgroups are, and this process as
	// their owners' peer; no root: no local cgroups to sweep.
	cgroupRoot string
	self       Owner
	now        func() time.Time
	log        *zap.Logger
}

// JanitorOption configures a Janitor.
type JanitorOption func(*Janitor)

// WithStdioFolder makes the janitor sweep the FIFO folder dir as well;
// launcher is the binary whose copy there (see PrepareFIFO) is kept.
func WithStdioFolder(dir, launcher string) JanitorOption {
	return func(j *Janitor) { j.stdioDir, j.launcher = dir, launcher }
}

// WithLocalCgroups makes the janitor sweep the cgroups of local bots
// (under root) whose Arena process died, killing what runs in them.
func WithLocalCgroups(root string, self Owner) JanitorOption {
	return func(j *Janitor) { j.cgroupRoot, j.self = root, self }
}

// WithClock sets the clock that ages the FIFO folder's entries (default
// time.Now).
func WithClock(now func() time.Time) JanitorOption { return func(j *Janitor) { j.now = now } }

// WithJanitorLogger sets the logger (default: none); each removal is
// logged at debug level.
func WithJanitorLogger(l *zap.Logger) JanitorOption { return func(j *Janitor) { j.log = l } }

// NewJanitor returns a janitor that asks alive whether the owner of a
// container still runs (see Liveness.Alive).
func NewJanitor(api CleanupAPI, alive func(Owner) bool, opts ...JanitorOption) *Janitor {
	j := &Janitor{api: api, alive: alive, now: time.Now, log: zap.NewNop()}
	for _, o := range opts {
		o(j)
	}
	return j
}

// CleanupReport says what a clean-up did.
type CleanupReport struct {
	// Removed are the containers removed, by name (or short id).
	Removed []string
	// Kept counts containers left to Arena processes that still run.
	Kept int
	// Swept are the paths removed from the FIFO folder, and the local
	// bots' cgroups removed.
	Swept []string
}

// Sweep removes what Arena processes that died left: their containers
// (also those whose owner label cannot be read), the FIFO folders of no
// container, and old launcher copies of other builds. Containers of
// running Arena processes are kept.
func (j *Janitor) Sweep(ctx context.Context) (CleanupReport, error) {
	return j.clean(ctx, "", false)
}

// RemoveMatch removes the containers of one match whose owner is gone,
// and their FIFO folders (a match interrupted by a restart). The
// containers of an owner that still runs are kept: they are not
// leftovers, whatever the caller believes.
func (j *Janitor) RemoveMatch(ctx context.Context, matchID string) (CleanupReport, error) {
	if matchID == "" {
		return CleanupReport{}, errors.New("remove a match's containers: no match id")
	}
	return j.clean(ctx, matchID, false)
}

// RemoveLostMatch removes every container of one match, whatever its
// owner: the match was handed to another player after its first one lost
// it (a worker killed, or cut off from the work queue, perhaps in another
// container whose processes this one cannot see).
func (j *Janitor) RemoveLostMatch(ctx context.Context, matchID string) (CleanupReport, error) {
	if matchID == "" {
		return CleanupReport{}, errors.New("remove a lost match's containers: no match id")
	}
	return j.clean(ctx, matchID, true)
}

// RemoveAll removes every Arena container, also those of running Arena
// processes, and sweeps the FIFO folder.
func (j *Janitor) RemoveAll(ctx context.Context) (CleanupReport, error) {
	return j.clean(ctx, "", true)
}

// clean lists the Arena containers (of one match, or all), removes those
// doomed (all of them when every is set), then their FIFO folders. With
// every Arena container listed it also sweeps the FIFO folder's stale
// entries.
func (j *Janitor) clean(ctx context.Context, match string, every bool) (CleanupReport, error) {
	list, err := j.list(ctx, match)
	if err != nil {
		return CleanupReport{}, err
	}
	remove, kept := doomed(list, every, j.alive)
	rep := CleanupReport{Kept: kept}
	gone := map[string]bool{}
	var errs []error
	for _, c := range remove {
		err := j.api.ContainerRemove(ctx, c.ID, container.RemoveOptions{Force: true, RemoveVolumes: true})
		// Not found or already being removed (by its owner, or by another
		// Arena process cleaning up too) is as good as removed.
		if err != nil && !cerrdefs.IsNotFound(err) && !cerrdefs.IsConflict(err) {
			errs = append(errs, fmt.Errorf("remove container %s: %w", shortID(c.ID), err))
			continue
		}
		j.log.Debug("removed container", zap.String("container", containerName(c)))
		rep.Removed = append(rep.Removed, containerName(c))
		for _, n := range c.Names {
			gone[strings.TrimPrefix(n, "/")] = true
		}
		// A warm container renamed for its bot keeps its first name's
		// folder: the mount says which.
		for _, m := range c.Mounts {
			if dir := j.stdioFolderOf(m.Source); dir != "" {
				gone[dir] = true
			}
		}
	}
	present := map[string]bool{}
	for _, c := range list {
		for _, n := range c.Names {
			if n = strings.TrimPrefix(n, "/"); !gone[n] {
				present[n] = true
			}
		}
		for _, m := range c.Mounts { // a renamed warm container's folder
			if dir := j.stdioFolderOf(m.Source); dir != "" && !gone[dir] {
				present[dir] = true
			}
		}
	}
	swept, err := j.sweepFolder(gone, present, match == "")
	rep.Swept = swept
	errs = append(errs, err)
	if match == "" && j.cgroupRoot != "" {
		cgs, err := sweepLocalCgroups(j.cgroupRoot, j.self, j.alive)
		rep.Swept = append(rep.Swept, cgs...)
		errs = append(errs, err)
	}
	return rep, errors.Join(errs...)
}

// list lists the Arena containers, or one match's: those labelled with
// it, and the warm containers handed to its bots (labelled as the pool's,
// named arena-MATCH-… once handed over).
func (j *Janitor) list(ctx context.Context, match string) ([]container.Summary, error) {
	args := filters.NewArgs(filters.Arg("label", LabelPlatform+"=arena"))
	if match == "" {
		list, err := j.api.ContainerList(ctx, container.ListOptions{All: true, Filters: args})
		if err != nil {
			return nil, fmt.Errorf("list Arena containers: %w", err)
		}
		return list, nil
	}
	args.Add("label", LabelMatch+"="+match)
	list, err := j.api.ContainerList(ctx, container.ListOptions{All: true, Filters: args})
	if err != nil {
		return nil, fmt.Errorf("list the containers of match %s: %w", match, err)
	}
	pooled := filters.NewArgs(filters.Arg("label", LabelPlatform+"=arena"), filters.Arg("label", LabelMatch+"=pool"),
		filters.Arg("name", "arena-"+match+"-"))
	warm, err := j.api.ContainerList(ctx, container.ListOptions{All: true, Filters: pooled})
	if err != nil {
		return nil, fmt.Errorf("list the containers of match %s: %w", match, err)
	}
	prefix := "/arena-" + match + "-"
	for _, c := range warm {
		// The engine's name filter matches anywhere in the name.
		if slices.ContainsFunc(c.Names, func(n string) bool { return strings.HasPrefix(n, prefix) }) {
			list = append(list, c)
		}
	}
	return list, nil
}

// stdioFolderOf is the name of the FIFO folder entry a mount's source is
// in, or "" when it is not in the FIFO folder.
func (j *Janitor) stdioFolderOf(source string) string {
	if j.stdioDir == "" || source == "" {
		return ""
	}
	rel, err := filepath.Rel(j.stdioDir, source)
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
		return ""
	}
	dir, _, _ := strings.Cut(rel, string(filepath.Separator))
	return dir
}

// doomed decides which of the listed containers go: all of them with
// every, else those whose owner is gone or cannot be told from the label.
func doomed(list []container.Summary, every bool, alive func(Owner) bool) (remove []container.Summary, kept int) {
	for _, c := range list {
		if !every {
			if o, err := ParseOwner(c.Labels[LabelOwner]); err == nil && alive(o) {
				kept++
				continue
			}
		}
		remove = append(remove, c)
	}
	return remove, kept
}

func containerName(c container.Summary) string {
	if len(c.Names) > 0 && len(c.Names[0]) > 1 {
		return strings.TrimPrefix(c.Names[0], "/")
	}
	return shortID(c.ID)
}

// sweepFolder removes from the FIFO folder the folders of the containers
// gone and, when stale is set (every container's name is in present or
// gone), the leftovers: folders of no container and old launcher copies.
func (j *Janitor) sweepFolder(gone, present map[string]bool, stale bool) ([]string, error) {
	if j.stdioDir == "" {
		return nil, nil
	}
	entries, err := os.ReadDir(j.stdioDir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("sweep the stdio folder: %w", err)
	}
	var found []folderEntry
	for _, e := range entries {
		if info, err := e.Info(); err == nil {
			found = append(found, folderEntry{name: e.Name(), dir: e.IsDir(), modified: info.ModTime()})
		}
	}
	var swept []string
	var errs []error
	for _, name := range leftovers(found, gone, present, stale, j.now()) {
		path := filepath.Join(j.stdioDir, name)
		if err := os.RemoveAll(path); err != nil {
			errs = append(errs, err)
			continue
		}
		j.log.Debug("removed from the stdio folder", zap.String("path", path))
		swept = append(swept, path)
	}
	// Launcher copies that no live process holds (see launchercopy.go).
	for _, e := range found {
		if !stale || e.dir || !strings.HasPrefix(e.name, launcherPrefix) {
			continue
		}
		path := filepath.Join(j.stdioDir, e.name)
		removed, err := removeUnusedLauncherCopy(path)
		if err != nil {
			errs = append(errs, err)
		}
		if removed {
			j.log.Debug("removed an unused launcher copy", zap.String("path", path))
			swept = append(swept, path)
		}
	}
	return swept, errors.Join(errs...)
}

// folderEntry is one entry of the FIFO folder.
type folderEntry struct {
	name     string
	dir      bool
	modified time.Time
}

// leftovers decides which folders go from the FIFO folder: the folders of
// the containers gone and, with stale, folders of no present container
// older than stdioFolderGrace. (Launcher copies go when nobody holds them.)
func leftovers(entries []folderEntry, gone, present map[string]bool, stale bool, now time.Time) []string {
	var out []string
	for _, e := range entries {
		age := now.Sub(e.modified)
		switch {
		case strings.HasPrefix(e.name, "."):
			// Arena's own (the uid leases), not a leftover.
		case e.dir && gone[e.name]:
			out = append(out, e.name)
		case !stale:
		case e.dir && !present[e.name] && age > stdioFolderGrace:
			out = append(out, e.name)
		}
	}
	return out
}
