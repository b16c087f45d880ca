package dispatch

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"arena/dispatch/trust"
	"arena/engine"
	"arena/matches"
	"arena/orchestrator"
	"arena/orchestrator/fake"
)

// fakeEngine is a worker's engine of fake images: an archive loaded is
// "archive of REF" and padding, and makes REF known to the launcher. Its
// tags (Tag) name images by id; removing an image's last tag removes it
// from the launcher.
type fakeEngine struct {
	l     *fake.Launcher
	s     fake.Script
	loads atomic.Int32

	mu sync.Mutex
	// tags are the engine's tags, each with the id of its image; names
	// the launcher's reference of each image tagged.
	tags  map[string]string
	names map[string]string
	// removed are the tags removed, with when; refuse how many removals
	// are refused (as for an image a container uses); lists how many
	// times Fetched was called.
	removed map[string]time.Time
	refuse  int
	lists   int
	// gate, when set, is called as a removal starts.
	gate func(ref string)
}

func (e *fakeEngine) Has(ctx context.Context, id string) bool {
	_, err := e.l.Image(ctx, id)
	return err == nil
}

func (e *fakeEngine) Load(_ context.Context, r io.Reader) error {
	data, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	ref, _, ok := bytes.Cut(bytes.TrimPrefix(data, []byte("archive of ")), []byte("\n"))
	if !ok || !bytes.HasPrefix(data, []byte("archive of ")) || len(data) != archiveSize {
		return fmt.Errorf("not an archive (%d bytes)", len(data))
	}
	e.loads.Add(1)
	e.l.Add(string(ref), e.s)
	e.mu.Lock()
	defer e.mu.Unlock()
	e.nameLocked(string(ref))
	return nil
}

// nameLocked records the launcher's reference of an image; e.mu must be
// held.
func (e *fakeEngine) nameLocked(ref string) {
	if e.names == nil {
		e.names = map[string]string{}
	}
	e.names[fake.ImageID(ref)] = ref
}

func (e *fakeEngine) Tag(ctx context.Context, id, ref string) error {
	if !e.Has(ctx, id) {
		return fmt.Errorf("no image %s", id)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.tags == nil {
		e.tags = map[string]string{}
	}
	e.tags[ref] = id
	return nil
}

func (e *fakeEngine) Fetched(context.Context) ([]FetchedImage, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.lists++
	byID := map[string]*FetchedImage{}
	var out []FetchedImage
	for ref, id := range e.tags {
		if !strings.HasPrefix(ref, FetchedRepo+":") {
			continue
		}
		if byID[id] == nil {
			byID[id] = &FetchedImage{ID: id}
		}
		byID[id].Refs = append(byID[id].Refs, ref)
	}
	for _, img := range byID {
		out = append(out, *img)
	}
	return out, nil
}

func (e *fakeEngine) Remove(_ context.Context, ref string) error {
	if e.gate != nil {
		e.gate(ref)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	id, ok := e.tags[ref]
	if !ok {
		return fmt.Errorf("no such image: %s", ref)
	}
	if e.refuse > 0 {
		e.refuse--
		return fmt.Errorf("conflict: unable to remove repository reference %q: a container is using its referenced image", ref)
	}
	delete(e.tags, ref)
	if e.removed == nil {
		e.removed = map[string]time.Time{}
	}
	e.removed[ref] = time.Now()
	for _, other := range e.tags {
		if other == id {
			return nil
		}
	}
	e.l.Remove(e.names[id])
	return nil
}

// tagged says whether the engine has the tag.
func (e *fakeEngine) tagged(ref string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	_, ok := e.tags[ref]
	return ok
}

// removedAt is when the tag was removed (zero: it was not).
func (e *fakeEngine) removedAt(ref string) time.Time {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.removed[ref]
}

// archiveSize is larger than an object's chunk and than a message.
const archiveSize = 3<<20 + 17

func archiveOf(ref string) []byte {
	data := []byte("archive of " + ref + "\n")
	return append(data, bytes.Repeat([]byte{'x'}, archiveSize-len(data))...)
}

// A joined worker that lacks a pushed bot's image gets it from the
// server, through its own bucket, over its own credentials: once for
// matches that need it at the same time, and the object is gone once
// loaded. An image the server does not hand out is refused, saying so,
// and the match is played as before (the bot start_failed, naming the
// image, on its last delivery).
func TestAWorkerFetchesAPushedBotFromTheServer(t *testing.T) {
	var exports atomic.Int32
	pushed := fake.ImageID("alice/bot:v1")
	s := newSecured(t, func(c *DispatcherConfig) {
		c.Images = func(ctx context.Context, id string, w io.Writer) error {
			if id != pushed {
				return ErrNotHandedOut
			}
			exports.Add(1)
			_, err := w.Write(archiveOf("alice/bot:v1"))
			return err
		}
	})
	up := fake.Script{Answer: func(int, [][]byte) []byte { return []byte("up") }}
	l := fake.NewLauncher(map[string]fake.Script{"bot/b": up})
	eng := &fakeEngine{l: l, s: up}
	w1 := s.Join("w1")
	s.remoteWorker(w1, WorkerConfig{Player: orchestrator.New(l), Images: eng, Concurrency: 2})

	req := func(id, a string) matches.Request {
		r := request(t, id, nil)
		r.Images = []string{a, "bot/b"}
		r.ImageIDs = []string{fake.ImageID(a), fake.ImageID("bot/b")}
		return r
	}
	var wg sync.WaitGroup
	for _, id := range []string{"iiiiiiiiiii1", "iiiiiiiiiii2"} {
		wg.Go(func() {
			rep, err := s.d.Play(t.Context(), req(id, "alice/bot:v1"))
			if err != nil {
				t.Error(err)
				return
			}
			for _, b := range rep.Result.Bots {
				if b.Status == engine.StatusStartFailed {
					t.Errorf("%s: %s: %s", id, b.ID, b.FaultDetail)
				}
			}
		})
	}
	wg.Wait()
	if n := eng.loads.Load(); n != 1 {
		t.Errorf("%d loads, want 1", n)
	}
	if n := exports.Load(); n != 1 {
		t.Errorf("%d exports, want 1", n)
	}
	obs, err := s.js.ObjectStore(t.Context(), trust.BucketOf("w1"))
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the image's object deleted", func() bool {
		_, err := obs.GetInfo(t.Context(), imageObject(pushed))
		return err != nil
	})

	// An image that is no pushed bot's: refused, in words.
	extra, err := w1.Options()
	if err != nil {
		t.Fatal(err)
	}
	nc, err := nats.Connect(s.URL, append(extra, nats.NoReconnect())...)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	other := fake.ImageID("bob/secret:v1")
	data, _ := json.Marshal(imageRequest{V: Version, ID: other})
	m, err := nc.Request(imageSubject("w1"), data, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var r imageReply
	if err := json.Unmarshal(m.Data, &r); err != nil || r.Object != "" || !strings.Contains(r.Error, "no pushed bot is that image") {
		t.Errorf("an image not handed out: %s %v", m.Data, err)
	}
	if _, err := obs.GetInfo(t.Context(), imageObject(other)); err != jetstream.ErrObjectNotFound {
		t.Errorf("an object left for an image not handed out: %v", err)
	}
	// Not an image id at all.
	m, err = nc.Request(imageSubject("w1"), []byte(`{"v":2,"id":"../../etc"}`), 10*time.Second)
	if err != nil || !strings.Contains(string(m.Data), "not an image request") {
		t.Errorf("a request for no image id: %v %s", err, m.Data)
	}
}
