package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"
	"go.uber.org/zap"
)

// heartbeat keeps idle streams (a long queue) from being cut by proxies.
const heartbeat = 15 * time.Second

// streamWrite is how long a viewer may take to accept one write; a slower
// one is dropped (it reconnects and resumes after Last-Event-ID).
const streamWrite = 10 * time.Second

// streamBatch is how often at most a viewer is written to: the frames of a
// fast match are sent in batches, so the work per viewer stays bounded
// however fast the bots answer.
const streamBatch = 50 * time.Millisecond

// stream sends a match as Server-Sent Events: "match" (the match as GET
// /api/matches/{id} shows it) first and at every status change, "frame"
// for every frame so far and then each new one (the event id is the
// frame's index, so a reconnecting browser resumes where it left off),
// and "end" once the match is over and every frame was sent.
func (s *Server) stream(c echo.Context) error {
	m, ok := s.svc.Matches.Live(c.Param("id"))
	if !ok {
		mi, err := s.svc.Matches.Get(c.Request().Context(), c.Param("id"))
		if err != nil {
			return err
		}
		m = mi.Match
	}
	next := 0
	if v := c.Request().Header.Get("Last-Event-ID"); v != "" {
		if n, err := strconv.Atoi(v); err == nil && n >= 0 {
			next = n + 1
		}
	}
	out := startSSE(c)
	ctx := c.Request().Context()
	entrants := s.svc.Matches.Entrants(ctx, m.ID)
	tick := time.NewTicker(heartbeat)
	defer tick.Stop()
	lastView := ""
	for {
		l, live := s.svc.Matches.Follow(m.ID, next)
		if !live {
			// Over (or never live here): the rest comes from the store.
			return s.finishStream(c, m.ID, next, out)
		}
		if v := liveView(m, l); v.Status+strconv.Itoa(v.Position) != lastView {
			lastView = v.Status + strconv.Itoa(v.Position)
			v.Ladder = entrants
			out.value("match", -1, v)
		}
		for _, f := range l.Frames {
			out.event("frame", next, f)
			next++
		}
		if out.flush() != nil {
			return nil // the viewer left or is too slow
		}
		if l.More {
			continue // a viewer catching up on a long match
		}
		wrote := time.Now()
		select {
		case <-l.Changed:
		case <-tick.C:
			out.buf.WriteString(": keep-alive\n\n")
			if out.flush() != nil {
				return nil
			}
		case <-ctx.Done():
			return nil
		case <-s.closing:
			return nil
		}
		// Let a fast match's frames gather into one write.
		select {
		case <-time.After(streamBatch - time.Since(wrote)):
		case <-ctx.Done():
			return nil
		case <-s.closing:
			return nil
		}
	}
}

// finishStream sends what is left of a match that is over: the final
// match view (first, so that a viewer knows the game and the bots before
// the frames), the frames from its replay, and "end".
func (s *Server) finishStream(c echo.Context, id string, next int, out *sse) error {
	ctx := c.Request().Context()
	m, err := s.svc.Matches.Get(ctx, id)
	if err != nil {
		s.log.Warn("read a match for its stream", zap.String("match", id), zap.Error(err))
		return nil
	}
	out.value("match", -1, view(m))
	// Frame by frame from the file: a long replay is never in memory
	// whole, however many watch it.
	gone := errors.New("the viewer left")
	err = s.svc.Matches.Frames(ctx, m.Match, next, func(i int, frame json.RawMessage) error {
		out.event("frame", i, frame)
		if out.buf.Len() > 256<<10 && out.flush() != nil {
			return gone
		}
		return nil
	})
	if errors.Is(err, gone) {
		return nil
	}
	if err != nil {
		s.log.Warn("read the replay for a stream", zap.String("match", id), zap.Error(err))
	}
	out.value("end", -1, map[string]string{"status": m.Status})
	out.flush()
	return nil
}

// startSSE answers a request with a stream of Server-Sent Events (never
// cached, nor buffered by a proxy in front).
func startSSE(c echo.Context) *sse {
	w := c.Response()
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	return &sse{w: w, rc: http.NewResponseController(w)}
}

// sse gathers Server-Sent Events and writes them in one go.
type sse struct {
	w   *echo.Response
	rc  *http.ResponseController
	buf bytes.Buffer
}

func (e *sse) event(name string, id int, data []byte) {
	if id >= 0 {
		fmt.Fprintf(&e.buf, "id: %d\n", id)
	}
	fmt.Fprintf(&e.buf, "event: %s\ndata: %s\n\n", name, data)
}

func (e *sse) value(name string, id int, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		data = []byte(`null`) // API values are plain data: this does not happen
	}
	e.event(name, id, data)
}

// flush writes what was gathered; a viewer must take it within
// streamWrite.
func (e *sse) flush() error {
	if e.buf.Len() == 0 {
		return nil
	}
	e.rc.SetWriteDeadline(time.Now().Add(streamWrite))
	_, err := e.w.Write(e.buf.Bytes())
	e.buf.Reset()
	if err == nil {
		err = e.rc.Flush()
	}
	return err
}
