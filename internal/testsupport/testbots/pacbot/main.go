// Command pacbot is a Pac-Man (Saiblo protocol) bot for tests: it claims
// the role of its seat (seat 0 Pac-Man, seat 1 ghosts), stays put, and
// misbehaves on request. Its argument is a comma-separated list of
// behaviours; answers count from 1.
//
//	oversized-at=N   answer N is a 2000-byte message
//	wrong-role-at=N  answer N claims the other role
//	bad-action-at=N  answer N has an illegal action string
//	silent-at=N      stop answering at answer N
//	role=R           claim role R whatever the seat
//	log-actions-from=N  write "actions K" to stderr on the K-th actions line,
//	                 K >= N
//
// Seat 0 answers after the init line and after each actions line; seat 1
// after each "player 0 send info". An answer sent early (before a level's
// init line) is kept by the platform for the next request.
package main

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"time"
)

func main() {
	opts := map[string]int{}
	if len(os.Args) > 1 {
		for _, kv := range strings.Split(os.Args[1], ",") {
			k, v, _ := strings.Cut(kv, "=")
			n, _ := strconv.Atoi(v)
			opts[k] = n
		}
	}
	at := func(k string, n int) bool { v, ok := opts[k]; return ok && v == n }
	in := bufio.NewReaderSize(os.Stdin, 1<<20)
	line, err := in.ReadString('\n')
	if err != nil {
		return
	}
	seat, _ := strconv.Atoi(strings.TrimSpace(line))
	role := seat
	if r, ok := opts["role"]; ok {
		role = r
	}
	answers, actions := 0, 0
	logFrom, logActions := opts["log-actions-from"]
	send := func() {
		answers++
		r, action := role, "0"
		if role == 1 {
			action = "0 0 0"
		}
		switch {
		case at("silent-at", answers):
			for {
				time.Sleep(time.Hour)
			}
		case at("wrong-role-at", answers):
			r = 1 - role
		case at("bad-action-at", answers):
			action = "9"
		}
		msg, _ := json.Marshal(map[string]any{"role": r, "action": action})
		if at("oversized-at", answers) {
			msg = []byte(`{"role":` + strconv.Itoa(role) + `,"action":"0","pad":"` + strings.Repeat("x", 2000) + `"}`)
		}
		var head [4]byte
		binary.BigEndian.PutUint32(head[:], uint32(len(msg)))
		os.Stdout.Write(append(head[:], msg...))
	}
	for {
		line, err := in.ReadString('\n')
		if err != nil {
			return
		}
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, `{"pacman_action"`) {
			actions++
			if logActions && actions >= logFrom {
				os.Stderr.WriteString("actions " + strconv.Itoa(actions) + "\n")
			}
		}
		switch {
		case seat == 1 && line == "player 0 send info":
			send()
		case seat == 0 && strings.HasPrefix(line, "{") && (strings.Contains(line, `"board"`) || strings.Contains(line, `"pacman_action"`)):
			send()
		}
	}
}
