package contest

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"arena/ladder/skill"
)

// Result is how a scored game ended, seen from its first seat: its
// points (1, ½ or 0) and each seat's status ("ok" or the fault).
type Result struct {
	First, Second             float64
	FirstStatus, SecondStatus string
}

// OutcomeBye is a bye's outcome: a Swiss round's game against no one,
// worth a win.
const OutcomeBye = "bye"

// EncodeOutcome is a result as the store keeps it: "1-0", "0-1" or
// "½-½", then the statuses ("1-0:ok,crashed").
func EncodeOutcome(r Result) string {
	p := func(v float64) string {
		switch v {
		case 1:
			return "1"
		case 0.5:
			return "½"
		}
		return "0"
	}
	return p(r.First) + "-" + p(r.Second) + ":" + r.FirstStatus + "," + r.SecondStatus
}

// DecodeOutcome reads EncodeOutcome's text.
func DecodeOutcome(s string) (Result, error) {
	score, statuses, _ := strings.Cut(s, ":")
	a, b, ok := strings.Cut(score, "-")
	p := func(v string) (float64, bool) {
		switch v {
		case "1":
			return 1, true
		case "½":
			return 0.5, true
		case "0":
			return 0, true
		}
		return 0, false
	}
	x, ok1 := p(a)
	y, ok2 := p(b)
	fs, ss, _ := strings.Cut(statuses, ",")
	if !ok || !ok1 || !ok2 || x+y != 1 {
		return Result{}, fmt.Errorf("not an outcome: %q", s)
	}
	return Result{First: x, Second: y, FirstStatus: fs, SecondStatus: ss}, nil
}

// Entrant is an entry as the standings name it.
type Entrant struct {
	ID           int64
	Name, Owner  string
	Disqualified bool
}

// Played is a scored game of the final; a bye (Second 0) is worth a
// point to First and is no game played.
type Played struct {
	First, Second int64
	MatchID       string
	Result        Result
	Bye           bool
}

// Row is an entry's line in the standings.
type Row struct {
	// Rank is its place (equal rows share one); 0 for a disqualified
	// entry, listed last.
	Rank   int     `json:"rank"`
	Entry  int64   `json:"entry"`
	Name   string  `json:"name"`
	Owner  string  `json:"owner"`
	Points float64 `json:"points"`
	Played int     `json:"played"`
	Wins   int     `json:"wins"`
	Draws  int     `json:"draws"`
	Losses int     `json:"losses"`
	// Faults counts its games where it faulted (timeout, crash, bad
	// output…); FaultMatches names those matches.
	Faults       int      `json:"faults"`
	FaultMatches []string `json:"fault_matches"`
	// Byes counts the points it had from byes (a Swiss round without
	// an opponent): in Points, not in Played.
	Byes int `json:"byes,omitempty"`
	// Interval is a 95% interval of its points per game (Wilson's score
	// interval on Points/Played), [0, 1] before any game.
	Interval [2]float64 `json:"interval"`
	// TieBreaks are its values of the contest's tie-breaks, in order.
	TieBreaks    []float64 `json:"tiebreaks"`
	Disqualified bool      `json:"disqualified,omitempty"`
}

// Standings are the final's standings: the rows in rank order and the
// head-to-head matrix (HeadToHead[i][j]: the points row i's entry scored
// against row j's, -1 on the diagonal).
type Standings struct {
	Rows       []Row       `json:"rows"`
	HeadToHead [][]float64 `json:"head_to_head"`
}

// Compute ranks the entrants by their points in the scored games, then
// by the tie-breaks in order; disqualified entries are listed last,
// unranked (their games still count for their opponents). The games are
// in the final's order: the "rating" tie-break rates them in it with the
// model.
func Compute(entrants []Entrant, games []Played, tieBreaks []string, model skill.Model) Standings {
	idx := map[int64]int{}
	rows := make([]Row, len(entrants))
	for i, e := range entrants {
		idx[e.ID] = i
		rows[i] = Row{Entry: e.ID, Name: e.Name, Owner: e.Owner, Disqualified: e.Disqualified, FaultMatches: []string{}, TieBreaks: []float64{}}
	}
	n := len(entrants)
	h2h := score(rows, idx, games)
	for i := range rows {
		rows[i].Interval = Wilson(rows[i].Points-float64(rows[i].Byes), rows[i].Played)
	}
	var ratings []skill.Rating
	if slices.Contains(tieBreaks, Rating) {
		ratings = rate(model, idx, n, games)
	}
	for i := range rows {
		rows[i].TieBreaks = tieBreakValues(rows, i, h2h, tieBreaks, ratings)
	}
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(i, j int) int {
		if c := compareRows(rows[i], rows[j]); c != 0 {
			return c
		}
		return cmp.Compare(rows[i].Entry, rows[j].Entry)
	})
	return ranked(rows, order, h2h)
}

// score adds the games to the rows (idx: a row by its entry) and gives the
// head-to-head matrix: h2h[i][j], the points row i scored against row j.
func score(rows []Row, idx map[int64]int, games []Played) [][]float64 {
	n := len(rows)
	h2h := make([][]float64, n)
	for i := range h2h {
		h2h[i] = make([]float64, n)
	}
	for _, g := range games {
		if a, ok := idx[g.First]; ok && g.Bye {
			rows[a].Points++
			rows[a].Byes++
			continue
		}
		a, okA := idx[g.First]
		b, okB := idx[g.Second]
		if !okA || !okB {
			continue
		}
		rows[a].add(g.Result.First, g.Result.FirstStatus, g.MatchID)
		rows[b].add(g.Result.Second, g.Result.SecondStatus, g.MatchID)
		h2h[a][b] += g.Result.First
		h2h[b][a] += g.Result.Second
	}
	return h2h
}

// add counts one game of the row's entry: its points, and its status
// ("ok" or the fault) in the match.
func (r *Row) add(pts float64, status, match string) {
	r.Points += pts
	r.Played++
	switch pts {
	case 1:
		r.Wins++
	case 0.5:
		r.Draws++
	default:
		r.Losses++
	}
	if status != "" && status != "ok" {
		r.Faults++
		r.FaultMatches = append(r.FaultMatches, match)
	}
}

// tieBreakValues are row i's values of the tie-breaks, in order.
func tieBreakValues(rows []Row, i int, h2h [][]float64, tieBreaks []string, ratings []skill.Rating) []float64 {
	values := rows[i].TieBreaks
	for _, t := range tieBreaks {
		switch t {
		case HeadToHead:
			// Points against the entries tied with it on points.
			v := 0.0
			for j := range rows {
				if j != i && rows[j].Points == rows[i].Points {
					v += h2h[i][j]
				}
			}
			values = append(values, v)
		case SonnebornBerger:
			v := 0.0
			for j := range rows {
				if j != i {
					v += h2h[i][j] * rows[j].Points
				}
			}
			values = append(values, v)
		case Rating:
			values = append(values, math.Round(ratings[i].Ordinal()*1000)/1000)
		}
	}
	return values
}

// compareRows orders two rows: disqualified last, then by points and the
// tie-breaks, highest first; 0 when they tie.
func compareRows(x, y Row) int {
	if x.Disqualified != y.Disqualified {
		if x.Disqualified {
			return 1
		}
		return -1
	}
	if c := cmp.Compare(y.Points, x.Points); c != 0 {
		return c
	}
	for k := range x.TieBreaks {
		if c := cmp.Compare(y.TieBreaks[k], x.TieBreaks[k]); c != 0 {
			return c
		}
	}
	return 0
}

// ranked are the standings of the rows in order, tied rows sharing a rank,
// disqualified ones unranked, the matrix in the same order.
func ranked(rows []Row, order []int, h2h [][]float64) Standings {
	n := len(rows)
	out := Standings{Rows: make([]Row, n), HeadToHead: make([][]float64, n)}
	for k, i := range order {
		r := rows[i]
		switch {
		case r.Disqualified:
			r.Rank = 0
		case k > 0 && compareRows(out.Rows[k-1], r) == 0:
			r.Rank = out.Rows[k-1].Rank
		default:
			r.Rank = k + 1
		}
		out.Rows[k] = r
		out.HeadToHead[k] = make([]float64, n)
		for l, j := range order {
			out.HeadToHead[k][l] = h2h[i][j]
			if i == j {
				out.HeadToHead[k][l] = -1
			}
		}
	}
	return out
}

// rate is each entrant's rating (Weng–Lin, as the ladders rate) after
// the games in their order, a draw where the points are equal.
func rate(model skill.Model, idx map[int64]int, n int, games []Played) []skill.Rating {
	ratings := make([]skill.Rating, n)
	for i := range ratings {
		ratings[i] = model.New()
	}
	for _, g := range games {
		a, okA := idx[g.First]
		b, okB := idx[g.Second]
		if !okA || !okB || g.Bye {
			continue
		}
		places := []int{0, 0}
		switch {
		case g.Result.First > g.Result.Second:
			places[1] = 1
		case g.Result.Second > g.Result.First:
			places[0] = 1
		}
		after, err := model.Rate([]skill.Rating{ratings[a], ratings[b]}, places)
		if err != nil {
			continue
		}
		ratings[a], ratings[b] = after[0], after[1]
	}
	return ratings
}

// Wilson is the 95% Wilson score interval of points/played.
func Wilson(points float64, played int) [2]float64 {
	if played == 0 {
		return [2]float64{0, 1}
	}
	const z = 1.959964
	n := float64(played)
	p := points / n
	den := 1 + z*z/n
	center := (p + z*z/(2*n)) / den
	half := z * math.Sqrt(p*(1-p)/n+z*z/(4*n*n)) / den
	round := func(v float64) float64 { return math.Round(v*1000) / 1000 }
	return [2]float64{round(max(0, center-half)), round(min(1, center+half))}
}
