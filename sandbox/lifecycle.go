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
	lease, err := d.uids.acquire(ctx)
	if err != nil {
		return err
	}
	defer lease.release()
	b := d.botContainer(Spec{Image: img, MatchID: matchID, BotID: "lifecycle"}, lease.uid)
	cfg, host := b.cfg, b.host
	cfg.AttachStdin, cfg.AttachStdout, cfg.AttachStderr, cfg.OpenStdin, cfg.StdinOnce = false, false, false, false, false
	created, err := d.api.ContainerCreate(ctx, cfg, host, nil, nil, "")
	if err != nil {
		return err
	}
	startErr := d.api.ContainerStart(ctx, created.ID, container.StartOptions{})
	removeErr := d.api.ContainerRemove(context.WithoutCancel(ctx), created.ID, container.RemoveOptions{Force: true})
	return errors.Join(startErr, removeErr)
}
