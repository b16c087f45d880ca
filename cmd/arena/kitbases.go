package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/docker/docker/client"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/partial"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/klauspost/compress/gzip"

	"arena/sourcebuild"
)

// kitBases are the kits' base images (python:…, node:…) as builds
// assemble bots on them: saved from the engine once per image id and
// kept with their layers compressed (an OCI layout in dir), so that a
// build compresses only its own layer and a push finds the base's blobs
// by their digests. Compressing a 150 MB base took 1.5–2 s of each
// Python and JavaScript Run (docs/performance.md).
type kitBases struct {
	cli *client.Client
	dir string

	mu     sync.Mutex
	ready  map[string]v1.Image    // by image id
	making map[string]*sync.Mutex // by image id: one save at a time
}

func newKitBases(cli *client.Client, dir string) *kitBases {
	return &kitBases{cli: cli, dir: dir, ready: map[string]v1.Image{}, making: map[string]*sync.Mutex{}}
}

// layoutName is the folder of an image id's layout in dir.
func layoutName(id string) string { return "layout-" + strings.TrimPrefix(id, "sha256:") }

// Image is the engine's image ref, its layers compressed: read from its
// layout, made first when there is none.
func (kb *kitBases) Image(ctx context.Context, ref string) (v1.Image, error) {
	info, err := kb.cli.ImageInspect(ctx, ref)
	if err != nil {
		return nil, fmt.Errorf("not on this server's engine (%v)", err)
	}
	kb.mu.Lock()
	if img := kb.ready[info.ID]; img != nil {
		kb.mu.Unlock()
		return img, nil
	}
	one := kb.making[info.ID]
	if one == nil {
		one = &sync.Mutex{}
		kb.making[info.ID] = one
	}
	kb.mu.Unlock()

	one.Lock()
	defer one.Unlock()
	kb.mu.Lock()
	img := kb.ready[info.ID]
	kb.mu.Unlock()
	if img != nil {
		return img, nil
	}
	path := filepath.Join(kb.dir, layoutName(info.ID))
	if _, err := os.Stat(filepath.Join(path, "index.json")); err != nil {
		if err := kb.make(ctx, info.ID, path); err != nil {
			return nil, err
		}
	}
	if img, err = readLayout(path); err != nil {
		return nil, err
	}
	kb.mu.Lock()
	kb.ready[info.ID] = img
	kb.mu.Unlock()
	return img, nil
}

// make saves image id from the engine and writes it, its layers
// compressed, as the layout path: whole or not at all.
func (kb *kitBases) make(ctx context.Context, id, path string) error {
	if err := os.MkdirAll(kb.dir, 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(kb.dir, "saving-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	body, err := kb.cli.ImageSave(ctx, []string{id})
	if err != nil {
		tmp.Close()
		return fmt.Errorf("save it: %w", err)
	}
	_, err = io.Copy(tmp, body)
	body.Close()
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("save it: %w", err)
	}
	saved, err := tarball.ImageFromPath(tmp.Name(), nil)
	if err != nil {
		return fmt.Errorf("read its save: %w", err)
	}
	making, err := os.MkdirTemp(kb.dir, "making-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(making)
	img, err := compressed(saved, making)
	if err != nil {
		return fmt.Errorf("compress its layers: %w", err)
	}
	lp, err := layout.Write(filepath.Join(making, "layout"), empty.Index)
	if err != nil {
		return err
	}
	if err := lp.AppendImage(img); err != nil {
		return err
	}
	return os.Rename(filepath.Join(making, "layout"), path)
}

// compressed is img with each layer compressed once into a file of dir
// (gzip at its fastest), its config kept.
func compressed(img v1.Image, dir string) (v1.Image, error) {
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	layers, err := img.Layers()
	if err != nil {
		return nil, err
	}
	out := empty.Image
	for i, l := range layers {
		gz := gzLayer{path: filepath.Join(dir, fmt.Sprintf("layer-%d.gz", i))}
		if gz.diffID, err = l.DiffID(); err != nil {
			return nil, err
		}
		if gz.digest, gz.size, err = gzipInto(l, gz.path); err != nil {
			return nil, err
		}
		cl, err := partial.CompressedToLayer(gz)
		if err != nil {
			return nil, err
		}
		if out, err = mutate.AppendLayers(out, cl); err != nil {
			return nil, err
		}
	}
	return mutate.ConfigFile(out, cf)
}

// gzipInto writes a layer's tar, compressed, to path: its digest and
// size.
func gzipInto(l v1.Layer, path string) (v1.Hash, int64, error) {
	rc, err := l.Uncompressed()
	if err != nil {
		return v1.Hash{}, 0, err
	}
	defer rc.Close()
	f, err := os.Create(path)
	if err != nil {
		return v1.Hash{}, 0, err
	}
	h := sha256.New()
	n := &countingWriter{w: io.MultiWriter(f, h)}
	zw, err := gzip.NewWriterLevel(n, gzip.BestSpeed)
	if err == nil {
		_, err = io.Copy(zw, rc)
		if cerr := zw.Close(); err == nil {
			err = cerr
		}
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return v1.Hash{Algorithm: "sha256", Hex: hex.EncodeToString(h.Sum(nil))}, n.n, err
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// gzLayer is a layer compressed into a file, its digests known.
type gzLayer struct {
	path           string
	digest, diffID v1.Hash
	size           int64
}

func (l gzLayer) Digest() (v1.Hash, error)            { return l.digest, nil }
func (l gzLayer) DiffID() (v1.Hash, error)            { return l.diffID, nil }
func (l gzLayer) Size() (int64, error)                { return l.size, nil }
func (l gzLayer) MediaType() (types.MediaType, error) { return types.DockerLayer, nil }
func (l gzLayer) Compressed() (io.ReadCloser, error)  { return os.Open(l.path) }

// readLayout is the one image of a layout kitBases wrote.
func readLayout(path string) (v1.Image, error) {
	lp, err := layout.FromPath(path)
	if err != nil {
		return nil, err
	}
	idx, err := lp.ImageIndex()
	if err != nil {
		return nil, err
	}
	m, err := idx.IndexManifest()
	if err != nil {
		return nil, err
	}
	if len(m.Manifests) != 1 {
		return nil, fmt.Errorf("%s: %d images, want 1", path, len(m.Manifests))
	}
	return idx.Image(m.Manifests[0].Digest)
}

// prune removes from dir what a server that stopped left there: half-made
// saves and layouts, the saves of older versions (base-….tar), and the
// layouts of images that are no kit's base on the engine now. A server
// calls it as it starts, before any build.
func (kb *kitBases) prune(ctx context.Context) error {
	keep := map[string]bool{}
	for _, k := range sourcebuild.Kits {
		if k.Base == "" {
			continue
		}
		if info, err := kb.cli.ImageInspect(ctx, k.Base); err == nil {
			keep[layoutName(info.ID)] = true
		}
	}
	entries, err := os.ReadDir(kb.dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, e := range entries {
		name := e.Name()
		old := strings.HasPrefix(name, "saving-") || strings.HasPrefix(name, "making-") || strings.HasPrefix(name, "base-") ||
			strings.HasPrefix(name, "layout-") && !keep[name]
		if old {
			os.RemoveAll(filepath.Join(kb.dir, name))
		}
	}
	return nil
}
