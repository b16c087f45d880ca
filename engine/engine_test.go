package engine

import (
	"strings"
	"testing"
)

func TestCheckPlayers(t *testing.T) {
	tests := []struct {
		give MapInfo
		n    int
		want string // empty: accepted
	}{
		{MapInfo{Name: "duel", MinPlayers: 2, MaxPlayers: 2}, 2, ""},
		{MapInfo{Name: "duel", MinPlayers: 2, MaxPlayers: 2}, 1, "map duel takes 2 bots, got 1"},
		{MapInfo{Name: "duel", MinPlayers: 2, MaxPlayers: 2}, 3, "map duel takes 2 bots, got 3"},
		{MapInfo{Name: "four", MinPlayers: 2, MaxPlayers: 4}, 4, ""},
		{MapInfo{Name: "four", MinPlayers: 2, MaxPlayers: 4}, 5, "map four takes 2 to 4 bots, got 5"},
		{MapInfo{Name: "four", MinPlayers: 2, MaxPlayers: 4}, 0, "map four takes 2 to 4 bots, got 0"},
	}
	for _, tt := range tests {
		err := tt.give.CheckPlayers(tt.n)
		if got := errString(err); got != tt.want {
			t.Errorf("%s with %d players: %q, want %q", tt.give.Name, tt.n, got, tt.want)
		}
	}
}

func TestDecodeSettings(t *testing.T) {
	type settings struct {
		A int  `json:"a"`
		B bool `json:"b"`
	}
	tests := []struct {
		give string
		want settings
		err  string // a part of the error; empty: accepted
	}{
		{give: "", want: settings{A: 7}},
		{give: "  \n", want: settings{A: 7}},
		{give: "null", want: settings{A: 7}},
		{give: `{"b":true}`, want: settings{A: 7, B: true}},
		{give: ` {"a":1} `, want: settings{A: 1}},
		{give: `{"a":1} {}`, err: "unexpected content after the settings object"},
		{give: `{"a":1} x`, err: "unexpected content after the settings object"},
		{give: `{"c":1}`, err: `unknown field "c"`},
		{give: `{"a":"one"}`, err: "cannot unmarshal string"},
		{give: `[1]`, err: "cannot unmarshal array"},
		{give: `{"a":1`, err: "unexpected EOF"},
	}
	for _, tt := range tests {
		got := settings{A: 7}
		err := DecodeSettings([]byte(tt.give), &got)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%q: err = %v, want it to mention %q", tt.give, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("%q: %+v, %v; want %+v", tt.give, got, err, tt.want)
		}
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// The status words are known; anything else a report carries is not.
func TestStatusKnown(t *testing.T) {
	for _, s := range []Status{StatusOK, StatusTimeout, StatusBadOutput, StatusCrashed, StatusOOM, StatusOutputLimit, StatusStartFailed, StatusIllegal} {
		if !s.Known() {
			t.Errorf("%s is not known", s)
		}
	}
	for _, s := range []Status{"", "weird", "crashed\n", "OK"} {
		if s.Known() {
			t.Errorf("%q is known", s)
		}
	}
}
