package web

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"arena/orchestrator/fake"
	"arena/platform"
)

// fakeEngine is the server's engine as pulled.go sees it, over the fake
// launcher: a pull adds the image under its held tag (HOST/…:sha256-HEX),
// with the script script gives it for its digest reference.
type fakeEngine struct {
	launcher *fake.Launcher
	script   func(ref string) (fake.Script, error)
	// ids, when set (pulledByConfig), gives a pulled image
	// (HOST/REPO@DIGEST) its id; else the fake launcher's of its tag.
	ids func(pull string) string

	mu      sync.Mutex
	pulled  []string
	removed []string
	pulls   int
}

// useEngine makes the server's engine pull pushed bots with script's
// scripts (nil: a Tanks bot that plays); until then, its pulls fail.
func (ms *testServer) useEngine(script func(ref string) (fake.Script, error)) *fakeEngine {
	if script == nil {
		script = func(string) (fake.Script, error) { return fake.Script{Game: "tanks"}, nil }
	}
	ms.engine.mu.Lock()
	ms.engine.script = script
	ms.engine.mu.Unlock()
	return ms.engine
}

// pulledByConfig gives the images the engine pulls the id a Docker
// engine does, their config's digest, as the registry recorded it: a
// contest's freeze checks the id of the version it pins.
func (ms *testServer) pulledByConfig() {
	ms.engine.mu.Lock()
	defer ms.engine.mu.Unlock()
	ms.engine.ids = func(pull string) string {
		repo, digest, _ := strings.Cut(pull, "@")
		_, repo, _ = strings.Cut(repo, "/")
		tags, _ := ms.store.Tags(context.Background())
		for _, t := range tags {
			if t.Repository == repo && t.Digest == digest {
				return t.ImageID
			}
		}
		return ""
	}
}

func (e *fakeEngine) Pull(_ context.Context, pull, tag, _ string) error {
	if !strings.Contains(pull, "@sha256:") || !platform.HeldTag(tag) {
		return fmt.Errorf("pull %s as %s: not by digest, or not a held tag", pull, tag)
	}
	e.mu.Lock()
	script, ids := e.script, e.ids
	e.mu.Unlock()
	if script == nil {
		return fmt.Errorf("pull %s: the test engine pulls nothing yet", pull)
	}
	s, err := script(pull)
	if err != nil {
		return err
	}
	if ids != nil && s.ID == "" {
		s.ID = ids(pull)
	}
	e.launcher.Add(tag, s)
	e.mu.Lock()
	defer e.mu.Unlock()
	e.pulls++
	if !slices.Contains(e.pulled, tag) {
		e.pulled = append(e.pulled, tag)
	}
	return nil
}

func (e *fakeEngine) Pulled(_ context.Context, host string) ([]platform.PulledImage, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []platform.PulledImage
	for _, ref := range e.pulled {
		if strings.HasPrefix(ref, host+"/") {
			out = append(out, platform.PulledImage{ID: fake.ImageID(ref), Refs: []string{ref}})
		}
	}
	return out, nil
}

func (e *fakeEngine) Remove(_ context.Context, ref string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	i := slices.Index(e.pulled, ref)
	if i < 0 {
		return fmt.Errorf("no image %s", ref)
	}
	e.pulled = slices.Delete(e.pulled, i, i+1)
	e.removed = append(e.removed, ref)
	e.launcher.Remove(ref)
	return nil
}

// held is what the engine holds now.
func (e *fakeEngine) held() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.pulled)
}
