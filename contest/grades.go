package contest

import (
	"cmp"
	"context"
	"io"
	"slices"

	"arena/internal/csvsafe"
	"arena/store"
)

// Grades turn a contest into a course's gradebook: one row per user who
// may enter (a team's members each get the team's row), with the rank,
// points and interval of the entry that counts for them, each gate
// passed or not (by its final version), and the final version's digest.

// GradeRow is one user's grades in a contest.
type GradeRow struct {
	Name  string `json:"name"`
	Email string `json:"email,omitempty"`
	// Team is the team whose entry counts for the user ("": their own).
	Team  string `json:"team,omitempty"`
	Entry int64  `json:"entry,omitempty"`
	// Rank is 0 when the entry did not play the final, or was
	// disqualified.
	Rank     int        `json:"rank"`
	Points   float64    `json:"points"`
	Interval [2]float64 `json:"interval"`
	// Gates are the gates' outcomes by the contest's order: true passed,
	// false failed, null not decided (or no final version).
	Gates  []*bool `json:"gates"`
	Digest string  `json:"digest,omitempty"`
}

// Grades are a contest's grades, by name, and its gates' names.
func (c *Contests) Grades(ctx context.Context, id int64) ([]GradeRow, []string, error) {
	ct, err := c.deps.Store.Contest(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	s, err := spec(ct)
	if err != nil {
		return nil, nil, err
	}
	class, err := c.Class(ctx, id, "")
	if err != nil {
		return nil, nil, err
	}
	board, err := c.Standings(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	entries, err := c.deps.Store.ContestEntries(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	members, err := c.deps.Store.Memberships(ctx)
	if err != nil {
		return nil, nil, err
	}
	users, err := c.deps.Store.Users(ctx)
	if err != nil {
		return nil, nil, err
	}
	email := map[string]string{}
	for _, u := range users {
		email[u.Name] = u.Email
	}
	byEntry := map[int64]Row{}
	for _, r := range board.Rows {
		byEntry[r.Entry] = r
	}
	digest := map[int64]string{}
	for _, e := range entries {
		digest[e.ID] = e.FinalDigest
	}
	gates := map[int64][]*bool{}
	for _, r := range board.Gates {
		if r.Kind != store.GateFinal {
			continue
		}
		if gates[r.Entry] == nil {
			gates[r.Entry] = make([]*bool, len(s.Gates))
		}
		if i := slices.IndexFunc(s.Gates, func(g Gate) bool { return g.Name == r.Gate }); i >= 0 {
			gates[r.Entry][i] = r.Passed
		}
	}
	var out []GradeRow
	add := func(name, team string, entry int64) {
		row := GradeRow{Name: name, Email: email[name], Team: team, Entry: entry, Gates: make([]*bool, len(s.Gates))}
		if r, ok := byEntry[entry]; ok && entry != 0 {
			row.Rank, row.Points, row.Interval = r.Rank, r.Points, r.Interval
			row.Digest = digest[entry]
		}
		if g, ok := gates[entry]; ok && entry != 0 {
			copy(row.Gates, g)
		}
		out = append(out, row)
	}
	for _, r := range class {
		team := ""
		if r.Entry != 0 && r.EntryOwner != r.Name {
			team = r.EntryOwner
		}
		if r.Kind == "team" {
			for _, m := range members[r.Name] {
				add(m, r.Name, r.Entry)
			}
			continue
		}
		add(r.Name, team, r.Entry)
	}
	slices.SortStableFunc(out, func(a, b GradeRow) int { return cmp.Compare(a.Name, b.Name) })
	names := make([]string, len(s.Gates))
	for i, g := range s.Gates {
		names[i] = g.Name
	}
	return out, names, nil
}

// WriteGradesCSV writes grades as CSV: name, email, team, rank, points,
// the interval's two ends, a column per gate (1 passed, 0 failed, empty
// not decided) and the final version's digest.
func WriteGradesCSV(w io.Writer, rows []GradeRow, gates []string) error {
	cw := csvsafe.NewWriter(w)
	header := append([]string{"name", "email", "team", "rank", "points", "interval_low", "interval_high"}, gates...)
	cw.Header(append(header, "digest")...)
	for _, r := range rows {
		rank := csvsafe.None
		if r.Rank > 0 {
			rank = csvsafe.Int(r.Rank)
		}
		rec := []csvsafe.Cell{csvsafe.Text(r.Name), csvsafe.Text(r.Email), csvsafe.Text(r.Team), rank, csvsafe.None, csvsafe.None, csvsafe.None}
		if r.Entry != 0 {
			rec[4], rec[5], rec[6] = csvsafe.Float(r.Points, 'f', -1), csvsafe.Float(r.Interval[0], 'f', 3), csvsafe.Float(r.Interval[1], 'f', 3)
		}
		for _, g := range r.Gates {
			switch {
			case g == nil:
				rec = append(rec, csvsafe.None)
			case *g:
				rec = append(rec, csvsafe.Int(1))
			default:
				rec = append(rec, csvsafe.Int(0))
			}
		}
		cw.Write(append(rec, csvsafe.Text(r.Digest))...)
	}
	cw.Flush()
	return cw.Error()
}
