package platform

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.uber.org/zap"

	"arena/store"
	"arena/webhook"
)

// Webhook calls wait in a line per person: a receiver that is slow, or
// never answers, delays only its owner's calls. What the server bounds
// is the receivers being called at once (receiversAtOnce), each holding
// its place for one try, not for its back-off. A line holds lineMax
// calls; past it, or while the webhook is paused, a call is not sent
// (its record says why; the notification stays on the bell), except a
// result's (results), which waits. A webhook whose PauseAfter calls in
// a row failed every try is paused for PauseFor, and its owner told on
// the bell; setting (or removing) it again ends the pause.

// receiversAtOnce bounds the webhooks being called at once.
const receiversAtOnce = 64

// lineMax bounds the calls waiting for one person's webhook.
const lineMax = 64

type webhookCall struct {
	d    store.Delivery
	body []byte
	kind string
}

// lines are the people's lines of webhook calls.
type lines struct {
	client     *webhook.Client
	slots      chan struct{}
	backoff    time.Duration
	tries      int
	pauseAfter int
	pauseFor   time.Duration

	mu sync.Mutex
	// ctx is the delivery's (Start to Shutdown); nil before Start, when
	// calls wait; stopped once it ended.
	ctx     context.Context
	stopped bool
	byUser  map[string]*line
}

// line is one person's calls waiting, and their webhook's health.
type line struct {
	calls   []webhookCall
	running bool
	// failed counts the calls in a row that failed every try; paused is
	// when a pause ends; wake is closed when the webhook is set again.
	failed int
	paused time.Time
	wake   chan struct{}
}

func (l *lines) init(c NotifyConfig) {
	l.client = webhook.New(c.Webhooks)
	l.slots = make(chan struct{}, receiversAtOnce)
	l.backoff, l.tries, l.pauseAfter, l.pauseFor = c.Backoff, c.Tries, c.PauseAfter, c.PauseFor
	if l.backoff <= 0 {
		l.backoff = time.Second
	}
	if l.tries <= 0 {
		l.tries = 5
	}
	if l.pauseAfter <= 0 {
		l.pauseAfter = 3
	}
	if l.pauseFor <= 0 {
		l.pauseFor = time.Hour
	}
	l.byUser = map[string]*line{}
}

// lineLocked is user's line, made if need be; l.mu is held.
func (l *lines) lineLocked(user string) *line {
	ln := l.byUser[user]
	if ln == nil {
		ln = &line{wake: make(chan struct{})}
		l.byUser[user] = ln
	}
	return ln
}

// resume ends a pause of user's webhook (set again, or removed): its
// next call is tried at once.
func (l *lines) resume(user string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if ln := l.byUser[user]; ln != nil {
		ln.failed, ln.paused = 0, time.Time{}
		close(ln.wake)
		ln.wake = make(chan struct{})
	}
}

// enqueueCall puts c in its person's line, or records why it is not
// sent.
func (s *Platform) enqueueCall(ctx context.Context, c webhookCall) {
	l := &s.notify.lines
	l.mu.Lock()
	ln := l.lineLocked(c.d.User)
	why := ""
	switch {
	case l.stopped:
		why = "not sent: the server is stopping"
	case results[c.kind]:
	case s.now().Before(ln.paused):
		why = fmt.Sprintf("not sent: your webhook is paused until %s UTC after %d calls in a row failed; this notification is on the bell", ln.paused.UTC().Format("15:04"), ln.failed)
	case len(ln.calls) >= lineMax:
		why = fmt.Sprintf("not sent: %d calls to your webhook were waiting already; this notification is on the bell", lineMax)
	}
	if why == "" {
		ln.calls = append(ln.calls, c)
		s.runLineLocked(c.d.User, ln)
	}
	l.mu.Unlock()
	if why != "" {
		s.giveUp(ctx, c.d, why)
	}
}

// runLineLocked starts calling a line's calls, unless it is being
// called or the delivery has not started; l.mu is held.
func (s *Platform) runLineLocked(user string, ln *line) {
	l := &s.notify.lines
	if ln.running || l.ctx == nil || l.stopped || len(ln.calls) == 0 {
		return
	}
	ln.running = true
	ctx := l.ctx
	s.loops.Go(func() { s.callLine(ctx, user, ln) })
}

// deliverWebhooks calls the lines' webhooks until ctx ends (Start to
// Shutdown). Calls told later are not sent.
func (s *Platform) deliverWebhooks(ctx context.Context) {
	l := &s.notify.lines
	l.mu.Lock()
	l.ctx = ctx
	for user, ln := range l.byUser {
		s.runLineLocked(user, ln)
	}
	l.mu.Unlock()
	<-ctx.Done()
	l.mu.Lock()
	l.stopped = true
	l.mu.Unlock()
}

// callLine makes a line's calls in turn, until it is empty or ctx ends;
// then what still waits is recorded as not sent.
func (s *Platform) callLine(ctx context.Context, user string, ln *line) {
	l := &s.notify.lines
	for {
		l.mu.Lock()
		if ctx.Err() != nil || len(ln.calls) == 0 {
			left := ln.calls
			ln.calls, ln.running = nil, false
			if ln.failed == 0 {
				delete(l.byUser, user)
			}
			l.mu.Unlock()
			for _, c := range left {
				s.giveUp(context.WithoutCancel(ctx), c.d, "not sent: the server stopped before this call was made")
			}
			return
		}
		if wait := ln.paused.Sub(s.now()); wait > 0 {
			wake := ln.wake
			l.mu.Unlock()
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
			case <-wake:
			case <-t.C:
			}
			t.Stop()
			continue
		}
		c := ln.calls[0]
		ln.calls = ln.calls[1:]
		l.mu.Unlock()

		d := s.callWebhook(ctx, c)
		if ctx.Err() != nil && d.State != store.DeliveryDelivered {
			continue // the server stops: not the webhook's failure
		}
		l.mu.Lock()
		if d.State == store.DeliveryDelivered {
			ln.failed = 0
			l.mu.Unlock()
			continue
		}
		ln.failed++
		if ln.failed < l.pauseAfter {
			l.mu.Unlock()
			continue
		}
		ln.paused = s.now().Add(l.pauseFor)
		until, failed := ln.paused, ln.failed
		var dropped []webhookCall
		kept := ln.calls[:0]
		for _, c := range ln.calls {
			if results[c.kind] {
				kept = append(kept, c)
			} else {
				dropped = append(dropped, c)
			}
		}
		ln.calls = kept
		l.mu.Unlock()
		why := fmt.Sprintf("not sent: your webhook is paused until %s UTC after %d calls in a row failed; this notification is on the bell", until.UTC().Format("15:04"), failed)
		for _, c := range dropped {
			s.giveUp(context.WithoutCancel(ctx), c.d, why)
		}
		s.log.Info("webhook paused", zap.String("user", user), zap.Int("failed", failed), zap.Time("until", until))
		s.tell(context.WithoutCancel(ctx), Note{User: user, Kind: NotifyWebhookPaused,
			Text: fmt.Sprintf("Your webhook failed %d calls in a row (the last: %s). Calls to it are paused until %s UTC: results (checks, challenges, final standings) wait for it, the rest stays here on the bell. Set it again on your account page to resume now.",
				failed, d.Error, until.UTC().Format("2006-01-02 15:04")),
			Link: "#/account", Fields: map[string]any{"failed": failed, "until": until.UTC().Format(time.RFC3339), "error": d.Error}})
	}
}

// giveUp records a call that is not made, and why.
func (s *Platform) giveUp(ctx context.Context, d store.Delivery, why string) {
	d.State, d.Error, d.At = store.DeliveryFailed, why, s.now()
	if _, err := s.deps.Store.RecordDelivery(ctx, d); err != nil {
		s.log.Error("record a webhook call", zap.Error(err))
	}
}

// callWebhook makes one call, trying again with back-off, to the
// person's webhook as it is at each try (set anew: the new address and
// secret; removed: not sent). Each try holds one of the receivers'
// places; the waits between them hold none.
func (s *Platform) callWebhook(ctx context.Context, c webhookCall) store.Delivery {
	l := &s.notify.lines
	d := c.d
	for d.Attempts < l.tries {
		hook, ok, err := s.deps.Store.WebhookOf(ctx, d.User)
		if err != nil || !ok {
			d.State, d.Error = store.DeliveryFailed, "not sent: the webhook was removed"
			if err != nil {
				d.Error = "not sent: " + err.Error()
			}
			break
		}
		d.URL = hook.URL
		select {
		case l.slots <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			d.State, d.Error = store.DeliveryFailed, "not sent: the server stopped before this call was made"
			break
		}
		d.Attempts++
		status, err := l.client.Post(ctx, d.URL, hook.Secret, c.body, c.kind, d.ID)
		<-l.slots
		d.Status, d.Error = status, ""
		if err == nil {
			d.State = store.DeliveryDelivered
			break
		}
		d.State, d.Error = store.DeliveryFailed, err.Error()
		var refused *webhook.Refused
		if errors.As(err, &refused) || d.Attempts >= l.tries {
			break // not worth trying again
		}
		d.State, d.At = store.DeliveryPending, s.now()
		s.deps.Store.RecordDelivery(context.WithoutCancel(ctx), d)
		t := time.NewTimer(l.backoff << (d.Attempts - 1))
		select {
		case <-ctx.Done():
			d.State, d.Error = store.DeliveryFailed, d.Error+" (the server stopped before the next try)"
			d.Attempts = l.tries
		case <-t.C:
		}
		t.Stop()
	}
	d.At = s.now()
	if _, err := s.deps.Store.RecordDelivery(context.WithoutCancel(ctx), d); err != nil {
		s.log.Error("record a webhook call", zap.Error(err))
	}
	if d.State != store.DeliveryDelivered {
		s.log.Info("webhook call failed", zap.String("user", d.User), zap.Int64("delivery", d.ID), zap.String("error", d.Error))
	}
	return d
}
