// Package dispatch spreads matches over many hosts through NATS
// JetStream. Nothing here schedules, leases or retries on its own: the
// work queue, its durable pull consumer, acks, redelivery and replication
// are JetStream's.
//
//   - wire.go: the messages (every one carries a version; an unknown
//     version is refused, never misread).
//   - setup.go: the streams, the workers' consumer and the replay bucket.
//   - dispatcher.go: the server's side, a matches.Player that
//     publishes a match to the work queue, follows its frames and takes
//     its first accepted result (keyed by match id and delivery attempt).
//   - events.go: the workers' events as the dispatcher admits and
//     handles them (start, frames, result, hand-back), and its viewers.
//   - results.go: a reported replay read (inline or from the object
//     store) and checked against the match.
//   - slots.go: the slots the workers say they have, added up, which a
//     server's queue takes as its own (FeedSlots): the work queue is
//     handed only what the workers take at once, the rest waits in the
//     queue's lines; what the dispatcher holds of each worker.
//   - buckets.go: each worker's object-store bucket, bounded.
//   - worker.go: a worker's side: takes matches with a durable pull
//     consumer, keeps each lease alive with progress acks while it plays,
//     streams frames, reports the result (big replays through the object
//     store) or hands the match back with a reason, and says every
//     second how many matches it takes.
//   - images.go: a worker asks the server for a pushed bot its engine
//     lacks, and removes the images it fetched once idle.
//   - spool.go: a worker's replay, in a file until it is reported.
//
// Who may connect and do what (the PKI, joining, the permissions) is
// package dispatch/trust's; the embedded NATS server is package
// dispatch/natsd's.
package dispatch
