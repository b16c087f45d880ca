package trust

import (
	"fmt"
	"strings"

	"github.com/nats-io/nats-server/v2/server"
)

// What each client of NATS may do. The server (arena serve, arena bench)
// may do anything; a worker exactly what a worker does; a joining worker
// only ask to join.

// The NATS names that a worker's permissions are made of. Package
// dispatch uses the same names: they are here so that this package need
// not import it.
const (
	// MatchesStream is the work queue of matches, ConsumerName the
	// workers' consumer of it.
	MatchesStream = "ARENA_MATCHES"
	ConsumerName  = "workers"
	// EventsPrefix begins the subjects of the workers' events, LivePrefix
	// those of their live frames and slots, ImagePrefix those where they
	// ask for images: the worker's name follows each.
	EventsPrefix = "arena.ev."
	LivePrefix   = "arena.live."
	ImagePrefix  = "arena.image."
	// CancelPrefix and SupersededPrefix begin the subjects where a worker
	// hears that a match is cancelled or a delivery superseded.
	CancelPrefix     = "arena.cancel."
	SupersededPrefix = "arena.superseded."
	// ReplayBucket begins the name of each worker's object store bucket
	// (see BucketOf).
	ReplayBucket = "arena-replays"
)

// WorkerInbox is the prefix of a worker's reply subjects: it may read
// its own replies, no one else's.
func WorkerInbox(worker string) string { return "_INBOX_" + worker }

// BucketOf is the object store bucket a worker puts its big replays in.
func BucketOf(worker string) string { return ReplayBucket + "-" + worker }

// joinSubject is where a joining worker asks for its identity.
const joinSubject = "arena.join"

// joinInbox is the reply prefix of joining workers.
const joinInbox = "_INBOX_join"

// WorkerPermissions are a worker's rights: take matches from the
// workers' consumer and ack them, publish events, live frames and its
// slots under its own name, ask
// for the pushed bots its engine lacks under its own name, hear cancels,
// read its own replies, and use its own replay bucket (where the server
// puts the images it asked for). It
// cannot publish jobs, read the events stream or other workers' replies,
// create consumers on the work queue or the events, or delete or purge
// any stream but its bucket's.
func WorkerPermissions(worker string) *server.Permissions {
	obj := "OBJ_" + BucketOf(worker)
	return &server.Permissions{
		Publish: &server.SubjectPermission{Allow: []string{
			"$JS.API.CONSUMER.INFO." + MatchesStream + "." + ConsumerName,
			"$JS.API.CONSUMER.MSG.NEXT." + MatchesStream + "." + ConsumerName,
			"$JS.ACK." + MatchesStream + "." + ConsumerName + ".>",
			EventsPrefix + worker + ".>",
			// Live frames, and its slots.
			LivePrefix + worker + ".>",
			// Ask for a pushed bot its engine lacks.
			ImagePrefix + worker,
			// Its own replay bucket: put, read back, delete.
			"$O." + BucketOf(worker) + ".>",
			"$JS.API.STREAM.INFO." + obj,
			"$JS.API.STREAM.MSG.GET." + obj,
			"$JS.API.DIRECT.GET." + obj + ".>",
			"$JS.API.STREAM.PURGE." + obj,
			"$JS.API.CONSUMER.CREATE." + obj,
			"$JS.API.CONSUMER.CREATE." + obj + ".>",
			"$JS.API.CONSUMER.DELETE." + obj + ".>",
			"$JS.FC." + obj + ".>",
		}},
		Subscribe: &server.SubjectPermission{Allow: []string{
			WorkerInbox(worker) + ".>",
			CancelPrefix + "*",
			SupersededPrefix + "*",
		}},
	}
}

// JoinPermissions are a joining worker's: ask to join, hear the answer.
func JoinPermissions() *server.Permissions {
	return &server.Permissions{
		Publish:   &server.SubjectPermission{Allow: []string{joinSubject}},
		Subscribe: &server.SubjectPermission{Allow: []string{joinInbox + ".>"}},
	}
}

// NATSUser is a user of an external NATS cluster's configuration.
type NATSUser struct {
	// Name is the user name; for a worker, also its --name.
	Name string
	// Password is as NATS reads it: plain, or a bcrypt hash ($2a$…).
	Password string
	// Worker: the user is a worker's, with a worker's permissions; else
	// a server's (arena serve, arena bench), with every permission.
	Worker bool
}

// AuthorizationConf is the authorization block of a NATS server's
// configuration file that gives each user Arena's permissions: what an
// operator of an external cluster (ARENA_NATS) writes, on every node.
func AuthorizationConf(users []NATSUser) string {
	var b strings.Builder
	b.WriteString("authorization {\n  users = [\n")
	for _, u := range users {
		fmt.Fprintf(&b, "    {user: %q, password: %q", u.Name, u.Password)
		if u.Worker {
			p := WorkerPermissions(u.Name)
			fmt.Fprintf(&b, ", permissions: {\n      publish: {allow: %s}\n      subscribe: {allow: %s}\n    }", list(p.Publish.Allow), list(p.Subscribe.Allow))
		}
		b.WriteString("}\n")
	}
	b.WriteString("  ]\n}\n")
	return b.String()
}

func list(subjects []string) string {
	q := make([]string, len(subjects))
	for i, s := range subjects {
		q[i] = fmt.Sprintf("%q", s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}
