package contest

import (
	"slices"
	"strings"
	"testing"

	"arena/internal/errs"
)

// Each registered format is found by its name; an unknown one is
// refused, naming the formats there are.
func TestLookupFormat(t *testing.T) {
	names := FormatNames()
	for _, want := range []string{FormatAuto, FormatRoundRobin, FormatSwiss} {
		if !slices.Contains(names, want) {
			t.Errorf("format %q is not registered: %q", want, names)
		}
	}
	for _, name := range names {
		f, err := LookupFormat(name)
		if err != nil || f.Name() != name {
			t.Errorf("LookupFormat(%q) = %v, %v", name, f, err)
		}
	}
	for _, name := range []string{"knockout", "", "Swiss"} {
		f, err := LookupFormat(name)
		if f != nil || !errs.IsInvalid(err) {
			t.Errorf("LookupFormat(%q) = %v, %v: want errs.ErrInvalid", name, f, err)
			continue
		}
		want := `format: "` + name + `": "auto", "round-robin" or "swiss"`
		if !strings.Contains(err.Error(), want) {
			t.Errorf("LookupFormat(%q): %q, want it to say %q", name, err, want)
		}
	}
	// A contest made before formats plays a round robin.
	if f, err := (Spec{}).format(); err != nil || f.Name() != FormatRoundRobin {
		t.Errorf("a spec of no format: %v, %v; want a round robin", f, err)
	}
}

// auto plays a round robin up to RoundRobinMax entries, Swiss past it.
func TestAutoPicks(t *testing.T) {
	if got := (auto{}).pick(RoundRobinMax).Name(); got != FormatRoundRobin {
		t.Errorf("auto of %d entries: %s", RoundRobinMax, got)
	}
	if got := (auto{}).pick(RoundRobinMax + 1).Name(); got != FormatSwiss {
		t.Errorf("auto of %d entries: %s", RoundRobinMax+1, got)
	}
}
