package engine

import (
	"fmt"
	"slices"
	"sync"
)

// A Catalog is the games a server offers. It may change while the server
// runs (an admin registers a logic game, or removes one), so whoever
// plays, schedules or lists games asks it each time rather than keeping
// a copy. Safe for concurrent use.
type Catalog struct {
	mu    sync.RWMutex
	games []Game
}

// NewCatalog is a catalogue of games, in their order.
func NewCatalog(games ...Game) *Catalog {
	return &Catalog{games: slices.Clone(games)}
}

// List is the games now, in the order they were added.
func (c *Catalog) List() []Game {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return slices.Clone(c.games)
}

// Find returns the game with the given name.
func (c *Catalog) Find(name string) (Game, error) {
	return Find(c.List(), name)
}

// Add adds a game, after the others; a name already taken is refused.
func (c *Catalog) Add(g Game) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if slices.ContainsFunc(c.games, func(h Game) bool { return h.Name() == g.Name() }) {
		return fmt.Errorf("the name %s is taken", g.Name())
	}
	c.games = append(c.games, g)
	return nil
}

// Remove removes the game with the given name, and says whether there
// was one.
func (c *Catalog) Remove(name string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := len(c.games)
	c.games = slices.DeleteFunc(c.games, func(g Game) bool { return g.Name() == name })
	return len(c.games) < n
}
