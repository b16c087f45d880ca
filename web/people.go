package web

import (
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"
)

// A person's seat: GET /api/matches/{id}/moves is the seat's state (the
// turn it is asked for and the seat's input; with after=T it waits, up to
// moveWait, for a turn past T or the end), POST sends the move of a turn.
// Only the seat's player may do either.

// moveWait is how long GET …/moves?after=T waits for a change.
var moveWait = 25 * time.Second

func (s *Server) getMoves(c echo.Context) error {
	var err error
	after := -1
	if v := c.QueryParam("after"); v != "" {
		if after, err = strconv.Atoi(v); err != nil || after < 0 {
			return badRequest("after must be a turn number (0 or more)")
		}
	}
	ctx := c.Request().Context()
	timeout := time.NewTimer(moveWait)
	defer timeout.Stop()
	for {
		st, err := s.svc.Matches.Seat(ctx, who(c), c.Param("id"))
		if err != nil {
			return err
		}
		if after < 0 || st.Turn > after || st.Over {
			return c.JSON(http.StatusOK, st)
		}
		select {
		case <-st.Changed:
		case <-timeout.C:
			return c.JSON(http.StatusOK, st)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// moveRequest is the body of POST /api/matches/{id}/moves.
type moveRequest struct {
	Turn   *int    `json:"turn"`
	Answer *string `json:"answer"`
}

func (s *Server) postMove(c echo.Context) error {
	var body moveRequest
	if err := decodeBody(c, &body, `a JSON move {"turn": T, "answer": "…"}`); err != nil {
		return err
	}
	if body.Turn == nil || body.Answer == nil {
		return badRequest(`a move names its turn and its answer: {"turn": T, "answer": "…"}`)
	}
	if err := s.svc.Matches.Move(c.Request().Context(), who(c), c.Param("id"), *body.Turn, *body.Answer); err != nil {
		return err
	}
	return c.JSON(http.StatusAccepted, map[string]any{"match": c.Param("id"), "turn": *body.Turn})
}
