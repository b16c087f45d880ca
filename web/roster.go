package web

import (
	"bytes"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"arena/internal/csvsafe"
	"arena/internal/errs"
)

// A course's roster and the links that set passwords:
//
//	POST /api/users/import              (admins) a roster CSV → a CSV of name,link for the accounts made
//	POST /api/users/:name/password-link (admins) a new link for an account (one who lost theirs)
//	POST /api/users/password            {"link","password"}: a link sets its account's password and signs in
//
// The roster's rules are package accounts' (roster.go).

// rosterMaxBytes bounds a roster's body.
const rosterMaxBytes = 1 << 20

// isRoster says whether a request is a roster import, whose body is CSV.
func isRoster(c echo.Context) bool {
	r := c.Request()
	return r.Method == http.MethodPost && r.URL.Path == "/api/users/import"
}

// passwordLink is the page's link that sets a password with code.
func (s *Server) passwordLink(c echo.Context, code string) string {
	return fmt.Sprintf("%s://%s/#/password/%s", s.scheme(c.Request()), c.Request().Host, code)
}

// importRoster is POST /api/users/import (admins): the body a roster CSV
// (text/csv), the answer a CSV of name,link for the accounts made, for a
// mail merge.
func (s *Server) importRoster(c echo.Context) error {
	if mt, _, _ := mime.ParseMediaType(c.Request().Header.Get("Content-Type")); mt != "text/csv" {
		return &apiError{http.StatusUnsupportedMediaType, "the body must be the roster as CSV, sent with Content-Type: text/csv"}
	}
	data, err := io.ReadAll(io.LimitReader(c.Request().Body, rosterMaxBytes+1))
	if err != nil {
		return badRequest("reading the roster: %v", err)
	}
	if len(data) > rosterMaxBytes {
		return &apiError{http.StatusRequestEntityTooLarge, fmt.Sprintf("the roster is larger than %d bytes: import it in parts", rosterMaxBytes)}
	}
	made, err := s.svc.People.ImportRoster(c.Request().Context(), who(c), bytes.NewReader(data))
	if err != nil {
		return err
	}
	var out bytes.Buffer
	w := csvsafe.NewWriter(&out)
	w.Header("name", "link")
	for _, a := range made {
		w.Write(csvsafe.Text(a.Name), csvsafe.Text(s.passwordLink(c, a.Code)))
	}
	w.Flush()
	c.Response().Header().Set("Content-Disposition", `attachment; filename="arena-links.csv"`)
	return c.Blob(http.StatusOK, "text/csv; charset=utf-8", out.Bytes())
}

// createPasswordLink is POST /api/users/:name/password-link (admins).
func (s *Server) createPasswordLink(c echo.Context) error {
	code, err := s.svc.People.CreatePasswordLink(c.Request().Context(), who(c), c.Param("name"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, map[string]string{"name": c.Param("name"), "link": s.passwordLink(c, code)})
}

// setPasswordByLink is POST /api/users/password {"link","password"}: the
// link (its code, or the whole link) sets its account's password, and
// the visitor is signed in as it. A link that is not usable counts as a
// sign-up without invitation (the same limit), so codes cannot be tried
// at will.
func (s *Server) setPasswordByLink(c echo.Context) error {
	var body struct {
		Link     string `json:"link"`
		Password string `json:"password"`
	}
	if err := decodeBody(c, &body, `a JSON {"link","password"}`); err != nil {
		return err
	}
	code := body.Link
	if i := strings.LastIndex(code, "/"); i >= 0 {
		code = code[i+1:]
	}
	ctx := c.Request().Context()
	ok, err := s.svc.People.PasswordLinkUsable(ctx, code)
	if err != nil {
		return err
	}
	if !ok {
		if err := s.admitSignUp(c, ""); err != nil {
			return err
		}
		return errs.New(errs.ErrDenied, "the link is unknown, used or expired: ask an admin for a new one")
	}
	u, err := s.svc.People.SetPasswordByLink(ctx, code, body.Password)
	if err != nil {
		return err
	}
	if err := s.startSession(c, u); err != nil {
		return err
	}
	return c.JSON(http.StatusOK, viewUser(u))
}
