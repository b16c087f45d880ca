package dispatch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap"
	"golang.org/x/sync/singleflight"

	"arena/dispatch/trust"
	"arena/internal/errs"
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
// (no pushed bot is that image) is an error of class errs.ErrNotFound.
type ImageSource func(ctx context.Context, id string, w io.Writer) error

// ErrNotHandedOut: the server holds no pushed bot of that id.
var ErrNotHandedOut = errs.New(errs.ErrNotFound, "no pushed bot is that image")

// ImageStore is a worker's engine, as far as fetching images goes.
type ImageStore interface {
	// Has says whether the engine holds the image of that id.
	Has(ctx context.Context, id string) bool
	// Load loads an archive docker load takes.
	Load(ctx context.Context, r io.Reader) error
	// Tag names the image of that id ref as well.
	Tag(ctx context.Context, id, ref string) error
	// Fetched lists the engine's images that have tags under FetchedRepo
	// (FetchedRepo:…): each with its id and those tags.
	Fetched(ctx context.Context) ([]FetchedImage, error)
	// Remove removes one tag, not forced: the image goes with its last
	// tag, unless a container uses it.
	Remove(ctx context.Context, ref string) error
}

// Fetched images leave a worker's engine once idle. The worker tags each
// image it loaded FetchedRepo:sha256-HEX (its id), a name under a host no
// registry has (.internal), so that it knows them again after a restart
// (and a docker image prune of dangling images leaves them). It removes
// the tag of each that no match it plays uses and that was not used for
// WorkerConfig.FetchedIdle: since its fetch, or the end of the last match
// that played it; one found as the worker starts counts from then. It
// looks every FetchedCheck, and after a match ends when one is due. The
// removal is not forced: an image a container still uses (a warm one)
// stays until the next time.

// FetchedRepo is where a worker tags the images it fetched.
const FetchedRepo = "arena-fetched.internal/pushed"

// FetchedImage is an image of the engine with tags under FetchedRepo.
type FetchedImage struct {
	ID   string
	Refs []string
}

// The defaults of WorkerConfig.FetchedIdle and FetchedCheck.
const (
	defaultFetchedIdle  = 30 * time.Minute
	defaultFetchedCheck = 5 * time.Minute
)

// fetchedRef is the tag of the fetched image of that id.
func fetchedRef(id string) string { return FetchedRepo + ":" + strings.Replace(id, ":", "-", 1) }

// fetchedID is the id a tag made by fetchedRef names; "" when ref is no
// such tag.
func fetchedID(ref string) string {
	hex, ok := strings.CutPrefix(ref, FetchedRepo+":sha256-")
	if !ok || !imageID.MatchString("sha256:"+hex) {
		return ""
	}
	return "sha256:" + hex
}

// imagePrefix + a worker's name is where it asks for an image.
const imagePrefix = trust.ImagePrefix

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
	// A logic game's logic is on the server's engine (built there, or
	// pulled): handed out while a match of it is in flight.
	source := s.source
	if s.d.cfg.Logic != nil && s.d.logicInFlight(id) {
		source = s.d.cfg.Logic
	}
	if source == nil {
		return nil, ErrNotHandedOut
	}
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(source(ctx, id, pw)) }()
	info, err := obs.Put(ctx, jetstream.ObjectMeta{Name: name, Description: "arena: image " + id + " for worker " + worker}, pr)
	pr.CloseWithError(errors.New("the put ended"))
	if err != nil {
		_ = obs.Delete(context.WithoutCancel(ctx), name)
		if errs.IsNotFound(err) {
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
	// The match is among those running: none of its images is removed
	// from now on, but one may be under way.
	ids := job.images()
	w.awaitRemovals(ctx, ids)
	seen := map[string]bool{}
	for i, id := range ids {
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
		} else if job.Logic != nil {
			ref = job.Logic.Image
		}
		start := time.Now()
		_, err, _ := w.fetches.Do(id, func() (any, error) {
			if w.cfg.Images.Has(ctx, id) {
				return nil, nil // another match's fetch got it
			}
			if err := w.fetchImage(ctx, id, ref); err != nil {
				return nil, err
			}
			w.tagFetched(ctx, id, log)
			return nil, nil
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
	obs, err := w.js.ObjectStore(ctx, trust.BucketOf(w.cfg.Name))
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

// tagFetched tags an image just fetched as the worker's (fetchedRef), to
// be removed once idle. The tag failing, the match plays all the same,
// and the tag is made again at the next check.
func (w *Worker) tagFetched(ctx context.Context, id string, log *zap.Logger) {
	w.mu.Lock()
	w.fetched[id] = time.Now()
	w.mu.Unlock()
	if err := w.cfg.Images.Tag(ctx, id, fetchedRef(id)); err != nil {
		log.Warn("tag an image fetched from the server", zap.String("image", id), zap.Error(err))
	}
}

// awaitRemovals waits for the removals under way of any of the images.
func (w *Worker) awaitRemovals(ctx context.Context, ids []string) {
	for _, id := range ids {
		w.mu.Lock()
		done := w.removing[id]
		w.mu.Unlock()
		if done == nil {
			continue
		}
		select {
		case <-done:
		case <-ctx.Done():
			return
		}
	}
}

// inUseLocked says whether a match this worker plays uses any of the
// images; w.mu must be held. A fetch under way is a running match's.
func (w *Worker) inUseLocked(ids ...string) bool {
	for _, d := range w.running {
		for _, id := range ids {
			if id != "" && slices.Contains(d.images, id) {
				return true
			}
		}
	}
	return false
}

// usedLocked records that the fetched images among ids were used at
// now; w.mu must be held.
func (w *Worker) usedLocked(ids []string, now time.Time) {
	for _, id := range ids {
		if _, ok := w.fetched[id]; ok {
			w.fetched[id] = now
			delete(w.refused, id)
		}
	}
}

// dueLocked says whether a fetched image no match uses is idle for long
// enough to go (one whose removal the engine refused waits for the next
// check); w.mu must be held.
func (w *Worker) dueLocked(now time.Time) bool {
	for id, used := range w.fetched {
		if now.Sub(used) >= w.cfg.FetchedIdle && !w.refused[id] && !w.inUseLocked(id) {
			return true
		}
	}
	return false
}

// pruneFetchedRegularly removes idle fetched images now, every
// FetchedCheck, and when a match ended (prune) if one is due, until ctx
// ends.
func (w *Worker) pruneFetchedRegularly(ctx context.Context) {
	t := time.NewTicker(w.cfg.FetchedCheck)
	defer t.Stop()
	for {
		w.pruneFetched(ctx)
		for due := false; !due; {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				due = true
			case <-w.prune:
				w.mu.Lock()
				due = w.dueLocked(time.Now())
				w.mu.Unlock()
			}
		}
	}
}

// pruneFetched removes from the engine the images this worker fetched
// (tagged fetchedRef) that no match it plays uses and that are idle for
// FetchedIdle. It returns the tags removed.
func (w *Worker) pruneFetched(ctx context.Context) []string {
	images, err := w.cfg.Images.Fetched(ctx)
	if err != nil {
		if ctx.Err() == nil {
			w.log.Warn("list the images fetched from the server", zap.Error(err))
		}
		return nil
	}
	now := time.Now()
	listed := map[string]bool{}
	var removed []string
	for _, img := range images {
		for _, ref := range img.Refs {
			id := fetchedID(ref)
			if id == "" {
				continue // not a tag of ours
			}
			listed[id] = true
			w.mu.Lock()
			used, ok := w.fetched[id]
			if !ok {
				// Fetched before this worker started: idle from now.
				w.fetched[id], used = now, now
			}
			if now.Sub(used) < w.cfg.FetchedIdle || w.inUseLocked(id, img.ID) {
				w.mu.Unlock()
				continue
			}
			// From now on a match that takes it waits for the removal
			// (awaitRemovals), then fetches it again if it went.
			done := make(chan struct{})
			w.removing[id] = done
			w.mu.Unlock()
			err := w.cfg.Images.Remove(ctx, ref)
			w.mu.Lock()
			delete(w.removing, id)
			close(done)
			if err == nil {
				delete(w.fetched, id)
				delete(w.refused, id)
			} else {
				w.refused[id] = true
			}
			w.mu.Unlock()
			if err != nil {
				// In use by a container (a warm one, say): next time.
				w.log.Debug("remove an image fetched from the server", zap.String("image", ref), zap.Error(err))
				continue
			}
			removed = append(removed, ref)
		}
	}
	// A fetched image not listed lost its tag: its tagging failed (made
	// again here), or the image is gone (forgotten).
	w.mu.Lock()
	var untagged []string
	for id := range w.fetched {
		if !listed[id] {
			untagged = append(untagged, id)
		}
	}
	w.mu.Unlock()
	for _, id := range untagged {
		if !w.cfg.Images.Has(ctx, id) {
			w.mu.Lock()
			if !w.inUseLocked(id) {
				delete(w.fetched, id)
				delete(w.refused, id)
			}
			w.mu.Unlock()
			continue
		}
		if err := w.cfg.Images.Tag(ctx, id, fetchedRef(id)); err != nil && ctx.Err() == nil {
			w.log.Warn("tag an image fetched from the server", zap.String("image", id), zap.Error(err))
		}
	}
	if len(removed) > 0 {
		w.log.Info("idle images fetched from the server removed from the engine", zap.Strings("images", removed))
	}
	return removed
}

// logicInFlight says whether id is the logic of a match the dispatcher
// waits for.
func (d *Dispatcher) logicInFlight(id string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, w := range d.waits {
		if l := logicOf(w.req.Game); l != nil && l.ImageID == id {
			return true
		}
	}
	return false
}
