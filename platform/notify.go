package platform

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"arena/accounts"
	"arena/internal/errs"
	"arena/internal/keyrate"
	"arena/store"
	"arena/webhook"
)

// Notifications: what happened to a person's things (a version checked,
// a challenge over, a contest's deadline and standings, an invitation to
// a team, an entry's first fault of the day), kept NotifyConfig.Keep,
// read on the page's bell, and posted to their webhook if they set one:
// a JSON body carrying "text" (Slack) and "content" (Discord) and the
// event's fields, signed with HMAC-SHA256 of the body under the secret
// shown once when the webhook was set (X-Arena-Signature: sha256=HEX),
// tried again with back-off, where package webhook lets it go.

// Kinds of notification.
const (
	NotifyCheck         = "check"
	NotifyChallenge     = "challenge"
	NotifyContestFreeze = "contest_freeze"
	NotifyContestFinal  = "contest_final"
	NotifyTeamInvite    = "team_invite"
	NotifyEntryFault    = "entry_fault"
	// NotifyWebhookPaused is told on the bell only: the person's webhook
	// failed so many calls in a row that calls to it wait (webhooks.go).
	NotifyWebhookPaused = "webhook_paused"
)

// results are the kinds whose webhook calls are never dropped: they
// wait through a pause, past a full line and past the limit of what
// others cause.
var results = map[string]bool{NotifyCheck: true, NotifyContestFinal: true, NotifyChallenge: true}

// NotifyConfig is the notifications' policy.
type NotifyConfig struct {
	// Keep is how long notifications and webhook calls are kept (30
	// days when 0).
	Keep time.Duration
	// Webhooks is where people's webhooks may go (package webhook).
	Webhooks webhook.Policy
	// Backoff is the wait before a failed call is tried again (1 s when
	// 0), doubled at each try, Tries the tries in all (5 when 0).
	Backoff time.Duration
	Tries   int
	// PauseAfter calls in a row that failed every try pause a webhook
	// for PauseFor (3 and an hour when 0).
	PauseAfter int
	PauseFor   time.Duration
	// FromOthersPerHour bounds the notifications a person gets an hour
	// because of others' actions (an invitation) that go to their
	// webhook; past it they stay on the bell only (0: no bound).
	FromOthersPerHour int
}

func (c NotifyConfig) keep() time.Duration {
	if c.Keep <= 0 {
		return 30 * 24 * time.Hour
	}
	return c.Keep
}

// notifyHeldMax bounds the notifications a list shows.
const notifyHeldMax = 200

// notifier is what the notifications keep between calls.
type notifier struct {
	// lines are the webhook calls waiting, a line per person (webhooks.go).
	lines lines
	// fromOthers bounds, per person, the webhook calls caused by others.
	fromOthers *keyrate.Limits
	// once serializes the notifications told once (a challenge over, an
	// entry's first fault of the day): two matches may end together.
	once sync.Mutex
}

func (s *Platform) initNotify() {
	s.notify.lines.init(s.cfg.Notify)
	s.notify.fromOthers = keyrate.PerHour(s.cfg.Notify.FromOthersPerHour)
}

// A Note is what a person is told: its kind, its text, the page's
// address of what it is about, the event's fields; By is who caused it,
// when another person did (their invitation), for the limit of what
// others cause.
type Note struct {
	User, Kind, Text, Link string
	Fields                 map[string]any
	By                     string
}

// Notify tells user what happened: a notification, and a call to their
// webhook if they set one. Nothing is said to nobody ("") or to a team
// (its members are told by the caller).
func (s *Platform) Notify(ctx context.Context, user, kind, text, link string, fields map[string]any) {
	s.tell(ctx, Note{User: user, Kind: kind, Text: text, Link: link, Fields: fields})
}

// tell records n on its person's bell and puts its webhook call in their
// line: unless it is past the limit of what others cause (then it stays
// on the bell, and the call's record says why).
func (s *Platform) tell(ctx context.Context, n Note) {
	if n.User == "" {
		return
	}
	rec, err := s.deps.Store.AddNotification(ctx, store.Notification{User: n.User, Kind: n.Kind, Text: n.Text, Link: n.Link, Fields: n.Fields, At: s.now()})
	if err != nil {
		s.log.Error("notify", zap.String("user", n.User), zap.String("kind", n.Kind), zap.Error(err))
		return
	}
	if n.Kind == NotifyWebhookPaused {
		return // about the webhook: the bell only
	}
	hook, ok, err := s.deps.Store.WebhookOf(ctx, n.User)
	if err != nil || !ok {
		return
	}
	body := map[string]any{}
	for k, v := range n.Fields {
		body[k] = v
	}
	body["id"], body["kind"], body["text"], body["content"], body["at"] = rec.ID, n.Kind, n.Text, n.Text, rec.At.UTC().Format(time.RFC3339)
	if n.Link != "" {
		body["link"] = n.Link
	}
	data, err := json.Marshal(body)
	if err != nil {
		return
	}
	d := store.Delivery{User: n.User, Notification: rec.ID, URL: hook.URL, State: store.DeliveryPending, At: s.now()}
	if n.By != "" && n.By != n.User && !results[n.Kind] {
		if wait := s.notify.fromOthers.Take(n.User, s.now()); wait > 0 {
			d.State, d.Error = store.DeliveryFailed, fmt.Sprintf("not sent: more than %d notifications came from others' actions in the last hour (ARENA_NOTIFY_FROM_OTHERS_PER_HOUR); this one is on the bell", s.cfg.Notify.FromOthersPerHour)
		}
	}
	if d.ID, err = s.deps.Store.RecordDelivery(ctx, d); err != nil {
		s.log.Error("record a webhook call", zap.Error(err))
		return
	}
	if d.State == store.DeliveryPending {
		s.enqueueCall(ctx, webhookCall{d: d, body: data, kind: n.Kind})
	}
}

// notifyAll tells each of users.
func (s *Platform) notifyAll(ctx context.Context, users []string, kind, text, link string, fields map[string]any) {
	seen := map[string]bool{}
	for _, u := range users {
		if !seen[u] {
			seen[u] = true
			s.Notify(ctx, u, kind, text, link, fields)
		}
	}
}

// peopleOf are the people an owner (a user or a team) stands for.
func (s *Platform) peopleOf(ctx context.Context, owner string) []string {
	if s.deps.Accounts == nil || owner == "" {
		return nil
	}
	t, err := s.deps.Store.Team(ctx, owner)
	if err != nil {
		return []string{owner} // a user (or no team any more)
	}
	var people []string
	for _, m := range t.Members {
		if m.State == store.MemberIn {
			people = append(people, m.User)
		}
	}
	return people
}

// Notifications are a person's newest notifications and how many are
// unread.
func (n *Notifications) List(ctx context.Context, p accounts.Principal) ([]store.Notification, int, error) {
	s := n.p
	if !p.SignedIn() {
		return nil, 0, errs.New(errs.ErrUnauthenticated, "sign in to read your notifications")
	}
	return s.deps.Store.Notifications(ctx, p.Name, notifyHeldMax)
}

// MarkRead marks a person's notifications read (all when ids is empty).
func (n *Notifications) MarkRead(ctx context.Context, p accounts.Principal, ids []int64) (int, error) {
	s := n.p
	if !p.SignedIn() {
		return 0, errs.New(errs.ErrUnauthenticated, "sign in to read your notifications")
	}
	return s.deps.Store.MarkRead(ctx, p.Name, ids, s.now())
}

// WebhookView is a person's webhook and its latest calls (URL empty:
// none set).
type WebhookView struct {
	URL        string           `json:"url"`
	At         *time.Time       `json:"created_at,omitempty"`
	Deliveries []store.Delivery `json:"deliveries"`
}

// Webhook is a person's webhook, with its latest calls.
func (n *Notifications) Webhook(ctx context.Context, p accounts.Principal) (WebhookView, error) {
	s := n.p
	if !p.SignedIn() {
		return WebhookView{}, errs.New(errs.ErrUnauthenticated, "sign in to set a webhook")
	}
	v := WebhookView{}
	w, ok, err := s.deps.Store.WebhookOf(ctx, p.Name)
	if err != nil {
		return v, err
	}
	if ok {
		v.URL, v.At = w.URL, &w.At
	}
	v.Deliveries, err = s.deps.Store.Deliveries(ctx, p.Name, 20)
	return v, err
}

// SetWebhook sets a person's webhook to rawURL and returns the secret
// its calls are signed with (shown this once).
func (n *Notifications) SetWebhook(ctx context.Context, p accounts.Principal, rawURL string) (string, error) {
	s := n.p
	if !p.SignedIn() {
		return "", errs.New(errs.ErrUnauthenticated, "sign in to set a webhook")
	}
	u, err := s.cfg.Notify.Webhooks.CheckURL(ctx, rawURL)
	if err != nil {
		return "", errs.Errorf(errs.ErrInvalid, "url: %v", err)
	}
	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		return "", err
	}
	sec := hex.EncodeToString(secret)
	if err := s.deps.Store.SetWebhook(ctx, store.Webhook{User: p.Name, URL: u.String(), Secret: sec, At: s.now()}); err != nil {
		return "", err
	}
	s.log.Info("webhook set", zap.String("user", p.Name), zap.String("host", u.Host))
	s.notify.lines.resume(p.Name)
	return sec, nil
}

// DeleteWebhook removes a person's webhook.
func (n *Notifications) DeleteWebhook(ctx context.Context, p accounts.Principal) error {
	s := n.p
	if !p.SignedIn() {
		return errs.New(errs.ErrUnauthenticated, "sign in to remove your webhook")
	}
	ok, err := s.deps.Store.DeleteWebhook(ctx, p.Name)
	s.notify.lines.resume(p.Name)
	if err == nil && !ok {
		err = errs.New(errs.ErrNotFound, "you have no webhook")
	}
	return err
}

// expireNotifications removes old notifications every expireEvery.
func (s *Platform) expireNotifications(ctx context.Context) {
	t := time.NewTicker(expireEvery)
	defer t.Stop()
	for {
		if _, err := s.deps.Store.ExpireNotifications(ctx, s.now().Add(-s.cfg.Notify.keep())); err != nil && !errors.Is(err, context.Canceled) {
			s.log.Error("remove old notifications", zap.Error(err))
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// notifyEntryFault tells the people of a ladder entry that faulted, the
// first time it does in a day (UTC).
func (s *Platform) notifyEntryFault(ctx context.Context, e store.Entry, status, matchID string) {
	day := s.now().UTC().Truncate(24 * time.Hour)
	s.notify.once.Lock()
	defer s.notify.once.Unlock()
	for _, person := range s.peopleOf(ctx, e.Owner) {
		if told, err := s.deps.Store.Notified(ctx, person, NotifyEntryFault, "entry", e.ID, day); err != nil || told {
			continue
		}
		text := fmt.Sprintf("Your %s ladder entry %s (version %d, %s) faulted today: %s in match %s. Later faults today are not told.",
			e.Game, e.Name, e.Version, e.Image, strings.ReplaceAll(status, "_", " "), matchID)
		s.Notify(ctx, person, NotifyEntryFault, text, fmt.Sprintf("#/ladder/%s/entry/%d", e.Game, e.ID),
			map[string]any{"entry": e.ID, "game": e.Game, "name": e.Name, "status": status, "match": matchID})
	}
}
