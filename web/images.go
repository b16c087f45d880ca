package web

import (
	"net/http"

	"github.com/labstack/echo/v4"
)

// listImages serves GET /api/images?game=G: the images that fit the
// game that the visitor may play (platform.Matches.Images).
func (s *Server) listImages(c echo.Context) error {
	out, err := s.svc.Matches.Images(c.Request().Context(), who(c), c.QueryParam("game"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"images": out})
}
