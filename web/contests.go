package web

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"arena/contest"
	"arena/platform"
)

// The contests' API:
//
//	GET    /api/contests                         every contest
//	POST   /api/contests                         (staff) a contest.Spec → 201 with its page
//	GET    /api/contests/{id}                    its page: settings, limits, phase, deadline, entries
//	PATCH  /api/contests/{id}                    (staff) the settings to change, before the freeze: {"freeze_at"} moves the deadline, {"rules"}, {"maps"}, …; {"new_invite": true}
//	POST   /api/contests/{id}/rerun              (staff) {"entries": [A, B]}: their games are played again
//	POST   /api/contests/{id}/clone              (staff) {"name", "freeze_at"}: a new contest with its settings
//	POST   /api/contests/{id}/entries            {"bot": "NAME/bot[:tag]"[, "invite"]} (the entry is NAME's, a user or team) or (staff) {"image"[, "team"]} → 201; 409 when a person it counts for (the user, or each member of the team) has the contest's entries_per_person entered already
//	PATCH  /api/contests/{id}/entries/{eid}      (owner) {"version": "TAG"}, {"withdraw": true}; (staff) {"disqualify": "why"}
//	GET    /api/contests/{id}/standings          the standings (final once the contest is done)
//	GET    /api/contests/{id}/export?format=csv  the standings as CSV (or format=json)
//
// Staff are the admins. Reading needs what reading matches needs
// (ARENA_PUBLIC); entering, a signed-in user.

func contestID(c echo.Context) (int64, error) {
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil || id < 1 {
		return 0, notFound("no contest %q", c.Param("id"))
	}
	return id, nil
}

func (s *Server) listContests(c echo.Context) error {
	list, err := s.svc.Contests.List(c.Request().Context())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, list)
}

func (s *Server) createContest(c echo.Context) error {
	var spec contest.Spec
	if err := decodeBody(c, &spec, `a JSON contest {"name","game","maps","rounds","freeze_at",…}`); err != nil {
		return err
	}
	page, err := s.svc.Contests.Create(c.Request().Context(), who(c), spec)
	return contestCreated(c, page, err)
}

// contestCreated answers a contest's creation (or clone): 201 with its
// page.
func contestCreated(c echo.Context, page contest.View, err error) error {
	if err != nil {
		return err
	}
	c.Response().Header().Set("Location", fmt.Sprintf("/api/contests/%d", page.ID))
	return c.JSON(http.StatusCreated, page)
}

func (s *Server) getContest(c echo.Context) error {
	id, err := contestID(c)
	if err != nil {
		return err
	}
	page, err := s.svc.Contests.Page(c.Request().Context(), who(c), id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, page)
}

func (s *Server) patchContest(c echo.Context) error {
	id, err := contestID(c)
	if err != nil {
		return err
	}
	var patch json.RawMessage
	if err := decodeBody(c, &patch, `a JSON object of the settings to change, e.g. {"freeze_at": "2027-01-31T18:00:00Z"}`); err != nil {
		return err
	}
	if err := s.svc.Contests.Update(c.Request().Context(), who(c), id, patch); err != nil {
		return err
	}
	return s.getContest(c)
}

func (s *Server) rerunContest(c echo.Context) error {
	id, err := contestID(c)
	if err != nil {
		return err
	}
	var body struct {
		Entries []int64 `json:"entries"`
	}
	if err := decodeBody(c, &body, `a JSON rerun {"entries": [A, B]}`); err != nil {
		return err
	}
	n, err := s.svc.Contests.Rerun(c.Request().Context(), who(c), id, body.Entries)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusAccepted, map[string]any{"games": n})
}

func (s *Server) cloneContest(c echo.Context) error {
	id, err := contestID(c)
	if err != nil {
		return err
	}
	var body struct {
		Name     string    `json:"name"`
		FreezeAt time.Time `json:"freeze_at"`
	}
	if err := decodeBody(c, &body, `a JSON clone {"name", "freeze_at"}`); err != nil {
		return err
	}
	page, err := s.svc.Contests.Clone(c.Request().Context(), who(c), id, body.Name, body.FreezeAt)
	return contestCreated(c, page, err)
}

func (s *Server) enterContest(c echo.Context) error {
	id, err := contestID(c)
	if err != nil {
		return err
	}
	var body platform.ContestEntryRequest
	if err := decodeBody(c, &body, `a JSON entry {"bot": "NAME/bot[:tag]"}`); err != nil {
		return err
	}
	rec, err := s.svc.Contests.Enter(c.Request().Context(), who(c), id, body)
	if err != nil {
		return err
	}
	c.Response().Header().Set("Location", fmt.Sprintf("/api/contests/%d/entries/%d", id, rec.ID))
	return c.JSON(http.StatusCreated, map[string]any{"id": rec.ID, "contest": id, "owner": rec.Owner, "bot": rec.Image, "version": rec.Version, "state": rec.State})
}

func (s *Server) patchContestEntry(c echo.Context) error {
	id, err := contestID(c)
	if err != nil {
		return err
	}
	eid, err := strconv.ParseInt(c.Param("eid"), 10, 64)
	if err != nil || eid < 1 {
		return notFound("no entry %q", c.Param("eid"))
	}
	var body platform.ContestEntryChange
	if err := decodeBody(c, &body, `a JSON change of an entry {"version": "TAG"}, {"withdraw": true} or {"disqualify": "why"}`); err != nil {
		return err
	}
	e, err := s.svc.Contests.ChangeEntry(c.Request().Context(), who(c), id, eid, body)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"id": e.ID, "contest": id, "owner": e.Owner, "bot": e.Image, "version": e.Version, "state": e.State, "reason": e.Reason})
}

func (s *Server) contestStandings(c echo.Context) error {
	id, err := contestID(c)
	if err != nil {
		return err
	}
	b, err := s.svc.Contests.Standings(c.Request().Context(), id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, b)
}

func (s *Server) exportContest(c echo.Context) error {
	id, err := contestID(c)
	if err != nil {
		return err
	}
	b, err := s.svc.Contests.Standings(c.Request().Context(), id)
	if err != nil {
		return err
	}
	switch c.QueryParam("format") {
	case "", "csv":
		c.Response().Header().Set("Content-Type", "text/csv; charset=utf-8")
		c.Response().Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="contest-%d-standings.csv"`, id))
		c.Response().WriteHeader(http.StatusOK)
		return b.WriteCSV(c.Response())
	case "json":
		c.Response().Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="contest-%d-standings.json"`, id))
		data, err := json.MarshalIndent(b, "", "  ")
		if err != nil {
			return err
		}
		return c.Blob(http.StatusOK, "application/json", data)
	default:
		return badRequest("format: %q: csv or json", c.QueryParam("format"))
	}
}

// contestClass is GET /api/contests/{id}/class (staff): one row per user
// or team who may enter, entered or not, with the newest version that
// counts for them and its check (contest.Class); filter=not-entered or
// no-ready keeps those, format=csv gives a CSV.
func (s *Server) contestClass(c echo.Context) error {
	id, err := contestID(c)
	if err != nil {
		return err
	}
	rows, err := s.svc.Contests.Class(c.Request().Context(), who(c), id, c.QueryParam("filter"))
	if err != nil {
		return err
	}
	switch c.QueryParam("format") {
	case "", "json":
		return c.JSON(http.StatusOK, map[string]any{"contest": id, "rows": rows})
	case "csv":
		c.Response().Header().Set("Content-Type", "text/csv; charset=utf-8")
		c.Response().Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="contest-%d-class.csv"`, id))
		c.Response().WriteHeader(http.StatusOK)
		return contest.WriteClassCSV(c.Response(), rows)
	default:
		return badRequest("format: %q: json or csv", c.QueryParam("format"))
	}
}

// contestGrades is GET /api/contests/{id}/grades (staff): one row per
// user who may enter, with the rank, points and interval of the entry
// that counts for them, each gate passed or not, and the final version's
// digest (contest.Grades); format=csv (the default) or json.
func (s *Server) contestGrades(c echo.Context) error {
	id, err := contestID(c)
	if err != nil {
		return err
	}
	rows, gates, err := s.svc.Contests.Grades(c.Request().Context(), who(c), id)
	if err != nil {
		return err
	}
	switch c.QueryParam("format") {
	case "", "csv":
		c.Response().Header().Set("Content-Type", "text/csv; charset=utf-8")
		c.Response().Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="contest-%d-grades.csv"`, id))
		c.Response().WriteHeader(http.StatusOK)
		return contest.WriteGradesCSV(c.Response(), rows, gates)
	case "json":
		return c.JSON(http.StatusOK, map[string]any{"contest": id, "gates": gates, "rows": rows})
	default:
		return badRequest("format: %q: csv or json", c.QueryParam("format"))
	}
}

// runGates is POST /api/contests/{id}/gates/run (an entrant): the
// contest's gates are played on the newest ready version of the
// visitor's entry (theirs or a team's), at most every ten minutes; the
// standings show the results.
func (s *Server) runGates(c echo.Context) error {
	id, err := contestID(c)
	if err != nil {
		return err
	}
	e, err := s.svc.Contests.RequestGates(c.Request().Context(), who(c), id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusAccepted, map[string]any{"contest": id, "entry": e.ID})
}
