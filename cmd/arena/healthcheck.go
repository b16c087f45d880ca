package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"time"
)

// cmdHealthcheck asks a running server's /healthz, for container
// healthchecks: exit 0 when it answers 200.
func cmdHealthcheck(ctx context.Context, args []string, stdout io.Writer) error {
	url := "http://127.0.0.1:" + settingValue("ARENA_PORT") + "/healthz"
	if len(args) == 1 {
		url = args[0]
	} else if len(args) > 1 {
		return usageErr("usage: arena healthcheck [URL]")
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return usageErr("%v", err)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return platformErr(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(res.Body, 4096))
	fmt.Fprintf(stdout, "%s", body)
	if res.StatusCode != http.StatusOK {
		return platformErr(fmt.Errorf("%s answered %s", url, res.Status))
	}
	return nil
}
