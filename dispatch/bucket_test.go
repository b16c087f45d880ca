package dispatch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"arena/dispatch/trust"
)

// bucketBytes is the stored size of a worker's bucket, and its bound.
func (r *rig) bucketBytes(worker string) (size uint64, bound int64) {
	r.t.Helper()
	st, err := r.js.Stream(r.t.Context(), "OBJ_"+trust.BucketOf(worker))
	if err != nil {
		r.t.Fatal(err)
	}
	info, err := st.Info(r.t.Context())
	if err != nil {
		r.t.Fatal(err)
	}
	return info.State.Bytes, info.Config.MaxBytes
}

// A worker's bucket is bounded: one made before the bound (by an older
// server) is bounded as the server starts, and a worker's key that puts
// more than the bound into it, through the object store or chunk by
// chunk, is refused once past it; the bucket never holds more. An object
// deleted, even from a bucket full to the byte, makes room again.
func TestAWorkersBucketIsBounded(t *testing.T) {
	const bound = 1 << 20
	s := newSecured(t)
	w1 := s.Join("w1")
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if _, err := s.js.CreateObjectStore(ctx, jetstream.ObjectStoreConfig{Bucket: trust.BucketOf("w1")}); err != nil {
		t.Fatal(err)
	}
	if _, b := s.bucketBytes("w1"); b > 0 {
		t.Fatalf("the bucket is bounded at %d before the server starts", b)
	}
	// The server starts again, with the bound.
	d, err := NewDispatcherWith(ctx, s.d.nc, DispatcherConfig{Name: "server2", Setup: &Config{}, BucketBytes: bound})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	waitFor(t, "the bucket there was is bounded", func() bool { _, b := s.bucketBytes("w1"); return b == bound })

	// The worker's key.
	extra, err := w1.Options()
	if err != nil {
		t.Fatal(err)
	}
	nc, err := nats.Connect(s.URL, append(extra, nats.NoReconnect())...)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	obs, err := js.ObjectStore(ctx, trust.BucketOf("w1"))
	if err != nil {
		t.Fatal(err)
	}
	within := func(what string) {
		t.Helper()
		if size, _ := s.bucketBytes("w1"); size > bound {
			t.Fatalf("%s: the bucket holds %d bytes, past its bound of %d", what, size, bound)
		}
	}
	data := bytes.Repeat([]byte("x"), 300<<10)
	stored := 0
	for i := range 8 {
		_, err := obs.Put(ctx, jetstream.ObjectMeta{Name: fmt.Sprintf("o%d", i)}, bytes.NewReader(data))
		switch {
		case err == nil && i > stored:
			t.Fatalf("object %d was stored after one was refused", i)
		case err == nil:
			stored++
		case !bucketFull(err):
			t.Fatalf("object %d refused, but not as past the bound: %v", i, err)
		}
		within(fmt.Sprintf("object %d", i))
	}
	if stored != 3 {
		t.Errorf("%d objects of 300 KiB stored in a bucket of 1 MiB, want 3", stored)
	}
	// Chunk by chunk, to the byte.
	chunks := "$O." + trust.BucketOf("w1") + ".C.raw"
	for _, n := range []int{64 << 10, 4096, 512, 64, 1} {
		for i := 0; ; i++ {
			_, err := js.Publish(ctx, chunks, data[:n])
			if err != nil {
				if !bucketFull(err) {
					t.Fatalf("a chunk refused, but not as past the bound: %v", err)
				}
				break
			}
			if i > bound/n {
				t.Fatalf("chunks of %d bytes are never refused", n)
			}
		}
		within(fmt.Sprintf("chunks of %d bytes", n))
	}

	// Deleted, an object makes room, and a put goes in again.
	if err := deleteObject(ctx, js, obs, "o0"); err != nil {
		t.Fatalf("delete from a full bucket: %v", err)
	}
	if _, err := obs.Put(ctx, jetstream.ObjectMeta{Name: "again"}, bytes.NewReader(data[:200<<10])); err != nil {
		t.Errorf("put once room was made: %v", err)
	}
	within("put again")
}

// A replay larger than its worker's bucket is not tried again and again
// while the lease runs out: each delivery is handed back saying why, and
// the last fails the match with the reason.
func TestAReplayLargerThanItsBucketFailsTheMatchSayingWhy(t *testing.T) {
	s := newSecured(t, func(c *DispatcherConfig) { c.BucketBytes = 1024 })
	s.remoteWorker(s.Join("w1"), WorkerConfig{InlineMax: 1})
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	_, err := s.d.Play(ctx, request(t, "bbbbbbbbbbb1", nil))
	if !errors.Is(err, ErrNoWorker) || !strings.Contains(err.Error(), "its replay could not be stored: the replay is larger than this worker's bucket") {
		t.Fatalf("the match ended with %v", err)
	}
	if n := strings.Count(err.Error(), "larger than this worker's bucket"); n != 5 {
		t.Errorf("%d deliveries say why, want all 5: %v", n, err)
	}
	if size, _ := s.bucketBytes("w1"); size > 1024 {
		t.Errorf("the bucket holds %d bytes", size)
	}
}
