package web

import (
	"net/http"

	"github.com/labstack/echo/v4"
)

// The notifications' API (platform/notify.go): GET /api/notifications
// (the visitor's newest and how many are unread), POST
// /api/notifications/read ({"ids": [...]}, or {} for all), and the
// visitor's webhook: GET /api/me/webhook (its URL and latest calls), PUT
// /api/me/webhook {"url"} (the signing secret, shown once), DELETE
// /api/me/webhook.

func (s *Server) listNotifications(c echo.Context) error {
	list, unread, err := s.svc.Notifications.List(c.Request().Context(), who(c))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"notifications": list, "unread": unread})
}

func (s *Server) readNotifications(c echo.Context) error {
	var body struct {
		IDs []int64 `json:"ids"`
	}
	if err := decodeBody(c, &body, `a JSON {"ids": [ID, …]}, or {} to mark all read`); err != nil {
		return err
	}
	n, err := s.svc.Notifications.MarkRead(c.Request().Context(), who(c), body.IDs)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"marked": n})
}

func (s *Server) getWebhook(c echo.Context) error {
	v, err := s.svc.Notifications.Webhook(c.Request().Context(), who(c))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, v)
}

func (s *Server) putWebhook(c echo.Context) error {
	var body struct {
		URL string `json:"url"`
	}
	if err := decodeBody(c, &body, `a JSON {"url": "https://…"}`); err != nil {
		return err
	}
	secret, err := s.svc.Notifications.SetWebhook(c.Request().Context(), who(c), body.URL)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"url": body.URL, "secret": secret,
		"note": "Keep the secret: it is shown this once. Each call carries X-Arena-Signature: sha256=HMAC-SHA256(secret, body) in hex."})
}

func (s *Server) deleteWebhook(c echo.Context) error {
	if err := s.svc.Notifications.DeleteWebhook(c.Request().Context(), who(c)); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}
