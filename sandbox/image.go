package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/image"
	"go.uber.org/zap"

	"arena/imageref"
	"arena/internal/errs"
)

// Image is a local image ready to run (imageref.Image: what the layers
// above know of it without the sandbox).
type Image = imageref.Image

// ErrImageNotFound is matched (errors.Is) by every error about an image
// that is not present locally, whatever its concrete type
// (errs.ErrNotFound).
var ErrImageNotFound = errs.New(errs.ErrNotFound, "image not found locally")

// ImageNotFoundError reports an image that is not present locally. It
// matches ErrImageNotFound.
type ImageNotFoundError struct{ Ref string }

func (e *ImageNotFoundError) Error() string {
	return fmt.Sprintf("image %s not found locally (build it with docker build -t %s . or pull it first)", e.Ref, e.Ref)
}

func (e *ImageNotFoundError) Unwrap() error { return ErrImageNotFound }

// ErrBadReference is wrapped by errors about a bot reference that is not
// well formed: the caller's input is wrong (errs.ErrInvalid). It is
// imageref.ErrBad, which imageref.Check's errors wrap.
var ErrBadReference = imageref.ErrBad

// ErrBadSpec is wrapped by errors about a bot's spec that the sandbox
// cannot apply: the caller's input is wrong (errs.ErrInvalid).
var ErrBadSpec = errs.New(errs.ErrInvalid, "bad bot spec")

// Image looks an image up locally. Arena never pulls on its own (see
// WithPullMissing).
func (d *Docker) Image(ctx context.Context, ref string) (Image, error) {
	if err := imageref.Check(ref); err != nil {
		return Image{}, err
	}
	info, err := d.api.ImageInspect(ctx, ref)
	if err != nil && cerrdefs.IsNotFound(err) && d.pull {
		if err := d.pullImage(ctx, ref); err != nil {
			return Image{}, err
		}
		info, err = d.api.ImageInspect(ctx, ref)
	}
	if err != nil {
		if cerrdefs.IsNotFound(err) {
			return Image{}, &ImageNotFoundError{Ref: ref}
		}
		return Image{}, fmt.Errorf("inspect image %s: %w", ref, err)
	}
	img := Image{Ref: ref, ID: info.ID, Digests: info.RepoDigests}
	if info.Config != nil {
		img.User, img.Game = info.Config.User, info.Config.Labels[GameLabel]
		img.Authors = info.Config.Labels["org.opencontainers.image.authors"]
		img.Labels = info.Config.Labels
		img.Entrypoint, img.Cmd = info.Config.Entrypoint, info.Config.Cmd
		for v := range info.Config.Volumes {
			img.Volumes = append(img.Volumes, v)
		}
		slices.Sort(img.Volumes)
	}
	return img, nil
}

// pullImage pulls ref and reports the registry's error, if any.
func (d *Docker) pullImage(ctx context.Context, ref string) error {
	d.log.Info("pulling image", zap.String("image", ref))
	body, err := d.api.ImagePull(ctx, ref, image.PullOptions{})
	if err != nil {
		return fmt.Errorf("image %s not found locally and the pull failed: %w", ref, err)
	}
	defer body.Close()
	var reported *PullError
	if err := PullProgress(body); errors.As(err, &reported) {
		return fmt.Errorf("image %s not found locally and the pull failed: %s", ref, reported.Msg)
	} else if err != nil {
		return fmt.Errorf("pull %s: %w", ref, err)
	}
	return nil
}

// PullError is the error an engine's pull reported in its progress.
type PullError struct{ Msg string }

func (e *PullError) Error() string { return e.Msg }

// PullProgress reads an engine pull's progress to its end: nil, the
// error the pull reported (a *PullError), or the stream's own.
func PullProgress(body io.Reader) error {
	dec := json.NewDecoder(body)
	for {
		var msg struct {
			Error string `json:"error"`
		}
		if err := dec.Decode(&msg); errors.Is(err, io.EOF) {
			return nil
		} else if err != nil {
			return err
		}
		if msg.Error != "" {
			return &PullError{msg.Error}
		}
	}
}
