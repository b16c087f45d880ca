package sandbox

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"arena/imageref"

	"github.com/docker/docker/api/types/image"
)

// GameLabel is the image label that says which game a bot image plays
// (the kits' Dockerfiles set it: LABEL io.arena.game=tanks).
const GameLabel = imageref.GameLabel

// LocalImage is an image present on the engine, one entry per tag
// (imageref.LocalImage).
type LocalImage = imageref.LocalImage

// Images lists the tagged images on the engine, newest first. Untagged
// images (dangling layers, images known by id only) are left out: nobody
// types them.
func (d *Docker) Images(ctx context.Context) ([]LocalImage, error) {
	sums, err := d.api.ImageList(ctx, image.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list images: %w", err)
	}
	return localImages(sums), nil
}

func localImages(sums []image.Summary) []LocalImage {
	var out []LocalImage
	for _, s := range sums {
		for _, tag := range s.RepoTags {
			if tag == "" || strings.HasPrefix(tag, "<none>") {
				continue
			}
			out = append(out, LocalImage{
				Ref: strings.TrimSuffix(tag, ":latest"), ID: s.ID,
				Created: time.Unix(s.Created, 0).UTC(), Game: s.Labels[GameLabel],
			})
		}
	}
	slices.SortStableFunc(out, func(a, b LocalImage) int {
		if c := b.Created.Compare(a.Created); c != 0 {
			return c
		}
		return cmp.Compare(a.Ref, b.Ref)
	})
	return out
}
