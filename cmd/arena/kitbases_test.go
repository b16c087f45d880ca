package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"arena/internal/testsupport/dockertest"
	"arena/sourcebuild"
)

// A kit's base image is saved and compressed once: the image read has
// the engine's layers (their diff ids) and config, its layers are
// compressed blobs with digests, a second server reads the same from
// the folder without saving it again, and what a stopped server left
// (half-made layouts, older saves, the layouts of images gone) goes as
// the next starts.
func TestKitBasesCompressOnce(t *testing.T) {
	cli := dockertest.Client(t)
	ref := dockertest.TestBot(t, cli, "")
	info, err := cli.ImageInspect(t.Context(), ref)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	kb := newKitBases(cli, dir)
	img, err := kb.Image(t.Context(), ref)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	var diffIDs []string
	for _, d := range cf.RootFS.DiffIDs {
		diffIDs = append(diffIDs, d.String())
	}
	if !slices.Equal(diffIDs, info.RootFS.Layers) || !slices.Equal(cf.Config.Entrypoint, info.Config.Entrypoint) {
		t.Errorf("the image read has layers %v and entrypoint %v; the engine's: %v and %v", diffIDs, cf.Config.Entrypoint, info.RootFS.Layers, info.Config.Entrypoint)
	}
	layers, err := img.Layers()
	if err != nil || len(layers) == 0 {
		t.Fatalf("its layers: %v %v", layers, err)
	}
	for _, l := range layers {
		rc, err := l.Compressed()
		if err != nil {
			t.Fatal(err)
		}
		head := make([]byte, 2)
		_, err = rc.Read(head)
		rc.Close()
		if err != nil || head[0] != 0x1f || head[1] != 0x8b {
			t.Errorf("a layer read is not gzip: % x %v", head, err)
		}
	}
	digest, _ := img.Digest()
	if again, _ := kb.Image(t.Context(), ref); again != img {
		t.Errorf("a second read made another image")
	}

	// A second server, the same folder: read from it, not saved again.
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || entries[0].Name() != layoutName(info.ID) {
		t.Fatalf("the folder holds %v, want the layout alone", entries)
	}
	stamp, _ := os.Stat(filepath.Join(dir, layoutName(info.ID), "index.json"))
	img2, err := newKitBases(cli, dir).Image(t.Context(), ref)
	if err != nil {
		t.Fatal(err)
	}
	if d2, _ := img2.Digest(); d2 != digest {
		t.Errorf("read again: %s, was %s", d2, digest)
	}
	if now, _ := os.Stat(filepath.Join(dir, layoutName(info.ID), "index.json")); !now.ModTime().Equal(stamp.ModTime()) {
		t.Errorf("the layout was written again")
	}

	// What a stopped server left goes; the kits' own bases' layouts stay.
	dockertest.Standins(t)
	py, _ := sourcebuild.FindKit("python", sourcebuild.Source{})
	if _, err := kb.Image(t.Context(), py.Base); err != nil {
		t.Fatal(err)
	}
	pyInfo, err := cli.ImageInspect(t.Context(), py.Base)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"saving-1", "base-abc.tar", "notes.txt"} {
		os.WriteFile(filepath.Join(dir, name), nil, 0o600)
	}
	for _, name := range []string{"making-2", "layout-0123"} {
		os.Mkdir(filepath.Join(dir, name), 0o700)
	}
	if err := kb.prune(t.Context()); err != nil {
		t.Fatal(err)
	}
	var left []string
	entries, _ = os.ReadDir(dir)
	for _, e := range entries {
		left = append(left, e.Name())
	}
	// ref is no kit's base: its layout goes too.
	if want := layoutName(pyInfo.ID) + " notes.txt"; strings.Join(left, " ") != want {
		t.Errorf("left after pruning: %v, want %s", left, want)
	}
}
