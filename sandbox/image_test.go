package sandbox

import (
	"context"
	"errors"
	"testing"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/client"
)

// inspectAPI is a fake engine that has no image at all.
type inspectAPI struct{ DockerAPI }

func (inspectAPI) ImageInspect(context.Context, string, ...client.ImageInspectOption) (image.InspectResponse, error) {
	return image.InspectResponse{}, cerrdefs.ErrNotFound
}

// A missing image is told apart by kind (errors.Is) or by type
// (errors.As), and names the image.
func TestImageNotFound(t *testing.T) {
	d, err := NewDocker(inspectAPI{}, DefaultPolicy(), Owner{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = d.Image(t.Context(), "team/bot:1")
	var nf *ImageNotFoundError
	if !errors.Is(err, ErrImageNotFound) || !errors.As(err, &nf) || nf.Ref != "team/bot:1" {
		t.Errorf("err = %v, want ImageNotFoundError for team/bot:1 matching ErrImageNotFound", err)
	}
	if _, err := d.Image(t.Context(), "Bad Name"); !errors.Is(err, ErrBadReference) || errors.Is(err, ErrImageNotFound) {
		t.Errorf("bad reference: %v", err)
	}
}
