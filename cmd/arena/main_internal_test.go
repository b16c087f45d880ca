package main

import (
	"os"
	"testing"
)

// TestMain lets the test binary do what the arena binary does for Arena
// itself (hidden): commands run in-process start local bots through the
// running executable, which is then this one.
func TestMain(m *testing.M) {
	hidden(os.Args)
	os.Exit(m.Run())
}
