package sandbox

import (
	"context"
	"testing"
	"time"

	"github.com/docker/docker/api/types/image"
)

// listAPI is a fake engine that lists the images it is given.
type listAPI struct {
	DockerAPI
	sums []image.Summary
}

func (l listAPI) ImageList(context.Context, image.ListOptions) ([]image.Summary, error) {
	return l.sums, nil
}

// Every tag is an entry, newest first, with its game label; untagged
// images are left out and ":latest" is dropped as people type it.
func TestImages(t *testing.T) {
	d, err := NewDocker(listAPI{sums: []image.Summary{
		{ID: "sha256:old", Created: 100, RepoTags: []string{"me/bot:v1"}},
		{ID: "sha256:new", Created: 200, RepoTags: []string{"arena/tanks-random:latest", "me/tanks:v2"}, Labels: map[string]string{GameLabel: "tanks"}},
		{ID: "sha256:dangling", Created: 300, RepoTags: []string{"<none>:<none>"}},
		{ID: "sha256:noname", Created: 400},
	}}, DefaultPolicy(), Owner{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := d.Images(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	want := []LocalImage{
		{Ref: "arena/tanks-random", ID: "sha256:new", Created: time.Unix(200, 0).UTC(), Game: "tanks"},
		{Ref: "me/tanks:v2", ID: "sha256:new", Created: time.Unix(200, 0).UTC(), Game: "tanks"},
		{Ref: "me/bot:v1", ID: "sha256:old", Created: time.Unix(100, 0).UTC()},
	}
	if len(got) != len(want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("image %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}
