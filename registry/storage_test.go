package registry

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

func TestParseStorage(t *testing.T) {
	if s, err := ParseStorage("  "); s != nil || err != nil {
		t.Errorf("empty: %v %v", s, err)
	}
	s, err := ParseStorage(`{"s3": {"region": "us-east-1", "bucket": "arena", "forcepathstyle": true}}`)
	if err != nil || s.Type() != "s3" || s.Parameters()["bucket"] != "arena" || s.Parameters()["forcepathstyle"] != true {
		t.Errorf("json: %v %v", s, err)
	}
	s, err = ParseStorage("filesystem:\n  rootdirectory: /srv/registry\n")
	if err != nil || s.Type() != "filesystem" || s.Parameters()["rootdirectory"] != "/srv/registry" {
		t.Errorf("yaml: %v %v", s, err)
	}
	for in, want := range map[string]string{
		`{"gcs": {"bucket": "x"}}`:     `storage driver "gcs": not one of filesystem, s3, inmemory`,
		`{"s3": {}, "filesystem": {}}`: "name one storage driver",
		`{}`:                           "name one storage driver",
		`[1, 2]`:                       "not a storage section",
		`{"s3": {"bucket": "a"}, "s3": {"b": 1}}`: "not a storage section",
	} {
		if _, err := ParseStorage(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", in, err, want)
		}
	}
}

// The registry on S3 (an S3-compatible store in-process): an image
// pushed lands in the bucket, is pulled back the same, is exported to a
// worker, and survives a collection; its blobs are served by the
// registry, not by a redirect to the store.
func TestRegistryOnS3(t *testing.T) {
	ctx := context.Background()
	backend := s3mem.New()
	if err := backend.CreateBucket("arena"); err != nil {
		t.Fatal(err)
	}
	s3 := httptest.NewServer(gofakes3.New(backend).Server())
	defer s3.Close()
	storage, err := ParseStorage(fmt.Sprintf(`{"s3": {"region": "us-east-1", "bucket": "arena", "regionendpoint": %q,
		"forcepathstyle": true, "accesskey": "key", "secretkey": "secret", "rootdirectory": "/registry"}}`, s3.URL))
	if err != nil {
		t.Fatal(err)
	}
	r, err := New(ctx, Config{Storage: storage}, Deps{Open: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	srv := httptest.NewServer(r)
	defer srv.Close()
	img, err := random.Image(200_000, 2)
	if err != nil {
		t.Fatal(err)
	}
	ref, _ := name.ParseReference(strings.TrimPrefix(srv.URL, "http://")+"/alice/bot:v1", name.Insecure)
	if err := remote.Write(ref, img); err != nil {
		t.Fatalf("push: %v", err)
	}
	objects, err := backend.ListBucket("arena", nil, gofakes3.ListBucketPage{})
	if err != nil || len(objects.Contents) < 4 {
		t.Fatalf("the bucket holds %v (%v)", objects, err)
	}
	for _, o := range objects.Contents {
		if !strings.HasPrefix(o.Key, "registry/docker/registry/v2/") {
			t.Errorf("object %s outside the root directory", o.Key)
		}
	}
	back, err := remote.Image(ref)
	if err != nil {
		t.Fatalf("pull: %v", err)
	}
	want, _ := img.Digest()
	if got, _ := back.Digest(); got != want {
		t.Errorf("pulled %s, pushed %s", got, want)
	}
	// Served by the registry: no redirect to the store.
	layers, _ := back.Layers()
	ld, _ := layers[0].Digest()
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := noFollow.Get(srv.URL + "/v2/alice/bot/blobs/" + ld.String())
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Errorf("a blob: %s (%s), want 200 from the registry", res.Status, res.Header.Get("Location"))
	}
	var out bytes.Buffer
	if _, err := r.Export(ctx, "alice/bot", want.String(), &out); err != nil || out.Len() < 400_000 {
		t.Errorf("export: %d bytes, %v", out.Len(), err)
	}
	if _, err := r.Collect(ctx); err != nil {
		t.Errorf("collect: %v", err)
	}
	if _, err := remote.Image(ref); err != nil {
		t.Errorf("pull after a collection: %v", err)
	}
}
