package orchestrator

import (
	"context"
	"errors"
	"slices"

	"arena/sandbox"
)

// imageLister is a launcher that can list its local images (the Docker
// one can; a fake need not).
type imageLister interface {
	Images(ctx context.Context) ([]sandbox.LocalImage, error)
}

// ErrNoImageList is returned by Images when the launcher cannot list
// images.
var ErrNoImageList = errors.New("this launcher cannot list images")

// Images suggests the local images that could play game: first those
// labelled for it (sandbox.GameLabel), then the unlabelled ones, each
// group newest first. Images labelled for another game are left out.
func (o *Orchestrator) Images(ctx context.Context, game string) ([]sandbox.LocalImage, error) {
	l, ok := o.launcher.(imageLister)
	if !ok {
		return nil, ErrNoImageList
	}
	all, err := l.Images(ctx)
	if err != nil {
		return nil, err
	}
	return suggest(all, game), nil
}

// suggest orders images for a game's bot field (see Images).
func suggest(all []sandbox.LocalImage, game string) []sandbox.LocalImage {
	out := []sandbox.LocalImage{}
	for _, img := range all {
		if img.Game == game {
			out = append(out, img)
		}
	}
	for _, img := range all {
		if img.Game == "" {
			out = append(out, img)
		}
	}
	return slices.Clip(out)
}

func (r router) Images(ctx context.Context) ([]sandbox.LocalImage, error) {
	if r.docker == nil {
		return nil, ErrNoImageList
	}
	return r.docker.Images(ctx)
}
