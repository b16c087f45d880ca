package web

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"arena/internal/csvsafe"
	"arena/platform"
)

// The similarity report (admins):
//
//	GET /api/similarity?versions=REPO:TAG,REPO:TAG,…   any versions
//	GET /api/contests/{id}/similarity[?format=csv]      a contest's final versions

func (s *Server) getSimilarity(c echo.Context) error {
	var versions []string
	for _, v := range strings.Split(c.QueryParam("versions"), ",") {
		if v = strings.TrimSpace(v); v != "" {
			versions = append(versions, v)
		}
	}
	rep, err := s.svc.Registry.Similarity(c.Request().Context(), who(c), versions)
	if err != nil {
		return err
	}
	return writeSimilarity(c, rep, "similarity")
}

func (s *Server) contestSimilarity(c echo.Context) error {
	id, err := contestID(c)
	if err != nil {
		return err
	}
	rep, err := s.svc.Contests.Similarity(c.Request().Context(), who(c), id)
	if err != nil {
		return err
	}
	return writeSimilarity(c, rep, fmt.Sprintf("contest-%d-similarity", id))
}

// writeSimilarity sends a report as JSON, or its pairs as CSV.
func writeSimilarity(c echo.Context, rep platform.SimilarityReport, name string) error {
	switch c.QueryParam("format") {
	case "", "json":
		return c.JSON(http.StatusOK, rep)
	case "csv":
		h := c.Response().Header()
		h.Set("Content-Type", "text/csv; charset=utf-8")
		h.Set("Content-Disposition", fmt.Sprintf(`attachment; filename="%s.csv"`, name))
		c.Response().WriteHeader(http.StatusOK)
		w := csvsafe.NewWriter(c.Response())
		w.Header("a", "b", "score", "shared")
		for _, p := range rep.Pairs {
			w.Write(csvsafe.Text(p.A), csvsafe.Text(p.B), csvsafe.Float(p.Score, 'f', 3), csvsafe.Int(p.Shared))
		}
		w.Flush()
		return w.Error()
	default:
		return badRequest("format: %q: json or csv", c.QueryParam("format"))
	}
}
