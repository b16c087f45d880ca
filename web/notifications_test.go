package web

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"arena/internal/testsupport/poll"
	"arena/orchestrator/fake"
	"arena/platform"
	"arena/store"
	"arena/webhook"
)

// A version rejected by its check makes a notification for whoever
// pushed it, and a signed call to their webhook, a receiver on loopback
// that ARENA_WEBHOOK_ALLOW=127.0.0.1/32 admits: the signature checks,
// the body carries text and content and the event's fields and never the
// secret; a call answered 500 is tried again. A webhook at the server's
// own address is refused even so; without the setting, one on loopback
// is. Nobody reads another's notifications.
func TestNotificationsAndWebhooks(t *testing.T) {
	ms := newMatrixServer(t, Config{}, registryAt("127.0.0.1:5006"), func(c *platform.Config, _ *platform.Deps) {
		c.Notify.Webhooks.Allow = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
		c.Notify.Backoff = 20 * time.Millisecond
	})
	tanksImage := fakePulls(t, ms)
	_, aliceTok := ms.token(t, "alice")
	_, bobTok := ms.token(t, "bob")
	alice := []string{"Authorization", "Bearer " + aliceTok}
	bob := []string{"Authorization", "Bearer " + bobTok}

	type call struct {
		header http.Header
		body   []byte
	}
	var mu sync.Mutex
	var calls []call
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		calls = append(calls, call{r.Header.Clone(), body})
		first := len(calls) == 1
		mu.Unlock()
		if first {
			http.Error(w, "not now", http.StatusInternalServerError)
		}
	}))
	defer receiver.Close()

	status, hook := ms.do(t, "PUT", "/api/me/webhook", fmt.Sprintf(`{"url":%q}`, receiver.URL+"/hook"), alice...)
	secret, _ := hook["secret"].(string)
	if status != http.StatusOK || len(secret) != 64 {
		t.Fatalf("alice sets her webhook: %d %v", status, hook)
	}
	if _, v := ms.do(t, "GET", "/api/me/webhook", "", alice...); v["url"] != receiver.URL+"/hook" || v["secret"] != nil {
		t.Errorf("alice's webhook as the page reads it: %v", v)
	}

	// Alice pushes a bot that crashes at once: rejected.
	crash := tanksImage("crashes", fake.Script{Faults: map[int]fake.Fault{1: fake.Crash}})
	if status, body := ms.push(t, "alice", aliceTok, "alice/tank", "v1", crash); status != http.StatusCreated {
		t.Fatalf("alice pushes: %d %s", status, body)
	}
	var got map[string]any
	poll.Until(t, 20*time.Second, func() error {
		_, got = ms.do(t, "GET", "/api/notifications", "", alice...)
		if got["unread"] != 1.0 {
			return fmt.Errorf("alice's notifications: %v", got)
		}
		return nil
	})
	n := got["notifications"].([]any)[0].(map[string]any)
	if n["kind"] != "check" || !strings.Contains(n["text"].(string), "alice/tank:v1 was rejected by its check match: crashed at turn 1") || n["read"] != false || n["link"] != "#/mybots" {
		t.Errorf("alice's notification: %v", n)
	}
	if _, b := ms.do(t, "GET", "/api/notifications", "", bob...); b["unread"] != 0.0 || len(b["notifications"].([]any)) != 0 {
		t.Errorf("bob's notifications: %v", b)
	}
	if status, _ := ms.do(t, "GET", "/api/notifications", ""); status != http.StatusUnauthorized {
		t.Errorf("an anonymous visitor's notifications: %d", status)
	}

	// The webhook: called twice (500, then 200), signed, the body whole.
	var v map[string]any
	poll.Until(t, 20*time.Second, func() error {
		_, v = ms.do(t, "GET", "/api/me/webhook", "", alice...)
		if d, _ := v["deliveries"].([]any); len(d) != 1 || d[0].(map[string]any)["state"] != "delivered" {
			return fmt.Errorf("alice's webhook calls: %v", v)
		}
		return nil
	})
	if d := v["deliveries"].([]any)[0].(map[string]any); d["attempts"] != 2.0 || d["status"] != 200.0 {
		t.Errorf("the delivery: %v", d)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(calls) != 2 || string(calls[0].body) != string(calls[1].body) {
		t.Fatalf("%d calls", len(calls))
	}
	c := calls[1]
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(c.body)
	if want := "sha256=" + hex.EncodeToString(mac.Sum(nil)); c.header.Get("X-Arena-Signature") != want {
		t.Errorf("the signature %q, want %q", c.header.Get("X-Arena-Signature"), want)
	}
	var body map[string]any
	if err := json.Unmarshal(c.body, &body); err != nil {
		t.Fatal(err)
	}
	if body["text"] != n["text"] || body["content"] != n["text"] || body["kind"] != "check" || body["repository"] != "alice/tank" || body["state"] != "rejected" || c.header.Get("X-Arena-Event") != "check" {
		t.Errorf("the call's body: %s", c.body)
	}
	if strings.Contains(string(c.body), secret) {
		t.Error("the secret is in the body")
	}

	// Read.
	if status, r := ms.do(t, "POST", "/api/notifications/read", `{}`, alice...); status != http.StatusOK || r["marked"] != 1.0 {
		t.Errorf("mark all read: %d %v", status, r)
	}
	if _, r := ms.do(t, "GET", "/api/notifications", "", alice...); r["unread"] != 0.0 || r["notifications"].([]any)[0].(map[string]any)["read"] != true {
		t.Errorf("after reading: %v", r)
	}

	// The server's own address, admitted network or not; bad URLs.
	for url, want := range map[string]string{
		ms.url + "/api/me":                   "this server's own address",
		"ftp://example.org/hook":             "not an http(s) address",
		"http://user:pw@127.0.0.1:9/hook":    "no name or password",
		"http://10.1.2.3/hook":               "ARENA_WEBHOOK_ALLOW",
		"http://[::1]:9/hook":                "ARENA_WEBHOOK_ALLOW",
		"http://169.254.169.254/latest/meta": "ARENA_WEBHOOK_ALLOW",
	} {
		if status, body := ms.do(t, "PUT", "/api/me/webhook", fmt.Sprintf(`{"url":%q}`, url), bob...); status != http.StatusBadRequest || !strings.Contains(fmt.Sprint(body["error"]), want) {
			t.Errorf("bob's webhook %s: %d %v, want 400 naming %q", url, status, body, want)
		}
	}
	// Without the setting, loopback is refused.
	plain := newMatrixServer(t, Config{})
	_, carolTok := plain.token(t, "carol")
	if status, body := plain.do(t, "PUT", "/api/me/webhook", fmt.Sprintf(`{"url":%q}`, receiver.URL), "Authorization", "Bearer "+carolTok); status != http.StatusBadRequest || !strings.Contains(fmt.Sprint(body["error"]), "ARENA_WEBHOOK_ALLOW") {
		t.Errorf("a loopback webhook without ARENA_WEBHOOK_ALLOW: %d %v", status, body)
	}

	if status, _ := ms.do(t, "DELETE", "/api/me/webhook", "", alice...); status != http.StatusNoContent {
		t.Errorf("alice removes her webhook: %d", status)
	}
	if status, _ := ms.do(t, "DELETE", "/api/me/webhook", "", alice...); status != http.StatusNotFound {
		t.Errorf("alice removes her webhook again: %d", status)
	}
}

// notified waits until user has a notification of kind, and returns
// those they have.
func (ms *matrixServer) notified(t *testing.T, tok, kind string) []map[string]any {
	t.Helper()
	var found []map[string]any
	poll.Until(t, 60*time.Second, func() error {
		_, list := ms.do(t, "GET", "/api/notifications", "", "Authorization", "Bearer "+tok)
		found = nil
		for _, n := range list["notifications"].([]any) {
			if n := n.(map[string]any); n["kind"] == kind {
				found = append(found, n)
			}
		}
		if len(found) == 0 {
			return fmt.Errorf("no %s notification: %v", kind, list)
		}
		return nil
	})
	return found
}

// What people are told: both sides of a challenge once it is over; the
// person invited into a team; each entrant at a contest's deadline and
// at its final standings; an entry's owner at its first fault of the
// day, and not at the next ones.
func TestWhatPeopleAreTold(t *testing.T) {
	ms := newMatrixServer(t, Config{}, registryAt("127.0.0.1:5006"), func(c *platform.Config, _ *platform.Deps) {
		c.Ladder.Enabled = true
	})
	tanksImage := fakePulls(t, ms)
	ms.pulledByConfig()
	_, aliceTok := ms.token(t, "alice")
	_, bobTok := ms.token(t, "bob")
	_, adminTok := ms.token(t, "admin")
	bob := []string{"Authorization", "Bearer " + bobTok}
	for _, u := range []struct{ name, tok string }{{"alice", aliceTok}, {"bob", bobTok}} {
		if status, body := ms.push(t, u.name, u.tok, u.name+"/tank", "v1", tanksImage(u.name+"'s tank", fake.Script{})); status != http.StatusCreated {
			t.Fatalf("%s pushes: %d %s", u.name, status, body)
		}
		poll.Until(t, 20*time.Second, func() error {
			if got := ms.tagState(t, u.tok, u.name+"/tank:v1"); got != "ready" {
				return fmt.Errorf("%s/tank:v1 is %q", u.name, got)
			}
			return nil
		})
		if n := ms.notified(t, u.tok, "check"); !strings.Contains(n[0]["text"].(string), u.name+"/tank:v1 is ready") {
			t.Errorf("%s's check: %v", u.name, n)
		}
	}

	// A challenge: both sides are told once it is over.
	status, c := ms.do(t, "POST", "/api/challenges", `{"bot":"bob/tank:v1","opponent":{"bot":"alice/tank"},"games":2}`, bob...)
	if status != http.StatusCreated {
		t.Fatalf("bob's challenge: %d %v", status, c)
	}
	ms.challengeDone(t, c["id"], bob...)
	for _, tok := range []string{aliceTok, bobTok} {
		n := ms.notified(t, tok, "challenge")
		if len(n) != 1 || !regexp.MustCompile(`^Challenge \d+ is over: bob's bob/tank:v1 against alice/tank:v1, \d won, \d drawn, \d lost\.$`).MatchString(n[0]["text"].(string)) || n[0]["link"] != fmt.Sprintf("#/challenges/%v", c["id"]) {
			t.Errorf("the challenge's notification: %v", n)
		}
	}

	// A team's invitation.
	if status, body := ms.do(t, "POST", "/api/teams/red/members", `{"user":"bob"}`, "Authorization", "Bearer "+aliceTok); status != http.StatusCreated {
		t.Fatalf("alice invites bob into red: %d %v", status, body)
	}
	if n := ms.notified(t, bobTok, "team_invite"); n[0]["text"] != "alice invites you into team red: accept or decline on your account page." {
		t.Errorf("bob's invitation: %v", n)
	}

	// A contest: its deadline and its final standings.
	freeze := ms.clock.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	status, ct := ms.do(t, "POST", "/api/contests", `{"name":"Cup","game":"tanks","maps":["classic"],"freeze_at":"`+freeze+`"}`, "Authorization", "Bearer "+adminTok)
	if status != http.StatusCreated {
		t.Fatalf("the contest: %d %v", status, ct)
	}
	for _, u := range []struct{ name, tok string }{{"alice", aliceTok}, {"bob", bobTok}} {
		if status, e := ms.do(t, "POST", fmt.Sprintf("/api/contests/%v/entries", ct["id"]), `{"bot":"`+u.name+`/tank"}`, "Authorization", "Bearer "+u.tok); status != http.StatusCreated {
			t.Fatalf("%s enters: %d %v", u.name, status, e)
		}
	}
	ms.clock.skip(time.Hour + time.Second)
	for _, u := range []struct{ name, tok string }{{"alice", aliceTok}, {"bob", bobTok}} {
		if n := ms.notified(t, u.tok, "contest_freeze"); !regexp.MustCompile(`^Contest \d+ \(Cup\): the deadline has passed; your entry \d+ plays the final with ` + u.name + `/tank:v1\.$`).MatchString(n[0]["text"].(string)) {
			t.Errorf("%s's deadline: %v", u.name, n)
		}
		if n := ms.notified(t, u.tok, "contest_final"); len(n) != 1 || !regexp.MustCompile(`^Contest \d+ \(Cup\) is over: your entry \d+ placed [12] of 2 with [\d.]+ points \(\d won, \d drawn, \d lost\)\.$`).MatchString(n[0]["text"].(string)) {
			t.Errorf("%s's standings: %v", u.name, n)
		}
	}

	// A ladder entry that crashes: told once today.
	for _, e := range []string{`{"name":"crashy","image":"bots/crashy"}`, `{"name":"random","image":"arena/tanks-random"}`} {
		if status, body := ms.do(t, "POST", "/api/ladders/tanks/entries", e, "Authorization", "Bearer "+adminTok); status != http.StatusCreated {
			t.Fatalf("register %s: %d %v", e, status, body)
		}
	}
	ms.notified(t, adminTok, "entry_fault")
	poll.Until(t, 60*time.Second, func() error {
		_, e := ms.do(t, "GET", "/api/ladders/tanks", "", "Authorization", "Bearer "+adminTok)
		for _, row := range e["entries"].([]any) {
			if row := row.(map[string]any); row["name"] == "crashy" && row["matches"].(float64) >= 3 {
				return nil
			}
		}
		return fmt.Errorf("crashy has not played 3 matches: %v", e)
	})
	if n := ms.notified(t, adminTok, "entry_fault"); len(n) != 1 || !strings.Contains(n[0]["text"].(string), "Your tanks ladder entry crashy (version 1, bots/crashy) faulted today: crashed in match") {
		t.Errorf("the crashing entry's owner was told: %v", n)
	}
}

// deliveries are a user's webhook calls as the store has them, newest
// first.
func (ms *matrixServer) deliveries(t *testing.T, user string) []store.Delivery {
	t.Helper()
	d, err := ms.store.Deliveries(t.Context(), user, 1000)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// setWebhook sets user's webhook to url.
func (ms *matrixServer) setWebhook(t *testing.T, tok, url string) {
	t.Helper()
	if status, body := ms.do(t, "PUT", "/api/me/webhook", fmt.Sprintf(`{"url":%q}`, url), "Authorization", "Bearer "+tok); status != http.StatusOK {
		t.Fatalf("set the webhook %s: %d %v", url, status, body)
	}
}

// One person's webhook that never answers, with 300 calls for it, delays
// and drops nobody else's: each person's calls wait in a line of their
// own. The server once called 4 webhooks at a time for everyone and
// dropped calls past 256 waiting: another user's call came 128 s late,
// or never. The flooded person's own line holds 64; past it their calls
// are not sent (their record says why), but a result's is never dropped.
func TestOneWebhookDelaysOnlyItsOwner(t *testing.T) {
	ms := newMatrixServer(t, Config{}, func(c *platform.Config, _ *platform.Deps) {
		c.Notify.Webhooks.Allow = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
		c.Notify.Backoff = 10 * time.Millisecond
	})
	ms.user(t, "mallory")
	_, malloryTok := ms.token(t, "mallory")
	_, aliceTok := ms.token(t, "alice")
	never := make(chan struct{})
	var held atomic.Int64
	dead := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		held.Add(1)
		select {
		case <-never:
		case <-r.Context().Done():
		}
	}))
	defer dead.Close()
	defer close(never)
	var got atomic.Int64
	ok := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got.Add(1) }))
	defer ok.Close()
	ms.setWebhook(t, malloryTok, dead.URL)
	ms.setWebhook(t, aliceTok, ok.URL)

	ctx := t.Context()
	for i := range 300 {
		ms.pf.Notify(ctx, "mallory", platform.NotifyEntryFault, fmt.Sprintf("flood %d", i), "", nil)
	}
	ms.pf.Notify(ctx, "mallory", platform.NotifyCheck, "mallory/bot:v1 is ready", "#/mybots", nil)
	ms.pf.Notify(ctx, "alice", platform.NotifyEntryFault, "alice's entry faulted", "", nil)

	// Before mallory's first call gives up (webhook.Timeout, 10 s).
	poll.Until(t, webhook.Timeout-time.Second, func() error {
		if d := ms.deliveries(t, "alice"); len(d) != 1 || d[0].State != store.DeliveryDelivered {
			return fmt.Errorf("alice's calls: %+v (mallory's webhook holds %d calls)", d, held.Load())
		}
		return nil
	})
	if got.Load() != 1 {
		t.Errorf("alice's webhook got %d calls, want 1", got.Load())
	}
	if n := held.Load(); n != 1 {
		t.Errorf("mallory's webhook is called %d times at once, want 1: one line, one call at a time", n)
	}
	var waiting, dropped, result int
	for _, d := range ms.deliveries(t, "mallory") {
		switch {
		case d.State == store.DeliveryFailed && strings.Contains(d.Error, "64 calls to your webhook were waiting already"):
			dropped++
		case d.State == store.DeliveryPending:
			waiting++
		default:
			t.Errorf("one of mallory's calls: %+v", d)
		}
	}
	for _, d := range ms.deliveries(t, "mallory")[:1] {
		if d.State == store.DeliveryPending {
			result++ // the newest: the check's, past the full line
		}
	}
	if waiting != 1+64+1 || dropped != 300-1-64 || result != 1 {
		t.Errorf("mallory's calls: %d waiting (the one under way, 64 in line, the check's), %d not sent, the check's waiting: %d; want 66, 235, 1", waiting, dropped, result)
	}
	_, list := ms.do(t, "GET", "/api/notifications", "", "Authorization", "Bearer "+malloryTok)
	if list["unread"] != 301.0 {
		t.Errorf("mallory's bell holds %v unread, want every one of the 301", list["unread"])
	}
}

// A webhook whose calls keep failing is paused, and its owner told on
// the bell (not at the webhook): later calls are not sent but a
// result's, which waits; setting the webhook again resumes at once.
func TestAFailingWebhookIsPaused(t *testing.T) {
	ms := newMatrixServer(t, Config{}, func(c *platform.Config, _ *platform.Deps) {
		c.Notify.Webhooks.Allow = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
		c.Notify.Backoff, c.Notify.Tries, c.Notify.PauseAfter = time.Millisecond, 2, 2
	})
	_, bobTok := ms.token(t, "bob")
	var mu sync.Mutex
	var kinds []string
	failing := true
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		kinds = append(kinds, r.Header.Get("X-Arena-Event"))
		if failing {
			http.Error(w, "down", http.StatusBadGateway)
		}
	}))
	defer receiver.Close()
	calls := func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(kinds)
	}
	ms.setWebhook(t, bobTok, receiver.URL)
	ctx := t.Context()
	ms.pf.Notify(ctx, "bob", platform.NotifyEntryFault, "first", "", nil)
	ms.pf.Notify(ctx, "bob", platform.NotifyEntryFault, "second", "", nil)
	n := ms.notified(t, bobTok, "webhook_paused")
	if !regexp.MustCompile(`^Your webhook failed 2 calls in a row \(the last: .*502.*\)\. Calls to it are paused until .* UTC`).MatchString(n[0]["text"].(string)) || n[0]["link"] != "#/account" {
		t.Errorf("bob is told: %v", n[0])
	}
	if got := calls(); len(got) != 4 {
		t.Errorf("the webhook got %v, want 4 calls (2 tries of 2 notifications), none of them the pause's", got)
	}

	ms.pf.Notify(ctx, "bob", platform.NotifyEntryFault, "third", "", nil)
	ms.pf.Notify(ctx, "bob", platform.NotifyCheck, "bob/bot:v2 is ready", "#/mybots", nil)
	d := ms.deliveries(t, "bob")
	if d[0].State != store.DeliveryPending || d[1].State != store.DeliveryFailed || !strings.Contains(d[1].Error, "not sent: your webhook is paused until") {
		t.Errorf("while paused: the check's call %+v, the fault's %+v", d[0], d[1])
	}
	// Sleeps on purpose: proves the pause holds, nothing is called meanwhile.
	time.Sleep(100 * time.Millisecond)
	if got := calls(); len(got) != 4 {
		t.Errorf("paused, the webhook got %v", got)
	}

	mu.Lock()
	failing = false
	mu.Unlock()
	ms.setWebhook(t, bobTok, receiver.URL)
	poll.Until(t, 10*time.Second, func() error {
		if d := ms.deliveries(t, "bob"); d[0].State != store.DeliveryDelivered {
			return fmt.Errorf("the check's call: %+v", d[0])
		}
		return nil
	})
	if got := calls(); len(got) != 5 || got[4] != "check" {
		t.Errorf("after setting it again, the webhook got %v", got)
	}
}

// Invitations and removals are bounded per person who makes them
// (ARENA_TEAM_CHANGES_PER_HOUR, 30): inviting and removing someone in a
// loop once made 270 notifications in 14 s. Leaving is never bounded.
// What others cause reaches a person's webhook at most
// FromOthersPerHour times an hour; the rest stays on the bell.
func TestTeamChangesAndWhatOthersCauseAreBounded(t *testing.T) {
	ms := newMatrixServer(t, Config{}, func(c *platform.Config, _ *platform.Deps) {
		c.Notify.Webhooks.Allow = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
		c.Notify.FromOthersPerHour = 5
	})
	_, bobTok := ms.token(t, "bob")
	_, daveTok := ms.token(t, "dave")
	_, aliceTok := ms.token(t, "alice")
	dave := []string{"Authorization", "Bearer " + daveTok}
	if status, body := ms.do(t, "POST", "/api/teams", `{"name":"spam"}`, dave...); status != http.StatusCreated {
		t.Fatalf("dave makes a team: %d %v", status, body)
	}
	var got atomic.Int64
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got.Add(1) }))
	defer receiver.Close()
	ms.setWebhook(t, bobTok, receiver.URL)

	for i := range 15 {
		if status, body := ms.do(t, "POST", "/api/teams/spam/members", `{"user":"bob"}`, dave...); status != http.StatusCreated {
			t.Fatalf("invitation %d: %d %v", i+1, status, body)
		}
		if status, body := ms.do(t, "DELETE", "/api/teams/spam/members/bob", "", dave...); status != http.StatusNoContent {
			t.Fatalf("removal %d: %d %v", i+1, status, body)
		}
	}
	res := ms.send(t, "POST", "/api/teams/spam/members", `{"user":"bob"}`, dave...)
	msg, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusTooManyRequests || !strings.Contains(string(msg), "ARENA_TEAM_CHANGES_PER_HOUR") || res.Header.Get("Retry-After") == "" {
		t.Errorf("the 31st change: %d %s (Retry-After %q)", res.StatusCode, msg, res.Header.Get("Retry-After"))
	}
	// Bob, invited by alice into red, may decline (his own removal) at once.
	if status, body := ms.do(t, "POST", "/api/teams/red/members", `{"user":"bob"}`, "Authorization", "Bearer "+aliceTok); status != http.StatusCreated {
		t.Fatalf("alice invites bob: %d %v", status, body)
	}
	if status, body := ms.do(t, "DELETE", "/api/teams/red/members/bob", "", "Authorization", "Bearer "+bobTok); status != http.StatusNoContent {
		t.Errorf("bob declines: %d %v", status, body)
	}
	ms.clock.skip(time.Hour)
	if status, body := ms.do(t, "POST", "/api/teams/spam/members", `{"user":"bob"}`, dave...); status != http.StatusCreated {
		t.Errorf("an hour later: %d %v", status, body)
	}

	// 17 invitations: the first hour's first 5 posted, its other 11 on
	// the bell only; the next hour's posted.
	poll.Until(t, 10*time.Second, func() error {
		if got.Load() != 6 {
			return fmt.Errorf("bob's webhook got %d calls, want 6", got.Load())
		}
		return nil
	})
	limited := 0
	for _, d := range ms.deliveries(t, "bob") {
		if d.State == store.DeliveryFailed && strings.Contains(d.Error, "more than 5 notifications came from others' actions in the last hour") {
			limited++
		}
	}
	if limited != 11 {
		t.Errorf("%d calls not sent for the limit, want 11", limited)
	}
	if n := ms.notified(t, bobTok, "team_invite"); len(n) != 17 {
		t.Errorf("bob's bell holds %d invitations, want 17", len(n))
	}
}
