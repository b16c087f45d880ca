package sandbox

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
)

// The warm pool: creating and starting a container costs a hundred
// milliseconds or more, so the server and tournaments keep a few started
// ahead for each image in use, under the exact policy. A warm container's
// launcher (on the FIFO path) waits for the bot it is to run: its id and
// environment, in one control line on its stdin; then it execs the
// image's command as usual. A container is never used for two matches:
// taken from the pool, it is the bot's until it is removed.

// PoolEnv marks a warm container: its launcher waits for its control line.
const PoolEnv = "ARENA_POOLED=1"

// poolControl is the control line a warm container's launcher reads: the
// environment of the bot it is to run.
type poolControl struct {
	Env []string `json:"env"`
}

// pool keeps warm containers per image, at most max in all (see
// WithPoolMax).
type pool struct {
	d    *Docker
	size int           // warm containers per image in use; 0: no pool
	max  int           // warm and booting containers in all; 0: no bound
	idle time.Duration // an image unused this long loses its warm ones

	mu      sync.Mutex
	warm    map[string][]*Container // by image id
	used    map[string]time.Time    // last take, by image id
	takes   map[string]float64      // takes lately (halved every idle/4), by image id
	filling map[string]int          // boots in flight, by image id
	closed  bool
	seq     atomic.Uint64
	wg      sync.WaitGroup
	stop    chan struct{}

	closeOnce sync.Once
	gone      chan struct{} // closed once close has removed every warm container
}

// WithPool keeps size warm containers ready for each image started
// recently (on the FIFO path only); images unused for idle lose theirs.
// The runner's Close removes them.
func WithPool(size int, idle time.Duration) Option {
	return func(d *Docker) {
		if size > 0 {
			d.pool = &pool{d: d, size: size, idle: idle, warm: map[string][]*Container{}, used: map[string]time.Time{},
				takes: map[string]float64{}, filling: map[string]int{}, stop: make(chan struct{}), gone: make(chan struct{})}
		}
	}
}

// WithPoolMax bounds the warm containers of WithPool in all (0: no
// bound): a contest's many images share them. When the bound is
// reached, an image that plays more often lately takes a warm container
// of one that plays less (on a tie, of the one that played least
// recently); an image that plays no more often than the others gets none
// and starts its bots anew. Give it after WithPool.
func WithPoolMax(n int) Option {
	return func(d *Docker) {
		if d.pool != nil {
			d.pool.max = max(0, n)
		}
	}
}

// fits reports whether a spec can run in a warm container. Warm
// containers are booted under the policy as it is: a spec that sets
// another memory limit starts a container of its own (cold).
func (p *pool) fits(s Spec) bool {
	return p != nil && s.Args == nil && s.Image.ID != "" && p.d.fifoPath() != nil && p.d.policy.forSpec(s).MemoryBytes == p.d.policy.MemoryBytes && p.d.policy.forSpec(s).NanoCPUs == p.d.policy.NanoCPUs
}

// take returns a warm container for the spec's image, or nil; either way
// the pool is refilled for that image.
func (p *pool) take(s Spec) *Container {
	if !p.fits(s) {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil
	}
	id := s.Image.ID
	p.used[id] = time.Now()
	p.takes[id]++
	var c *Container
	if w := p.warm[id]; len(w) > 0 {
		c, p.warm[id] = w[0], w[1:]
	}
	p.refillLocked(s.Image)
	return c
}

// refillLocked boots containers until the image has size warm or
// booting, within the bound; p.mu must be held.
func (p *pool) refillLocked(img Image) {
	for n := len(p.warm[img.ID]) + p.filling[img.ID]; n < p.size; n++ {
		if p.max > 0 && p.totalLocked() >= p.max && !p.evictLocked(img.ID) {
			return
		}
		p.filling[img.ID]++
		p.wg.Go(func() {
			c, err := p.d.boot(context.Background(), Spec{Image: img, Name: fmt.Sprintf("arena-pool-%d-%d", os.Getpid(), p.seq.Add(1)),
				MatchID: "pool", BotID: "pool", Env: []string{PoolEnv}})
			p.mu.Lock()
			p.filling[img.ID]--
			keep := err == nil && !p.closed
			if keep {
				p.warm[img.ID] = append(p.warm[img.ID], c)
			}
			p.mu.Unlock()
			if err != nil {
				p.d.log.Warn("a warm container did not start", zap.String("image", img.Ref), zap.Error(err))
			} else if !keep {
				c.Close(context.Background())
			}
		})
	}
}

// totalLocked counts the warm and booting containers; p.mu must be held.
func (p *pool) totalLocked() int {
	n := 0
	for _, w := range p.warm {
		n += len(w)
	}
	for _, f := range p.filling {
		n += f
	}
	return n
}

// evictLocked removes a warm container of the image that plays least
// (lately; on a tie, least recently) to make room for one of id, if that
// image plays less than id; p.mu must be held.
func (p *pool) evictLocked(id string) bool {
	victim := ""
	for v, w := range p.warm {
		if v == id || len(w) == 0 {
			continue
		}
		if victim == "" || p.takes[v] < p.takes[victim] || p.takes[v] == p.takes[victim] && p.used[v].Before(p.used[victim]) {
			victim = v
		}
	}
	if victim == "" || p.takes[victim] > p.takes[id] || p.takes[victim] == p.takes[id] && !p.used[victim].Before(p.used[id]) {
		return false
	}
	w := p.warm[victim]
	c := w[len(w)-1]
	p.warm[victim] = w[:len(w)-1]
	p.wg.Go(func() { c.Close(context.Background()) })
	return true
}

// run removes the warm containers of images unused for idle, every so
// often, until close.
func (p *pool) run() {
	t := time.NewTicker(max(p.idle/4, time.Second))
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case now := <-t.C:
			var stale []*Container
			p.mu.Lock()
			for id, at := range p.used {
				if now.Sub(at) > p.idle && p.filling[id] == 0 {
					stale = append(stale, p.warm[id]...)
					delete(p.warm, id)
					delete(p.used, id)
					delete(p.takes, id)
				}
			}
			for id := range p.takes {
				p.takes[id] /= 2
			}
			p.mu.Unlock()
			for _, c := range stale {
				c.Close(context.Background())
			}
		}
	}
}

// close removes every warm container and waits for the boots in flight;
// a second call waits for the first's removals.
func (p *pool) close(ctx context.Context) {
	if p == nil {
		return
	}
	p.closeOnce.Do(func() {
		defer close(p.gone)
		p.mu.Lock()
		p.closed = true
		close(p.stop)
		var all []*Container
		for _, w := range p.warm {
			all = append(all, w...)
		}
		p.warm = nil
		p.mu.Unlock()
		p.wg.Wait()
		var wg sync.WaitGroup
		for _, c := range all {
			wg.Go(func() { c.Close(ctx) })
		}
		wg.Wait()
	})
	<-p.gone
}

// assign hands a warm container to a bot: its launcher gets the bot's
// environment and execs its command; from now on the bot's output is
// read and its warm-up runs.
func (c *Container) assign(s Spec, caps StderrCaps) error {
	line, err := json.Marshal(poolControl{Env: append([]string{"ARENA_BOT_ID=" + s.BotID}, s.Env...)})
	if err != nil {
		return err
	}
	in := c.stream.input()
	in.SetWriteDeadline(time.Now().Add(5 * time.Second))
	if _, err := in.Write(append(line, '\n')); err != nil {
		return fmt.Errorf("hand a warm container to %s: %w", s.BotID, err)
	}
	c.log = c.log.With(zap.String("bot", s.BotID))
	c.started = time.Now()
	c.wire(s, caps)
	c.rename(s.Name)
	return nil
}

// rename gives a warm container the bot's name, arena-MATCH-…, in the
// background (an engine call is milliseconds, the bot's start should
// not wait for it). Its labels cannot change and say "pool": the name is
// how the match's clean-up finds it should its runner die mid-match (see
// Janitor.RemoveLostMatch).
func (c *Container) rename(name string) {
	if name == "" {
		return
	}
	c.renamed = make(chan struct{})
	go func() {
		defer close(c.renamed)
		ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
		defer cancel()
		if err := c.api.ContainerRename(ctx, c.id, name); err != nil {
			c.log.Warn("a warm container kept its pool name", zap.String("name", name), zap.Error(err))
		}
	}()
}

// Close removes the runner's warm containers (see WithPool); it may be
// called again, and then returns once they are gone. A server calls it
// as soon as it is told to stop: no match takes a warm container after
// it, and removing them must not wait for the matches to end.
func (d *Docker) Close(ctx context.Context) { d.pool.close(ctx) }

// Warm counts the warm containers ready for an image.
func (d *Docker) Warm(img Image) int {
	if d.pool == nil {
		return 0
	}
	d.pool.mu.Lock()
	defer d.pool.mu.Unlock()
	return len(d.pool.warm[img.ID])
}

// WarmTotal counts the warm containers ready, for every image.
func (d *Docker) WarmTotal() int {
	if d.pool == nil {
		return 0
	}
	d.pool.mu.Lock()
	defer d.pool.mu.Unlock()
	n := 0
	for _, w := range d.pool.warm {
		n += len(w)
	}
	return n
}
