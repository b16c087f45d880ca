// Package natsd runs a NATS server with JetStream in this process: the
// one embedded in arena serve, and a cluster node for arena nats.
//
//   - embed.go: Start runs it from a Node. With a trust folder it takes
//     TLS and its users from package dispatch/trust, reloads them when
//     the folder changes (a rotated secret, a worker revoked or
//     quarantined) and answers joining workers.
package natsd
