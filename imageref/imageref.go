// Package imageref is what every layer, from the HTTP API down to the
// sandbox, knows of a bot's image without running anything: how its
// reference is checked, and the label naming its game.
package imageref

import (
	"fmt"

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
