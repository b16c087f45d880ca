package dispatch

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Config is the work queue's policy, set by the server that creates the
// streams; workers read it from the consumer.
type Config struct {
	// Lease is how long a worker holds a match without a sign of life
	// (progress acks keep it) before JetStream hands it to another
	// (default 30 s).
	Lease time.Duration
	// MaxDeliveries bounds the deliveries of one match (default 5): past
	// it the match fails with every worker's reason.
	MaxDeliveries int
	// Replicas is how many NATS nodes hold each stream (default 1; 3 in a
	// three-node cluster).
	Replicas int
	// EventsMaxAge is how long frames and results are kept (default
	// 15 min: the server reads them within moments, and matches of a
	// server down longer are over anyway), and EventsMaxBytes how much of
	// them (default 1 GiB; the oldest go first).
	EventsMaxAge   time.Duration
	EventsMaxBytes int64
}

func (c Config) withDefaults() Config {
	if c.Lease <= 0 {
		c.Lease = 30 * time.Second
	}
	if c.MaxDeliveries <= 0 {
		c.MaxDeliveries = 5
	}
	if c.Replicas <= 0 {
		c.Replicas = 1
	}
	if c.EventsMaxAge <= 0 {
		c.EventsMaxAge = 15 * time.Minute
	}
	if c.EventsMaxBytes <= 0 {
		c.EventsMaxBytes = 1 << 30
	}
	return c
}

// Setup creates (or updates) the streams and the workers' consumer.
func Setup(ctx context.Context, js jetstream.JetStream, cfg Config) error {
	cfg = cfg.withDefaults()
	_, err := js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name: MatchesStream, Subjects: []string{matchesSubject + ".>"}, Retention: jetstream.WorkQueuePolicy,
		Storage: jetstream.FileStorage, Replicas: cfg.Replicas, Duplicates: 10 * time.Minute,
		Description: "arena: matches waiting for a worker",
	})
	if err != nil {
		return fmt.Errorf("create stream %s: %w", MatchesStream, err)
	}
	_, err = js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name: EventsStream, Subjects: []string{eventsPrefix + ">"}, Retention: jetstream.LimitsPolicy,
		Storage: jetstream.FileStorage, Replicas: cfg.Replicas, MaxAge: cfg.EventsMaxAge,
		MaxBytes: cfg.EventsMaxBytes, Discard: jetstream.DiscardOld,
		Description: "arena: starts, frames, hand-backs and results of matches",
	})
	if err != nil {
		return fmt.Errorf("create stream %s: %w", EventsStream, err)
	}
	_, err = js.CreateOrUpdateConsumer(ctx, MatchesStream, jetstream.ConsumerConfig{
		Durable: ConsumerName, AckPolicy: jetstream.AckExplicitPolicy, AckWait: cfg.Lease,
		MaxDeliver: cfg.MaxDeliveries, MaxAckPending: -1, MaxWaiting: 4096,
		Description: "arena: the workers",
	})
	if err != nil {
		return fmt.Errorf("create consumer %s: %w", ConsumerName, err)
	}
	// Each worker's replay bucket (ReplayBucket-NAME) is made by the
	// dispatcher when the worker is first seen: a worker may make none.
	return nil
}

// consumer waits for the workers' consumer that the server creates.
func consumer(ctx context.Context, js jetstream.JetStream) (jetstream.Consumer, error) {
	for {
		c, err := js.Consumer(ctx, MatchesStream, ConsumerName)
		if err == nil {
			return c, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("wait for the work queue (is arena serve running on this NATS?): %w", err)
		case <-time.After(time.Second):
		}
	}
}
