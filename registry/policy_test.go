package registry

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

const (
	ociManifest    = "application/vnd.oci.image.manifest.v1+json"
	ociIndexType   = "application/vnd.oci.image.index.v1+json"
	dockerListType = "application/vnd.docker.distribution.manifest.list.v2+json"
)

// policyRegistry is a registry served over HTTP, open (every request the
// admin's), that notes what each manifest pushed was weighed.
type policyRegistry struct {
	t   *testing.T
	r   *Registry
	url string
	mu  sync.Mutex
	// weighed is the size AllowPush was given, by the reference pushed.
	weighed map[string]int64
}

func newPolicyRegistry(t *testing.T) *policyRegistry {
	t.Helper()
	p := &policyRegistry{t: t, weighed: map[string]int64{}}
	r, err := New(context.Background(), Config{Dir: t.TempDir()}, Deps{Open: true,
		AllowPush: func(_ context.Context, push Push) error {
			p.mu.Lock()
			p.weighed[push.Repo+":"+push.Ref] = push.Bytes
			p.mu.Unlock()
			return nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	srv := httptest.NewServer(r)
	t.Cleanup(srv.Close)
	p.r, p.url = r, srv.URL
	return p
}

// weight is what AllowPush was given for repo:ref, if it was asked.
func (p *policyRegistry) weight(ref string) (int64, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	n, ok := p.weighed[ref]
	return n, ok
}

func (p *policyRegistry) weightOf(ref string) int64 {
	n, _ := p.weight(ref)
	return n
}

func sha(b []byte) string { return fmt.Sprintf("sha256:%x", sha256.Sum256(b)) }

func (p *policyRegistry) call(method, path, contentType string, body []byte) (int, http.Header, string) {
	p.t.Helper()
	target := path
	if !strings.HasPrefix(path, "http") {
		target = p.url + path
	}
	req, err := http.NewRequest(method, target, bytes.NewReader(body))
	if err != nil {
		p.t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	req.Header.Set("Accept", ociManifest+", "+ociIndexType+", "+dockerListType)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		p.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, res.Header, string(b)
}

// blob uploads b to repo and returns its descriptor.
func (p *policyRegistry) blob(repo, mediaType string, b []byte) map[string]any {
	p.t.Helper()
	status, hdr, body := p.call("POST", "/v2/"+repo+"/blobs/uploads/", "", nil)
	if status != http.StatusAccepted {
		p.t.Fatalf("start an upload: %d %s", status, body)
	}
	loc := hdr.Get("Location")
	sep := "?"
	if strings.Contains(loc, "?") {
		sep = "&"
	}
	if !strings.HasPrefix(loc, "http") {
		loc = p.url + loc
	}
	if status, _, body := p.call("PUT", loc+sep+"digest="+sha(b), "application/octet-stream", b); status != http.StatusCreated {
		p.t.Fatalf("upload a blob: %d %s", status, body)
	}
	return map[string]any{"mediaType": mediaType, "digest": sha(b), "size": len(b)}
}

// put pushes a manifest to repo:ref.
func (p *policyRegistry) put(repo, ref, contentType string, manifest []byte) (int, string) {
	p.t.Helper()
	status, _, body := p.call("PUT", "/v2/"+repo+"/manifests/"+ref, contentType, manifest)
	return status, body
}

// image uploads a config and a layer of the given bytes to repo and
// returns the image's manifest (not pushed), and what it stores in all.
func (p *policyRegistry) image(repo, layer string) ([]byte, int64) {
	p.t.Helper()
	config := []byte(fmt.Sprintf(`{"architecture":"amd64","os":"linux","rootfs":{"type":"layers","diff_ids":[%q]}}`, sha([]byte(layer))))
	m, _ := json.Marshal(map[string]any{"schemaVersion": 2, "mediaType": ociManifest,
		"config": p.blob(repo, "application/vnd.oci.image.config.v1+json", config),
		"layers": []any{p.blob(repo, "application/vnd.oci.image.layer.v1.tar", []byte(layer))}})
	return m, int64(len(m) + len(config) + len(layer))
}

// pushImage pushes an image by its digest and returns its descriptor in
// an index, and what it stores.
func (p *policyRegistry) pushImage(repo, layer string) (map[string]any, int64) {
	p.t.Helper()
	m, size := p.image(repo, layer)
	if status, body := p.put(repo, sha(m), ociManifest, m); status != http.StatusCreated {
		p.t.Fatalf("push an image: %d %s", status, body)
	}
	return map[string]any{"mediaType": ociManifest, "digest": sha(m), "size": len(m),
		"platform": map[string]string{"architecture": "amd64", "os": "linux"}}, size
}

func index(mediaType string, children ...map[string]any) []byte {
	m := map[string]any{"schemaVersion": 2, "manifests": children}
	if mediaType != "" {
		m["mediaType"] = mediaType
	}
	b, _ := json.Marshal(m)
	return b
}

func indexEntry(mediaType string, m []byte) map[string]any {
	return map[string]any{"mediaType": mediaType, "digest": sha(m), "size": len(m)}
}

func (p *policyRegistry) held(path string) bool {
	p.t.Helper()
	status, _, _ := p.call("HEAD", path, "", nil)
	return status == http.StatusOK
}

// refused says whether a push was refused as an invalid manifest with
// a message that says so.
func refused(status int, body, want string) bool {
	return status == http.StatusBadRequest && strings.Contains(body, "MANIFEST_INVALID") && strings.Contains(body, want)
}

// An index lists images only: an index that lists another index is
// refused before it is stored (however it says what it lists, an OCI
// index or a Docker manifest list, with or without a media type), with
// a 400 that says why, whether or not quotas are set.
func TestIndexesListImagesOnly(t *testing.T) {
	p := newPolicyRegistry(t)
	const repo = "alice/bot"
	img, _ := p.pushImage(repo, "a layer")
	inner := index(ociIndexType, img)
	if status, body := p.put(repo, sha(inner), ociIndexType, inner); status != http.StatusCreated {
		t.Fatalf("an index of an image: %d %s", status, body)
	}
	const why = "an index may list images only, not another index"
	for name, c := range map[string]struct {
		contentType string
		body        []byte
	}{
		"an OCI index of an index":                 {ociIndexType, index(ociIndexType, indexEntry(ociIndexType, inner))},
		"an index listing an index as an image":    {ociIndexType, index(ociIndexType, indexEntry(ociManifest, inner))},
		"an index without a media type":            {ociIndexType, index("", indexEntry(ociManifest, inner))},
		"a Docker manifest list of an index":       {dockerListType, index(dockerListType, indexEntry(ociManifest, inner))},
		"a list of an index, sent as an OCI index": {ociIndexType, index(dockerListType, indexEntry(dockerListType, inner))},
		"an index of an image and an index":        {ociIndexType, index(ociIndexType, img, indexEntry(ociIndexType, inner))},
	} {
		status, body := p.put(repo, "nested", c.contentType, c.body)
		if !refused(status, body, why) {
			t.Errorf("%s: %d %s", name, status, body)
		}
		if _, ok := p.weight(repo + ":nested"); ok {
			t.Errorf("%s: weighed for the quotas", name)
		}
		if p.held("/v2/" + repo + "/manifests/" + sha(c.body)) {
			t.Errorf("%s: stored", name)
		}
	}
	// Without quotas (no AllowPush) the same.
	open, err := New(context.Background(), Config{Dir: t.TempDir()}, Deps{Open: true})
	if err != nil {
		t.Fatal(err)
	}
	defer open.Close()
	p.r = open
	srv := httptest.NewServer(open)
	defer srv.Close()
	p.url = srv.URL
	img, _ = p.pushImage(repo, "a layer")
	if status, body := p.put(repo, sha(inner), ociIndexType, inner); status != http.StatusCreated {
		t.Fatalf("an index of an image, no quotas: %d %s", status, body)
	}
	if status, body := p.put(repo, "nested", ociIndexType, index(ociIndexType, indexEntry(ociIndexType, inner))); !refused(status, body, why) {
		t.Errorf("an index of an index, no quotas: %d %s", status, body)
	}
}

// What docker buildx pushes, an index of images and of their attestation
// manifests (image manifests whose layers are in-toto statements), is
// accepted, and weighs what it stores: itself, each manifest it lists and
// their configs and layers, a blob shared between them once. A Docker
// manifest list of images is accepted the same.
func TestAnIndexWeighsWhatItStores(t *testing.T) {
	p := newPolicyRegistry(t)
	const repo = "alice/multi"
	amd, amdSize := p.pushImage(repo, "the amd64 layer")
	arm, armSize := p.pushImage(repo, "the arm64 layer")
	arm["platform"] = map[string]string{"architecture": "arm64", "os": "linux"}
	statement := []byte(`{"_type":"https://in-toto.io/Statement/v0.1","predicateType":"https://slsa.dev/provenance/v0.2","subject":[{"name":"x","digest":{"sha256":"00"}}],"predicate":{}}`)
	config := []byte(`{"architecture":"unknown","os":"unknown","config":{},"rootfs":{"type":"layers","diff_ids":["` + sha(statement) + `"]}}`)
	layer := p.blob(repo, "application/vnd.in-toto+json", statement)
	layer["annotations"] = map[string]string{"in-toto.io/predicate-type": "https://slsa.dev/provenance/v0.2"}
	att, _ := json.Marshal(map[string]any{"schemaVersion": 2, "mediaType": ociManifest,
		"config": p.blob(repo, "application/vnd.oci.image.config.v1+json", config), "layers": []any{layer}})
	if status, body := p.put(repo, sha(att), ociManifest, att); status != http.StatusCreated {
		t.Fatalf("an attestation manifest: %d %s", status, body)
	}
	attEntry := indexEntry(ociManifest, att)
	attEntry["platform"] = map[string]string{"architecture": "unknown", "os": "unknown"}
	attEntry["annotations"] = map[string]string{"vnd.docker.reference.digest": amd["digest"].(string), "vnd.docker.reference.type": "attestation-manifest"}
	idx := index(ociIndexType, amd, arm, attEntry)
	if status, body := p.put(repo, "v1", ociIndexType, idx); status != http.StatusCreated {
		t.Fatalf("a multi-platform index with attestations: %d %s", status, body)
	}
	want := int64(len(idx)) + amdSize + armSize + int64(len(att)+len(config)+len(statement))
	if got := p.weightOf(repo + ":v1"); got != want {
		t.Errorf("the index weighed %d, want %d", got, want)
	}
	if im, err := p.r.Describe(context.Background(), repo, "v1"); err != nil || im.Size != want || im.ImageID != "" {
		t.Errorf("described: %+v %v, want size %d", im, err, want)
	}
	// The same image listed twice, or by two platforms, is stored once.
	twice := index(ociIndexType, amd, amd)
	if status, body := p.put(repo, "twice", ociIndexType, twice); status != http.StatusCreated {
		t.Fatalf("an index listing an image twice: %d %s", status, body)
	}
	if got, want := p.weightOf(repo+":twice"), int64(len(twice))+amdSize; got != want {
		t.Errorf("an index listing an image twice weighed %d, want %d", got, want)
	}
	list := index(dockerListType, amd, arm)
	if status, body := p.put(repo, "list", dockerListType, list); status != http.StatusCreated {
		t.Fatalf("a Docker manifest list: %d %s", status, body)
	}
	if got, want := p.weightOf(repo+":list"), int64(len(list))+amdSize+armSize; got != want {
		t.Errorf("a Docker manifest list weighed %d, want %d", got, want)
	}
}

// An image's config and layers are blobs: one whose bytes are a manifest
// is refused, whether that manifest is pushed before it or after (the
// collector keeps a manifest a kept image names as a blob, with all it
// references, none of it weighed with the image). So an image pushed by
// its digest and named by nothing goes at the next collection.
func TestLayersAreNotManifests(t *testing.T) {
	p := newPolicyRegistry(t)
	const repo = "alice/bot"
	big := strings.Repeat("x", 64<<10)
	hidden, _ := p.image(repo, big)
	// The manifest's bytes as a blob, named as a layer or as the config,
	// before the manifest is pushed, then after.
	asBlob := p.blob(repo, "application/vnd.oci.image.layer.v1.tar", hidden)
	config := p.blob(repo, "application/vnd.oci.image.config.v1+json", []byte(`{"architecture":"amd64","os":"linux"}`))
	cover := func(config map[string]any, layers ...any) []byte {
		m, _ := json.Marshal(map[string]any{"schemaVersion": 2, "mediaType": ociManifest, "config": config, "layers": layers})
		return m
	}
	const why = "an image's config and layers are blobs, not manifests"
	if status, body := p.put(repo, "v1", ociManifest, cover(config, asBlob)); !refused(status, body, why) {
		t.Errorf("a layer whose bytes are a manifest not pushed yet: %d %s", status, body)
	}
	if status, body := p.put(repo, sha(hidden), ociManifest, hidden); status != http.StatusCreated {
		t.Fatalf("the hidden image by its digest: %d %s", status, body)
	}
	if status, body := p.put(repo, "v1", ociManifest, cover(config, asBlob)); !refused(status, body, why) {
		t.Errorf("a layer that is a manifest: %d %s", status, body)
	}
	if status, body := p.put(repo, "v2", ociManifest, cover(asBlob)); !refused(status, body, why) {
		t.Errorf("a config that is a manifest: %d %s", status, body)
	}
	asBlob["mediaType"] = ociManifest
	if status, body := p.put(repo, "v3", ociManifest, cover(config, asBlob)); !refused(status, body, why) {
		t.Errorf("a layer that says it is a manifest: %d %s", status, body)
	}
	if _, err := p.r.Collect(context.Background()); err != nil {
		t.Fatal(err)
	}
	if p.held("/v2/"+repo+"/manifests/"+sha(hidden)) || p.held("/v2/"+repo+"/blobs/"+sha([]byte(big))) {
		t.Error("the image pushed by its digest and named by nothing stays after a collection")
	}
}

// A manifest naming a blob or a manifest the repository does not hold is
// refused before the quotas weigh it (what is missing then, weighed 0,
// could be uploaded before the registry checks).
func TestReferencesMustBeHeld(t *testing.T) {
	p := newPolicyRegistry(t)
	const repo = "alice/bot"
	m, _ := p.image(repo, "a layer")
	var doc map[string]any
	json.Unmarshal(m, &doc)
	missing := []byte("not uploaded")
	doc["layers"] = append(doc["layers"].([]any), map[string]any{"mediaType": "application/vnd.oci.image.layer.v1.tar", "digest": sha(missing), "size": len(missing)})
	m, _ = json.Marshal(doc)
	status, body := p.put(repo, "v1", ociManifest, m)
	if status != http.StatusBadRequest || !strings.Contains(body, "MANIFEST_BLOB_UNKNOWN") || !strings.Contains(body, sha(missing)) {
		t.Errorf("an image with a layer not uploaded: %d %s", status, body)
	}
	img, _ := p.image(repo, "another layer")
	status, body = p.put(repo, "v2", ociIndexType, index(ociIndexType, indexEntry(ociManifest, img)))
	if status != http.StatusBadRequest || !strings.Contains(body, "MANIFEST_BLOB_UNKNOWN") || !strings.Contains(body, sha(img)) {
		t.Errorf("an index of an image not pushed: %d %s", status, body)
	}
	bad := index(ociIndexType, map[string]any{"mediaType": ociManifest, "digest": "../../../other/manifests/v1", "size": 1})
	if status, body := p.put(repo, "v3", ociIndexType, bad); status != http.StatusBadRequest {
		t.Errorf("an index naming no digest: %d %s", status, body)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.weighed) != 0 {
		t.Errorf("weighed: %v", p.weighed)
	}
}
