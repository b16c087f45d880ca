package orchestrator

import (
	"errors"
	"testing"

	"arena/imageref"
	"arena/sandbox"
)

// The game's own images come first, the unlabelled after them, and other
// games' images not at all; each group keeps its order (newest first).
func TestSuggest(t *testing.T) {
	all := []sandbox.LocalImage{
		{Ref: "me/new"}, {Ref: "arena/snake-greedy", Game: "snake"},
		{Ref: "arena/tanks-hunter", Game: "tanks"}, {Ref: "me/old"}, {Ref: "arena/tanks-random", Game: "tanks"},
		// Not bots: Arena's own images and base images, unlabelled.
		{Ref: "arena/arena:latest"}, {Ref: "arena/probe:123-456"}, {Ref: "python:3.14-slim-trixie"},
		{Ref: "golang:1.26-trixie"}, {Ref: "docker.io/library/debian:bookworm"}, {Ref: "localhost:5000/debian"},
	}
	tests := []struct {
		give string
		want []string
	}{
		{"tanks", []string{"arena/tanks-hunter", "arena/tanks-random", "me/new", "me/old"}},
		{"snake", []string{"arena/snake-greedy", "me/new", "me/old"}},
		{"pacman", []string{"me/new", "me/old"}},
	}
	for _, tt := range tests {
		got := suggest(all, tt.give)
		var refs []string
		for _, img := range got {
			refs = append(refs, img.Ref)
		}
		if len(refs) != len(tt.want) {
			t.Errorf("%s: got %v, want %v", tt.give, refs, tt.want)
			continue
		}
		for i := range refs {
			if refs[i] != tt.want[i] {
				t.Errorf("%s: got %v, want %v", tt.give, refs, tt.want)
				break
			}
		}
	}
}

// noList is a launcher that cannot list images.
type noList struct{ Launcher }

// A launcher that cannot list images says so, by kind.
func TestImagesWithoutAList(t *testing.T) {
	_, err := New(noList{}).Images(t.Context(), "tanks")
	if !errors.Is(err, imageref.ErrNoList) {
		t.Errorf("err = %v, want imageref.ErrNoList", err)
	}
}
