package dispatch

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap"

	"arena/dispatch/trust"
)

// DefaultBucketBytes bounds a worker's bucket unless set otherwise.
const DefaultBucketBytes int64 = 2 << 30

// bucketConfig is a worker's bucket's configuration.
func (d *Dispatcher) bucketConfig(worker string) jetstream.ObjectStoreConfig {
	cfg := d.buckets
	cfg.Bucket, cfg.Description = trust.BucketOf(worker), "arena: replays of worker "+worker+" larger than a message, and images it asked for"
	return cfg
}

// makeBucket makes a worker's replay bucket (a worker may not make
// streams), or gives the one there is this dispatcher's configuration:
// its bound.
func (d *Dispatcher) makeBucket(worker string) {
	ctx, cancel := context.WithTimeout(d.bgCtx, time.Minute)
	defer cancel()
	for {
		_, err := d.js.CreateOrUpdateObjectStore(ctx, d.bucketConfig(worker))
		if err == nil {
			return
		}
		if ctx.Err() != nil {
			return
		}
		d.log.Warn("make a worker's replay bucket, trying again", zap.String("worker", worker), zap.Error(err))
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
	}
}

// boundBuckets gives the workers' buckets there are already (made by an
// earlier server, maybe without a bound, or with another) this
// dispatcher's configuration.
func (d *Dispatcher) boundBuckets() {
	ctx, cancel := context.WithTimeout(d.bgCtx, time.Minute)
	defer cancel()
	names := d.js.ObjectStoreNames(ctx)
	var workers []string
	for name := range names.Name() {
		if w, ok := strings.CutPrefix(name, ReplayBucket+"-"); ok && trust.ValidWorkerName(w) == nil {
			workers = append(workers, w)
		}
	}
	if err := names.Error(); err != nil && ctx.Err() == nil {
		d.log.Warn("list the workers' buckets", zap.Error(err))
	}
	for _, w := range workers {
		d.makeBucket(w)
	}
}

// bucketFull reports whether err is JetStream refusing a put into a
// bucket at its bound (see DispatcherConfig.BucketBytes).
func bucketFull(err error) bool {
	var api *jetstream.APIError
	return errors.As(err, &api) && strings.Contains(api.Description, "maximum bytes exceeded")
}
