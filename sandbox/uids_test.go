package sandbox

import (
	"context"
	"errors"
	"testing"

	"github.com/docker/docker/api/types/container"
)

// Pools on the same folder (two Arena processes) never hand out the same
// uid; a released uid is handed out again; a uid labelled on a container
// is not, whatever the locks say.
func TestUIDPool(t *testing.T) {
	dir := t.TempDir()
	var labelled []container.Summary
	list := func(context.Context) ([]container.Summary, error) { return labelled, nil }
	a := &uidPool{dir: dir, first: 100, size: 4, list: list}
	b := &uidPool{dir: dir, first: 100, size: 4, list: list}
	held := map[int]*uidLease{}
	for i, p := range []*uidPool{a, b, a, b} {
		l, err := p.acquire(t.Context())
		if err != nil {
			t.Fatalf("lease %d: %v", i, err)
		}
		if held[l.uid] != nil || l.uid < 100 || l.uid >= 104 {
			t.Fatalf("lease %d: uid %d (held: %v)", i, l.uid, held)
		}
		held[l.uid] = l
	}
	if _, err := b.acquire(t.Context()); !errors.Is(err, errNoUID) {
		t.Fatalf("a fifth lease of four uids: %v", err)
	}
	held[102].release()
	l, err := a.acquire(t.Context())
	if err != nil || l.uid != 102 {
		t.Fatalf("after a release: %v, %v", l, err)
	}
	l.release()
	// A leftover container of a process that died still runs as 102.
	labelled = []container.Summary{{Labels: map[string]string{LabelUID: "102"}}}
	if _, err := a.acquire(t.Context()); !errors.Is(err, errNoUID) {
		t.Errorf("the uid of a running container was handed out: %v", err)
	}
	failing := &uidPool{dir: dir, first: 100, size: 4, list: func(context.Context) ([]container.Summary, error) {
		return nil, errors.New("engine down")
	}}
	if _, err := failing.acquire(t.Context()); err == nil {
		t.Error("a lease without knowing the running uids")
	}
}
