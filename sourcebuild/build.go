package sourcebuild

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"path"
	"runtime"
	"slices"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"arena/internal/errs"
	"arena/sandbox"
)

// Sandbox starts a build step's container: the sandbox of the matches,
// with a build's limits (sandbox.Docker).
type Sandbox interface {
	Image(ctx context.Context, ref string) (sandbox.Image, error)
	Start(ctx context.Context, s sandbox.Spec) (*sandbox.Container, error)
}

// Builder builds bots from uploads.
type Builder struct {
	Sandbox Sandbox
	// Base reads a base image from the engine (python:…, node:…).
	Base func(ctx context.Context, ref string) (v1.Image, error)
	// Timeout bounds a build step.
	Timeout time.Duration
	// MaxBinary bounds what a build step may hand back.
	MaxBinary int
}

// Request is one build.
type Request struct {
	ID     string // names the build's container
	Source Source
	Kit    string // "": told from the files
	Game   string // the image's io.arena.game label
	Main   string // the main file or package; "": the kit's
	// Authors is the image's org.opencontainers.image.authors label.
	Authors string
}

// GameLabel and AuthorsLabel are the labels a built image carries.
const (
	GameLabel    = sandbox.GameLabel
	AuthorsLabel = "org.opencontainers.image.authors"
)

// ErrBuild is the kind of a build that failed for the upload's sake (the
// code did not compile, the build ran past its limit); its message is the
// reason, the log says more.
var ErrBuild = errs.New(errs.ErrInvalid, "the build failed")

// Build builds the bot of an upload and returns its image, writing the
// build's log as it goes.
func (b *Builder) Build(ctx context.Context, req Request, log io.Writer) (v1.Image, error) {
	kit, err := FindKit(req.Kit, req.Source)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBuild, err)
	}
	main, err := kit.mainOf(req.Source, req.Main)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBuild, err)
	}
	fmt.Fprintf(log, "kit %s, %d files, bot %s\n", kit.Name, len(req.Source.Files), orDefault(main, "*.cpp"))
	var files []File
	if kit.Build != nil {
		bin, err := b.step(ctx, req, kit, main, log)
		if err != nil {
			return nil, err
		}
		files = []File{{Name: "bot", Data: bin, Exec: true}}
	} else {
		for _, f := range req.Source.Files {
			files = append(files, File{Name: path.Join("bot", f.Name), Data: f.Data, Exec: f.Exec})
		}
	}
	base := empty.Image
	if kit.Base != "" {
		fmt.Fprintf(log, "on %s\n", kit.Base)
		if base, err = b.Base(ctx, kit.Base); err != nil {
			return nil, fmt.Errorf("the %s kit's base image %s: %w", kit.Name, kit.Base, err)
		}
	}
	img, err := assemble(base, files, kit, main, req)
	if err != nil {
		return nil, err
	}
	fmt.Fprintln(log, "image assembled")
	return img, nil
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// step runs the kit's build step in the sandbox and returns the binary.
func (b *Builder) step(ctx context.Context, req Request, kit Kit, main string, log io.Writer) ([]byte, error) {
	img, err := b.Sandbox.Image(ctx, kit.Build.Image)
	if err != nil {
		return nil, fmt.Errorf("the %s kit's build image %s: %w", kit.Name, kit.Build.Image, err)
	}
	var src bytes.Buffer
	if err := TarGz(req.Source.Files, &src); err != nil {
		return nil, err
	}
	c, err := b.Sandbox.Start(ctx, sandbox.Spec{Image: img, MatchID: "build-" + req.ID, BotID: "build", MaxMessageBytes: b.MaxBinary,
		Env: []string{"BOT=" + main}, Args: []string{"/bin/sh", "-c", kit.Build.Script}})
	if err != nil {
		return nil, fmt.Errorf("start the build: %w", err)
	}
	defer c.Close(context.WithoutCancel(ctx))
	start := time.Now()
	limit := start.Add(b.Timeout)
	line := append([]byte(base64.StdEncoding.EncodeToString(src.Bytes())), '\n')
	if err := c.Send(line, limit); err != nil {
		return nil, fmt.Errorf("hand the build its files: %w", err)
	}
	for {
		// The log as it comes, a second at a time.
		next := time.Now().Add(time.Second)
		if next.After(limit) {
			next = limit
		}
		out, err := c.Receive(ctx, next)
		log.Write(c.TakeStderr().Text)
		switch {
		case err == nil:
			bin, derr := base64.StdEncoding.DecodeString(strings.TrimSpace(string(out)))
			if derr != nil || len(bin) == 0 {
				return nil, fmt.Errorf("%w: the build step's output is not a binary", ErrBuild)
			}
			fmt.Fprintf(log, "built in %v: %d bytes\n", time.Since(start).Round(time.Millisecond), len(bin))
			return bin, nil
		case errors.Is(err, sandbox.ErrTimeout) && time.Now().Before(limit):
			continue
		case errors.Is(err, sandbox.ErrTimeout):
			fmt.Fprintf(log, "the build ran past its limit of %v: stopped\n", b.Timeout)
			return nil, fmt.Errorf("%w: it ran past its limit of %v", ErrBuild, b.Timeout)
		case ctx.Err() != nil:
			return nil, ctx.Err()
		}
		ectx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		exit := c.Exit(ectx)
		cancel()
		log.Write(c.TakeStderr().Text)
		switch {
		case exit.OOMKilled:
			return nil, fmt.Errorf("%w: it ran out of memory", ErrBuild)
		case exit.Code != 0:
			return nil, fmt.Errorf("%w: the build step exited with code %d (see the log)", ErrBuild, exit.Code)
		}
		return nil, fmt.Errorf("%w: %v", ErrBuild, err)
	}
}

// assemble makes the bot's image: base, one layer of its files, and the
// kit's way of running it, as the kit's Dockerfile does.
func assemble(base v1.Image, files []File, kit Kit, main string, req Request) (v1.Image, error) {
	layer, err := layerOf(files)
	if err != nil {
		return nil, err
	}
	img, err := mutate.AppendLayers(base, layer)
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	if cf.OS == "" {
		cf.OS, cf.Architecture = "linux", runtime.GOARCH
	}
	cf.Created = v1.Time{Time: time.Now().UTC()}
	entrypoint, env := kit.run(main)
	c := &cf.Config
	c.Entrypoint, c.Cmd = entrypoint, nil
	c.Env = append(c.Env, env...)
	c.User = "65534:65534"
	if kit.Base != "" {
		c.WorkingDir = "/bot"
	}
	if c.Labels == nil {
		c.Labels = map[string]string{}
	}
	if req.Game != "" {
		c.Labels[GameLabel] = req.Game
	}
	if req.Authors != "" {
		c.Labels[AuthorsLabel] = req.Authors
	}
	return mutate.ConfigFile(img, cf)
}

// layerOf is a layer holding the files (and their folders), readable by
// any user: the bot runs as a user of its own.
func layerOf(files []File) (v1.Layer, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	dirs := map[string]bool{}
	epoch := time.Unix(0, 0)
	for _, f := range files {
		for d := path.Dir(f.Name); d != "." && !dirs[d]; d = path.Dir(d) {
			dirs[d] = true
		}
	}
	var sorted []string
	for d := range dirs {
		sorted = append(sorted, d)
	}
	slices.Sort(sorted)
	for _, d := range sorted {
		if err := tw.WriteHeader(&tar.Header{Name: d + "/", Mode: 0o755, Typeflag: tar.TypeDir, ModTime: epoch}); err != nil {
			return nil, err
		}
	}
	for _, f := range files {
		mode := int64(0o644)
		if f.Exec {
			mode = 0o755
		}
		if err := tw.WriteHeader(&tar.Header{Name: f.Name, Mode: mode, Size: int64(len(f.Data)), Typeflag: tar.TypeReg, ModTime: epoch}); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.Data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	data := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil })
}
