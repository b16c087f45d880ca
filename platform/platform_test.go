package platform_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"arena/accounts"
	"arena/engine"
	"arena/engine/snake"
	"arena/engine/tanks"
	"arena/internal/errs"
	"arena/internal/testsupport/poll"
	"arena/matches"
	"arena/orchestrator"
	"arena/orchestrator/fake"
	"arena/platform"
	"arena/store"
)

// admin is who acts in local mode.
var admin = accounts.Principal{Name: accounts.AdminName, Role: accounts.RoleAdmin, Via: accounts.ViaLocal}

// newPlatform is a platform over fake bots, its loops running.
func newPlatform(t *testing.T, cfg platform.Config) (*platform.Platform, *store.Store) {
	t.Helper()
	l := fake.NewLauncher(map[string]fake.Script{"arena/tanks-random": {Game: "tanks"}, "arena/tanks-hunter": {Game: "tanks"},
		"arena/snake-greedy": {Game: "snake"}, "bots/held": {Hold: make(chan struct{})}})
	st, err := store.Open(t.TempDir(), "test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	p, err := platform.New(t.Context(), cfg, platform.Deps{
		Games:        engine.NewCatalog(tanks.New(), snake.New()),
		Orchestrator: orchestrator.New(l),
		Store:        st,
		Concurrency:  2,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Recover(t.Context()); err != nil {
		t.Fatal(err)
	}
	p.Start()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		p.Shutdown(ctx)
		p.Close()
	})
	return p, st
}

// The use cases work without HTTP: a match is started, recorded and
// played to its end; what is wrong with a request is an error of a
// class, which the HTTP edge (or any other) maps.
func TestAMatchPlaysWithoutHTTP(t *testing.T) {
	p, st := newPlatform(t, platform.Config{})
	seed := uint64(7)
	rec, warnings, err := p.Services().Matches.Start(t.Context(), admin, platform.MatchRequest{Game: "tanks", Seed: &seed,
		Bots: []string{"arena/tanks-random", "arena/snake-greedy"}})
	if err != nil {
		t.Fatal(err)
	}
	if rec.Game != "tanks" || rec.Map == "" || rec.Seed != 7 || rec.Owner != accounts.AdminName {
		t.Errorf("recorded %+v", rec)
	}
	if len(warnings) != 1 || warnings[0] != "bots[1]: image arena/snake-greedy is labelled for snake (io.arena.game), not tanks: it will likely fault" {
		t.Errorf("warnings %q, want one for the Snake bot", warnings)
	}
	poll.Until(t, 30*time.Second, func() error {
		m, err := st.Get(t.Context(), rec.ID)
		if err != nil {
			return err
		}
		if m.Status != string(matches.StateFinished) || !m.HasReplay {
			return fmt.Errorf("match %s is %s", m.ID, m.Status)
		}
		return nil
	})
	if _, ok := p.Services().Matches.Live(rec.ID); ok {
		t.Error("a finished match is still live")
	}
	m, err := st.Get(t.Context(), rec.ID)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Services().Matches.Cancel(t.Context(), admin, m.ID); !errs.IsConflict(err) {
		t.Errorf("cancelling a finished match: %v, want a conflict", err)
	}

	for _, c := range []struct {
		what string
		req  platform.MatchRequest
		ok   func(error) bool
	}{
		{"an unknown game", platform.MatchRequest{Game: "chess", Bots: []string{"arena/tanks-random", "arena/tanks-hunter"}}, errs.IsInvalid},
		{"an unknown map", platform.MatchRequest{Game: "tanks", Map: "atlantis", Bots: []string{"arena/tanks-random", "arena/tanks-hunter"}}, errs.IsInvalid},
		{"an empty image name", platform.MatchRequest{Game: "tanks", Bots: []string{"arena/tanks-random", " "}}, errs.IsInvalid},
	} {
		if _, _, err := p.Services().Matches.Start(t.Context(), admin, c.req); !c.ok(err) {
			t.Errorf("%s: %v (class %v)", c.what, err, errs.Class(err))
		}
	}
}

// A player may cancel only their own match; its owner may.
func TestOnlyItsOwnerCancelsAMatch(t *testing.T) {
	p, _ := newPlatform(t, platform.Config{Allow: []string{"arena/*", "bots/*"}})
	alice := accounts.Principal{Name: "alice", Role: accounts.RolePlayer, Via: accounts.ViaSession}
	bob := accounts.Principal{Name: "bob", Role: accounts.RolePlayer, Via: accounts.ViaSession}
	rec, _, err := p.Services().Matches.Start(t.Context(), alice, platform.MatchRequest{Game: "tanks", Bots: []string{"bots/held", "arena/tanks-hunter"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Services().Matches.Cancel(t.Context(), bob, rec.ID); !errs.IsDenied(err) {
		t.Errorf("bob cancels alice's match: %v, want denied", err)
	}
	if err := p.Services().Matches.Cancel(t.Context(), alice, rec.ID); err != nil {
		t.Errorf("alice cancels her match: %v", err)
	}
}
