package orchestrator

import "arena/sandbox"

// Both pipe-backed runners say how much of its input a bot has not read,
// so that the final messages are read before the bots are stopped.
var (
	_ unreader = (*sandbox.Container)(nil)
	_ unreader = (*sandbox.Process)(nil)
)
