package metrics

import (
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// Every query of the Grafana dashboard in deploy/ names metrics Arena
// exports (the catalog's, the Go runtime's and the process's), and every
// metric of the catalog is on it.
func TestTheDashboardQueriesExportedMetrics(t *testing.T) {
	raw, err := os.ReadFile("../deploy/grafana/arena.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string
			Targets []struct{ Expr string }
		}
	}
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatalf("the dashboard: %v", err)
	}
	s := New()
	families, err := s.std.Gather()
	if err != nil {
		t.Fatal(err)
	}
	exported := map[string]bool{}
	for _, f := range families {
		exported[f.GetName()] = true
	}
	for _, d := range Catalog {
		exported[d.Name] = true
		if d.Kind == "histogram" {
			for _, suffix := range []string{"_bucket", "_sum", "_count"} {
				exported[d.Name+suffix] = true
			}
		}
	}
	// A metric's name: followed by a selector, a range or the end.
	name := regexp.MustCompile(`\b((?:arena|go|process)_[a-z_]+)\b`)
	used := map[string]bool{}
	if len(dash.Panels) == 0 {
		t.Fatal("the dashboard has no panels")
	}
	for _, p := range dash.Panels {
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, target := range p.Targets {
			names := name.FindAllString(target.Expr, -1)
			if len(names) == 0 {
				t.Errorf("panel %q: %q names no metric", p.Title, target.Expr)
			}
			for _, n := range names {
				if !exported[n] {
					t.Errorf("panel %q: %s is not exported", p.Title, n)
				}
				used[strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(n, "_bucket"), "_sum"), "_count")] = true
			}
		}
	}
	for _, d := range Catalog {
		if !used[d.Name] {
			t.Errorf("%s is on no panel of the dashboard", d.Name)
		}
	}
	// The catalog's names are unique, and each is registered by New or
	// by its Gauge (a gauge of another kind's name panics).
	seen := map[string]bool{}
	for _, d := range Catalog {
		if seen[d.Name] {
			t.Errorf("%s twice in the catalog", d.Name)
		}
		seen[d.Name] = true
		if !slices.Contains([]string{"counter", "gauge", "histogram"}, d.Kind) {
			t.Errorf("%s: kind %q", d.Name, d.Kind)
		}
	}
}
