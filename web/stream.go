package web

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"
	"go.uber.org/zap"

	"arena/orchestrator"
)

// heartbeat keeps idle streams (a long queue) from being cut by proxies.
const heartbeat = 15 * time.Second

// stream sends a match as Server-Sent Events: "match" (the match as GET
// /api/matches/{id} shows it) first and at every status change, "frame"
// for every frame so far and then each new one (the event id is the
// frame's index, so a reconnecting browser resumes where it left off),
// and "end" once the match is over and every frame was sent.
func (s *Server) stream(c echo.Context) error {
	m, err := s.match(c)
	if err != nil {
		return err
	}
	next := 0
	if v := c.Request().Header.Get("Last-Event-ID"); v != "" {
		if n, err := strconv.Atoi(v); err == nil && n >= 0 {
			next = n + 1
		}
	}
	w := c.Response()
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	send := func(event string, id int, data any) error {
		b, err := json.Marshal(data)
		if err != nil {
			return err
		}
		if id >= 0 {
			fmt.Fprintf(w, "id: %d\n", id)
		}
		if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, b); err != nil {
			return err
		}
		w.Flush()
		return nil
	}
	ctx := c.Request().Context()
	tick := time.NewTicker(heartbeat)
	defer tick.Stop()
	lastView := ""
	for {
		l, live := s.queue.Follow(m.ID, next)
		if !live {
			// Over (or never live here): the rest comes from the store.
			return s.finishStream(c, m.ID, next, send)
		}
		if v := liveView(m, l); v.Status+strconv.Itoa(v.Position) != lastView {
			lastView = v.Status + strconv.Itoa(v.Position)
			if send("match", -1, v) != nil {
				return nil
			}
		}
		for _, f := range l.Frames {
			if send("frame", next, f) != nil {
				return nil
			}
			next++
		}
		select {
		case <-l.Changed:
		case <-tick.C:
			if _, err := fmt.Fprint(w, ": keep-alive\n\n"); err != nil {
				return nil
			}
			w.Flush()
		case <-ctx.Done():
			return nil
		case <-s.closing:
			return nil
		}
	}
}

// finishStream sends what is left of a match that is over: the frames
// from its replay, the final match view, and "end".
func (s *Server) finishStream(c echo.Context, id string, next int, send func(string, int, any) error) error {
	m, err := s.deps.Store.Get(c.Request().Context(), id)
	if err != nil {
		s.log.Warn("read a match for its stream", zap.String("match", id), zap.Error(err))
		return nil
	}
	if m.HasReplay {
		if rep, err := orchestrator.ReadReplay(s.deps.Store.ReplayPath(id)); err == nil {
			for i := next; i < len(rep.Frames); i++ {
				if send("frame", i, rep.Frames[i]) != nil {
					return nil
				}
			}
		} else if !os.IsNotExist(err) {
			s.log.Warn("read the replay for a stream", zap.String("match", id), zap.Error(err))
		}
	}
	if send("match", -1, s.view(m)) != nil {
		return nil
	}
	send("end", -1, map[string]string{"status": m.Status})
	return nil
}
