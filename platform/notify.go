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
)

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
}

func (c NotifyConfig) keep() time.Duration {
	if c.Keep <= 0 {
		return 30 * 24 * time.Hour
	}
	return c.Keep
}

// notifyCallMax bounds the webhook calls waiting or under way.
const notifyCallMax = 256

// notifyHeldMax bounds the notifications a list shows.
const notifyHeldMax = 200

// notifier is the webhook calls waiting (see deliverWebhooks).
type notifier struct {
	calls  chan webhookCall
	client *webhook.Client
	// once serializes the notifications told once (a challenge over, an
	// entry's first fault of the day): two matches may end together.
	once sync.Mutex
}

type webhookCall struct {
	d      store.Delivery
	secret string
	body   []byte
	kind   string
}

func (s *Platform) initNotify() {
	s.notify.calls = make(chan webhookCall, notifyCallMax)
	s.notify.client = webhook.New(s.cfg.Notify.Webhooks)
}

// Notify tells user what happened: a notification, and a call to their
// webhook if they set one. Nothing is said to nobody ("") or to a team
// (its members are told by the caller).
func (s *Platform) Notify(ctx context.Context, user, kind, text, link string, fields map[string]any) {
	if user == "" {
		return
	}
	n, err := s.deps.Store.AddNotification(ctx, store.Notification{User: user, Kind: kind, Text: text, Link: link, Fields: fields, At: s.now()})
	if err != nil {
		s.log.Error("notify", zap.String("user", user), zap.String("kind", kind), zap.Error(err))
		return
	}
	hook, ok, err := s.deps.Store.WebhookOf(ctx, user)
	if err != nil || !ok {
		return
	}
	body := map[string]any{}
	for k, v := range fields {
		body[k] = v
	}
	body["id"], body["kind"], body["text"], body["content"], body["at"] = n.ID, kind, text, text, n.At.UTC().Format(time.RFC3339)
	if link != "" {
		body["link"] = link
	}
	data, err := json.Marshal(body)
	if err != nil {
		return
	}
	d := store.Delivery{User: user, Notification: n.ID, URL: hook.URL, State: store.DeliveryPending, At: s.now()}
	if d.ID, err = s.deps.Store.RecordDelivery(ctx, d); err != nil {
		s.log.Error("record a webhook call", zap.Error(err))
		return
	}
	select {
	case s.notify.calls <- webhookCall{d: d, secret: hook.Secret, body: data, kind: kind}:
	default:
		d.State, d.Error = store.DeliveryFailed, fmt.Sprintf("not sent: %d calls were waiting already", notifyCallMax)
		s.deps.Store.RecordDelivery(ctx, d)
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

// deliverWebhooks makes the webhook calls until ctx ends, a few at once.
func (s *Platform) deliverWebhooks(ctx context.Context) {
	sem := make(chan struct{}, 4)
	for {
		select {
		case <-ctx.Done():
			return
		case c := <-s.notify.calls:
			sem <- struct{}{}
			s.loops.Go(func() {
				defer func() { <-sem }()
				s.callWebhook(ctx, c)
			})
		}
	}
}

// callWebhook makes one call, trying again with back-off.
func (s *Platform) callWebhook(ctx context.Context, c webhookCall) {
	backoff, tries := s.cfg.Notify.Backoff, s.cfg.Notify.Tries
	if backoff <= 0 {
		backoff = time.Second
	}
	if tries <= 0 {
		tries = 5
	}
	d := c.d
	for d.Attempts < tries {
		d.Attempts++
		status, err := s.notify.client.Post(ctx, d.URL, c.secret, c.body, c.kind, d.ID)
		d.Status, d.Error = status, ""
		if err == nil {
			d.State = store.DeliveryDelivered
			break
		}
		d.State, d.Error = store.DeliveryFailed, err.Error()
		var refused *webhook.Refused
		if errors.As(err, &refused) || d.Attempts >= tries {
			break // not worth trying again
		}
		d.State, d.At = store.DeliveryPending, s.now()
		s.deps.Store.RecordDelivery(context.WithoutCancel(ctx), d)
		select {
		case <-ctx.Done():
			d.State, d.Error = store.DeliveryFailed, d.Error+" (the server stopped before the next try)"
			d.Attempts = tries
		case <-time.After(backoff << (d.Attempts - 1)):
		}
	}
	d.At = s.now()
	if _, err := s.deps.Store.RecordDelivery(context.WithoutCancel(ctx), d); err != nil {
		s.log.Error("record a webhook call", zap.Error(err))
	}
	if d.State != store.DeliveryDelivered {
		s.log.Info("webhook call failed", zap.String("user", d.User), zap.Int64("delivery", d.ID), zap.String("error", d.Error))
	}
}

// Notifications are a person's newest notifications and how many are
// unread.
func (s *Platform) Notifications(ctx context.Context, p accounts.Principal) ([]store.Notification, int, error) {
	if !p.SignedIn() {
		return nil, 0, errs.New(errs.ErrUnauthenticated, "sign in to read your notifications")
	}
	return s.deps.Store.Notifications(ctx, p.Name, notifyHeldMax)
}

// MarkRead marks a person's notifications read (all when ids is empty).
func (s *Platform) MarkRead(ctx context.Context, p accounts.Principal, ids []int64) (int, error) {
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
func (s *Platform) Webhook(ctx context.Context, p accounts.Principal) (WebhookView, error) {
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
func (s *Platform) SetWebhook(ctx context.Context, p accounts.Principal, rawURL string) (string, error) {
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
	return sec, nil
}

// DeleteWebhook removes a person's webhook.
func (s *Platform) DeleteWebhook(ctx context.Context, p accounts.Principal) error {
	if !p.SignedIn() {
		return errs.New(errs.ErrUnauthenticated, "sign in to remove your webhook")
	}
	ok, err := s.deps.Store.DeleteWebhook(ctx, p.Name)
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
