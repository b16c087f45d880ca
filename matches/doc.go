// Package matches is what the layers above the runner know of a match,
// and all the HTTP layer needs: a match to play (Request) and its
// checks, its effective limits, the error kinds, the replay file and its
// verification against the engine, and the queue that plays matches a
// few at a time through a Player (the orchestrator on this host, or a
// dispatcher to workers). It starts nothing itself: package orchestrator
// plays a match in the sandbox.
//
//   - request.go: a Request and its own validation, match ids and seeds.
//   - limits.go: the effective time and size limits of a match (Resolve),
//     and the bounds a replay is read within (BoundsFor).
//   - errors.go: the error kinds callers test with errors.Is.
//   - replay.go: the replay file, its frames and the result.
//   - bounded.go: a replay decoded within its bounds (OverBound).
//   - verify.go, check.go: a replay verified by the engine; a result that
//     another host reports checked against the match it was given.
//   - queue.go: matches played a few at a time, in fair lines per owner,
//     with the live view of each (state, place in line, frames).
package matches
