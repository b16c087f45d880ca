// Command relaylogic is the smallest Saiblo logic, for measuring the
// judger: it asks the two bots in turn, --rounds times (the config's
// "rounds", default 100), sending each a short line and taking whatever
// it answers, then ends the match 0-0. Its own work per round is a few
// microseconds, so a round's cost beside the bot's answer is the
// judger's.
package main

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"io"
	"os"
)

func main() {
	in := bufio.NewReader(os.Stdin)
	out := bufio.NewWriter(os.Stdout)
	read := func(v any) {
		var head [4]byte
		if _, err := io.ReadFull(in, head[:]); err != nil {
			os.Exit(0)
		}
		data := make([]byte, binary.BigEndian.Uint32(head[:]))
		if _, err := io.ReadFull(in, data); err != nil {
			os.Exit(0)
		}
		if v != nil {
			json.Unmarshal(data, v)
		}
	}
	send := func(v any) {
		data, _ := json.Marshal(v)
		var head [8]byte
		binary.BigEndian.PutUint32(head[:], uint32(len(data)))
		binary.BigEndian.PutUint32(head[4:], 0xffffffff) // the judger
		out.Write(head[:])
		out.Write(data)
		out.Flush()
	}
	var init struct {
		Config struct {
			Rounds int `json:"rounds"`
		} `json:"config"`
	}
	read(&init)
	rounds := init.Config.Rounds
	if rounds <= 0 {
		rounds = 100
	}
	send(map[string]any{"state": 0, "time": 1, "length": 64})
	for r := 1; r <= rounds; r++ {
		p := r % 2
		send(map[string]any{"state": r, "listen": []int{p}, "player": []int{p}, "content": []string{"go\n"}})
		read(nil)
	}
	send(map[string]any{"state": -1, "end_info": `{"0":0,"1":0}`})
}
