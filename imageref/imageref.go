// Package imageref is what every layer, from the HTTP API down to the
// sandbox, knows of a bot's image without running anything: how its
// reference is checked, the label naming its game, and what an engine
// says of an image (Image, LocalImage).
package imageref

import (
	"errors"
	"fmt"
	"time"

	"github.com/distribution/reference"

	"arena/internal/errs"
)

// GameLabel is the image label naming the game a bot plays (tanks, snake,
// pacman…): the page suggests the image for that game.
const GameLabel = "io.arena.game"

// ErrBad is wrapped by errors about a bot reference that is not well
// formed: the caller's input is wrong (errs.ErrInvalid).
var ErrBad = errs.New(errs.ErrInvalid, "bad bot reference")

// Check says whether ref is a well-formed Docker image reference.
func Check(ref string) error {
	if ref == "" {
		return fmt.Errorf("%w: empty image name", ErrBad)
	}
	if _, err := reference.ParseNormalizedNamed(ref); err != nil {
		return fmt.Errorf("%w: %q is not an image name: %v", ErrBad, ref, err)
	}
	return nil
}

// Image is a local image ready to run.
type Image struct {
	Ref  string
	ID   string
	User string // the image's configured user
	// Entrypoint and Cmd are the image's.
	Entrypoint, Cmd []string
	// Volumes are the paths the image declares as volumes.
	Volumes []string
	// Digests are the image's registry digests (repository@sha256:…), by
	// which it can be pulled; none for an image built here and never
	// pushed or pulled.
	Digests []string
	// Game is the game the image says it plays (GameLabel), if any.
	Game string
	// Authors is its org.opencontainers.image.authors label: who to
	// contact about the bot (a contest's awards).
	Authors string
	// Labels are all its labels (a game's logic says what it is in them).
	Labels map[string]string
}

// LocalImage is an image present on the engine, as a list of bots shows
// it: one entry per tag.
type LocalImage struct {
	Ref     string
	ID      string
	Created time.Time
	// Game is the image's GameLabel ("" when it has none).
	Game string
}

// ErrNoList is returned by a list of images from an engine that cannot
// list them (a launcher of local bots, a fake).
var ErrNoList = errors.New("this launcher cannot list images")
