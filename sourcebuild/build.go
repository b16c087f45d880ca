package sourcebuild

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"io"
	"path"
	"runtime"
	"slices"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"arena/imageref"
	"arena/internal/errs"
)

// Runner runs a kit's build step (Step: its image and script) in a
// sandbox: the upload's files go in as Step says, the binary the step
// printed comes back. BOT=main is in its environment, and what the step
// writes on stderr goes to log as it comes. A step that fails for the
// upload's sake (it does not compile, it runs past its time or memory)
// is an error of ErrBuild. sourcebuild/sandboxed runs it in Arena's
// sandbox.
type Runner interface {
	Run(ctx context.Context, id string, step Step, main string, src []byte, log io.Writer) ([]byte, error)
}

// Builder builds bots from uploads.
type Builder struct {
	// Steps runs the kits' build steps.
	Steps Runner
	// Base reads a base image from the engine (python:…, node:…).
	Base func(ctx context.Context, ref string) (v1.Image, error)
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
	GameLabel    = imageref.GameLabel
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
	fmt.Fprintf(log, "kit %s, %d files, bot %s\n", kit.Name, len(req.Source.Files), orDefault(main, "./*.cpp ./*.c"))
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

// Prepare readies what a build of the kit needs before one is asked
// for: its base image, read (a Base that caches keeps it).
func (b *Builder) Prepare(ctx context.Context, kit string) error {
	k, err := FindKit(kit, Source{})
	if err != nil || k.Base == "" {
		return err
	}
	if _, err := b.Base(ctx, k.Base); err != nil {
		return fmt.Errorf("the %s kit's base image %s: %w", k.Name, k.Base, err)
	}
	return nil
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// step runs the kit's build step and returns the binary.
func (b *Builder) step(ctx context.Context, req Request, kit Kit, main string, log io.Writer) ([]byte, error) {
	var src bytes.Buffer
	if err := TarGz(req.Source.Files, &src); err != nil {
		return nil, err
	}
	return b.Steps.Run(ctx, req.ID, *kit.Build, main, src.Bytes(), log)
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
