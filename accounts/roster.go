package accounts

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"net/mail"
	"slices"
	"strings"
	"time"

	"go.uber.org/zap"

	"arena/internal/errs"
	"arena/store"
)

// A course's roster: an admin imports a CSV whose header row names its
// columns (name; optionally email, team, role, in any order) and whose
// rows are accounts. Accounts that are not there are made, each with a
// single-use link that sets its password (PasswordLinkLifetime); teams
// that are not there are made, and each row's account becomes a member
// of its team. Accounts already there are left as they are (but for
// their team). Importing the same file again makes nothing and gives no
// links; a file with a bad row applies nothing and names the row.

// PasswordLinkLifetime is how long a link that sets a password lasts.
const PasswordLinkLifetime = 14 * 24 * time.Hour

// PasswordLinkPrefix starts every code of a link that sets a password.
const PasswordLinkPrefix = "password_"

// RosterMax bounds the rows of one roster.
const RosterMax = 5000

// RosterRow is an account of a roster, with its line in the file.
type RosterRow struct {
	Line                    int
	Name, Email, Team, Role string
}

// rosterError is a bad row: its line and why.
func rosterError(line int, format string, a ...any) error {
	return errs.Errorf(errs.ErrInvalid, "line %d: %s", line, fmt.Sprintf(format, a...))
}

// ParseRoster reads a roster CSV, checking every row: a name, an email
// and a team that can be, a role of player or admin (player when empty),
// no account twice, no team named as an account.
func ParseRoster(r io.Reader) ([]RosterRow, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.TrimLeadingSpace = true
	header, err := cr.Read()
	if errors.Is(err, io.EOF) {
		return nil, errs.Errorf(errs.ErrInvalid, "the roster is empty: its first line names the columns, as name,email,team,role")
	}
	if err != nil {
		return nil, errs.Errorf(errs.ErrInvalid, "the roster is not CSV: %v", err)
	}
	col, err := rosterColumns(header)
	if err != nil {
		return nil, err
	}
	field := func(rec []string, name string) string {
		if i, ok := col[name]; ok && i < len(rec) {
			return strings.TrimSpace(rec[i])
		}
		return ""
	}
	var rows []RosterRow
	line := map[string]int{} // account → its line
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		n, _ := cr.FieldPos(0)
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				n = pe.Line
			}
			return nil, rosterError(n, "not CSV: %v", err)
		}
		if len(rec) != len(header) {
			return nil, rosterError(n, "%d fields, the header names %d", len(rec), len(header))
		}
		row := RosterRow{Line: n, Name: strings.ToLower(field(rec, "name")), Email: field(rec, "email"), Team: strings.ToLower(field(rec, "team")), Role: strings.ToLower(field(rec, "role"))}
		if err := row.check(); err != nil {
			return nil, err
		}
		if first, dup := line[row.Name]; dup {
			return nil, rosterError(n, "%s is on line %d already", row.Name, first)
		}
		line[row.Name] = n
		rows = append(rows, row)
		if len(rows) > RosterMax {
			return nil, rosterError(n, "more than %d accounts: import the roster in parts", RosterMax)
		}
	}
	for _, row := range rows {
		if first, ok := line[row.Team]; ok {
			return nil, rosterError(row.Line, "team %s is the name of the account on line %d", row.Team, first)
		}
	}
	if len(rows) == 0 {
		return nil, errs.Errorf(errs.ErrInvalid, "the roster has no accounts: one a line after the header")
	}
	return rows, nil
}

// rosterColumns reads a roster's header: each column's index by its name,
// name among them.
func rosterColumns(header []string) (map[string]int, error) {
	col := map[string]int{}
	for i, h := range header {
		h = strings.ToLower(strings.TrimSpace(strings.TrimPrefix(h, "\uFEFF")))
		if !slices.Contains([]string{"name", "email", "team", "role"}, h) {
			return nil, rosterError(1, "column %q: the columns are name, email, team and role (name at least)", h)
		}
		if _, dup := col[h]; dup {
			return nil, rosterError(1, "column %q twice", h)
		}
		col[h] = i
	}
	if _, ok := col["name"]; !ok {
		return nil, rosterError(1, "no name column: the first line names the columns, as name,email,team,role")
	}
	return col, nil
}

// check checks a row's name, email, team and role, the role player when
// empty.
func (row *RosterRow) check() error {
	if err := CheckName(row.Name); err != nil {
		return rosterError(row.Line, "%v", err)
	}
	if row.Email != "" {
		if a, err := mail.ParseAddress(row.Email); err != nil || a.Address != row.Email {
			return rosterError(row.Line, "email %q is not an address (name@example.org)", row.Email)
		}
	}
	if row.Team != "" {
		if err := CheckName(row.Team); err != nil {
			return rosterError(row.Line, "team: %v", err)
		}
	}
	switch row.Role {
	case "":
		row.Role = RolePlayer
	case RolePlayer, RoleAdmin:
	default:
		return rosterError(row.Line, "role %q: player or admin", row.Role)
	}
	return nil
}

// NewAccount is an account an import made, and the code of the link that
// sets its password (shown once).
type NewAccount struct{ Name, Code string }

// ImportRoster makes the roster's accounts and teams (an admin's), in one
// transaction: a row whose name is a team's, or whose team is an
// account's, applies nothing and is named. It returns the accounts made,
// with their links' codes.
func (s *Service) ImportRoster(ctx context.Context, by Principal, rows []RosterRow) ([]NewAccount, error) {
	if !by.Admin() {
		return nil, errs.Errorf(errs.ErrDenied, "only admins import rosters")
	}
	for _, row := range rows {
		kind, err := s.store.NameKind(ctx, row.Name)
		if err != nil {
			return nil, err
		}
		if kind == "team" {
			return nil, rosterError(row.Line, "%s is a team's name", row.Name)
		}
		if row.Team == "" {
			continue
		}
		if kind, err := s.store.NameKind(ctx, row.Team); err != nil {
			return nil, err
		} else if kind == "user" {
			return nil, rosterError(row.Line, "team %s: the name is an account's", row.Team)
		}
	}
	codes := map[string]string{}
	accts := make([]store.RosterAccount, len(rows))
	for i, row := range rows {
		code, err := secret(PasswordLinkPrefix)
		if err != nil {
			return nil, err
		}
		codes[row.Name] = code
		accts[i] = store.RosterAccount{Name: row.Name, Email: row.Email, Role: row.Role, Team: row.Team, LinkHash: Digest(code)}
	}
	now := s.now()
	made, err := s.store.ImportRoster(ctx, accts, by.Name, now, now.Add(PasswordLinkLifetime))
	if errors.Is(err, store.ErrNameInUse) {
		return nil, errs.Errorf(errs.ErrConflict, "a name of the roster was taken meanwhile (%v): import it again", err)
	}
	if err != nil {
		return nil, err
	}
	out := make([]NewAccount, len(made))
	for i, name := range made {
		out[i] = NewAccount{Name: name, Code: codes[name]}
	}
	s.log.Info("roster imported", zap.Int("rows", len(rows)), zap.Int("made", len(made)), zap.String("by", by.Name))
	return out, nil
}

// CreatePasswordLink makes a new single-use link that sets a user's
// password (an admin's, for one who lost theirs); their earlier links
// that are not used stop working. The code is returned once.
func (s *Service) CreatePasswordLink(ctx context.Context, by Principal, user string) (string, error) {
	if !by.Admin() {
		return "", errs.Errorf(errs.ErrDenied, "only admins make password links")
	}
	code, err := secret(PasswordLinkPrefix)
	if err != nil {
		return "", err
	}
	now := s.now()
	if err := s.store.CreatePasswordLink(ctx, Digest(code), user, by.Name, now, now.Add(PasswordLinkLifetime)); errors.Is(err, store.ErrNoUser) {
		return "", errs.Errorf(errs.ErrNotFound, "no account %s", user)
	} else if err != nil {
		return "", err
	}
	s.log.Info("password link made", zap.String("user", user), zap.String("by", by.Name))
	return code, nil
}

// PasswordLinkUsable says whether a link's code can still set a password.
func (s *Service) PasswordLinkUsable(ctx context.Context, code string) (bool, error) {
	if !strings.HasPrefix(code, PasswordLinkPrefix) {
		return false, nil
	}
	_, err := s.store.PasswordLinkUser(ctx, Digest(code), s.now())
	if errors.Is(err, store.ErrLinkUsed) {
		return false, nil
	}
	return err == nil, err
}

// SetPasswordByLink sets the password of the account a link names, and
// uses the link up: it returns the account (its sessions before end).
func (s *Service) SetPasswordByLink(ctx context.Context, code, password string) (store.User, error) {
	if !strings.HasPrefix(code, PasswordLinkPrefix) {
		return store.User{}, store.ErrLinkUsed
	}
	name, err := s.store.PasswordLinkUser(ctx, Digest(code), s.now())
	if err != nil {
		return store.User{}, err
	}
	if err := CheckPassword(name, password); err != nil {
		return store.User{}, err
	}
	h, err := s.hash(ctx, password)
	if err != nil {
		return store.User{}, err
	}
	u, err := s.store.SetPasswordByLink(ctx, Digest(code), h, s.now())
	if err != nil {
		return store.User{}, err
	}
	if u.Disabled {
		return store.User{}, errs.Errorf(errs.ErrDenied, "the account %s is disabled", u.Name)
	}
	s.log.Info("password set by link", zap.String("user", u.Name))
	return u, nil
}
