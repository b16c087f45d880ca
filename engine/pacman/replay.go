package pacman

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// SaibloReplay converts a match's frames, as Frame produced them and in
// order, into the original game's replay: JSON lines as Python's json.dumps
// wrote them, one init line per level, one line per round, and a last line
// repeating the final state with its StopReason. A match ended by a fault
// (no round played in its last frame) ends, as the original's did, with
// the last played round's step blocks and skills: the original wrote its
// final line from the fields its last round left.
func SaibloReplay(frames []json.RawMessage) ([]byte, error) {
	if len(frames) == 0 {
		return nil, errors.New("no frames")
	}
	var out []byte
	var last *roundInfo // the last played round
	for i, raw := range frames {
		var f arenaFrame
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&f); err != nil {
			return nil, fmt.Errorf("frame %d: %w", i, err)
		}
		if i == 0 && f.Init == nil {
			return nil, errors.New("frame 0 has no init object: the frames must start with the match's first")
		}
		if f.Played {
			r := f.roundInfo
			r.StopReason = nil
			out = append(out, roundLine(&r)...)
			last = &f.roundInfo
		}
		if f.Init != nil {
			out = append(out, initLine(f.Init)...)
		}
		if f.StopReason != nil {
			if i != len(frames)-1 {
				return nil, fmt.Errorf("frame %d ends the match but %d frames follow", i, len(frames)-1-i)
			}
			r := f.roundInfo
			if !f.Played && last != nil {
				r.PacmanStepBlock, r.GhostsStepBlock, r.PacmanSkills = last.PacmanStepBlock, last.GhostsStepBlock, last.PacmanSkills
			}
			out = append(out, roundLine(&r)...)
		}
	}
	return out, nil
}
