package web

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"arena/accounts"
	"arena/platform"
)

// A draft's Runs and its submission (platform/runs.go):
//
//	GET  /api/drafts/ID/opponents     what a Run may play against
//	POST /api/drafts/ID/run {"base","opponent"[,"map","human"]}  → 202, the Run (its owner's last is cancelled)
//	GET  /api/drafts/ID/run           the owner's last Run of the draft, with its build's log
//	GET  /api/drafts/ID/run/stream    the Run as Server-Sent Events: "run" at each change, "log" as its build writes
//	POST /api/drafts/ID/submit {"base","repository","tag"}  → 202, a build (GET /api/builds/ID)

func (s *Server) draftOpponents(c echo.Context) error {
	id, err := draftID(c)
	if err != nil {
		return err
	}
	list, err := s.svc.Drafts.Opponents(c.Request().Context(), who(c), id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"opponents": list})
}

func (s *Server) runDraft(c echo.Context) error {
	id, err := draftID(c)
	if err != nil {
		return err
	}
	var body platform.RunRequest
	if err := decodeBody(c, &body, `a JSON Run {"base","opponent"[,"map","human"]}`); err != nil {
		return err
	}
	v, err := s.svc.Drafts.Run(c.Request().Context(), who(c), id, body)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusAccepted, v)
}

func (s *Server) getRun(c echo.Context) error {
	id, err := draftID(c)
	if err != nil {
		return err
	}
	v, _, err := s.svc.Drafts.RunOf(c.Request().Context(), who(c), id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, v)
}

// streamRun sends a draft's Run as Server-Sent Events: "run" (its view,
// without the log) at once and at each change, "log" (what its build
// wrote since the last) as it comes; it ends once the Run is over.
func (s *Server) streamRun(c echo.Context) error {
	id, err := draftID(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	v, changed, err := s.svc.Drafts.RunOf(ctx, who(c), id)
	if err != nil {
		return err
	}
	out := startSSE(c)
	tick := time.NewTicker(heartbeat)
	defer tick.Stop()
	sent, state, runID := 0, "", v.ID
	for {
		if v.ID != runID {
			return nil // a newer Run took its place: follow that one
		}
		if len(v.Log) > sent {
			out.value("log", -1, v.Log[sent:])
			sent = len(v.Log)
		}
		if v.State+v.Match != state {
			state = v.State + v.Match
			view := v
			view.Log = ""
			out.value("run", -1, view)
		}
		if out.flush() != nil || v.Finished != nil {
			return nil
		}
		select {
		case <-changed:
		case <-tick.C:
			out.buf.WriteString(": keep-alive\n\n")
		case <-ctx.Done():
			return nil
		case <-s.closing:
			return nil
		}
		if v, changed, err = s.svc.Drafts.RunOf(ctx, who(c), id); err != nil {
			return nil
		}
	}
}

func (s *Server) submitDraft(c echo.Context) error {
	id, err := draftID(c)
	if err != nil {
		return err
	}
	var body platform.SubmitRequest
	if err := decodeBody(c, &body, `a JSON submission {"base","repository","tag"}`); err != nil {
		return err
	}
	p := who(c)
	var epoch int64
	if p.Via == accounts.ViaSession {
		epoch = s.sessions.GetInt64(c.Request().Context(), sessionEpoch)
	}
	b, err := s.svc.Drafts.Submit(c.Request().Context(), p, id, epoch, body)
	if err != nil {
		return err
	}
	c.Response().Header().Set("Location", "/api/builds/"+b.ID)
	return c.JSON(http.StatusAccepted, b)
}
