// Package trust says who may connect to Arena's NATS and what each may
// do. It imports nothing of package dispatch.
//
//   - trust.go: the trust folder: a CA and the server's certificate (or
//     the operator's), the join secret that join tokens carry, and the
//     workers that joined, each with its public key. arena serve keeps
//     one; arena nats tls makes one for a cluster's nodes.
//   - join.go: joining, both sides: a worker joins with a token
//     (ARENA_JOIN), the server admits it, and the worker keeps its
//     credentials and connects with them.
//   - permissions.go: what a worker, a joining worker and a server may
//     do on NATS, the NATS names those rights are made of, and the
//     authorization block of an external cluster (arena nats
//     authorization).
//   - dial.go: how a client connects to a NATS cluster.
package trust
