package orchestrator

import (
	"context"
	"slices"
	"strings"

	"github.com/distribution/reference"

	"arena/imageref"
	"arena/sandbox"
)

// imageLister is a launcher that can list its local images (the Docker
// one can; a fake need not).
type imageLister interface {
	Images(ctx context.Context) ([]sandbox.LocalImage, error)
}

// Images suggests the local images that could play game: first those
// labelled for it (sandbox.GameLabel), then the unlabelled ones, each
// group newest first. Images labelled for another game are left out.
func (o *Orchestrator) Images(ctx context.Context, game string) ([]sandbox.LocalImage, error) {
	l, ok := o.launcher.(imageLister)
	if !ok {
		return nil, imageref.ErrNoList
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
		if img.Game == "" && mayBeABot(img.Ref) {
			out = append(out, img)
		}
	}
	return slices.Clip(out)
}

// notBots are Arena's own images: the platform's, and arena doctor's
// probe.
var notBots = []string{"arena/arena", "arena/probe"}

// mayBeABot says whether an unlabelled image may be a bot: not one of
// Arena's own, nor a base image (an official image, named without a
// namespace: python, golang, debian…).
func mayBeABot(ref string) bool {
	named, err := reference.ParseNormalizedNamed(ref)
	if err != nil {
		return false
	}
	path := reference.Path(named) // library/python for python
	return strings.Contains(path, "/") && !strings.HasPrefix(path, "library/") && !slices.Contains(notBots, path)
}

func (r router) Images(ctx context.Context) ([]sandbox.LocalImage, error) {
	if r.docker == nil {
		return nil, imageref.ErrNoList
	}
	return r.docker.Images(ctx)
}
