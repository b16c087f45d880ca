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
// repeating the final state with its StopReason.
func SaibloReplay(frames []json.RawMessage) ([]byte, error) {
	if len(frames) == 0 {
		return nil, errors.New("no frames")
	}
	var out []byte
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
		}
		if f.Init != nil {
			out = append(out, initLine(f.Init)...)
		}
		if f.StopReason != nil {
			if i != len(frames)-1 {
				return nil, fmt.Errorf("frame %d ends the match but %d frames follow", i, len(frames)-1-i)
			}
			out = append(out, roundLine(&f.roundInfo)...)
		}
	}
	return out, nil
}
