package main

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/docker/docker/client"
	"github.com/google/go-containerregistry/pkg/v1/mutate"

	"arena/engine"
	"arena/judger"
	"arena/orchestrator"
)

// servedGames are the games a server offers: the built-in ones, then the
// logic games its operator registered (ARENA_GAMES), each checked on the
// engine now: its image there, its labels those of a Saiblo logic. A
// logic that ships a player (judger.PlayerLabel) has its files read out
// of its image, into players by game (dir caches the saved images: those
// of images no longer registered are removed).
func servedGames(ctx context.Context, cli *client.Client, logic []LogicGame, dir string) (all []engine.Game, players map[string]map[string][]byte, err error) {
	all, players = games(), map[string]map[string][]byte{}
	saves := map[string]bool{}
	for _, lg := range logic {
		info, err := cli.ImageInspect(ctx, lg.Image)
		if err != nil {
			return nil, nil, fmt.Errorf("ARENA_GAMES: game %s: its logic image %s: %v (build it, or docker pull it, first)", lg.Name, lg.Image, err)
		}
		var labels map[string]string
		if info.Config != nil {
			labels = info.Config.Labels
		}
		n, err := judger.CheckLabels(labels)
		if err != nil {
			return nil, nil, fmt.Errorf("ARENA_GAMES: game %s: the image %s: %v", lg.Name, lg.Image, err)
		}
		all = append(all, judger.Named(lg.Name, lg.Image, n, judger.Title(labels)))
		if folder := labels[judger.PlayerLabel]; folder != "" {
			saves[saveName(info.ID)] = true
			files, err := playerFiles(ctx, cli, dir, lg.Image, folder)
			if err != nil {
				return nil, nil, fmt.Errorf("ARENA_GAMES: game %s: its player (label %s=%s): %v", lg.Name, judger.PlayerLabel, folder, err)
			}
			players[lg.Name] = files
		}
	}
	pruneSaves(dir, saves)
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

// logicRouter plays a logic game's matches in this process, with the
// server's own orchestrator, and every other match with next (the
// dispatcher): a logic's replay can be checked only by playing the logic
// again, so the server believes no other host's.
type logicRouter struct {
	next  orchestrator.Player
	local *orchestrator.Orchestrator
}

func (r logicRouter) Play(ctx context.Context, req orchestrator.Request) (*orchestrator.Replay, error) {
	if _, ok := req.Game.(engine.Hosted); ok {
		return r.local.Play(ctx, req)
	}
	return r.next.Play(ctx, req)
}
