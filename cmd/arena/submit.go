package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/docker/docker/client"
	"go.uber.org/zap"

	"arena/sandbox"
	"arena/sourcebuild"
	"arena/sourcebuild/sandboxed"
)

// Building bots from uploads on the server (platform/builds.go, sourcebuild/).

// builder is the server's builder of uploads: the sandbox of the matches,
// under a build's limits (ARENA_BUILD_MEMORY, ARENA_BUILD_TIMEOUT; the
// runtime of the matches, gVisor when set), and the engine's base images
// for the kits that run on one (kitBases).
func builder(ctx context.Context, cfg Config, cli *client.Client, owner sandbox.Owner, log *zap.Logger, stderr io.Writer) (*sourcebuild.Builder, error) {
	rt, err := runtimeOf(ctx, cli, cfg.Runtime)
	if err != nil {
		return nil, err
	}
	p := cfg.Policy()
	// A compiler's needs, within bounds: its memory (the caches in /tmp
	// count against it), its threads and files.
	p.MemoryBytes = cfg.BuildMemory
	p.TmpfsBytes = cfg.BuildMemory / 2
	p.PidsLimit = 512
	p.NoFile = 4096
	p.FileSizeBytes = 512 << 20
	opts := append(dockerOptions(cfg, cli, rt, log.Named("build"), stderr), sandbox.WithStderrCaps(sandbox.StderrCaps{PerTake: 256 << 10, Total: 256 << 10}))
	d, err := sandbox.NewDocker(cli, p, owner, opts...)
	if err != nil {
		return nil, err
	}
	bases := newKitBases(cli, filepath.Join(cfg.Data, "builds"))
	if err := bases.prune(ctx); err != nil {
		log.Warn("remove old base images from the builds' folder", zap.Error(err))
	}
	return &sourcebuild.Builder{Steps: sandboxed.Steps{Sandbox: d, Timeout: cfg.BuildTimeout, MaxBinary: 96 << 20}, Base: bases.Image}, nil
}

const submitUsage = `Usage:
  arena submit DIR --game GAME [--name REPOSITORY[:TAG]] [--kit KIT] [--bot FILE] [--authors WHO] [SERVER]

Sends a bot's folder to a server (arena login first), which builds it
with the starter kit's recipe inside its sandbox (no network), pushes the
image to your repository in its registry and checks it, as a docker push
would. It prints the build's log, then the check's verdict.

  DIR        the bot's folder, as the kit lays it out (botkits/python, …)
  --game     the game it plays (its io.arena.game label)
  --name     where it goes: NAME/bot[:TAG] (default: your name/the folder's name:latest)
  --kit      go, cpp, python or javascript (default: told from the files:
             go.mod, a .cpp, .py or .js file)
  --bot      the main file (python bot.py, javascript bot.js, C++ bot.cpp or
             snake/snake_main.cpp) or, for Go, the main package's folder
             (bot, else the module's root)
  --authors  who to contact for the awards (org.opencontainers.image.authors)

Uploads are built offline: vendor what the bot needs (go mod vendor,
node_modules, pure-Python files next to it).
`

// submitSkipped are the folders arena submit leaves out.
var submitSkipped = []string{".git", ".hg", ".svn", "__pycache__", ".idea", ".vscode"}

func cmdSubmit(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fset := flag.NewFlagSet("arena submit", flag.ContinueOnError)
	fset.SetOutput(stderr)
	game := fset.String("game", "", "the game the bot plays")
	name := fset.String("name", "", "NAME/bot[:TAG] to push to")
	kit := fset.String("kit", "", "go, cpp, python or javascript")
	bot := fset.String("bot", "", "the main file or package")
	authors := fset.String("authors", "", "who to contact for the awards")
	fset.Usage = func() { fmt.Fprint(stderr, submitUsage) }
	pos, err := parseInterspersed(fset, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageErr("%v (see arena help submit)", err)
	}
	if len(pos) < 1 || len(pos) > 2 {
		return usageErr("usage: arena submit DIR --game GAME [--name NAME/bot[:TAG]] [SERVER] (see arena help submit)")
	}
	if *game == "" {
		return usageErr("--game: which game the bot plays (tanks, snake, pacman)")
	}
	dir := pos[0]
	server, c, err := loggedIn(pos[1:])
	if err != nil {
		return err
	}
	repo, tag, _ := strings.Cut(*name, ":")
	if repo == "" {
		base := strings.ToLower(filepath.Base(filepath.Clean(dir)))
		if abs, err := filepath.Abs(dir); err == nil {
			base = strings.ToLower(filepath.Base(abs))
		}
		repo = c.Name + "/" + base
	}
	files, err := folderFiles(dir)
	if err != nil {
		return usageErr("%v", err)
	}
	var body bytes.Buffer
	if err := sourcebuild.TarGz(files, &body); err != nil {
		return platformErr(err)
	}
	q := url.Values{"repository": {repo}, "game": {*game}}
	for k, v := range map[string]string{"tag": tag, "kit": *kit, "bot": *bot, "authors": *authors} {
		if v != "" {
			q.Set(k, v)
		}
	}
	fmt.Fprintf(stderr, "arena: sending %s (%d files, %d bytes) to %s\n", dir, len(files), body.Len(), server)
	var b submitted
	api := newAPIClient(server, c.Token)
	// The upload has its own deadline: 16 MiB over a slow link.
	upload := newAPIClient(server, c.Token)
	upload.http.Timeout = 5 * time.Minute
	if err := upload.send(ctx, "POST", "/api/builds?"+q.Encode(), "application/gzip", &body, &b); err != nil {
		return platformErr(err)
	}
	if err := followBuild(ctx, api, &b, stdout); err != nil {
		return err
	}
	// Then its check, as for a push.
	return awaitCheck(ctx, api, b, stdout)
}

// submitted is an upload's build, as the server tells it.
type submitted struct {
	ID, State, Error, Log, Reference, Digest string
}

// followBuild prints the build's log as it goes until it ends, pushed or
// failed.
func followBuild(ctx context.Context, api *apiClient, b *submitted, stdout io.Writer) error {
	shown := 0
	for b.State == "queued" || b.State == "building" {
		select {
		case <-ctx.Done():
			return platformErr(fmt.Errorf("build %s: %w (it goes on on the server)", b.ID, ctx.Err()))
		case <-time.After(500 * time.Millisecond):
		}
		if err := api.call(ctx, "GET", "/api/builds/"+b.ID, nil, b); err != nil {
			return platformErr(err)
		}
		fmt.Fprint(stdout, b.Log[min(shown, len(b.Log)):])
		shown = len(b.Log)
	}
	fmt.Fprint(stdout, b.Log[min(shown, len(b.Log)):])
	if b.State != "pushed" {
		return platformErr(fmt.Errorf("build %s failed: %s", b.ID, b.Error))
	}
	return nil
}

// awaitCheck waits for the check of the image a build pushed, for five
// minutes at most, and tells its verdict.
func awaitCheck(ctx context.Context, api *apiClient, b submitted, stdout io.Writer) error {
	for start := time.Now(); ; {
		var reg struct {
			Images []struct{ Reference, State, Reason, Digest string }
		}
		if err := api.call(ctx, "GET", "/api/registry", nil, &reg); err != nil {
			return platformErr(err)
		}
		for _, im := range reg.Images {
			if im.Reference != b.Reference || im.Digest != b.Digest || im.State == "pending" {
				continue
			}
			if im.State == "ready" {
				fmt.Fprintf(stdout, "%s is ready: it plays as %s\n", b.Reference, b.Reference)
				return nil
			}
			return platformErr(fmt.Errorf("%s was %s by its check: %s", b.Reference, im.State, im.Reason))
		}
		if time.Since(start) > 5*time.Minute {
			return platformErr(fmt.Errorf("%s: its check has not ended after 5 minutes (arena bots tells)", b.Reference))
		}
		select {
		case <-ctx.Done():
			return platformErr(ctx.Err())
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// folderFiles reads a bot's folder for an upload: its regular files,
// leaving version control's and editors' folders out; a link refuses it.
func folderFiles(dir string) ([]sourcebuild.File, error) {
	var files []sourcebuild.File
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		switch {
		case d.IsDir() && p != dir && slices.Contains(submitSkipped, d.Name()):
			return filepath.SkipDir
		case d.IsDir():
			return nil
		case d.Type()&fs.ModeSymlink != 0:
			return fmt.Errorf("%s is a link: an upload holds only files", p)
		case !d.Type().IsRegular():
			return fmt.Errorf("%s is not a regular file", p)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		files = append(files, sourcebuild.File{Name: rel, Data: data, Exec: info.Mode()&0o111 != 0})
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%s holds no file", dir)
	}
	return files, nil
}
