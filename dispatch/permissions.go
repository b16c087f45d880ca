package dispatch

import (
	"fmt"
	"strings"

	"github.com/nats-io/nats-server/v2/server"
)

// What each client of NATS may do. The server (arena serve, arena bench)
// may do anything; a worker exactly what a worker does; a joining worker
// only ask to join.

// WorkerInbox is the prefix of a worker's reply subjects: it may read
// its own replies, no one else's.
func WorkerInbox(worker string) string { return "_INBOX_" + worker }

// bucketOf is the object store bucket a worker puts its big replays in.
func bucketOf(worker string) string { return ReplayBucket + "-" + worker }

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
	obj := "OBJ_" + bucketOf(worker)
	return &server.Permissions{
		Publish: &server.SubjectPermission{Allow: []string{
			"$JS.API.CONSUMER.INFO." + MatchesStream + "." + ConsumerName,
			"$JS.API.CONSUMER.MSG.NEXT." + MatchesStream + "." + ConsumerName,
			"$JS.ACK." + MatchesStream + "." + ConsumerName + ".>",
			eventsPrefix + worker + ".>",
			// Live frames, and its slots (slotsSubject).
			livePrefix + worker + ".>",
			// Ask for a pushed bot its engine lacks (images.go).
			imageSubject(worker),
			// Its own replay bucket: put, read back, delete.
			"$O." + bucketOf(worker) + ".>",
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
			cancelPrefix + "*",
			supersededPrefix + "*",
		}},
	}
}

// joinPermissions are a joining worker's: ask to join, hear the answer.
func joinPermissions() *server.Permissions {
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
