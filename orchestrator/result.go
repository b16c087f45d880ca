package orchestrator

import (
	"fmt"
	"slices"
	"time"

	"arena/engine"
	"arena/matches"
)

// result is the outcome of the match just played: the game's verdict and,
// per bot, its status, timings and what it used.
func (r *run) result(took time.Duration) matches.Result {
	er := r.match.Result()
	res := matches.Result{
		MatchID: r.matchID, Game: r.rec.rep.Game, Map: r.rec.rep.Map, Seed: r.rec.rep.Seed,
		Turns: r.match.Turn(), Winners: []string{}, DurationMS: matches.Millis(took),
		StdioPath: r.rec.rep.StdioPath,
	}
	for _, w := range er.Winners {
		res.Winners = append(res.Winners, r.seats[w].id)
	}
	for _, s := range r.seats {
		br := matches.BotResult{
			Seat: s.n, ID: s.id, Image: s.image.Ref, ImageID: s.image.ID,
			Status: s.status, FaultTurn: s.turn, FaultDetail: s.detail,
			Answers: len(s.times), StderrDropped: r.rec.dropped[s.n],
		}
		if s.status == engine.StatusCrashed {
			if why := crashReason(r.rec.tail[s.n]); why != "" {
				br.FaultDetail += "; its last words on stderr: " + why
			}
		}
		if s.n < len(er.Seats) {
			sr := er.Seats[s.n]
			br.Score, br.DeathReason, br.DeathTurn = sr.Score, sr.DeathReason, sr.DeathTurn
			// A game that judges its seats itself (a logic's end_state)
			// has the last word; Arena's own finding stays in the detail.
			if sr.Status != "" && sr.Status != br.Status {
				if br.Status == engine.StatusOK {
					br.FaultDetail = "the game's verdict"
				} else {
					br.FaultDetail = fmt.Sprintf("the game's verdict; Arena found %s: %s", br.Status, br.FaultDetail)
				}
				br.Status = sr.Status
			}
		}
		// The first answer is the warm-up's: it has its own figure and
		// stays out of the answer times.
		if len(s.times) > 0 {
			w := matches.Millis(s.times[0])
			br.WarmUpMS = &w
		}
		if len(s.times) > 1 {
			p50, most := median(s.times[1:])
			br.AnswerMSP50, br.AnswerMSMax = matches.Millis(p50), matches.Millis(most)
		}
		if len(s.cpus) > 0 {
			var a, b float64
			if len(s.cpus) > 1 {
				p50, most := median(s.cpus[1:])
				a, b = matches.Millis(p50), matches.Millis(most)
			}
			br.AnswerCPUMSP50, br.AnswerCPUMSMax = &a, &b
		}
		if s.waitKnown {
			w := matches.Millis(s.wait)
			br.WaitMS = &w
		}
		br.StoppedCPUMS = matches.Millis(s.stoppedCPU)
		if s.startCPU > 0 {
			start := matches.Millis(s.startCPU)
			br.StartCPUMS = &start
		}
		br.Timing = timingOf(s)
		switch u := s.final; {
		case s.bot == nil:
			br.Accounting = "unavailable: the bot did not start"
		case u.Source == "":
			br.Accounting = "unavailable: " + u.Unavailable
		default:
			cpu := matches.Millis(u.CPU)
			peak := u.MemPeakBytes
			br.CPUMS, br.MemPeakBytes = &cpu, &peak
			br.OOMKills, br.PidsLimitHits = u.OOMKills, u.PidsLimitHits
			br.Accounting = u.Source
		}
		res.Bots = append(res.Bots, br)
	}
	return res
}

// median is the median and the largest of ds (not empty).
func median(ds []time.Duration) (p50, most time.Duration) {
	sorted := slices.Clone(ds)
	slices.Sort(sorted)
	return sorted[(len(sorted)-1)/2], sorted[len(sorted)-1]
}

// timingOf says how a seat's answers were timed (see timing.go).
func timingOf(s *seat) string {
	switch {
	case s.bot == nil:
		return ""
	case s.timing != "cpu":
		return "wall clock: its CPU time could not be read"
	case s.frozen != "":
		return "cpu time; not frozen between answers: " + s.frozen
	}
	method := ""
	if f, ok := s.bot.(freezingTeller); ok && f.Freezing() != "" {
		method = " by " + f.Freezing()
	}
	switch _, switched := s.bot.(freezeSwitch); {
	case !switched:
		return "cpu time, frozen between answers" + method
	case s.frozenFrom > 0:
		return fmt.Sprintf("cpu time, frozen between answers%s from turn %d, having run there", method, s.frozenFrom)
	case method != "":
		return "cpu time; let run between answers, as it ran no more there than the tolerance (else frozen" + method + ")"
	}
	return "cpu time; let run between answers, as it ran no more there than the tolerance"
}

// freezingTeller is a bot that says how it is frozen between answers
// (optional).
type freezingTeller interface{ Freezing() string }
