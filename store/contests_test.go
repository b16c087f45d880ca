package store

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"
)

// AddContestEntry asks admit in its transaction, with the entered entries
// only and the people each owner counts for (a team's members in it, not
// its invited; a user, themself); admit's refusal comes back as it is and
// records nothing.
func TestAddContestEntryAdmits(t *testing.T) {
	s, err := Open(t.TempDir(), "test")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := t.Context()
	t0 := time.Date(2027, 1, 1, 12, 0, 0, 0, time.UTC)
	ct, err := s.CreateContest(ctx, Contest{Name: "Cup", Game: "tanks", Spec: []byte(`{}`), FreezeAt: t0.Add(time.Hour), CreatedBy: "admin", CreatedAt: t0})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.CreateTeam(ctx, "red", "alice", t0, 0); err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{"carol", "dave"} {
		if err := s.InviteMember(ctx, "red", u, "alice", t0); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.AcceptInvitation(ctx, "red", "carol"); err != nil {
		t.Fatal(err)
	}
	entry := func(owner, image string) ContestEntry {
		return ContestEntry{ContestID: ct.ID, Owner: owner, Image: image, CreatedBy: owner, CreatedAt: t0}
	}
	bob, err := s.AddContestEntry(ctx, entry("bob", "bob/bot"), nil)
	if err != nil {
		t.Fatal(err)
	}
	gone, err := s.AddContestEntry(ctx, entry("erin", "erin/bot"), nil)
	if err != nil {
		t.Fatal(err)
	}
	gone.State = EntryWithdrawn
	if err := s.SetContestEntry(ctx, gone, false, t0, "erin", "", ""); err != nil {
		t.Fatal(err)
	}
	var saw []ContestEntry
	var seen map[string][]string
	no := errors.New("refused")
	_, err = s.AddContestEntry(ctx, entry("red", "red/bot"), func(c Contest, entered []ContestEntry, persons map[string][]string) error {
		if c.ID != ct.ID || c.Name != "Cup" {
			t.Errorf("admit is given contest %+v", c)
		}
		saw, seen = entered, persons
		return fmt.Errorf("%w: by the test", no)
	})
	if !errors.Is(err, no) || err.Error() != "refused: by the test" {
		t.Errorf("the refusal: %v", err)
	}
	if len(saw) != 1 || saw[0].ID != bob.ID {
		t.Errorf("admit saw %+v, want bob's entry only (erin's is withdrawn)", saw)
	}
	if want := map[string][]string{"bob": {"bob"}, "red": {"alice", "carol"}}; fmt.Sprint(seen) != fmt.Sprint(want) {
		t.Errorf("persons %v, want %v (dave is only invited)", seen, want)
	}
	all, _ := s.ContestEntries(ctx, ct.ID)
	if len(all) != 2 || slices.ContainsFunc(all, func(e ContestEntry) bool { return e.Owner == "red" }) {
		t.Errorf("a refused entry was recorded: %+v", all)
	}
	if _, err := s.AddContestEntry(ctx, entry("red", "red/bot"), func(Contest, []ContestEntry, map[string][]string) error { return nil }); err != nil {
		t.Errorf("an admitted entry: %v", err)
	}
}
