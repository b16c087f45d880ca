package dispatch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap"
	"golang.org/x/sync/singleflight"
)

// Pushed bots on joined workers. A bot pushed to the server's registry is
// on the server's engine, not on a worker's: a worker that takes a match
// whose pinned image it does not hold asks the server for it, by its id,
// on its own subject (imagePrefix + its name; NATS lets a worker publish
// on no other). The server exports the image from its registry into the
// worker's own object store bucket, which only that worker reads, and
// answers with the object's name; the worker loads the archive into its
// engine and deletes the object. The engine gives the loaded image its
// config's digest as its id, so only the image pinned can answer to it.

// ImageSource writes the image whose engine id is id as an archive the
// engine loads (docker load); an image the server does not hand out
// (no pushed bot is that image) is an error of ErrNotHandedOut.
type ImageSource func(ctx context.Context, id string, w io.Writer) error

// ErrNotHandedOut: the server holds no pushed bot of that id.
var ErrNotHandedOut = errors.New("no pushed bot is that image")

// ImageStore is a worker's engine, as far as fetching images goes.
type ImageStore interface {
	// Has says whether the engine holds the image of that id.
	Has(ctx context.Context, id string) bool
	// Load loads an archive docker load takes.
	Load(ctx context.Context, r io.Reader) error
}

// imagePrefix + a worker's name is where it asks for an image.
const imagePrefix = "arena.image."

func imageSubject(worker string) string { return imagePrefix + worker }

// imageWait bounds an image's export and transfer, and exportsAtOnce how
// many the server makes at a time.
const (
	imageWait     = 10 * time.Minute
	exportsAtOnce = 2
)

type imageRequest struct {
	V   int    `json:"v"`
	ID  string `json:"id"`
	Ref string `json:"ref,omitempty"`
}

type imageReply struct {
	Object string `json:"object,omitempty"`
	Size   uint64 `json:"size,omitempty"`
	Error  string `json:"error,omitempty"`
}

var imageID = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)

// imageObject is the object an image is put under in a worker's bucket.
func imageObject(id string) string { return "image-" + strings.TrimPrefix(id, "sha256:") }

// imageServer answers the workers' requests for images.
type imageServer struct {
	d       *Dispatcher
	source  ImageSource
	flights singleflight.Group
	slots   chan struct{}
}

// serveImages subscribes to the workers' requests for images.
func (d *Dispatcher) serveImages(source ImageSource) (*nats.Subscription, error) {
	s := &imageServer{d: d, source: source, slots: make(chan struct{}, exportsAtOnce)}
	return d.nc.Subscribe(imagePrefix+"*", func(m *nats.Msg) {
		d.bg.Go(func() { s.serve(m) })
	})
}

func (s *imageServer) serve(m *nats.Msg) {
	worker := strings.TrimPrefix(m.Subject, imagePrefix)
	reply := func(r imageReply) {
		data, _ := json.Marshal(r)
		_ = m.Respond(data)
	}
	var req imageRequest
	if err := json.Unmarshal(m.Data, &req); err != nil || !imageID.MatchString(req.ID) {
		reply(imageReply{Error: "not an image request (an image id, sha256:…)"})
		return
	}
	log := s.d.log.With(zap.String("worker", worker), zap.String("image", req.ID), zap.String("ref", req.Ref))
	s.d.mu.Lock()
	quarantined := s.d.standingLocked(worker).quarantined
	s.d.mu.Unlock()
	if quarantined {
		reply(imageReply{Error: "this worker is quarantined"})
		return
	}
	ctx, cancel := context.WithTimeout(s.d.bgCtx, imageWait)
	defer cancel()
	v, err, _ := s.flights.Do(worker+" "+req.ID, func() (any, error) {
		return s.put(ctx, worker, req.ID, log)
	})
	if err != nil {
		log.Warn("an image asked for by a worker", zap.Error(err))
		reply(imageReply{Error: err.Error()})
		return
	}
	info := v.(*jetstream.ObjectInfo)
	log.Info("an image handed to a worker", zap.Uint64("bytes", info.Size))
	reply(imageReply{Object: info.Name, Size: info.Size})
}

// put exports an image into a worker's bucket, unless it is there.
func (s *imageServer) put(ctx context.Context, worker, id string, log *zap.Logger) (*jetstream.ObjectInfo, error) {
	// Its bucket may not be made yet (it is made as its first match
	// starts): made here if not.
	obs, err := s.d.js.CreateOrUpdateObjectStore(ctx, s.d.bucketConfig(worker))
	if err != nil {
		return nil, fmt.Errorf("the worker's bucket: %w", err)
	}
	name := imageObject(id)
	if info, err := obs.GetInfo(ctx, name); err == nil {
		return info, nil
	}
	select {
	case s.slots <- struct{}{}:
		defer func() { <-s.slots }()
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(s.source(ctx, id, pw)) }()
	info, err := obs.Put(ctx, jetstream.ObjectMeta{Name: name, Description: "arena: image " + id + " for worker " + worker}, pr)
	pr.CloseWithError(errors.New("the put ended"))
	if err != nil {
		_ = obs.Delete(context.WithoutCancel(ctx), name)
		if errors.Is(err, ErrNotHandedOut) {
			return nil, ErrNotHandedOut
		}
		if bucketFull(err) {
			return nil, fmt.Errorf("export the image: the worker's bucket is full (its bound is %d bytes: the server's ARENA_WORKER_BUCKET_BYTES)", s.d.cfg.BucketBytes)
		}
		return nil, fmt.Errorf("export the image: %w", err)
	}
	return info, nil
}

// fetchImages makes the engine hold the images of a match it lacks, from
// the server; what cannot be fetched is left for the orchestrator to
// report (the match is handed back, or on its last delivery the bot is
// start_failed, naming the image).
func (w *Worker) fetchImages(ctx context.Context, job Job, log *zap.Logger) {
	if w.cfg.Images == nil {
		return
	}
	seen := map[string]bool{}
	for i, id := range job.ImageIDs {
		if id == "" || seen[id] || !imageID.MatchString(id) {
			continue
		}
		seen[id] = true
		if w.cfg.Images.Has(ctx, id) {
			continue
		}
		ref := ""
		if i < len(job.Images) {
			ref = job.Images[i]
		}
		start := time.Now()
		_, err, _ := w.fetches.Do(id, func() (any, error) {
			if w.cfg.Images.Has(ctx, id) {
				return nil, nil // another match's fetch got it
			}
			return nil, w.fetchImage(ctx, id, ref)
		})
		if err != nil {
			log.Warn("fetch an image from the server", zap.String("image", id), zap.String("ref", ref), zap.Error(err))
			continue
		}
		log.Info("image fetched from the server", zap.String("image", id), zap.String("ref", ref), zap.Duration("took", time.Since(start)))
	}
}

func (w *Worker) fetchImage(ctx context.Context, id, ref string) error {
	ctx, cancel := context.WithTimeout(ctx, imageWait)
	defer cancel()
	data, _ := json.Marshal(imageRequest{V: Version, ID: id, Ref: ref})
	m, err := w.nc.RequestWithContext(ctx, imageSubject(w.cfg.Name), data)
	if err != nil {
		return fmt.Errorf("ask the server: %w", err)
	}
	var r imageReply
	if err := json.Unmarshal(m.Data, &r); err != nil {
		return fmt.Errorf("the server's answer: %w", err)
	}
	if r.Error != "" {
		return errors.New("the server: " + r.Error)
	}
	if r.Object != imageObject(id) {
		return fmt.Errorf("the server named object %q", r.Object)
	}
	obs, err := w.js.ObjectStore(ctx, bucketOf(w.cfg.Name))
	if err != nil {
		return fmt.Errorf("the bucket: %w", err)
	}
	defer deleteObject(context.WithoutCancel(ctx), w.js, obs, r.Object)
	obj, err := obs.Get(ctx, r.Object)
	if err != nil {
		return fmt.Errorf("read the image: %w", err)
	}
	defer obj.Close()
	if err := w.cfg.Images.Load(ctx, obj); err != nil {
		return fmt.Errorf("load the image: %w", err)
	}
	if !w.cfg.Images.Has(ctx, id) {
		return errors.New("the image loaded is not the one pinned")
	}
	return nil
}
