package engine_test

import (
	"sync"
	"testing"

	"arena/engine"
	"arena/engine/snake"
	"arena/engine/tanks"
)

// A catalogue changes while others read it: a name is taken once, a
// game removed is no longer found, and readers keep what they were given.
func TestACatalogChanges(t *testing.T) {
	c := engine.NewCatalog(tanks.New())
	before := c.List()
	if err := c.Add(snake.New()); err != nil {
		t.Fatal(err)
	}
	if err := c.Add(snake.New()); err == nil {
		t.Fatal("a second snake was added")
	}
	if g, err := c.Find("snake"); err != nil || g.Name() != "snake" {
		t.Fatalf("find snake: %v %v", g, err)
	}
	if len(before) != 1 || len(c.List()) != 2 {
		t.Fatalf("lists %d and %d games, want 1 (given before) and 2", len(before), len(c.List()))
	}
	if !c.Remove("snake") || c.Remove("snake") {
		t.Fatal("snake removed other than once")
	}
	if _, err := c.Find("snake"); err == nil || err.Error() != `unknown game "snake" (games: [tanks])` {
		t.Fatalf("find snake once removed: %v", err)
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(2)
		go func() { defer wg.Done(); c.Add(snake.New()); c.Remove("snake") }()
		go func() { defer wg.Done(); c.Find("tanks"); c.List() }()
	}
	wg.Wait()
}
