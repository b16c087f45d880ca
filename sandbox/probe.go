package sandbox

import (
	"archive/tar"
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/image"
)

// The probe image: the arena binary alone, run inside a container under
// the policy. `arena doctor` starts it with ProbeCommand to check that the
// policy is enforced (the report is package probe's), and with
// EchoCommand to time round trips and starts.
const (
	// ProbeCommand makes the arena binary report the sandbox as seen from
	// inside (one JSON line: a probe.Report).
	ProbeCommand = "__probe"
	// EchoCommand makes the arena binary echo every line it reads.
	EchoCommand = "__echo"
)

// Echo copies every line of r to w until r ends.
func Echo(r io.Reader, w io.Writer) error {
	in := bufio.NewReaderSize(r, 1<<20)
	for {
		line, err := in.ReadBytes('\n')
		if len(line) > 0 {
			if _, werr := w.Write(line); werr != nil {
				return werr
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}

// ProbeImage makes sure an image holding just the arena binary exists
// (imported from the static binary, so no registry is needed) and returns
// it. Its name depends on the binary's size and time.
func ProbeImage(ctx context.Context, api interface {
	DockerAPI
	ImageImport(ctx context.Context, source image.ImportSource, ref string, options image.ImportOptions) (io.ReadCloser, error)
}, binary string) (string, error) {
	ref, _, err := MakeProbeImage(ctx, api, binary)
	return ref, err
}

// MakeProbeImage is ProbeImage that also says whether it made the image
// (made: it was not there), for a caller that removes what it made.
func MakeProbeImage(ctx context.Context, api interface {
	DockerAPI
	ImageImport(ctx context.Context, source image.ImportSource, ref string, options image.ImportOptions) (io.ReadCloser, error)
}, binary string) (ref string, made bool, err error) {
	ref, err = probeImage(ctx, api, binary, &made)
	return ref, made, err
}

func probeImage(ctx context.Context, api interface {
	DockerAPI
	ImageImport(ctx context.Context, source image.ImportSource, ref string, options image.ImportOptions) (io.ReadCloser, error)
}, binary string, made *bool) (string, error) {
	static, err := IsStatic(binary)
	if err != nil {
		return "", err
	}
	if !static {
		return "", fmt.Errorf("%s is not a static binary (build arena with CGO_ENABLED=0, as make build does)", binary)
	}
	st, err := os.Stat(binary)
	if err != nil {
		return "", err
	}
	ref := fmt.Sprintf("arena/probe:%d-%d", st.Size(), st.ModTime().Unix())
	if _, err := api.ImageInspect(ctx, ref); err == nil {
		return ref, nil
	} else if !cerrdefs.IsNotFound(err) {
		return "", err
	}
	pr, pw := io.Pipe()
	go func() {
		pw.CloseWithError(tarOne(pw, binary, "arena", st.Size()))
	}()
	body, err := api.ImageImport(ctx, image.ImportSource{Source: pr, SourceName: "-"}, ref, image.ImportOptions{
		Changes: []string{`ENTRYPOINT ["/arena"]`, `CMD ["` + EchoCommand + `"]`, "USER 65534:65534"},
	})
	if err != nil {
		pr.Close()
		return "", fmt.Errorf("import the probe image: %w", err)
	}
	defer body.Close()
	if _, err := io.Copy(io.Discard, body); err != nil {
		return "", fmt.Errorf("import the probe image: %w", err)
	}
	*made = true
	return ref, nil
}

func tarOne(w io.Writer, path, name string, size int64) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	tw := tar.NewWriter(w)
	if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o755, Size: size}); err != nil {
		return err
	}
	if _, err := io.Copy(tw, f); err != nil {
		return err
	}
	return tw.Close()
}
