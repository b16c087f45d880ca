package sandbox

import (
	"context"
	"errors"
	"fmt"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
)

// ReapReport says what a clean-up did.
type ReapReport struct {
	Removed []string // container names or ids
	// Kept are containers of Arena processes that still run.
	Kept int
}

// ReapFilter selects which Arena containers a clean-up removes.
type ReapFilter struct {
	// All removes every Arena container, even those of running Arena
	// processes.
	All bool
	// Match, when set, limits the clean-up to one match's containers
	// (whoever owns them).
	Match string
}

// Reap removes Arena's containers whose owning process is gone (a run
// that was killed), or those the filter names.
func Reap(ctx context.Context, api DockerAPI, live Liveness, f ReapFilter) (ReapReport, error) {
	args := filters.NewArgs(filters.Arg("label", LabelPlatform+"=arena"))
	if f.Match != "" {
		args.Add("label", LabelMatch+"="+f.Match)
	}
	list, err := api.ContainerList(ctx, container.ListOptions{All: true, Filters: args})
	if err != nil {
		return ReapReport{}, fmt.Errorf("list Arena containers: %w", err)
	}
	var rep ReapReport
	var errs []error
	for _, c := range list {
		if !f.All && f.Match == "" {
			owner, err := ParseOwner(c.Labels[LabelOwner])
			if err == nil && live.Alive(owner) {
				rep.Kept++
				continue
			}
		}
		err := api.ContainerRemove(ctx, c.ID, container.RemoveOptions{Force: true, RemoveVolumes: true})
		// Not found or already being removed (by its owner, or by another
		// Arena process reaping too) is as good as removed.
		if err != nil && !cerrdefs.IsNotFound(err) && !cerrdefs.IsConflict(err) {
			errs = append(errs, fmt.Errorf("remove %s: %w", shortID(c.ID), err))
			continue
		}
		name := shortID(c.ID)
		if len(c.Names) > 0 && len(c.Names[0]) > 1 {
			name = c.Names[0][1:]
		}
		rep.Removed = append(rep.Removed, name)
	}
	return rep, errors.Join(errs...)
}
