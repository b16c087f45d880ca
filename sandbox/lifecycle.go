package sandbox

import (
	"context"
	"errors"

	"github.com/docker/docker/api/types/container"
)

// Lifecycle creates, starts and removes one container of img under the
// policy, with no stdio: the bare cost a match's bot cannot go below
// (arena bench --baseline compares matches with it).
func (d *Docker) Lifecycle(ctx context.Context, img Image, matchID string) error {
	cfg, host := containerConfig(d.policy, containerSpec{
		image:   img.ID,
		labels:  map[string]string{LabelPlatform: "arena", LabelMatch: matchID, LabelOwner: d.owner.String()},
		user:    "65534:65534",
		runtime: d.policy.Runtime,
	})
	cfg.AttachStdin, cfg.AttachStdout, cfg.AttachStderr, cfg.OpenStdin, cfg.StdinOnce = false, false, false, false, false
	created, err := d.api.ContainerCreate(ctx, cfg, host, nil, nil, "")
	if err != nil {
		return err
	}
	startErr := d.api.ContainerStart(ctx, created.ID, container.StartOptions{})
	removeErr := d.api.ContainerRemove(context.WithoutCancel(ctx), created.ID, container.RemoveOptions{Force: true})
	return errors.Join(startErr, removeErr)
}
