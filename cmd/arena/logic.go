package main

import (
	"archive/tar"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"

	"github.com/docker/docker/client"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"arena/engine"
	"arena/judger"
	"arena/platform"
)

// logicImages checks the logic images of the games a server offers by
// name: the operator's (ARENA_GAMES) when it starts, and those an admin
// registers (platform.LogicChecker). A logic that ships a player
// (judger.PlayerLabel) has its files read out of its image, saved in dir
// (a cache: prune removes the saves of images no longer checked).
type logicImages struct {
	cli *client.Client
	dir string
	// limits are the server's logic limits (ARENA_LOGIC_*), where a game
	// sets none.
	limits judger.Limits

	mu    sync.Mutex
	saves map[string]bool
}

func newLogicImages(cli *client.Client, dir string, limits judger.Limits) *logicImages {
	return &logicImages{cli: cli, dir: dir, limits: limits, saves: map[string]bool{}}
}

// check checks a logic game's image on the engine: there (by its pinned
// id, when the spec has one), labelled a Saiblo logic
// (judger.CheckLabelled). It returns the game, its logic pinned to the
// image's id under the spec's limits (the server's where it sets none),
// and its player's files (nil: none).
func (li *logicImages) check(ctx context.Context, spec platform.LogicSpec) (engine.Game, map[string][]byte, error) {
	name, image := spec.Name, spec.Image
	info, err := li.cli.ImageInspect(ctx, cmp.Or(spec.ImageID, image))
	if err != nil {
		if spec.ImageID != "" {
			return nil, nil, fmt.Errorf("its logic image %s (%s when it was registered): %v (load that exact image, or remove the game and register it again)", spec.ImageID, image, err)
		}
		return nil, nil, fmt.Errorf("its logic image %s: %v (build it, or docker pull it, first)", image, err)
	}
	var labels map[string]string
	if info.Config != nil {
		labels = info.Config.Labels
	}
	n, err := judger.CheckLabelled(labels)
	if err != nil {
		return nil, nil, fmt.Errorf("the image %s: %v", image, err)
	}
	proposed, err := judger.Proposed(labels)
	if err != nil {
		return nil, nil, fmt.Errorf("the image %s: %v", image, err)
	}
	g := judger.Named(name, image, n, judger.Title(labels)).Pinned(info.ID).WithLimits(spec.Limits.Or(li.limits)).Proposing(proposed)
	folder := labels[judger.PlayerLabel]
	if folder == "" {
		return g, nil, nil
	}
	files, err := playerFiles(ctx, li.cli, li.dir, info.ID, folder)
	if err != nil {
		return nil, nil, fmt.Errorf("its player (label %s=%s): %v", judger.PlayerLabel, folder, err)
	}
	li.mu.Lock()
	li.saves[saveName(info.ID)] = true
	li.mu.Unlock()
	return g, files, nil
}

// prune removes the saves of images not checked since this server
// started.
func (li *logicImages) prune() {
	li.mu.Lock()
	defer li.mu.Unlock()
	pruneSaves(li.dir, li.saves)
}

// servedGames are the games a server offers from its start: the built-in
// ones, then the logic games its operator registered (ARENA_GAMES), each
// checked now, with their players by game.
func servedGames(ctx context.Context, li *logicImages, logic []LogicGame) (all []engine.Game, players map[string]map[string][]byte, err error) {
	all, players = games(), map[string]map[string][]byte{}
	for _, lg := range logic {
		g, files, err := li.check(ctx, platform.LogicSpec{Name: lg.Name, Image: lg.Image})
		if err != nil {
			return nil, nil, fmt.Errorf("ARENA_GAMES: game %s: %v", lg.Name, err)
		}
		all = append(all, g)
		if files != nil {
			players[lg.Name] = files
		}
	}
	return all, players, nil
}

// pruneSaves removes the saved images in dir (and any half-written
// save) but those named in keep. It is best effort: a save it could not
// remove is tried again at the next start.
func pruneSaves(dir string, keep map[string]bool) {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		name := e.Name()
		if keep[name] || !strings.HasPrefix(name, "base-") && !strings.HasPrefix(name, "saving-") {
			continue
		}
		os.Remove(filepath.Join(dir, name))
	}
}

// saveName is the file an image of this id is saved to by baseImage.
func saveName(id string) string { return "base-" + strings.TrimPrefix(id, "sha256:") + ".tar" }

// baseImage reads an image from the engine, saved once per image id
// into dir (a logic's player is read from its layers).
func baseImage(ctx context.Context, cli *client.Client, dir, ref string) (v1.Image, error) {
	info, err := cli.ImageInspect(ctx, ref)
	if err != nil {
		return nil, fmt.Errorf("not on this server's engine (%v)", err)
	}
	path := filepath.Join(dir, saveName(info.ID))
	if _, err := os.Stat(path); err != nil {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, err
		}
		body, err := cli.ImageSave(ctx, []string{info.ID})
		if err != nil {
			return nil, err
		}
		tmp, err := os.CreateTemp(dir, "saving-*")
		if err != nil {
			body.Close()
			return nil, err
		}
		_, err = io.Copy(tmp, body)
		body.Close()
		if cerr := tmp.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = os.Rename(tmp.Name(), path)
		}
		if err != nil {
			os.Remove(tmp.Name())
			return nil, fmt.Errorf("save it: %w", err)
		}
	}
	return tarball.ImageFromPath(path, nil)
}

// The caps on a logic's player.
const (
	maxPlayerFiles = 256
	maxPlayerBytes = 16 << 20
)

// playerFiles reads the files of a folder of an image, from its layers
// as the engine saves them (nothing runs): regular files only, at most
// maxPlayerFiles of them and maxPlayerBytes in all, and an index.html.
func playerFiles(ctx context.Context, cli *client.Client, dir, image, folder string) (map[string][]byte, error) {
	folder = strings.Trim(path.Clean("/"+folder), "/")
	if folder == "" {
		return nil, errors.New("the player's folder cannot be the image's root")
	}
	img, err := baseImage(ctx, cli, dir, image)
	if err != nil {
		return nil, err
	}
	rc := mutate.Extract(img)
	defer rc.Close()
	return readPlayer(rc, folder)
}

// readPlayer reads the files of folder (cleaned, without its slashes)
// out of a tar stream of an image's file system.
func readPlayer(r io.Reader, folder string) (map[string][]byte, error) {
	files := map[string][]byte{}
	size := 0
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("read the image: %w", err)
		}
		name, ok := strings.CutPrefix(strings.Trim(path.Clean("/"+h.Name), "/"), folder+"/")
		if !ok || h.Typeflag == tar.TypeDir {
			continue
		}
		if h.Typeflag != tar.TypeReg {
			return nil, fmt.Errorf("%s is not a regular file (links are refused)", name)
		}
		if len(files) == maxPlayerFiles || size+int(h.Size) > maxPlayerBytes {
			return nil, fmt.Errorf("more than %d files or %d MiB", maxPlayerFiles, maxPlayerBytes>>20)
		}
		data, err := io.ReadAll(io.LimitReader(tr, h.Size))
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", name, err)
		}
		files[name], size = data, size+len(data)
	}
	if _, ok := files["index.html"]; !ok {
		return nil, fmt.Errorf("no index.html in /%s", folder)
	}
	return files, nil
}
