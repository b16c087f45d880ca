package web

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"arena/platform"
)

const ociIndex = "application/vnd.oci.image.index.v1+json"

// indexOf is an OCI index of the manifests given, each listed as the
// media type given.
func indexOf(mediaType string, manifests ...[]byte) []byte {
	var list []map[string]any
	for _, m := range manifests {
		list = append(list, map[string]any{"mediaType": mediaType, "digest": digestOf(m), "size": len(m),
			"platform": map[string]string{"architecture": "amd64", "os": "linux"}})
	}
	b, _ := json.Marshal(map[string]any{"schemaVersion": 2, "mediaType": ociIndex, "manifests": list})
	return b
}

// usage is the bytes and tags alice's quotas count.
func (ms *matrixServer) usage(t *testing.T, tok string) (bytes, tags float64) {
	t.Helper()
	_, reg := ms.do(t, "GET", "/api/registry", "", "Authorization", "Bearer "+tok)
	u := reg["usage"].(map[string]any)["alice"].(map[string]any)
	return u["bytes"].(float64), u["tags"].(float64)
}

// The attack on the quotas by nested indexes, replayed: images and
// indexes of one image each pushed by their digests, then an index of
// those indexes, and a tag naming it. The index of indexes is refused,
// so is a tag naming an index of an index (however its descriptors name
// what they list); what was pushed by digest counts at once (each image
// once, however many indexes list it), and a collection leaves none of
// it.
func TestRegistryRefusesNestedIndexes(t *testing.T) {
	ms := newMatrixServer(t, Config{}, with(platform.Config{Registry: platform.RegistryConfig{Enabled: true, Host: "127.0.0.1:5006", MaxBytes: 100 << 10}}))
	_, tok := ms.token(t, "alice")
	const repo = "alice/nest"
	put := func(ref, contentType string, body []byte) (int, string) {
		res, b := ms.registryCall(t, "alice", tok, "PUT", "/v2/"+repo+"/manifests/"+ref, contentType, body)
		return res.StatusCode, string(b)
	}
	var images, inner [][]byte
	var want int64
	for i := range 12 {
		im := newImage(t, map[string]string{"io.arena.game": "tanks"}, strings.Repeat(string(rune('a'+i)), 5<<10))
		if status, body := ms.pushBlobs(t, "alice", tok, repo, im); status != http.StatusCreated {
			t.Fatalf("blobs %d: %d %s", i, status, body)
		}
		if status, body := put(digestOf(im.manifest), "application/vnd.oci.image.manifest.v1+json", im.manifest); status != http.StatusCreated {
			t.Fatalf("image %d by its digest: %d %s", i, status, body)
		}
		idx := indexOf("application/vnd.oci.image.manifest.v1+json", im.manifest)
		if status, body := put(digestOf(idx), ociIndex, idx); status != http.StatusCreated {
			t.Fatalf("index %d of one image by its digest: %d %s", i, status, body)
		}
		images, inner = append(images, im.layer), append(inner, idx)
		want += int64(len(im.manifest) + len(im.config) + len(im.layer) + len(idx))
	}
	// The attack: an index of those indexes, a tag naming an index of it.
	const why = "an index may list images only, not another index"
	middle := indexOf(ociIndex, inner...)
	if status, body := put(digestOf(middle), ociIndex, middle); status != http.StatusBadRequest || !strings.Contains(body, "MANIFEST_INVALID") || !strings.Contains(body, why) {
		t.Errorf("an index of indexes by its digest: %d %s", status, body)
	}
	if status, body := put("v1", ociIndex, indexOf(ociIndex, middle)); status != http.StatusBadRequest {
		t.Errorf("a tag of an index of an index of indexes: %d %s", status, body)
	}
	// A tag naming an index of indexes, whatever its descriptors say.
	for i, mediaType := range []string{ociIndex, "application/vnd.oci.image.manifest.v1+json"} {
		if status, body := put(fmt.Sprintf("v%d", i+2), ociIndex, indexOf(mediaType, inner...)); status != http.StatusBadRequest || !strings.Contains(body, "MANIFEST_INVALID") || !strings.Contains(body, why) {
			t.Errorf("a tag of an index of indexes listed as %s: %d %s", mediaType, status, body)
		}
	}
	if bytes, tags := ms.usage(t, tok); int64(bytes) != want || tags != 0 {
		t.Errorf("after the nested pushes alice holds %v bytes in %v tags, want %d (what was pushed by digest) in 0", bytes, tags, want)
	}
	for _, tag := range []string{"v1", "v2", "v3"} {
		if res, _ := ms.registryCall(t, "alice", tok, "GET", "/v2/"+repo+"/manifests/"+tag, "", nil); res.StatusCode != http.StatusNotFound {
			t.Errorf("the refused tag %s: %d", tag, res.StatusCode)
		}
	}
	if status, _ := ms.do(t, "POST", "/api/registry/gc", "{}", "Authorization", "Bearer "+matrixAdminToken); status != http.StatusOK {
		t.Fatalf("collect: %d", status)
	}
	if bytes, _ := ms.usage(t, tok); bytes != 0 {
		t.Errorf("after a collection alice holds %v bytes", bytes)
	}
	for i, layer := range images {
		if res, _ := ms.registryCall(t, "alice", tok, "GET", "/v2/"+repo+"/blobs/"+digestOf(layer), "", nil); res.StatusCode != http.StatusNotFound {
			t.Errorf("layer %d after a collection: %d", i, res.StatusCode)
		}
		if res, _ := ms.registryCall(t, "alice", tok, "GET", "/v2/"+repo+"/manifests/"+digestOf(inner[i]), "", nil); res.StatusCode != http.StatusNotFound {
			t.Errorf("index %d after a collection: %d", i, res.StatusCode)
		}
	}
}

// A multi-platform image (an index of images, pushed by their digests
// first) is accepted and counts what it stores: the index, each image's
// manifest, config and layer; the next push past the quota is refused,
// and a collection keeps it all.
func TestRegistryCountsAnIndexOfImages(t *testing.T) {
	ms := newMatrixServer(t, Config{}, with(platform.Config{Registry: platform.RegistryConfig{Enabled: true, Host: "127.0.0.1:5006", MaxBytes: 100 << 10}}))
	_, tok := ms.token(t, "alice")
	const repo = "alice/multi"
	var manifests [][]byte
	var want int64
	for i, layer := range []string{strings.Repeat("a", 30<<10), strings.Repeat("b", 30<<10)} {
		im := newImage(t, map[string]string{"io.arena.game": "tanks"}, layer)
		if status, body := ms.pushBlobs(t, "alice", tok, repo, im); status != http.StatusCreated {
			t.Fatalf("blobs %d: %d %s", i, status, body)
		}
		if res, body := ms.registryCall(t, "alice", tok, "PUT", "/v2/"+repo+"/manifests/"+digestOf(im.manifest), "application/vnd.oci.image.manifest.v1+json", im.manifest); res.StatusCode != http.StatusCreated {
			t.Fatalf("image %d by its digest: %d %s", i, res.StatusCode, body)
		}
		manifests = append(manifests, im.manifest)
		want += int64(len(im.manifest) + len(im.config) + len(im.layer))
	}
	idx := indexOf("application/vnd.oci.image.manifest.v1+json", manifests...)
	want += int64(len(idx))
	if res, body := ms.registryCall(t, "alice", tok, "PUT", "/v2/"+repo+"/manifests/v1", ociIndex, idx); res.StatusCode != http.StatusCreated {
		t.Fatalf("the index: %d %s", res.StatusCode, body)
	}
	if bytes, tags := ms.usage(t, tok); int64(bytes) != want || tags != 1 {
		t.Errorf("alice holds %v bytes in %v tags, want %d in 1", bytes, tags, want)
	}
	// 60 KiB held of 100: another 60 KiB is refused.
	other := newImage(t, map[string]string{"io.arena.game": "tanks"}, strings.Repeat("c", 60<<10))
	if status, body := ms.push(t, "alice", tok, "alice/other", "v1", other); status != http.StatusForbidden || !strings.Contains(body, "ARENA_REGISTRY_QUOTA") {
		t.Errorf("a push past the quota after the index: %d %s", status, body)
	}
	if status, _ := ms.do(t, "POST", "/api/registry/gc", "{}", "Authorization", "Bearer "+matrixAdminToken); status != http.StatusOK {
		t.Fatalf("collect: %d", status)
	}
	for i, m := range manifests {
		if res, _ := ms.registryCall(t, "alice", tok, "GET", "/v2/"+repo+"/manifests/"+digestOf(m), "", nil); res.StatusCode != http.StatusOK {
			t.Errorf("image %d of the index after a collection: %d", i, res.StatusCode)
		}
	}
}

// An owner at the most tags they may have pushes a multi-platform image
// over a tag they have: its images, pushed by their digests, add no tag
// and are not refused for one.
func TestAnIndexOverATagAtTheTagQuota(t *testing.T) {
	ms := newMatrixServer(t, Config{}, with(platform.Config{Registry: platform.RegistryConfig{Enabled: true, Host: "127.0.0.1:5006", MaxTags: 1}}))
	_, tok := ms.token(t, "alice")
	const repo = "alice/multi"
	if status, body := ms.push(t, "alice", tok, repo, "v1", newImage(t, map[string]string{"io.arena.game": "tanks"}, "first")); status != http.StatusCreated {
		t.Fatalf("the first tag: %d %s", status, body)
	}
	var images [][]byte
	for _, layer := range []string{"amd64", "arm64"} {
		im := newImage(t, map[string]string{"io.arena.game": "tanks"}, layer)
		if status, body := ms.pushBlobs(t, "alice", tok, repo, im); status != http.StatusCreated {
			t.Fatalf("blobs: %d %s", status, body)
		}
		res, body := ms.registryCall(t, "alice", tok, "PUT", "/v2/"+repo+"/manifests/"+digestOf(im.manifest), "application/vnd.oci.image.manifest.v1+json", im.manifest)
		if res.StatusCode != http.StatusCreated {
			t.Fatalf("an image by its digest at the tag quota: %d %s", res.StatusCode, body)
		}
		images = append(images, im.manifest)
	}
	res, body := ms.registryCall(t, "alice", tok, "PUT", "/v2/"+repo+"/manifests/v1", ociIndex, indexOf("application/vnd.oci.image.manifest.v1+json", images...))
	if res.StatusCode != http.StatusCreated {
		t.Fatalf("the index over v1: %d %s", res.StatusCode, body)
	}
	if _, tags := ms.usage(t, tok); tags != 1 {
		t.Errorf("alice holds %v tags, want 1", tags)
	}
	// A new tag is still one too many.
	if status, body := ms.push(t, "alice", tok, repo, "v2", newImage(t, nil, "second")); status != http.StatusForbidden || !strings.Contains(body, "ARENA_REGISTRY_MAX_TAGS") {
		t.Errorf("a second tag: %d %s", status, body)
	}
}

// Images pushed by their digests with no tag count against the quota at
// once: pushed one after another, 59 MiB once stayed past an 8 MiB
// quota until the daily collection. Here the fourth 30 KiB image of a
// 100 KiB quota is refused; a tag naming one of them counts it once;
// deleting one frees its place; a collection frees the others.
func TestImagesPushedByDigestCountAtOnce(t *testing.T) {
	ms := newMatrixServer(t, Config{}, with(platform.Config{Registry: platform.RegistryConfig{Enabled: true, Host: "127.0.0.1:5006", MaxBytes: 100 << 10}}))
	_, tok := ms.token(t, "alice")
	const repo = "alice/loose"
	var ims []image
	var sizes []int64
	for i := range 4 {
		im := newImage(t, map[string]string{"io.arena.game": "tanks"}, strings.Repeat(string(rune('a'+i)), 30<<10))
		if status, body := ms.pushBlobs(t, "alice", tok, repo, im); status != http.StatusCreated {
			t.Fatalf("blobs %d: %d %s", i, status, body)
		}
		res, body := ms.registryCall(t, "alice", tok, "PUT", "/v2/"+repo+"/manifests/"+digestOf(im.manifest), "application/vnd.oci.image.manifest.v1+json", im.manifest)
		if want := map[bool]int{true: http.StatusCreated, false: http.StatusForbidden}[i < 3]; res.StatusCode != want || want == http.StatusForbidden && !strings.Contains(string(body), "ARENA_REGISTRY_QUOTA") {
			t.Fatalf("image %d by its digest: %d %s, want %d", i, res.StatusCode, body, want)
		}
		ims, sizes = append(ims, im), append(sizes, int64(len(im.manifest)+len(im.config)+len(im.layer)))
	}
	if bytes, tags := ms.usage(t, tok); int64(bytes) != sizes[0]+sizes[1]+sizes[2] || tags != 0 {
		t.Errorf("alice holds %v bytes in %v tags, want %d in 0", bytes, tags, sizes[0]+sizes[1]+sizes[2])
	}
	// Tagged, the first counts once.
	if res, body := ms.registryCall(t, "alice", tok, "PUT", "/v2/"+repo+"/manifests/v1", "application/vnd.oci.image.manifest.v1+json", ims[0].manifest); res.StatusCode != http.StatusCreated {
		t.Fatalf("tag the first: %d %s", res.StatusCode, body)
	}
	if bytes, tags := ms.usage(t, tok); int64(bytes) != sizes[0]+sizes[1]+sizes[2] || tags != 1 {
		t.Errorf("with a tag alice holds %v bytes in %v tags, want %d in 1", bytes, tags, sizes[0]+sizes[1]+sizes[2])
	}
	if res, body := ms.registryCall(t, "alice", tok, "DELETE", "/v2/"+repo+"/manifests/"+digestOf(ims[1].manifest), "", nil); res.StatusCode != http.StatusAccepted {
		t.Fatalf("delete the second: %d %s", res.StatusCode, body)
	}
	if bytes, _ := ms.usage(t, tok); int64(bytes) != sizes[0]+sizes[2] {
		t.Errorf("after a deletion alice holds %v bytes, want %d", bytes, sizes[0]+sizes[2])
	}
	if status, _ := ms.do(t, "POST", "/api/registry/gc", "{}", "Authorization", "Bearer "+matrixAdminToken); status != http.StatusOK {
		t.Fatalf("collect: %d", status)
	}
	if bytes, _ := ms.usage(t, tok); int64(bytes) != sizes[0] {
		t.Errorf("after a collection alice holds %v bytes, want %d (the tagged one)", bytes, sizes[0])
	}
}
