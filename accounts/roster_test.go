package accounts

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"arena/internal/errs"
	"arena/store"
)

// roster is a roster of n students, four to a team, and one admin.
func roster(n int) string {
	var b strings.Builder
	b.WriteString("name,email,team,role\n")
	for i := range n {
		fmt.Fprintf(&b, "student%03d,student%03d@uni.example,group%02d,\n", i, i, i/4)
	}
	b.WriteString("teacher,teacher@uni.example,,admin\n")
	return b.String()
}

// A roster of 100 rows imports once: the accounts (with their emails and
// roles, and no password yet), the teams with their members, a link
// each; again, it makes nothing and gives no links.
func TestImportARoster(t *testing.T) {
	s, st, _ := newService(t, SignupInvite)
	ctx := t.Context()
	rows, err := ParseRoster(strings.NewReader(roster(100)))
	if err != nil {
		t.Fatal(err)
	}
	made, err := s.ImportRoster(ctx, admin, rows)
	if err != nil {
		t.Fatal(err)
	}
	if len(made) != 101 {
		t.Fatalf("%d accounts made, want 101", len(made))
	}
	u, err := st.User(ctx, "student042")
	if err != nil || u.Email != "student042@uni.example" || u.Role != RolePlayer || u.Password != store.NoPassword {
		t.Errorf("student042: %+v, %v", u, err)
	}
	if u, _ := st.User(ctx, "teacher"); u.Role != RoleAdmin {
		t.Errorf("teacher's role %q", u.Role)
	}
	team, err := st.Team(ctx, "group10")
	if err != nil || len(team.Members) != 4 || team.Members[0].State != store.MemberIn {
		t.Errorf("group10: %+v, %v", team, err)
	}
	if _, err := s.SignIn(ctx, "student042", "", "client"); err == nil {
		t.Error("an imported account signs in before its password is set")
	}
	again, err := s.ImportRoster(ctx, admin, rows)
	if err != nil || len(again) != 0 {
		t.Errorf("the same roster again: %d made, %v", len(again), err)
	}

	// The link sets the password once; an admin's new link replaces it.
	code := made[42].Code
	if made[42].Name != "student042" {
		t.Fatalf("made[42] is %s", made[42].Name)
	}
	if _, err := s.SetPasswordByLink(ctx, code, "short"); !errs.IsInvalid(err) {
		t.Errorf("a short password by link: %v", err)
	}
	if _, err := s.SetPasswordByLink(ctx, code, "a-long-password"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SignIn(ctx, "student042", "a-long-password", "client"); err != nil {
		t.Errorf("sign in with the password the link set: %v", err)
	}
	if _, err := s.SetPasswordByLink(ctx, code, "another-password"); !errors.Is(err, store.ErrLinkUsed) {
		t.Errorf("the link again: %v", err)
	}
	old := made[7].Code
	fresh, err := s.CreatePasswordLink(ctx, admin, "student007")
	if err != nil {
		t.Fatal(err)
	}
	if ok, _ := s.PasswordLinkUsable(ctx, old); ok {
		t.Error("an earlier link works after a new one")
	}
	if ok, _ := s.PasswordLinkUsable(ctx, fresh); !ok {
		t.Error("the new link does not work")
	}
	if _, err := s.CreatePasswordLink(ctx, alice, "student007"); !errs.IsDenied(err) {
		t.Errorf("a player makes a password link: %v", err)
	}
	if _, err := s.CreatePasswordLink(ctx, admin, "nobody"); !errs.IsNotFound(err) {
		t.Errorf("a link for no account: %v", err)
	}
	if _, err := s.ImportRoster(ctx, alice, rows); !errs.IsDenied(err) {
		t.Errorf("a player imports a roster: %v", err)
	}
}

// A bad row is named by its line, and nothing of its file is applied.
func TestABadRowAppliesNothing(t *testing.T) {
	for _, tt := range []struct{ give, want string }{
		{"", "the roster is empty"},
		{"name,phone\nalice,1\n", `line 1: column "phone"`},
		{"email\na@b.example\n", "line 1: no name column"},
		{"name\n", "no accounts"},
		{"name,email\nalice,a@b.example\nBob Smith,b@b.example\n", "line 3: name \"bob smith\""},
		{"name,email\nalice,not-an-address\n", `line 2: email "not-an-address"`},
		{"name,role\nalice,teacher\n", `line 2: role "teacher"`},
		{"name,team\nalice,x\n", "line 2: team: name \"x\""},
		{"name\nalice\nbob\nalice\n", "line 4: alice is on line 2 already"},
		{"name,team\nalice,bob\nbob,\n", "line 2: team bob is the name of the account on line 3"},
		{"name,email\nalice\n", "line 2: 1 fields, the header names 2"},
		{"name\nadmin\n", `line 2: name "admin" is reserved`},
	} {
		_, err := ParseRoster(strings.NewReader(tt.give))
		if !errs.IsInvalid(err) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: %v, want %q", tt.give, err, tt.want)
		}
	}

	s, st, _ := newService(t, SignupInvite)
	ctx := t.Context()
	if _, err := s.SignUp(ctx, admin, "carol", "carols-password", ""); err != nil {
		t.Fatal(err)
	}
	rows, err := ParseRoster(strings.NewReader("name,team\ndave,blue\nerin,carol\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.ImportRoster(ctx, admin, rows); !errs.IsInvalid(err) || !strings.Contains(err.Error(), "line 3: team carol: the name is an account's") {
		t.Errorf("a team named as an account: %v", err)
	}
	if _, err := st.User(ctx, "dave"); !errors.Is(err, store.ErrNoUser) {
		t.Errorf("dave was made by a roster with a bad row: %v", err)
	}
}
