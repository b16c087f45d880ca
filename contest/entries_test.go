package contest

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"arena/engine"
	"arena/engine/tanks"
	"arena/internal/errs"
	"arena/store"
)

// push records a pushed version of repository NAME/bot, NAME's.
func (r *rig) push(t *testing.T, repo string) {
	t.Helper()
	owner, _, _ := strings.Cut(repo, "/")
	id := "img" + strings.ReplaceAll(repo, "/", "")
	if err := r.st.RecordTag(t.Context(), store.Tag{Repository: repo, Tag: "v1", Owner: owner, Digest: "sha256:d" + id, ImageID: "sha256:" + strings.Repeat("0", 64-len(id)) + id, PushedBy: owner, PushedAt: r.now}); err != nil {
		t.Fatal(err)
	}
}

// team makes a team of its creator and members (who accept).
func (r *rig) team(t *testing.T, name, by string, members ...string) {
	t.Helper()
	if err := r.st.CreateTeam(t.Context(), name, by, r.now, 0); err != nil {
		t.Fatal(err)
	}
	for _, m := range members {
		if err := r.st.InviteMember(t.Context(), name, m, by, r.now); err != nil {
			t.Fatal(err)
		}
		if err := r.st.AcceptInvitation(t.Context(), name, m); err != nil {
			t.Fatal(err)
		}
	}
}

// enter enters repo (NAME/bot) in the contest as NAME's, by by.
func (r *rig) enter(t *testing.T, id int64, repo, by string) (store.ContestEntry, error) {
	t.Helper()
	owner, _, _ := strings.Cut(repo, "/")
	return r.c.Enter(t.Context(), id, Entry{Owner: owner, By: by, Repository: repo})
}

// refused says whether err refuses an entry as a conflict that says
// each of want.
func refused(t *testing.T, what string, err error, want ...string) {
	t.Helper()
	if !errs.IsConflict(err) {
		t.Errorf("%s: %v, want it refused (a conflict)", what, err)
		return
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%s: %q does not say %q", what, err, w)
		}
	}
}

// One user, two repositories: the second is refused, whoever enters it
// (staff too), naming the first; another user still enters.
func TestOneEntryPerPersonNotPerRepository(t *testing.T) {
	r := newRig(t, t.TempDir())
	ct := r.create(t)
	for _, repo := range []string{"alice/bot", "alice/bot2", "bob/bot"} {
		r.push(t, repo)
	}
	first, err := r.enter(t, ct.ID, "alice/bot", "alice")
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.enter(t, ct.ID, "alice/bot2", "alice")
	refused(t, "alice's second repository", err, `alice is already in contest "Cup" with entry `, "(alice/bot)", "one entry per person")
	_, err = r.enter(t, ct.ID, "alice/bot2", "admin")
	refused(t, "staff enter alice's second repository", err, "alice is already in contest")
	if _, err := r.enter(t, ct.ID, "bob/bot", "bob"); err != nil {
		t.Errorf("bob's entry: %v", err)
	}
	entries, _ := r.st.ContestEntries(t.Context(), ct.ID)
	if len(entries) != 2 || entries[0].ID != first.ID {
		t.Errorf("entries %+v, want alice's first and bob's", entries)
	}
}

// carol (in team red) enters alone: red's entry is refused, naming her
// entry; the reverse order too; a user invited into red, not yet in it,
// is not red's member and enters alone.
func TestAMemberAndTheirTeamDoNotBothEnter(t *testing.T) {
	for _, carolFirst := range []bool{true, false} {
		r := newRig(t, t.TempDir())
		ct := r.create(t)
		r.team(t, "red", "alice", "carol")
		if err := r.st.InviteMember(t.Context(), "red", "dave", "alice", r.now); err != nil {
			t.Fatal(err)
		}
		for _, repo := range []string{"red/bot", "carol/bot", "dave/bot"} {
			r.push(t, repo)
		}
		if carolFirst {
			if _, err := r.enter(t, ct.ID, "carol/bot", "carol"); err != nil {
				t.Fatal(err)
			}
			_, err := r.enter(t, ct.ID, "red/bot", "alice")
			refused(t, "red after carol", err, `carol (of team red) is already in contest "Cup" with entry 1 (carol/bot)`, "a team's entry counts for each of its members")
		} else {
			if _, err := r.enter(t, ct.ID, "red/bot", "alice"); err != nil {
				t.Fatal(err)
			}
			_, err := r.enter(t, ct.ID, "carol/bot", "carol")
			refused(t, "carol after red", err, `carol is already in contest "Cup" through team red's entry 1 (red/bot)`)
		}
		if _, err := r.enter(t, ct.ID, "dave/bot", "dave"); err != nil {
			t.Errorf("dave, invited into red but not in it: %v", err)
		}
	}
}

// Teams red and blue share carol: once red is in, blue is refused.
func TestTwoTeamsSharingAMemberDoNotBothEnter(t *testing.T) {
	r := newRig(t, t.TempDir())
	ct := r.create(t)
	r.team(t, "red", "alice", "carol")
	r.team(t, "blue", "bob", "carol")
	r.team(t, "green", "dave")
	for _, repo := range []string{"red/bot", "blue/bot", "green/bot"} {
		r.push(t, repo)
	}
	if _, err := r.enter(t, ct.ID, "red/bot", "alice"); err != nil {
		t.Fatal(err)
	}
	_, err := r.enter(t, ct.ID, "blue/bot", "bob")
	refused(t, "blue after red", err, `carol (of team blue) is already in contest "Cup" through team red's entry 1 (red/bot)`)
	if _, err := r.enter(t, ct.ID, "green/bot", "dave"); err != nil {
		t.Errorf("green, sharing no member: %v", err)
	}
}

// A withdrawn or disqualified entry counts for nobody: the person enters
// again (refused while the first stood).
func TestAWithdrawnEntryFreesThePerson(t *testing.T) {
	r := newRig(t, t.TempDir())
	ct := r.create(t)
	r.team(t, "red", "alice", "carol")
	for _, repo := range []string{"alice/bot", "alice/bot2", "red/bot", "carol/bot"} {
		r.push(t, repo)
	}
	e, err := r.enter(t, ct.ID, "alice/bot", "alice")
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.enter(t, ct.ID, "alice/bot2", "alice")
	refused(t, "alice's second repository", err, "alice is already in contest")
	if _, err := r.c.ChangeEntry(t.Context(), ct.ID, e.ID, Change{Withdraw: true, By: "alice"}); err != nil {
		t.Fatal(err)
	}
	e2, err := r.enter(t, ct.ID, "alice/bot2", "alice")
	if err != nil {
		t.Fatalf("alice after withdrawing: %v", err)
	}
	_, err = r.enter(t, ct.ID, "red/bot", "carol")
	refused(t, "red while alice is in", err, "alice (of team red)", "(alice/bot2)")
	why := "copied code"
	if _, err := r.c.ChangeEntry(t.Context(), ct.ID, e2.ID, Change{Disqualify: &why, By: "admin"}); err != nil {
		t.Fatal(err)
	}
	red, err := r.enter(t, ct.ID, "red/bot", "carol")
	if err != nil {
		t.Fatalf("red once alice's entry is disqualified: %v", err)
	}
	_, err = r.enter(t, ct.ID, "carol/bot", "carol")
	refused(t, "carol while red is in", err, "through team red's entry")
	if _, err := r.c.ChangeEntry(t.Context(), ct.ID, red.ID, Change{Withdraw: true, By: "carol"}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.enter(t, ct.ID, "carol/bot", "carol"); err != nil {
		t.Errorf("carol once red withdrew: %v", err)
	}
}

// A contest whose setting allows two entries per person takes two of
// alice's, not three; raised by staff to three, the third. The setting
// is 1 unless set, and 1 to 100.
func TestAContestMayTakeMoreEntriesPerPerson(t *testing.T) {
	r := newRig(t, t.TempDir())
	ct, err := r.c.Create(t.Context(), Spec{Name: "House", Game: "tanks", Maps: []string{"classic"}, FreezeAt: r.now.Add(time.Minute), EntriesPerPerson: 2}, "admin")
	if err != nil {
		t.Fatal(err)
	}
	r.team(t, "red", "alice", "carol")
	for _, repo := range []string{"alice/a", "alice/b", "alice/c", "red/bot", "carol/bot"} {
		r.push(t, repo)
	}
	for _, repo := range []string{"alice/a", "alice/b"} {
		if _, err := r.enter(t, ct.ID, repo, "alice"); err != nil {
			t.Fatalf("%s: %v", repo, err)
		}
	}
	_, err = r.enter(t, ct.ID, "alice/c", "alice")
	refused(t, "alice's third", err, `alice is already in contest "House" with entry 1 (alice/a) and with entry 2 (alice/b): it takes 2 entries per person`)
	_, err = r.enter(t, ct.ID, "red/bot", "carol")
	refused(t, "red, alice's third", err, "alice (of team red)")
	if err := r.c.Update(t.Context(), ct.ID, json.RawMessage(`{"entries_per_person":3}`), "admin"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.enter(t, ct.ID, "red/bot", "carol"); err != nil {
		t.Errorf("red, once three are allowed: %v", err)
	}
	// carol: red's and her own.
	if _, err := r.enter(t, ct.ID, "carol/bot", "carol"); err != nil {
		t.Errorf("carol's own: %v", err)
	}
	_, err = r.enter(t, ct.ID, "alice/c", "alice")
	refused(t, "alice's fourth", err, "through team red's entry", "3 entries per person")
	log, _ := r.st.AuditLog(t.Context(), ct.ID)
	if d := log[len(log)-1].Detail; d != "entries_per_person 2 → 3" {
		t.Errorf("audit %q", d)
	}

	s := Spec{Name: "n", Game: "tanks", FreezeAt: r.now}
	if err := s.Check([]engine.Game{tanks.New()}); err != nil || s.EntriesPerPerson != 1 {
		t.Errorf("the default: %d, %v", s.EntriesPerPerson, err)
	}
	for _, n := range []int{-1, 101} {
		s.EntriesPerPerson = n
		if err := s.Check([]engine.Game{tanks.New()}); !errs.IsInvalid(err) || !strings.Contains(err.Error(), "entries_per_person") {
			t.Errorf("%d entries per person: %v", n, err)
		}
	}
	// A contest made before the setting (none in its settings): one.
	if (Spec{}).perPerson() != 1 {
		t.Error("a contest without the setting takes more than one entry per person")
	}
}

// Two entries of one person at the same moment, through two runners
// sharing the store (so not only the runner's lock orders them): one is
// made, the other refused.
func TestEntriesAtTheSameMoment(t *testing.T) {
	r := newRig(t, t.TempDir())
	ct := r.create(t)
	runners := []*Contests{r.c, r.contests()}
	const n = 8
	for i := range n {
		r.push(t, "alice/bot"+string(rune('a'+i)))
	}
	var wg sync.WaitGroup
	results := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, results[i] = runners[i%2].Enter(t.Context(), ct.ID, Entry{Owner: "alice", By: "alice", Repository: "alice/bot" + string(rune('a'+i))})
		}()
	}
	wg.Wait()
	made := 0
	for _, err := range results {
		switch {
		case err == nil:
			made++
		case !errs.IsConflict(err):
			t.Errorf("an entry: %v", err)
		}
	}
	entries, _ := r.st.ContestEntries(t.Context(), ct.ID)
	if made != 1 || len(entries) != 1 {
		t.Errorf("%d entries made (%d recorded) of alice's %d at once, want 1", made, len(entries), n)
	}
}

// Membership is read when an entry is made: bob, who entered alone and
// then joined red, keeps his entry (not checked again), and red's entry
// is refused now that he is in it.
func TestMembershipIsReadWhenAnEntryIsMade(t *testing.T) {
	r := newRig(t, t.TempDir())
	ct := r.create(t)
	r.team(t, "red", "alice")
	for _, repo := range []string{"bob/bot", "red/bot"} {
		r.push(t, repo)
	}
	if _, err := r.enter(t, ct.ID, "bob/bot", "bob"); err != nil {
		t.Fatal(err)
	}
	if err := r.st.InviteMember(t.Context(), "red", "bob", "alice", r.now); err != nil {
		t.Fatal(err)
	}
	if err := r.st.AcceptInvitation(t.Context(), "red", "bob"); err != nil {
		t.Fatal(err)
	}
	_, err := r.enter(t, ct.ID, "red/bot", "alice")
	refused(t, "red once bob is in it", err, "bob (of team red) is already in contest")
	entries, _ := r.st.ContestEntries(t.Context(), ct.ID)
	if len(entries) != 1 || entries[0].State != store.EntryEntered {
		t.Errorf("bob's entry: %+v", entries)
	}
}
