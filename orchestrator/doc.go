// Package orchestrator plays matches: it checks a request, starts the
// bots, runs the turn loop between a game's engine and the bots, turns
// faults into bot statuses, and records the replay and the result; it
// also plays tournaments. What a match is (the request, limits, replay,
// queue) is package arena/matches, which needs no sandbox.
//
// One file per concern, one owner per decision:
//
//   - orchestrator.go: the Orchestrator, a request's validation against
//     the engine's images, and its pins.
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
//   - timing.go: the time rule: what an answer may take (budgetFor).
//   - host.go: a game's own program (a logic) started in the sandbox,
//     and its replays verified by playing them again.
//   - bench.go: tournaments.
//
// Tests without Docker drive the whole loop through the scripted bots of
// package arena/orchestrator/fake.
package orchestrator
