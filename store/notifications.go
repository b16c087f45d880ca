package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Notifications (schema version 15): what happened to a user's things,
// read or not (notifications); a user's webhook, its signing secret
// (webhooks); and each call made to it (webhook_deliveries).
const notificationsSchema = `
CREATE TABLE notifications (
	id         INTEGER PRIMARY KEY AUTOINCREMENT,
	user       TEXT NOT NULL,
	kind       TEXT NOT NULL,
	text       TEXT NOT NULL,
	link       TEXT NOT NULL DEFAULT '',
	fields     TEXT NOT NULL DEFAULT '{}',
	created_at TEXT NOT NULL,
	read_at    TEXT NOT NULL DEFAULT ''
);
CREATE INDEX notifications_user ON notifications(user, id);
CREATE INDEX notifications_created ON notifications(created_at);
CREATE TABLE webhooks (
	user       TEXT PRIMARY KEY,
	url        TEXT NOT NULL,
	secret     TEXT NOT NULL,
	created_at TEXT NOT NULL
);
CREATE TABLE webhook_deliveries (
	id           INTEGER PRIMARY KEY AUTOINCREMENT,
	user         TEXT NOT NULL,
	notification INTEGER NOT NULL,
	url          TEXT NOT NULL,
	state        TEXT NOT NULL,
	attempts     INTEGER NOT NULL DEFAULT 0,
	status       INTEGER NOT NULL DEFAULT 0,
	error        TEXT NOT NULL DEFAULT '',
	at           TEXT NOT NULL
);
CREATE INDEX webhook_deliveries_user ON webhook_deliveries(user, id);
`

// A Notification is one thing that happened to a user's things.
type Notification struct {
	ID   int64  `json:"id"`
	User string `json:"-"`
	// Kind names the event: check, challenge, contest_freeze,
	// contest_final, team_invite, entry_fault.
	Kind string `json:"kind"`
	Text string `json:"text"`
	// Link is the page's address of what it is about ("#/…"), if any.
	Link   string         `json:"link,omitempty"`
	Fields map[string]any `json:"fields,omitempty"`
	At     time.Time      `json:"at"`
	Read   bool           `json:"read"`
}

// AddNotification records n; it returns it with its id.
func (s *Store) AddNotification(ctx context.Context, n Notification) (Notification, error) {
	fields, err := json.Marshal(n.Fields)
	if err != nil {
		return n, err
	}
	res, err := s.db.ExecContext(ctx, `INSERT INTO notifications (user, kind, text, link, fields, created_at) VALUES (?, ?, ?, ?, ?, ?)`,
		n.User, n.Kind, n.Text, n.Link, string(fields), stamp(n.At))
	if err != nil {
		return n, fmt.Errorf("record a notification: %w", err)
	}
	n.ID, err = res.LastInsertId()
	return n, err
}

// Notifications are a user's newest notifications (limit of them), and
// how many of all theirs are unread.
func (s *Store) Notifications(ctx context.Context, user string, limit int) ([]Notification, int, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id, kind, text, link, fields, created_at, read_at FROM notifications WHERE user = ? ORDER BY id DESC LIMIT ?`, user, limit)
	if err != nil {
		return nil, 0, fmt.Errorf("read notifications: %w", err)
	}
	defer rows.Close()
	out := []Notification{}
	for rows.Next() {
		n := Notification{User: user}
		var fields, at, read string
		if err := rows.Scan(&n.ID, &n.Kind, &n.Text, &n.Link, &fields, &at, &read); err != nil {
			return nil, 0, err
		}
		_ = json.Unmarshal([]byte(fields), &n.Fields)
		n.At, n.Read = parseStamp(at), read != ""
		out = append(out, n)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, err
	}
	var unread int
	err = s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM notifications WHERE user = ? AND read_at = ''`, user).Scan(&unread)
	return out, unread, err
}

// MarkRead marks a user's notifications read: those of ids, or all when
// ids is empty. It returns how many it marked.
func (s *Store) MarkRead(ctx context.Context, user string, ids []int64, at time.Time) (int, error) {
	q, args := `UPDATE notifications SET read_at = ? WHERE user = ? AND read_at = ''`, []any{stamp(at), user}
	if len(ids) > 0 {
		q += ` AND id IN (` + placeholders(len(ids)) + `)`
		for _, id := range ids {
			args = append(args, id)
		}
	}
	res, err := s.db.ExecContext(ctx, q, args...)
	if err != nil {
		return 0, fmt.Errorf("mark notifications read: %w", err)
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}

// ExpireNotifications removes the notifications, and the webhook calls,
// older than before; it returns how many notifications went.
func (s *Store) ExpireNotifications(ctx context.Context, before time.Time) (int, error) {
	res, err := s.db.ExecContext(ctx, `DELETE FROM notifications WHERE created_at < ?`, stamp(before))
	if err != nil {
		return 0, fmt.Errorf("expire notifications: %w", err)
	}
	if _, err := s.db.ExecContext(ctx, `DELETE FROM webhook_deliveries WHERE at < ?`, stamp(before)); err != nil {
		return 0, fmt.Errorf("expire webhook calls: %w", err)
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}

// A Webhook is where a user's notifications are posted, and the secret
// their signatures are made with.
type Webhook struct {
	User   string    `json:"-"`
	URL    string    `json:"url"`
	Secret string    `json:"-"`
	At     time.Time `json:"created_at"`
}

// SetWebhook sets a user's webhook (replacing theirs).
func (s *Store) SetWebhook(ctx context.Context, w Webhook) error {
	_, err := s.db.ExecContext(ctx, `INSERT OR REPLACE INTO webhooks (user, url, secret, created_at) VALUES (?, ?, ?, ?)`, w.User, w.URL, w.Secret, stamp(w.At))
	if err != nil {
		return fmt.Errorf("set a webhook: %w", err)
	}
	return nil
}

// WebhookOf is a user's webhook; false: none.
func (s *Store) WebhookOf(ctx context.Context, user string) (Webhook, bool, error) {
	w := Webhook{User: user}
	var at string
	err := s.db.QueryRowContext(ctx, `SELECT url, secret, created_at FROM webhooks WHERE user = ?`, user).Scan(&w.URL, &w.Secret, &at)
	if errors.Is(err, sql.ErrNoRows) {
		return Webhook{}, false, nil
	}
	if err != nil {
		return Webhook{}, false, fmt.Errorf("read a webhook: %w", err)
	}
	w.At = parseStamp(at)
	return w, true, nil
}

// DeleteWebhook removes a user's webhook; false: they had none.
func (s *Store) DeleteWebhook(ctx context.Context, user string) (bool, error) {
	res, err := s.db.ExecContext(ctx, `DELETE FROM webhooks WHERE user = ?`, user)
	if err != nil {
		return false, fmt.Errorf("delete a webhook: %w", err)
	}
	n, _ := res.RowsAffected()
	return n > 0, nil
}

// Delivery states.
const (
	DeliveryPending   = "pending"
	DeliveryDelivered = "delivered"
	DeliveryFailed    = "failed"
)

// A Delivery is a notification's call to a webhook: its state, the
// attempts made, the last answer's status or error.
type Delivery struct {
	ID           int64     `json:"id"`
	User         string    `json:"-"`
	Notification int64     `json:"notification"`
	URL          string    `json:"url"`
	State        string    `json:"state"`
	Attempts     int       `json:"attempts"`
	Status       int       `json:"status,omitempty"`
	Error        string    `json:"error,omitempty"`
	At           time.Time `json:"at"`
}

// RecordDelivery adds d (ID 0) or updates it; it returns its id.
func (s *Store) RecordDelivery(ctx context.Context, d Delivery) (int64, error) {
	if d.ID == 0 {
		res, err := s.db.ExecContext(ctx, `INSERT INTO webhook_deliveries (user, notification, url, state, attempts, status, error, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
			d.User, d.Notification, d.URL, d.State, d.Attempts, d.Status, d.Error, stamp(d.At))
		if err != nil {
			return 0, fmt.Errorf("record a webhook call: %w", err)
		}
		return res.LastInsertId()
	}
	_, err := s.db.ExecContext(ctx, `UPDATE webhook_deliveries SET state = ?, attempts = ?, status = ?, error = ?, at = ? WHERE id = ?`,
		d.State, d.Attempts, d.Status, d.Error, stamp(d.At), d.ID)
	if err != nil {
		return 0, fmt.Errorf("record a webhook call: %w", err)
	}
	return d.ID, nil
}

// Deliveries are a user's newest webhook calls (limit of them).
func (s *Store) Deliveries(ctx context.Context, user string, limit int) ([]Delivery, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id, notification, url, state, attempts, status, error, at FROM webhook_deliveries WHERE user = ? ORDER BY id DESC LIMIT ?`, user, limit)
	if err != nil {
		return nil, fmt.Errorf("read webhook calls: %w", err)
	}
	defer rows.Close()
	out := []Delivery{}
	for rows.Next() {
		d := Delivery{User: user}
		var at string
		if err := rows.Scan(&d.ID, &d.Notification, &d.URL, &d.State, &d.Attempts, &d.Status, &d.Error, &at); err != nil {
			return nil, err
		}
		d.At = parseStamp(at)
		out = append(out, d)
	}
	return out, rows.Err()
}

// Notified says whether user was told of kind with fields[field] = value
// since a time.
func (s *Store) Notified(ctx context.Context, user, kind, field string, value any, since time.Time) (bool, error) {
	var one int
	err := s.db.QueryRowContext(ctx, `SELECT 1 FROM notifications WHERE user = ? AND kind = ? AND json_extract(fields, ?) = ? AND created_at >= ? LIMIT 1`,
		user, kind, "$."+field, value, stamp(since)).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}
