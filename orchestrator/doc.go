// Package orchestrator plays matches: it checks a request, starts the
// bots, runs the turn loop between a game's engine and the bots, turns
// faults into bot statuses, and records the replay and the result; it
// also queues matches for the server and plays tournaments.
//
// One file per concern, one owner per decision:
//
//   - orchestrator.go: the Orchestrator, a Request and its validation.
//   - limits.go: the effective time and size limits of a match (Resolve).
//   - errors.go: the error kinds callers test with errors.Is.
//   - bot.go: the seams to the sandbox: what a match needs of a bot each
//     turn (Conn) and over its life (Lifecycle), and the Launcher.
//   - play.go: one match from start to result: the seats, the start of
//     every bot at once, the turn loop, stopping and removing the bots.
//   - exchange.go: one exchange of a turn: deliver, wait, and return one
//     plain outcome per seat.
//   - fault.go: what a failed read or write means for the bot (a pure,
//     table-tested judgement, and the one wait for its exit).
//   - record.go: the recorder, the one owner of the replay's frames.
//   - result.go: the result of a played match.
//   - replay.go, verify.go: the replay file and its verification.
//   - queue.go: matches played a few at a time, with the live view of
//     each (state, place in line, frames) broadcast from memory.
//   - bench.go: tournaments.
//
// Tests without Docker drive the whole loop through the scripted bots of
// package arena/orchestrator/fake.
package orchestrator
