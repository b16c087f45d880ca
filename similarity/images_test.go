package similarity

import (
	"archive/tar"
	"bytes"
	"io"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// layer is a layer holding these files (path → content).
func layer(t *testing.T, files map[string]string) v1.Layer {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for name, content := range files {
		tw.WriteHeader(&tar.Header{Name: name, Mode: 0o755, Size: int64(len(content)), Typeflag: tar.TypeReg})
		tw.Write([]byte(content))
	}
	tw.Close()
	data := buf.Bytes()
	l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil })
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func image(t *testing.T, layers ...v1.Layer) v1.Image {
	t.Helper()
	img, err := mutate.AppendLayers(empty.Image, layers...)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// The same binary pushed twice (two tags, two owners) is flagged, and so
// is its copy under another name on another base; two programs on one
// base are not: the base two different images share counts for no one.
func TestImagesComparedByWhatTheyAdd(t *testing.T) {
	base := layer(t, map[string]string{"usr/lib/python3/os.py": "the base's own library, long enough", "etc/os-release": "PRETTY_NAME=Debian GNU/Linux"})
	other := layer(t, map[string]string{"lib/ld-musl.so": "another base, another library file"})
	binA := layer(t, map[string]string{"bot": "ELF a program that plays tanks well, version one"})
	binB := layer(t, map[string]string{"bot": "ELF a different program that plays tanks, its own"})
	renamed := layer(t, map[string]string{"app/run": "ELF a program that plays tanks well, version one", "app/README": "tiny"})
	alice := image(t, base, binA)
	pairs, err := ImageReport([]Image{
		{ID: "alice/bot:v1", Image: alice},
		{ID: "bob/copy:v2", Image: alice}, // pushed again, as it is
		{ID: "carol/bot:v1", Image: image(t, base, binB)},
		{ID: "dan/bot:v1", Image: image(t, other, renamed)},
	})
	if err != nil {
		t.Fatal(err)
	}
	got := map[[2]string]ImagePair{}
	for _, p := range pairs {
		got[[2]string{p.A, p.B}] = p
	}
	if p := got[[2]string{"alice/bot:v1", "bob/copy:v2"}]; p.Score < 1 {
		t.Errorf("the same image pushed twice: %+v", p)
	}
	if p := got[[2]string{"alice/bot:v1", "dan/bot:v1"}]; p.Score < 1 || len(p.Files) != 1 || p.Files[0] != [2]string{"/bot", "/app/run"} {
		t.Errorf("the binary under another name on another base: %+v", p)
	}
	if p, ok := got[[2]string{"alice/bot:v1", "carol/bot:v1"}]; ok {
		t.Errorf("two programs on one base flagged: %+v", p)
	}
}
