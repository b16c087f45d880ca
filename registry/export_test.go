package registry

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"arena/accounts"
)

// An image pushed is exported as an archive docker load takes: the same
// config (so the same engine id) and the same layers, byte for byte; a
// digest the registry does not hold is an error, and nothing is written
// for it.
func TestExport(t *testing.T) {
	ctx := context.Background()
	r, err := New(ctx, Config{Dir: t.TempDir()}, Deps{Open: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	srv := httptest.NewServer(r)
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")

	img, err := random.Image(300_000, 3)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := name.ParseReference(host+"/alice/bot:v1", name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(ref, img); err != nil {
		t.Fatalf("push: %v", err)
	}
	digest, _ := img.Digest()
	wantID, _ := img.ConfigName()

	var out bytes.Buffer
	id, err := r.Export(ctx, "alice/bot", digest.String(), &out)
	if err != nil {
		t.Fatal(err)
	}
	if id != wantID.String() {
		t.Errorf("id %s, want %s", id, wantID)
	}
	// docker load reads manifest.json, the config and the layers it names.
	var manifest []struct{ Config string }
	files := map[string]int64{}
	tr := tar.NewReader(bytes.NewReader(out.Bytes()))
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		files[h.Name] = h.Size
		if h.Name == "manifest.json" {
			if err := json.NewDecoder(tr).Decode(&manifest); err != nil {
				t.Fatal(err)
			}
		}
	}
	if len(manifest) != 1 || !strings.Contains(manifest[0].Config, wantID.Hex) {
		t.Errorf("manifest.json %+v, files %v", manifest, files)
	}
	back, err := tarball.Image(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(out.Bytes())), nil }, nil)
	if err != nil {
		t.Fatal(err)
	}
	backID, _ := back.ConfigName()
	layers, _ := back.Layers()
	want, _ := img.Layers()
	if backID != wantID || len(layers) != len(want) {
		t.Fatalf("read back: id %s, %d layers; want %s, %d", backID, len(layers), wantID, len(want))
	}
	for i := range want {
		a, _ := layers[i].Digest()
		b, _ := want[i].Digest()
		if a != b {
			t.Errorf("layer %d: %s, want %s", i, a, b)
		}
	}

	out.Reset()
	if _, err := r.Export(ctx, "alice/bot", "sha256:"+strings.Repeat("0", 64), &out); err == nil {
		t.Error("an unknown digest was exported")
	}
	if _, err := r.Export(ctx, "bob/other", digest.String(), &out); err == nil {
		t.Error("a digest from another repository was exported")
	}
	if out.Len() != 0 {
		t.Errorf("%d bytes written for images not held", out.Len())
	}
}

// An image pushed in-process as an account is that account's push: its
// namespaces only, recorded as pushed by it; a tag may be pushed again.
func TestPushAsAnAccount(t *testing.T) {
	ctx := context.Background()
	var pushed []string
	r, err := New(ctx, Config{Dir: t.TempDir()}, Deps{Pushed: func(_ context.Context, p Push) {
		if p.Tagged() {
			pushed = append(pushed, p.Repo+":"+p.Ref+" by "+p.By)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	img, err := random.Image(1000, 1)
	if err != nil {
		t.Fatal(err)
	}
	alice := accounts.Principal{Name: "alice", Role: accounts.RolePlayer}
	digest, err := r.Push(ctx, alice, "alice/built", "v1", img)
	if want, _ := img.Digest(); err != nil || digest != want.String() {
		t.Fatalf("alice's push: %s %v", digest, err)
	}
	if _, err := r.Push(ctx, alice, "bob/built", "v1", img); err == nil || !strings.Contains(err.Error(), "DENIED") {
		t.Errorf("alice's push to bob/: %v", err)
	}
	// A tag pushed again with another image (a rebuild under one tag).
	again, err := random.Image(1000, 1)
	if err != nil {
		t.Fatal(err)
	}
	if digest, err := r.Push(ctx, alice, "alice/built", "v1", again); err != nil {
		t.Errorf("alice's second push of v1: %s %v", digest, err)
	}
	if len(pushed) != 2 || pushed[0] != "alice/built:v1 by alice" || pushed[1] != pushed[0] {
		t.Errorf("pushes recorded: %v", pushed)
	}
	// From outside, nobody is alice without her token.
	srv := httptest.NewServer(r)
	defer srv.Close()
	res, err := http.Get(srv.URL + "/v2/alice/built/tags/list")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusUnauthorized {
		t.Errorf("an anonymous read of alice's repository: %s", res.Status)
	}
}
