package store

import (
	"testing"
	"time"
)

// Notifications are a person's own, read or not, told once by a field,
// and gone after their time with their webhook calls.
func TestNotificationsAreKeptAndExpire(t *testing.T) {
	s := openTest(t)
	ctx := t.Context()
	day := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	for i, n := range []Notification{
		{User: "alice", Kind: "check", Text: "old", At: day},
		{User: "alice", Kind: "entry_fault", Text: "new", Fields: map[string]any{"entry": 7}, At: day.Add(40 * 24 * time.Hour)},
		{User: "bob", Kind: "check", Text: "bob's", At: day.Add(40 * 24 * time.Hour)},
	} {
		got, err := s.AddNotification(ctx, n)
		if err != nil || got.ID != int64(i+1) {
			t.Fatalf("add %d: %v %v", i, got, err)
		}
	}
	if _, err := s.RecordDelivery(ctx, Delivery{User: "alice", Notification: 1, URL: "https://x/", State: DeliveryFailed, At: day}); err != nil {
		t.Fatal(err)
	}
	list, unread, err := s.Notifications(ctx, "alice", 10)
	if err != nil || len(list) != 2 || unread != 2 || list[0].Text != "new" || list[0].Fields["entry"] != 7.0 {
		t.Fatalf("alice's: %v %d %v", list, unread, err)
	}
	if told, err := s.Notified(ctx, "alice", "entry_fault", "entry", int64(7), day.Add(39*24*time.Hour)); err != nil || !told {
		t.Errorf("entry 7 told: %v %v", told, err)
	}
	if told, _ := s.Notified(ctx, "alice", "entry_fault", "entry", int64(8), day); told {
		t.Error("entry 8 told")
	}
	if n, err := s.MarkRead(ctx, "alice", []int64{2, 3}, day); err != nil || n != 1 {
		t.Errorf("alice marks hers and bob's read: %d %v", n, err)
	}
	if _, unread, _ := s.Notifications(ctx, "bob", 10); unread != 1 {
		t.Errorf("bob's unread after alice read: %d", unread)
	}
	if n, err := s.ExpireNotifications(ctx, day.Add(30*24*time.Hour)); err != nil || n != 1 {
		t.Errorf("expired %d: %v", n, err)
	}
	if list, _, _ := s.Notifications(ctx, "alice", 10); len(list) != 1 || list[0].Text != "new" {
		t.Errorf("after expiry: %v", list)
	}
	if d, _ := s.Deliveries(ctx, "alice", 10); len(d) != 0 {
		t.Errorf("the old webhook call stays: %v", d)
	}
}
