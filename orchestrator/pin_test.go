package orchestrator_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"arena/engine/snake"
	"arena/internal/errs"
	"arena/matches"
	"arena/orchestrator"
	"arena/orchestrator/fake"
)

// A match created on one host and played on another plays the exact
// images it was pinned to, under the names it was created with.
func TestPinnedImages(t *testing.T) {
	g := snake.New()
	m, err := g.Map(g.Maps()[0].Name)
	if err != nil {
		t.Fatal(err)
	}
	up := fake.Script{Answer: func(int, [][]byte) []byte { return []byte("up") }}
	o := orchestrator.New(fake.NewLauncher(map[string]fake.Script{"bot/a": up, "bot/b": up}))
	req := matches.Request{Game: g, Map: m, Seed: 1, Images: []string{"bot/a", "bot/b"}, Settings: []byte(`{"max_rounds":1}`)}

	req.ImageIDs = []string{fake.ImageID("bot/a"), fake.ImageID("bot/b")}
	rep, err := o.Play(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	for i, b := range rep.Bots {
		if b.Image != req.Images[i] || b.ImageID != req.ImageIDs[i] {
			t.Errorf("seat %d: %s (%s), want %s (%s)", i, b.Image, b.ImageID, req.Images[i], req.ImageIDs[i])
		}
	}

	// Another build under the same name is not the pinned image.
	req.ImageIDs = []string{fake.ImageID("bot/a"), fake.ImageID("bot/other")}
	_, err = o.Play(t.Context(), req)
	if !errors.Is(err, matches.ErrImageNotFound) || !strings.Contains(err.Error(), "bot 2: image bot/b (sha256:") {
		t.Errorf("got %v, want ErrImageNotFound naming bot/b and its id", err)
	}

	// Pin resolves the ids as the images are now; a pinned request, or
	// one whose images are pulled at play time, is kept as it is.
	req.ImageIDs = nil
	pinned, err := o.Pin(t.Context(), req, true)
	if err != nil || !slices.Equal(pinned.ImageIDs, []string{fake.ImageID("bot/a"), fake.ImageID("bot/b")}) {
		t.Errorf("Pin: %v, %v", pinned.ImageIDs, err)
	}
	if again, _ := o.Pin(t.Context(), matches.Request{Game: g, Map: m, Images: req.Images, ImageIDs: []string{"sha256:1", "sha256:2"}}, true); len(again.ImageIDs) != 2 || again.ImageIDs[0] != "sha256:1" {
		t.Errorf("Pin of a pinned request: %v", again.ImageIDs)
	}
	// A request pinned without digests (a ladder's) gets the digests of
	// the images it is pinned to.
	digest := "registry.example/bot/a@sha256:" + strings.Repeat("a", 64)
	od := orchestrator.New(fake.NewLauncher(map[string]fake.Script{"bot/a": {Digest: digest}, "bot/b": up}))
	withIDs := req
	withIDs.ImageIDs = []string{fake.ImageID("bot/a"), fake.ImageID("bot/b")}
	if p, err := od.Pin(t.Context(), withIDs, true); err != nil || !slices.Equal(p.ImageDigests, []string{digest, ""}) || !slices.Equal(p.ImageIDs, withIDs.ImageIDs) {
		t.Errorf("Pin of a request pinned without digests: %v %v, %v", p.ImageIDs, p.ImageDigests, err)
	}
	if unpinned, err := o.Pin(t.Context(), req, false); err != nil || unpinned.ImageIDs != nil {
		t.Errorf("Pin without images: %v, %v", unpinned.ImageIDs, err)
	}

	req.ImageIDs = []string{fake.ImageID("bot/a"), fake.ImageID("bot/b")}[:1]
	if err := o.Validate(t.Context(), req, true); !errs.IsInvalid(err) {
		t.Errorf("one id for two bots: got %v, want errs.ErrInvalid", err)
	}
}
