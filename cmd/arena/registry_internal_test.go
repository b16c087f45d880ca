package main

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"arena/registry"
	"arena/store"
)

// arena registry gc removes what a deleted repository left, and refuses
// to run on a data folder a server holds.
func TestRegistryGC(t *testing.T) {
	data := t.TempDir()
	reg, err := registry.New(t.Context(), registry.Config{Dir: filepath.Join(data, "registry")}, registry.Deps{Open: true})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(reg)
	layer := bytes.Repeat([]byte("a layer of some weight "), 40000)
	config := []byte(`{"architecture":"amd64","os":"linux","rootfs":{"type":"layers","diff_ids":[]}}`)
	dig := func(b []byte) string { return fmt.Sprintf("sha256:%x", sha256.Sum256(b)) }
	call := func(method, url, ctype string, body []byte) *http.Response {
		req, _ := http.NewRequest(method, url, bytes.NewReader(body))
		if ctype != "" {
			req.Header.Set("Content-Type", ctype)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res
	}
	for _, b := range [][]byte{config, layer} {
		loc := call("POST", srv.URL+"/v2/alice/bot/blobs/uploads/", "", nil).Header.Get("Location")
		if !strings.HasPrefix(loc, "http") {
			loc = srv.URL + loc
		}
		if res := call("PUT", loc+"&digest="+dig(b), "application/octet-stream", b); res.StatusCode != 201 {
			t.Fatalf("blob: %d", res.StatusCode)
		}
	}
	manifest := []byte(fmt.Sprintf(`{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":%q,"size":%d},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar","digest":%q,"size":%d}]}`,
		dig(config), len(config), dig(layer), len(layer)))
	if res := call("PUT", srv.URL+"/v2/alice/bot/manifests/v1", "application/vnd.oci.image.manifest.v1+json", manifest); res.StatusCode != 201 {
		t.Fatalf("manifest: %d", res.StatusCode)
	}
	if err := reg.Delete(t.Context(), "alice/bot", dig(manifest)); err != nil {
		t.Fatal(err)
	}
	srv.Close()
	reg.Close()
	before, _ := folderSize(filepath.Join(data, "registry"))

	// A server holds the folder: refused, with where to go instead.
	st, err := store.Open(data, "a server")
	if err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	if code := runMain(t.Context(), []string{"registry", "gc", "--data", data}, &out, &errOut); code != exitPlatform || !strings.Contains(errOut.String(), "POST /api/registry/gc") {
		t.Errorf("gc of a folder in use: exit %d, %s", code, errOut.String())
	}
	st.Close()
	out.Reset()
	errOut.Reset()
	if code := runMain(t.Context(), []string{"registry", "gc", "--data", data}, &out, &errOut); code != exitOK {
		t.Fatalf("gc: exit %d, %s", code, errOut.String())
	}
	after, _ := folderSize(filepath.Join(data, "registry"))
	if after > before-int64(len(layer)) {
		t.Errorf("the registry weighs %d bytes after the collection, %d before: the deleted layer (%d bytes) stayed", after, before, len(layer))
	}
	if !strings.Contains(out.String(), "collected") {
		t.Errorf("gc said %q", out.String())
	}
}
