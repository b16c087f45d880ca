package matches_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"arena/engine"
	"arena/engine/tanks"
	"arena/internal/errs"
	"arena/internal/testsupport/poll"
	"arena/matches"
	"arena/orchestrator"
	"arena/orchestrator/fake"
)

// updates collects a queue's updates and checks, as each final one is
// delivered, that the match is still followed (so what the callback
// records is in place before followers are sent to it).
type updates struct {
	t  *testing.T
	q  *matches.Queue
	mu sync.Mutex
	by map[string][]matches.State
	// final is signalled with each final update.
	final chan matches.Update
}

func (u *updates) add(up matches.Update) {
	u.mu.Lock()
	u.by[up.ID] = append(u.by[up.ID], up.State)
	u.mu.Unlock()
	if up.At.IsZero() {
		u.t.Errorf("%s %s: no time", up.ID, up.State)
	}
	if up.State.Final() {
		if _, ok := u.q.Follow(up.ID, 0); !ok {
			u.t.Errorf("%s: no longer followed while its final update is delivered", up.ID)
		}
		u.final <- up
	}
}

func (u *updates) of(id string) []matches.State {
	u.mu.Lock()
	defer u.mu.Unlock()
	return slices.Clone(u.by[id])
}

func newQueue(t *testing.T, l *fake.Launcher, slots int) (*matches.Queue, *updates) {
	return newQueueMax(t, l, slots, 0)
}

func newQueueMax(t *testing.T, l *fake.Launcher, slots, max int) (*matches.Queue, *updates) {
	u := &updates{t: t, by: map[string][]matches.State{}, final: make(chan matches.Update, 16)}
	u.q = matches.NewQueue(orchestrator.New(l), slots, max, u.add)
	t.Cleanup(func() { u.q.Shutdown(context.Background(), false) })
	return u.q, u
}

func request(t *testing.T, id string, images ...string) matches.Request {
	return matches.Request{Game: tanks.New(), Map: tanksMap(t, "classic"), Seed: 1, Images: images, MatchID: id}
}

func wait(t *testing.T, u *updates) matches.Update {
	t.Helper()
	select {
	case up := <-u.final:
		return up
	case <-time.After(10 * time.Second):
		t.Fatal("no match ended")
		return matches.Update{}
	}
}

// waitRunning waits until the queue plays the match.
func waitRunning(t *testing.T, q *matches.Queue, id string) {
	t.Helper()
	poll.Until(t, 10*time.Second, func() error {
		if st, pos, _ := q.Status(id); st != matches.StateRunning {
			return fmt.Errorf("%s is %s (at %d), not running", id, st, pos)
		}
		return nil
	})
}

func TestQueueOrderPositionsAndFollowing(t *testing.T) {
	hold := make(chan struct{})
	l := fake.NewLauncher(map[string]fake.Script{"bots/held": {Hold: hold}, "bots/free": {}})
	q, u := newQueue(t, l, 1)
	for i, id := range []string{"m1", "m2", "m3"} {
		pos, err := q.Enqueue(request(t, id, "bots/held", "bots/free"))
		if err != nil || pos != i {
			t.Fatalf("enqueue %s: position %d, %v; want %d", id, pos, err, i)
		}
	}
	if st, pos, ok := q.Status("m3"); !ok || st != matches.StateQueued || pos != 2 {
		t.Errorf("m3: %s at %d (%v)", st, pos, ok)
	}
	l2, ok := q.Follow("m2", 0)
	if !ok || l2.Position != 1 || l2.State != matches.StateQueued || len(l2.Frames) != 0 {
		t.Fatalf("follow m2: %+v %v", l2, ok)
	}
	// The running match has its first frame (the initial state) and waits
	// for the held bot.
	var l1 matches.Live
	poll.Until(t, 5*time.Second, func() error {
		if l1, _ = q.Follow("m1", 0); len(l1.Frames) == 0 {
			return fmt.Errorf("m1 has no frame yet: %+v", l1)
		}
		return nil
	})
	if l1.State != matches.StateRunning || len(l1.Frames) != 1 || l1.Started.IsZero() {
		t.Fatalf("m1: %+v", l1)
	}
	// Cancelling the waiting m2 moves m3 up, and wakes m3's followers.
	l3, _ := q.Follow("m3", 0)
	if !q.Cancel("m2") {
		t.Fatal("m2 not cancelled")
	}
	select {
	case <-l3.Changed:
	case <-time.After(time.Second):
		t.Error("m3's followers were not woken")
	}
	if up := wait(t, u); up.ID != "m2" || up.State != matches.StateCancelled || !errors.Is(up.Err, matches.ErrCancelled) {
		t.Errorf("m2 ended %+v", up)
	}
	if _, pos, _ := q.Status("m3"); pos != 1 {
		t.Errorf("m3 at %d after m2 left, want 1", pos)
	}
	close(hold)
	for range 2 {
		if up := wait(t, u); up.State != matches.StateFinished || up.Replay == nil {
			t.Errorf("%s ended %s: %v", up.ID, up.State, up.Err)
		}
	}
	for _, id := range []string{"m1", "m3"} {
		if got := u.of(id); !slices.Equal(got, []matches.State{matches.StateStarting, matches.StateRunning, matches.StateFinished}) {
			t.Errorf("%s updates %v", id, got)
		}
		// Over: no longer followed, as soon as its final update returns.
		poll.Until(t, 5*time.Second, func() error {
			if l, ok := q.Follow(id, 0); ok {
				return fmt.Errorf("%s is still followed: %s", id, l.State)
			}
			return nil
		})
	}
	if q.Cancel("m1") {
		t.Error("a finished match was cancelled")
	}
	if n := l.Running(); n != 0 {
		t.Errorf("%d bots left", n)
	}
}

func TestQueueCancelsARunningMatch(t *testing.T) {
	hold := make(chan struct{})
	defer close(hold)
	l := fake.NewLauncher(map[string]fake.Script{"bots/held": {Hold: hold}})
	q, u := newQueue(t, l, 2)
	if _, err := q.Enqueue(request(t, "m1", "bots/held", "bots/held")); err != nil {
		t.Fatal(err)
	}
	waitRunning(t, q, "m1")
	q.Cancel("m1")
	up := wait(t, u)
	if up.State != matches.StateCancelled || !errors.Is(up.Err, matches.ErrCancelled) {
		t.Errorf("ended %+v", up)
	}
	if n := l.Running(); n != 0 {
		t.Errorf("%d bots left", n)
	}
}

func TestQueueShutdown(t *testing.T) {
	for _, finish := range []bool{false, true} {
		hold := make(chan struct{})
		l := fake.NewLauncher(map[string]fake.Script{"bots/held": {Hold: hold}})
		q, u := newQueue(t, l, 1)
		q.Enqueue(request(t, "run", "bots/held", "bots/held"))
		q.Enqueue(request(t, "wait", "bots/held", "bots/held"))
		waitRunning(t, q, "run")
		done := make(chan struct{})
		go func() {
			q.Shutdown(context.Background(), finish)
			close(done)
		}()
		if up := wait(t, u); up.ID != "wait" || up.State != matches.StateFailed || !errors.Is(up.Err, matches.ErrQueueClosed) {
			t.Errorf("finish=%v: the waiting match ended %+v", finish, up)
		}
		if finish {
			close(hold)
		}
		up := wait(t, u)
		want := matches.StateFailed
		if finish {
			want = matches.StateFinished
		} else {
			close(hold)
		}
		if up.ID != "run" || up.State != want {
			t.Errorf("finish=%v: the running match ended %s (%v)", finish, up.State, up.Err)
		}
		<-done
		if _, err := q.Enqueue(request(t, "late", "bots/held", "bots/held")); !errors.Is(err, matches.ErrQueueClosed) {
			t.Errorf("enqueue after shutdown: %v", err)
		}
		if n := l.Running(); n != 0 {
			t.Errorf("%d bots left", n)
		}
	}
}

// A shutdown that lets matches finish still ends them when its time is up.
func TestQueueShutdownTimesOut(t *testing.T) {
	hold := make(chan struct{})
	defer close(hold)
	l := fake.NewLauncher(map[string]fake.Script{"bots/held": {Hold: hold}})
	q, u := newQueue(t, l, 1)
	q.Enqueue(request(t, "run", "bots/held", "bots/held"))
	waitRunning(t, q, "run")
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	q.Shutdown(ctx, true)
	if up := wait(t, u); up.State != matches.StateFailed || !errors.Is(up.Err, matches.ErrQueueClosed) {
		t.Errorf("ended %+v", up)
	}
}

// A match whose image is gone by the time it starts fails with the reason.
func TestQueueFailedMatch(t *testing.T) {
	l := fake.NewLauncher(map[string]fake.Script{"bots/a": {}})
	q, u := newQueue(t, l, 1)
	q.Enqueue(request(t, "m", "bots/a", "bots/gone"))
	if up := wait(t, u); up.State != matches.StateFailed || !errors.Is(up.Err, matches.ErrImageNotFound) {
		t.Errorf("ended %+v", up)
	}
}

// The line is bounded: past its limit Enqueue refuses, and a place freed
// is taken again.
func TestQueueLimit(t *testing.T) {
	hold := make(chan struct{})
	l := fake.NewLauncher(map[string]fake.Script{"bots/held": {Hold: hold}})
	q, u := newQueueMax(t, l, 1, 2)
	for _, id := range []string{"run", "w1", "w2"} {
		if _, err := q.Enqueue(request(t, id, "bots/held", "bots/held")); err != nil {
			t.Fatalf("%s: %v", id, err)
		}
	}
	_, err := q.Enqueue(request(t, "w3", "bots/held", "bots/held"))
	if !errors.Is(err, matches.ErrQueueFull) || !strings.Contains(err.Error(), "2 matches are waiting") {
		t.Fatalf("past the limit: %v", err)
	}
	if _, ok := q.Follow("w3", 0); ok {
		t.Error("a refused match is held")
	}
	q.Cancel("w2")
	wait(t, u)
	if _, err := q.Enqueue(request(t, "w3", "bots/held", "bots/held")); err != nil {
		t.Errorf("after a place was freed: %v", err)
	}
	close(hold)
}

// A background match waits behind every foreground one, whenever they
// came.
func TestQueueBackground(t *testing.T) {
	hold := make(chan struct{})
	l := fake.NewLauncher(map[string]fake.Script{"bots/held": {Hold: hold}, "bots/free": {}})
	q, u := newQueue(t, l, 1)
	q.Enqueue(request(t, "run", "bots/held", "bots/held"))
	bg := request(t, "ladder1", "bots/free", "bots/free")
	bg.Priority = matches.Background
	q.Enqueue(bg)
	bg.MatchID = "ladder2"
	q.Enqueue(bg)
	pos, err := q.Enqueue(request(t, "manual", "bots/free", "bots/free"))
	if err != nil || pos != 1 {
		t.Fatalf("the manual match is at %d (%v), want 1", pos, err)
	}
	if fg, bgn := q.Backlog(); fg != 1 || bgn != 2 {
		t.Errorf("backlog %d foreground, %d background", fg, bgn)
	}
	if _, p, _ := q.Status("ladder2"); p != 3 {
		t.Errorf("ladder2 at %d, want 3", p)
	}
	close(hold)
	var order []string
	for range 4 {
		order = append(order, wait(t, u).ID)
	}
	if !slices.Equal(order, []string{"run", "manual", "ladder1", "ladder2"}) {
		t.Errorf("finished in the order %v", order)
	}
}

// Owners' lines are served in turn: one owner's 200 waiting matches
// delay another's only until the next free slot, and the positions say
// so before anything starts.
func TestQueueServesOwnersInTurn(t *testing.T) {
	hold := make(chan struct{})
	l := fake.NewLauncher(map[string]fake.Script{"bots/held": {Hold: hold}, "bots/free": {}})
	u := &updates{t: t, by: map[string][]matches.State{}, final: make(chan matches.Update, 512)}
	u.q = matches.NewQueue(orchestrator.New(l), 1, 0, u.add, matches.WithLineMax(200))
	q := u.q
	t.Cleanup(func() { q.Shutdown(context.Background(), false) })
	mine := func(id, owner string, images ...string) matches.Request {
		r := request(t, id, images...)
		r.Owner = owner
		return r
	}
	if _, err := q.Enqueue(mine("a-run", "alice", "bots/held", "bots/held")); err != nil {
		t.Fatal(err)
	}
	for i := range 200 {
		if _, err := q.Enqueue(mine(fmt.Sprintf("a%03d", i), "alice", "bots/free", "bots/free")); err != nil {
			t.Fatalf("alice's match %d: %v", i, err)
		}
	}
	// Alice's line is full; bob's is not.
	if _, err := q.Enqueue(mine("a-more", "alice", "bots/free", "bots/free")); !errors.Is(err, matches.ErrQueueFull) || !strings.Contains(err.Error(), "alice has 200 matches waiting") {
		t.Fatalf("alice past her line's limit: %v", err)
	}
	pos, err := q.Enqueue(mine("b1", "bob", "bots/free", "bots/free"))
	if err != nil || pos != 1 {
		t.Fatalf("bob's match is at %d (%v), want 1: next", pos, err)
	}
	pos, _ = q.Enqueue(mine("b2", "bob", "bots/free", "bots/free"))
	// Then alice, bob, alice: b2 is third.
	if pos != 3 {
		t.Errorf("bob's second match is at %d, want 3", pos)
	}
	if _, p, _ := q.Status("a000"); p != 2 {
		t.Errorf("alice's oldest waiting match is at %d, want 2", p)
	}
	if _, p, _ := q.Status("a199"); p != 202 {
		t.Errorf("alice's newest match is at %d, want 202", p)
	}
	// A background match waits behind all of them.
	bg := request(t, "ladder", "bots/free", "bots/free")
	bg.Priority = matches.Background
	if p, _ := q.Enqueue(bg); p != 203 {
		t.Errorf("the ladder's match is at %d, want 203", p)
	}
	close(hold)
	var order []string
	for range 6 {
		order = append(order, wait(t, u).ID)
	}
	if want := []string{"a-run", "b1", "a000", "b2", "a001", "a002"}; !slices.Equal(order, want) {
		t.Errorf("finished in the order %v, want %v", order, want)
	}
}

// An owner who keeps one match waiting while theirs play cannot take
// every slot: they stay in the rotation.
func TestQueueOwnerCannotJumpTheRotation(t *testing.T) {
	hold := make(chan struct{})
	l := fake.NewLauncher(map[string]fake.Script{"bots/held": {Hold: hold}, "bots/free": {}})
	q, _ := newQueue(t, l, 1)
	mine := func(id, owner string) matches.Request {
		r := request(t, id, "bots/held", "bots/held")
		r.Owner = owner
		return r
	}
	q.Enqueue(mine("b0", "bob")) // bob's plays
	q.Enqueue(mine("a1", "alice"))
	q.Enqueue(mine("a2", "alice"))
	// Bob, served last, queues one more: it goes after alice's next.
	if p, _ := q.Enqueue(mine("b1", "bob")); p != 2 {
		t.Errorf("bob's match is at %d while his other plays, want 2 (after alice's a1)", p)
	}
	close(hold)
}

// With frame files, a playing match's frames are in a file of its own,
// which its followers read and which goes when it ends.
func TestQueueKeepsFramesInFiles(t *testing.T) {
	hold := make(chan struct{})
	l := fake.NewLauncher(map[string]fake.Script{"bots/held": {Hold: hold}})
	dir := t.TempDir()
	u := &updates{t: t, by: map[string][]matches.State{}, final: make(chan matches.Update, 4)}
	u.q = matches.NewQueue(orchestrator.New(l), 1, 0, u.add, matches.WithFrameFiles(dir))
	t.Cleanup(func() { u.q.Shutdown(context.Background(), false) })
	if _, err := u.q.Enqueue(request(t, "m1", "bots/held", "bots/held")); err != nil {
		t.Fatal(err)
	}
	var live matches.Live
	poll.Until(t, 5*time.Second, func() error {
		if live, _ = u.q.Follow("m1", 0); len(live.Frames) == 0 {
			return fmt.Errorf("no frame: %s", live.State)
		}
		return nil
	})
	if files, _ := os.ReadDir(dir); len(files) != 1 {
		t.Errorf("%d files of frames while the match plays, want 1", len(files))
	}
	var f matches.Frame
	if err := json.Unmarshal(live.Frames[0], &f); err != nil || f.Turn != 0 {
		t.Errorf("the first frame read back: %s (%v)", live.Frames[0], err)
	}
	close(hold)
	if up := wait(t, u); up.State != matches.StateFinished {
		t.Fatalf("ended %s", up.State)
	}
	poll.Until(t, 5*time.Second, func() error {
		if files, _ := os.ReadDir(dir); len(files) != 0 {
			return fmt.Errorf("the file of frames outlives the match: %d files", len(files))
		}
		return nil
	})
}

// A queue's slots change as it plays: with none, every match waits in
// line (and the line's limit holds); slots added start waiting matches
// at once; slots taken away stop no match that plays, but none starts
// until fewer play than the slots left.
func TestQueueSetSlots(t *testing.T) {
	holdA, holdB := make(chan struct{}), make(chan struct{})
	l := fake.NewLauncher(map[string]fake.Script{"bots/a": {Hold: holdA}, "bots/b": {Hold: holdB}, "bots/free": {}})
	q, u := newQueueMax(t, l, 1, 3)
	q.SetSlots(0)
	for i, m := range [][2]string{{"m1", "bots/a"}, {"m2", "bots/b"}, {"m3", "bots/free"}} {
		pos, err := q.Enqueue(request(t, m[0], m[1], m[1]))
		if err != nil || pos != i+1 {
			t.Fatalf("enqueue %s with no slots: position %d, %v; want %d", m[0], pos, err, i+1)
		}
	}
	if _, err := q.Enqueue(request(t, "m4", "bots/free", "bots/free")); !errors.Is(err, matches.ErrQueueFull) {
		t.Errorf("past the line's limit with no slots: %v", err)
	}
	if slots, playing := q.Slots(); slots != 0 || playing != 0 || l.Running() != 0 {
		t.Fatalf("with no slots: %d slots, %d playing, %d bots", slots, playing, l.Running())
	}

	q.SetSlots(2)
	for _, id := range []string{"m1", "m2"} {
		if st, _, _ := q.Status(id); st != matches.StateStarting && st != matches.StateRunning {
			t.Errorf("%s is %s once slots were added", id, st)
		}
	}
	if st, pos, _ := q.Status("m3"); st != matches.StateQueued || pos != 1 {
		t.Errorf("m3 is %s at %d, want queued at 1", st, pos)
	}

	q.SetSlots(1)
	if slots, playing := q.Slots(); slots != 1 || playing != 2 {
		t.Errorf("slots taken away: %d slots, %d playing; want 1, 2 (none stopped)", slots, playing)
	}
	close(holdA)
	if up := wait(t, u); up.ID != "m1" || up.State != matches.StateFinished {
		t.Fatalf("ended %+v", up)
	}
	// One plays, in the one slot left: m3 waits.
	if st, pos, _ := q.Status("m3"); st != matches.StateQueued || pos != 1 {
		t.Errorf("m3 is %s at %d while as many play as there are slots", st, pos)
	}
	close(holdB)
	var ended []string
	for range 2 {
		up := wait(t, u)
		if up.State != matches.StateFinished {
			t.Fatalf("ended %+v", up)
		}
		ended = append(ended, up.ID)
	}
	if slices.Sort(ended); !slices.Equal(ended, []string{"m2", "m3"}) {
		t.Errorf("ended %v, want m2 and m3", ended)
	}
	if got := u.of("m3"); !slices.Equal(got, []matches.State{matches.StateStarting, matches.StateRunning, matches.StateFinished}) {
		t.Errorf("m3 updates %v", got)
	}
}

func tanksMap(t *testing.T, name string) engine.Map {
	t.Helper()
	m, err := tanks.New().Map(name)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// A challenge's match waits behind the matches started by hand and
// ahead of the background ones, whenever each came.
func TestQueueChallengesBetweenHandAndBackground(t *testing.T) {
	hold := make(chan struct{})
	l := fake.NewLauncher(map[string]fake.Script{"bots/held": {Hold: hold}, "bots/free": {}})
	q, u := newQueue(t, l, 1)
	q.Enqueue(request(t, "run", "bots/held", "bots/held"))
	bg := request(t, "ladder", "bots/free", "bots/free")
	bg.Priority = matches.Background
	q.Enqueue(bg)
	ch := request(t, "challenge", "bots/free", "bots/free")
	ch.Priority, ch.Owner = matches.Challenge, "bob"
	q.Enqueue(ch)
	if pos, _ := q.Enqueue(request(t, "manual", "bots/free", "bots/free")); pos != 1 {
		t.Errorf("the manual match is at %d, want 1", pos)
	}
	if _, p, _ := q.Status("challenge"); p != 2 {
		t.Errorf("the challenge is at %d, want 2", p)
	}
	close(hold)
	var order []string
	for range 4 {
		order = append(order, wait(t, u).ID)
	}
	if !slices.Equal(order, []string{"run", "manual", "challenge", "ladder"}) {
		t.Errorf("finished in the order %v", order)
	}
}

// playerFunc plays a match with a function.
type playerFunc func(ctx context.Context, req matches.Request) (*matches.Replay, error)

func (f playerFunc) Play(ctx context.Context, req matches.Request) (*matches.Replay, error) {
	return f(ctx, req)
}

// nobody is a person who never answers.
type nobody struct{}

func (nobody) Turn() time.Duration { return time.Second }
func (nobody) Ask(ctx context.Context, _ matches.Question) ([]byte, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

// A match with people starts at once beside the slots, however full the
// line, on the people's player; past ARENA_HUMAN_MATCHES it is refused,
// and a queue with no people's player refuses it.
func TestQueuePlaysPeopleBesideItsSlots(t *testing.T) {
	hold := make(chan struct{})
	l := fake.NewLauncher(map[string]fake.Script{"bots/held": {Hold: hold}, "bots/free": {}})
	people := make(chan string, 4)
	release := make(chan struct{})
	u := &updates{t: t, by: map[string][]matches.State{}, final: make(chan matches.Update, 16)}
	u.q = matches.NewQueue(orchestrator.New(l), 1, 0, u.add, matches.WithPeople(playerFunc(func(ctx context.Context, req matches.Request) (*matches.Replay, error) {
		people <- req.MatchID
		select {
		case <-release:
			return nil, errors.New("played")
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}), 1))
	q := u.q
	t.Cleanup(func() { q.Shutdown(context.Background(), false) })
	q.Enqueue(request(t, "run", "bots/held", "bots/held"))
	q.Enqueue(request(t, "waiting", "bots/free", "bots/free"))
	human := request(t, "human", matches.HumanRef("bob"), "bots/free")
	human.People = map[int]matches.Person{0: nobody{}}
	if pos, err := q.Enqueue(human); err != nil || pos != 0 {
		t.Fatalf("the match with a person is at %d (%v), want started", pos, err)
	}
	if id := <-people; id != "human" {
		t.Fatalf("the people's player played %s", id)
	}
	if slots, playing := q.Slots(); slots != 1 || playing != 1 {
		t.Errorf("%d of %d slots play: the person's match took one", playing, slots)
	}
	human.MatchID = "human2"
	if _, err := q.Enqueue(human); !errors.Is(err, matches.ErrQueueFull) || !strings.Contains(err.Error(), "ARENA_HUMAN_MATCHES") {
		t.Errorf("a second match with people: %v", err)
	}
	close(release)
	if up := wait(t, u); up.ID != "human" || up.State != matches.StateFailed {
		t.Errorf("first to end: %s %s", up.ID, up.State)
	}
	if _, err := q.Enqueue(human); err != nil {
		t.Errorf("once the first ended: %v", err)
	}
	close(hold)

	plain, _ := newQueue(t, l, 1)
	human.MatchID = "human3"
	if _, err := plain.Enqueue(human); !errs.IsInvalid(err) || !strings.Contains(err.Error(), "no matches with people") {
		t.Errorf("a queue without a people's player: %v", err)
	}
}
