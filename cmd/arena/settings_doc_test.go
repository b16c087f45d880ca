package main

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// docs/settings.md's table of settings matches the settings' own table
// (one source for flags, environment and help): every setting is in it,
// and a default it writes as a value is the default the code has.
func TestTheDocsListEverySetting(t *testing.T) {
	data, err := os.ReadFile("../../docs/settings.md")
	if err != nil {
		t.Fatal(err)
	}
	table := string(data)
	documented := map[string]string{} // env → its default as the docs write it
	cell := regexp.MustCompile("`([^`]*)`")
	for _, line := range strings.Split(table, "\n") {
		cols := strings.Split(line, " | ")
		if !strings.HasPrefix(line, "| `ARENA_") || len(cols) < 3 {
			continue
		}
		envs := strings.Split(strings.TrimPrefix(cols[0], "| "), ", ")
		defs := strings.Split(cols[1], ", ")
		for i, e := range envs {
			m := cell.FindStringSubmatch(e)
			if m == nil {
				continue
			}
			def := "?"
			if len(defs) == len(envs) {
				if d := cell.FindStringSubmatch(defs[i]); d != nil && strings.TrimSpace(defs[i]) == d[0] {
					def = d[1]
				}
			}
			documented[m[1]] = def
		}
	}
	for _, s := range settings {
		def, ok := documented[s.env]
		switch {
		case !ok:
			t.Errorf("%s (--%s) is not in docs/settings.md's table of settings", s.env, s.flag)
		case def != "?" && def != s.def:
			t.Errorf("%s: docs/settings.md says its default is %q, the code %q", s.env, def, s.def)
		}
	}
}
