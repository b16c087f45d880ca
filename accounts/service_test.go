package accounts

import (
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"arena/internal/errs"
	"arena/store"
)

// clock is a clock a test moves.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func newService(t *testing.T, signup string) (*Service, *store.Store, *clock) {
	t.Helper()
	saved := *Params
	Params.Memory, Params.Iterations = 64, 1
	t.Cleanup(func() { *Params = saved })
	st, err := store.Open(t.TempDir(), "test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	c := &clock{t: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)}
	s, err := New(st, signup, WithClock(c.now))
	if err != nil {
		t.Fatal(err)
	}
	return s, st, c
}

func TestSignUpModes(t *testing.T) {
	ctx := t.Context()
	open, _, _ := newService(t, SignupOpen)
	if _, err := open.SignUp(ctx, Anonymous, "alice", "alices-password", ""); err != nil {
		t.Errorf("open sign-up: %v", err)
	}
	if _, err := open.SignUp(ctx, Anonymous, "alice", "alices-password", ""); !errs.IsConflict(err) {
		t.Errorf("the same name twice: %v", err)
	}
	closed, _, _ := newService(t, SignupClosed)
	if _, err := closed.SignUp(ctx, Anonymous, "alice", "alices-password", ""); !errs.IsDenied(err) {
		t.Errorf("closed sign-up: %v", err)
	}
	if _, err := closed.SignUp(ctx, admin, "alice", "alices-password", ""); err != nil {
		t.Errorf("an admin makes an account when sign-up is closed: %v", err)
	}
	invite, _, c := newService(t, SignupInvite)
	if _, err := invite.SignUp(ctx, Anonymous, "alice", "alices-password", "invite_nope"); !errs.IsDenied(err) {
		t.Errorf("an unknown invitation: %v", err)
	}
	_, code, err := invite.CreateInvite(ctx, admin)
	if err != nil || !strings.HasPrefix(code, InvitePrefix) {
		t.Fatalf("invitation %q, %v", code, err)
	}
	usable := func(code string) bool {
		t.Helper()
		ok, err := invite.InviteUsable(ctx, code)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if !usable(code) || usable("invite_nope") || usable(strings.TrimPrefix(code, InvitePrefix)) {
		t.Error("a fresh invitation is not usable, or an unknown one is")
	}
	c.t = c.t.Add(InviteLifetime + time.Second)
	if usable(code) {
		t.Error("an expired invitation is usable")
	}
	if _, err := invite.SignUp(ctx, Anonymous, "alice", "alices-password", code); !errs.IsDenied(err) {
		t.Errorf("an expired invitation: %v", err)
	}
	_, code, _ = invite.CreateInvite(ctx, admin)
	if u, err := invite.SignUp(ctx, Anonymous, "alice", "alices-password", code); err != nil || u.Role != RolePlayer {
		t.Errorf("an invitation: %+v, %v", u, err)
	}
	if usable(code) {
		t.Error("a used invitation is usable")
	}
	if _, err := New(nil, "sometimes"); !errs.IsInvalid(err) {
		t.Errorf("an unknown mode: %v", err)
	}
}

func TestSignInAndPasswords(t *testing.T) {
	ctx := t.Context()
	s, st, c := newService(t, SignupOpen)
	s.SignUp(ctx, Anonymous, "alice", "alices-password", "")
	u, _ := st.User(ctx, "alice")
	if !strings.HasPrefix(u.Password, "$argon2id$v=19$") {
		t.Errorf("stored password %q is not an argon2id hash", u.Password)
	}
	if _, err := s.SignIn(ctx, "alice", "alices-password", "10.0.0.1"); err != nil {
		t.Errorf("the right password: %v", err)
	}
	_, wrongPassword := s.SignIn(ctx, "alice", "wrong-password", "10.0.0.1")
	_, wrongName := s.SignIn(ctx, "nobody", "wrong-password", "10.0.0.1")
	if wrongPassword == nil || wrongName == nil || wrongPassword.Error() != wrongName.Error() {
		t.Errorf("a wrong password (%v) and a wrong name (%v) must read alike", wrongPassword, wrongName)
	}
	// Past the account's limit, refused before comparing, with a wait.
	for range 20 {
		s.SignIn(ctx, "alice", "wrong-password", "10.0.0.2")
	}
	var tooMany *TooManyError
	if _, err := s.SignIn(ctx, "alice", "alices-password", "10.0.0.3"); !errors.As(err, &tooMany) || tooMany.Of != "account alice" || tooMany.RetryAfter <= 0 || tooMany.RetryAfter > time.Minute {
		t.Errorf("after 20 wrong passwords: %v", err)
	}
	c.t = c.t.Add(time.Minute)
	if _, err := s.SignIn(ctx, "alice", "alices-password", "10.0.0.3"); err != nil {
		t.Errorf("a minute later: %v", err)
	}
	// A password change checks the old one and moves the epoch on.
	if _, err := s.ChangePassword(ctx, "alice", "wrong-password", "a-new-password", "10.0.0.4"); !errs.IsDenied(err) {
		t.Errorf("with a wrong old password: %v", err)
	}
	epoch, err := s.ChangePassword(ctx, "alice", "alices-password", "a-new-password", "10.0.0.4")
	if err != nil || epoch != 2 {
		t.Errorf("change: epoch %d, %v", epoch, err)
	}
	if _, err := s.Principal(ctx, "alice", ViaSession, 1); !errs.IsUnauthenticated(err) {
		t.Errorf("a session of the old epoch: %v", err)
	}
	if p, err := s.Principal(ctx, "alice", ViaSession, 2); err != nil || p.Name != "alice" {
		t.Errorf("a session of the new epoch: %+v %v", p, err)
	}
}

func TestEnsureAdmin(t *testing.T) {
	ctx := t.Context()
	s, st, _ := newService(t, SignupInvite)
	if err := s.EnsureAdmin(ctx, "short"); !errs.IsInvalid(err) {
		t.Errorf("a short admin password: %v", err)
	}
	if err := s.EnsureAdmin(ctx, "the-admin-password"); err != nil {
		t.Fatal(err)
	}
	// The same password again changes nothing: its sessions go on.
	if err := s.EnsureAdmin(ctx, "the-admin-password"); err != nil {
		t.Fatal(err)
	}
	if u, _ := st.User(ctx, AdminName); u.Role != RoleAdmin || u.Epoch != 1 {
		t.Errorf("admin after the same password: %+v", u)
	}
	if err := s.EnsureAdmin(ctx, "another-admin-password"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SignIn(ctx, AdminName, "another-admin-password", "c"); err != nil {
		t.Errorf("the reset password: %v", err)
	}
	if err := s.SetUser(ctx, AdminName, RolePlayer, false); !errs.IsConflict(err) {
		t.Errorf("the admin account made a player: %v", err)
	}
}

func TestTeams(t *testing.T) {
	ctx := t.Context()
	s, _, _ := newService(t, SignupOpen)
	for _, n := range []string{"alice", "bob", "carol"} {
		if _, err := s.SignUp(ctx, Anonymous, n, n+"-password", ""); err != nil {
			t.Fatal(err)
		}
	}
	p := func(n string) Principal {
		x, err := s.Principal(ctx, n, ViaToken, 0)
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	if err := s.CreateTeam(ctx, p("alice"), "red"); err != nil {
		t.Fatal(err)
	}
	if err := s.InviteMember(ctx, p("bob"), "red", "carol"); !errs.IsDenied(err) {
		t.Errorf("bob invites into alice's team: %v", err)
	}
	if err := s.InviteMember(ctx, p("alice"), "red", "nobody"); !errs.IsNotFound(err) {
		t.Errorf("inviting nobody: %v", err)
	}
	if err := s.InviteMember(ctx, p("alice"), "red", "bob"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Team(ctx, p("carol"), "red"); !errs.IsNotFound(err) {
		t.Errorf("carol reads red: %v", err)
	}
	if err := s.Join(ctx, p("carol"), "red"); !errs.IsNotFound(err) {
		t.Errorf("carol joins uninvited: %v", err)
	}
	if err := s.Join(ctx, p("bob"), "red"); err != nil {
		t.Fatal(err)
	}
	if got := p("bob").Teams; len(got) != 1 || got[0] != "red" {
		t.Errorf("bob's teams %v", got)
	}
	if err := s.RemoveMember(ctx, p("carol"), "red", "bob"); !errs.IsDenied(err) {
		t.Errorf("carol takes bob out of red: %v", err)
	}
	if err := s.RemoveMember(ctx, p("bob"), "red", "alice"); err != nil {
		t.Errorf("bob takes alice out: %v", err)
	}
	if err := s.RemoveMember(ctx, p("bob"), "red", "bob"); !errs.IsConflict(err) {
		t.Errorf("the last member leaves: %v", err)
	}
}

// Wrong passwords sent at the same moment count as they are tried: no
// more passwords are compared than the limits allow, however many
// attempts race; a right password gives its client's failure back.
func TestSignInLimitsHoldAgainstARace(t *testing.T) {
	ctx := t.Context()
	s, _, _ := newService(t, SignupOpen)
	s.SignUp(ctx, Anonymous, "alice", "alices-password", "")
	var wg sync.WaitGroup
	var compared, refused atomic.Int64
	for range 200 {
		wg.Go(func() {
			_, err := s.SignIn(ctx, "alice", "wrong-password", "10.0.0.9")
			var tooMany *TooManyError
			switch {
			case errors.As(err, &tooMany):
				refused.Add(1)
			case errs.IsUnauthenticated(err):
				compared.Add(1)
			default:
				t.Errorf("a wrong password: %v", err)
			}
		})
	}
	wg.Wait()
	if n := compared.Load(); n > int64(DefaultLimits.AccountBurst) || refused.Load() != 200-n {
		t.Errorf("200 wrong passwords at once: %d compared, %d refused; want at most %d compared", n, refused.Load(), DefaultLimits.AccountBurst)
	}
	// Right passwords do not use up their client's allowance.
	s.SignUp(ctx, Anonymous, "bob", "bobs-password", "")
	for i := range 3 * DefaultLimits.ClientBurst {
		if _, err := s.SignIn(ctx, "bob", "bobs-password", "10.0.0.10"); err != nil {
			t.Fatalf("right password %d: %v", i, err)
		}
	}
}
