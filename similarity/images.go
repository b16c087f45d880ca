package similarity

import (
	"archive/tar"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"path"
	"slices"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// Images are compared by what they add: the regular files of the layers
// that are not their base, each by its content's SHA-256, so the same
// binary or script under two names, two tags or two owners is a match.
// A layer two different images share is their common base (a FROM, a
// toolchain), not a copy; a file under 16 bytes says nothing.

// minFileBytes is the smallest file compared.
const minFileBytes = 16

// Image is a version's image to compare: ID names it in a report, Image
// is read when compared.
type Image struct {
	ID    string
	Image v1.Image
}

// imageFiles is what an image adds: its files by content hash (a path
// for each), and its layers.
type imageFiles struct {
	id     string
	config v1.Hash
	layers []v1.Hash
	files  map[string]string // content hash → a path
}

// ImagePair is two images and the files they share.
type ImagePair struct {
	A, B   string
	Shared int
	// Score is Shared over the smaller image's files.
	Score float64
	// Files are the shared files' paths in A and in B.
	Files [][2]string
}

// ImageReport compares every two images by the files they add, the most
// alike first. Files in more than Common(n) of the images count for no
// one.
func ImageReport(images []Image) ([]ImagePair, error) {
	var all []imageFiles
	users := map[v1.Hash]map[v1.Hash]bool{} // layer → the image configs that have it
	for _, im := range images {
		cfg, err := im.Image.ConfigName()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", im.ID, err)
		}
		layers, err := im.Image.Layers()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", im.ID, err)
		}
		f := imageFiles{id: im.ID, config: cfg}
		for _, l := range layers {
			d, err := l.DiffID()
			if err != nil {
				return nil, fmt.Errorf("%s: %w", im.ID, err)
			}
			f.layers = append(f.layers, d)
			if users[d] == nil {
				users[d] = map[v1.Hash]bool{}
			}
			users[d][cfg] = true
		}
		all = append(all, f)
	}
	holders := map[string]int{}
	for i, im := range images {
		layers, _ := im.Image.Layers()
		var added []v1.Layer
		for j, l := range layers {
			if len(users[all[i].layers[j]]) < 2 {
				added = append(added, l)
			}
		}
		files, err := filesOf(added)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", im.ID, err)
		}
		all[i].files = files
		for h := range files {
			holders[h]++
		}
	}
	common := Common(len(images))
	var pairs []ImagePair
	for i := range all {
		for j := i + 1; j < len(all); j++ {
			p := ImagePair{A: all[i].id, B: all[j].id}
			na, nb := 0, 0
			for h, pa := range all[i].files {
				if holders[h] > common {
					continue
				}
				na++
				if pb, ok := all[j].files[h]; ok {
					p.Shared++
					p.Files = append(p.Files, [2]string{pa, pb})
				}
			}
			for h := range all[j].files {
				if holders[h] <= common {
					nb++
				}
			}
			if p.Shared == 0 {
				continue
			}
			p.Score = float64(p.Shared) / float64(max(1, min(na, nb)))
			slices.SortFunc(p.Files, func(x, y [2]string) int { return strings.Compare(x[0], y[0]) })
			pairs = append(pairs, p)
		}
	}
	slices.SortFunc(pairs, func(x, y ImagePair) int {
		return mostAlikeFirst(x.Score, y.Score, x.Shared, y.Shared, x.A+" "+x.B, y.A+" "+y.B)
	})
	return pairs, nil
}

// filesOf hashes the regular files the layers leave, in order: a later
// layer's file replaces an earlier one's, a whiteout removes one.
func filesOf(layers []v1.Layer) (map[string]string, error) {
	byPath := map[string]string{}
	for _, l := range layers {
		rc, err := l.Uncompressed()
		if err != nil {
			return nil, err
		}
		err = func() error {
			defer rc.Close()
			tr := tar.NewReader(rc)
			for {
				h, err := tr.Next()
				if errors.Is(err, io.EOF) {
					return nil
				}
				if err != nil {
					return err
				}
				name := path.Clean("/" + h.Name)
				dir, base := path.Split(name)
				if gone, ok := strings.CutPrefix(base, ".wh."); ok {
					if gone == ".wh..opq" {
						continue
					}
					delete(byPath, path.Join(dir, gone))
					continue
				}
				if h.Typeflag != tar.TypeReg || h.Size < minFileBytes {
					continue
				}
				sum := sha256.New()
				if _, err := io.Copy(sum, tr); err != nil {
					return err
				}
				byPath[name] = hex.EncodeToString(sum.Sum(nil))
			}
		}()
		if err != nil {
			return nil, err
		}
	}
	out := map[string]string{}
	for p, h := range byPath {
		if prev, ok := out[h]; !ok || p < prev {
			out[h] = p
		}
	}
	return out, nil
}
