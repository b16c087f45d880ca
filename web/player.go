package web

import (
	"mime"
	"net/http"
	"path"

	"github.com/labstack/echo/v4"
)

// playerPolicy confines a logic's player page (a game author's code):
// wherever it is opened it runs as a sandboxed document of an origin of
// its own (no cookies, no storage, no reading this server's pages), and
// it may load only its own files, make no request (no fetch, no
// WebSocket), submit no form and open nothing. It gets the frames from
// the page by postMessage.
const playerPolicy = "sandbox allow-scripts; default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; font-src 'self' data:; connect-src 'none'; form-action 'none'; base-uri 'none'; frame-ancestors 'self'"

// playerFile is GET /games/:game/player/*: a file of a logic game's
// player, from what was read out of its image when the game was offered
// (never from the disk).
func (s *Server) playerFile(c echo.Context) error {
	name := path.Clean("/" + c.Param("*"))[1:]
	data, err := s.svc.Games.PlayerFile(c.Param("game"), name)
	if err != nil {
		return err
	}
	h := c.Response().Header()
	h.Set("Content-Security-Policy", playerPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-cache")
	ctype := mime.TypeByExtension(path.Ext(name))
	if ctype == "" {
		ctype = "application/octet-stream"
	}
	return c.Blob(http.StatusOK, ctype, data)
}
