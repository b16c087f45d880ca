package contest

// FormatAuto (the default) is a round robin up to RoundRobinMax
// entries, a Swiss system past that.
const FormatAuto = "auto"

// RoundRobinMax is the most entries "auto" plays as a round robin: 24
// entries are 276 pairings.
const RoundRobinMax = 24

func init() { register(auto{}) }

// auto is the format that picks one by the final's number of entries.
type auto struct{}

func (auto) Name() string { return FormatAuto }

// pick is the format a final of n entries plays.
func (auto) pick(n int) Format {
	if n > RoundRobinMax {
		return swiss{}
	}
	return roundRobin{}
}

func (a auto) Start(f Final) ([]Game, error) { return a.pick(len(f.Entries)).Start(f) }

func (a auto) Next(f Final) (Round, bool, error) { return a.pick(len(f.Entries)).Next(f) }
