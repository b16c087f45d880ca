package store

import (
	"database/sql"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// copyRelease makes a data folder of the release before accounts: its
// database (testdata/release-46df002.db, written by that release's store
// with a match by hand, a failed one, a two-entry tanks ladder with a
// paused entry and a ladder match) and its replay.
func copyRelease(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "replays"), 0o755); err != nil {
		t.Fatal(err)
	}
	for from, to := range map[string]string{"release-46df002.db": "arena.db", "release-46df002-replay.json": "replays/aaaaaaaaaaa1.json"} {
		b, err := os.ReadFile(filepath.Join("testdata", from))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, to), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// A data folder of the previous release opens with every match and
// entry kept, and what was made then becomes the admin's.
func TestMigrateFromThePreviousRelease(t *testing.T) {
	dir := copyRelease(t)
	s, err := Open(dir, "test")
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	var version int
	if err := s.db.QueryRow(`PRAGMA user_version`).Scan(&version); err != nil || version != SchemaVersion() {
		t.Fatalf("schema version %d (%v), want %d", version, err, SchemaVersion())
	}
	all, _, err := s.List(ctx, Filter{}, 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, m := range all {
		ids = append(ids, m.ID)
	}
	if want := []string{"bbbbbbbbbbb1", "aaaaaaaaaaa2", "aaaaaaaaaaa1"}; !slices.Equal(ids, want) {
		t.Fatalf("matches %v, want %v", ids, want)
	}
	m, err := s.Get(ctx, "aaaaaaaaaaa1")
	if err != nil {
		t.Fatal(err)
	}
	if m.Owner != "admin" || m.Ladder || m.Status != "finished" || !m.HasReplay || m.Seed != 1<<64-1 || !strings.Contains(string(m.Result), "tanks-hunter") {
		t.Errorf("the finished match: %+v", m)
	}
	// Its replay, as that release wrote it (plain JSON), still opens.
	if f, err := s.OpenReplay(m.ID); err != nil {
		t.Errorf("its replay: %v", err)
	} else {
		b, err := io.ReadAll(f)
		f.Close()
		if err != nil || !json.Valid(b) {
			t.Errorf("its replay: %d bytes, %v", len(b), err)
		}
	}
	if m.Kind != "hand" {
		t.Errorf("the match by hand is of kind %q", m.Kind)
	}
	if m, _ := s.Get(ctx, "aaaaaaaaaaa2"); m.Owner != "admin" || m.Error == "" || string(m.Settings) != `{"max_rounds":5}` {
		t.Errorf("the failed match: %+v", m)
	}
	if m, _ := s.Get(ctx, "bbbbbbbbbbb1"); m.Owner != "" || !m.Ladder || m.Kind != "ladder" {
		t.Errorf("the ladder's match: owner %q, ladder %v, kind %q", m.Owner, m.Ladder, m.Kind)
	}
	if mine, _, _ := s.List(ctx, Filter{Owners: []string{"admin"}, NoLadder: true}, 0, 10); len(mine) != 2 {
		t.Errorf("the admin's matches: %d, want 2", len(mine))
	}
	entries, err := s.Entries(ctx, "tanks")
	if err != nil || len(entries) != 2 {
		t.Fatalf("entries %+v, %v", entries, err)
	}
	for _, e := range entries {
		if e.Owner != "admin" || e.CreatedBy != "admin" {
			t.Errorf("entry %s: owner %q by %q", e.Name, e.Owner, e.CreatedBy)
		}
	}
	if entries[1].State != EntryPaused || entries[1].Note != "paused by hand" {
		t.Errorf("the paused entry: %+v", entries[1])
	}
	lm, err := s.LadderMatchOf(ctx, "bbbbbbbbbbb1")
	if err != nil || len(lm.Seats) != 2 {
		t.Errorf("the ladder match: %+v, %v", lm, err)
	}
	// New rows work beside the old.
	if err := s.CreateUser(ctx, User{Name: "alice", Password: "x", Role: "player", CreatedAt: time.Now()}, ""); err != nil {
		t.Fatal(err)
	}
	s.Close()
	// Opening again migrates nothing twice.
	if s, err = Open(dir, "test"); err != nil {
		t.Fatalf("open again: %v", err)
	}
	defer s.Close()
	if _, err := s.User(ctx, "alice"); err != nil {
		t.Errorf("alice after reopening: %v", err)
	}
}

// A database newer than this build is refused, not written to.
func TestMigrateRefusesANewerDatabase(t *testing.T) {
	dir := t.TempDir()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "arena.db"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`PRAGMA user_version = 99`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	_, err = Open(dir, "test")
	if err == nil || !strings.Contains(err.Error(), "schema version 99, newer than") {
		t.Fatalf("opening a newer database: %v", err)
	}
}

func TestAccounts(t *testing.T) {
	s, err := Open(t.TempDir(), "test")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := t.Context()
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	if err := s.CreateUser(ctx, User{Name: "alice", Password: "h1", Role: "player", CreatedAt: t0}, ""); err != nil {
		t.Fatal(err)
	}
	// Users and teams share their names.
	if err := s.CreateTeam(ctx, "alice", "alice", t0, 0); !errors.Is(err, ErrNameInUse) {
		t.Errorf("a team named as a user: %v", err)
	}
	if err := s.CreateTeam(ctx, "red", "alice", t0, 0); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateUser(ctx, User{Name: "red", Password: "h", Role: "player", CreatedAt: t0}, ""); !errors.Is(err, ErrNameInUse) {
		t.Errorf("a user named as a team: %v", err)
	}
	// An invitation is used once, and not after it expires.
	if _, err := s.CreateInvite(ctx, "inv1", "admin", t0, t0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateUser(ctx, User{Name: "bob", Password: "h", Role: "player", CreatedAt: t0}, "inv1"); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateUser(ctx, User{Name: "carol", Password: "h", Role: "player", CreatedAt: t0}, "inv1"); !errors.Is(err, ErrInviteUsed) {
		t.Errorf("an invitation used twice: %v", err)
	}
	if _, err := s.User(ctx, "carol"); !errors.Is(err, ErrNoUser) {
		t.Errorf("carol was made with a used invitation: %v", err)
	}
	s.CreateInvite(ctx, "inv2", "admin", t0, t0.Add(time.Hour))
	if err := s.CreateUser(ctx, User{Name: "carol", Password: "h", Role: "player", CreatedAt: t0.Add(2 * time.Hour)}, "inv2"); !errors.Is(err, ErrInviteUsed) {
		t.Errorf("an expired invitation: %v", err)
	}
	// Teams: invited, then in; the last member stays.
	if err := s.InviteMember(ctx, "red", "bob", "alice", t0); err != nil {
		t.Fatal(err)
	}
	if in, _ := s.TeamsOf(ctx, "bob", MemberIn); len(in) != 0 {
		t.Errorf("bob is in %v before accepting", in)
	}
	if err := s.AcceptInvitation(ctx, "red", "bob"); err != nil {
		t.Fatal(err)
	}
	if in, _ := s.TeamsOf(ctx, "bob", MemberIn); !slices.Equal(in, []string{"red"}) {
		t.Errorf("bob's teams %v", in)
	}
	if err := s.RemoveMember(ctx, "red", "alice"); err != nil {
		t.Fatal(err)
	}
	if err := s.RemoveMember(ctx, "red", "bob"); !errors.Is(err, ErrNameInUse) {
		t.Errorf("the last member left: %v", err)
	}
	// A password change moves the epoch on.
	if e, err := s.SetPassword(ctx, "alice", "h2"); err != nil || e != 2 {
		t.Errorf("epoch %d, %v", e, err)
	}
	// Tokens: found by hash until revoked, only by their user.
	tok, err := s.CreateToken(ctx, "alice", "ci", "hash1", t0)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := s.TokenByHash(ctx, "hash1", t0.Add(time.Hour)); err != nil || got.User != "alice" {
		t.Errorf("token by hash: %+v, %v", got, err)
	}
	if err := s.RevokeToken(ctx, "bob", tok.ID, t0); !errors.Is(err, ErrNoToken) {
		t.Errorf("bob revoked alice's token: %v", err)
	}
	if err := s.RevokeToken(ctx, "alice", tok.ID, t0); err != nil {
		t.Fatal(err)
	}
	if _, err := s.TokenByHash(ctx, "hash1", t0); !errors.Is(err, ErrNoToken) {
		t.Errorf("a revoked token was found: %v", err)
	}
	// The admin account: made, then reset.
	if err := s.UpsertAdmin(ctx, "admin", "a1", t0); err != nil {
		t.Fatal(err)
	}
	if err := s.UpsertAdmin(ctx, "admin", "a2", t0); err != nil {
		t.Fatal(err)
	}
	if u, _ := s.User(ctx, "admin"); u.Password != "a2" || u.Role != "admin" || u.Epoch != 2 {
		t.Errorf("admin %+v", u)
	}
}
