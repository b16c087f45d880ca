package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"golang.org/x/term"
)

// The client side of a server with accounts: arena login keeps an API
// token per server in the user's configuration folder (0600), and arena
// bots and arena logout use it.

// defaultServer is the server a client command talks to when none is
// named: ARENA_SERVER, else this host's page.
func defaultServer() string {
	if s := settingValue("ARENA_SERVER"); s != "" {
		return s
	}
	return "http://localhost:5006"
}

// serverURL normalizes a server's address: HOST:PORT gets http:// on
// this host (loopback) and https:// elsewhere, and the path goes.
func serverURL(s string) (string, error) {
	if !strings.Contains(s, "://") {
		scheme := "https://"
		if host, _, err := net.SplitHostPort(s); (err == nil && isLoopback(host)) || isLoopback(s) {
			scheme = "http://"
		}
		s = scheme + s
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return "", fmt.Errorf("server %q: want http(s)://HOST[:PORT] or HOST:PORT", s)
	}
	return u.Scheme + "://" + u.Host, nil
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// credential is what arena login keeps for a server.
type credential struct {
	Name    string    `json:"name"`
	Token   string    `json:"token"`
	TokenID int64     `json:"token_id,omitempty"`
	At      time.Time `json:"logged_in_at"`
}

type credentials struct {
	Servers map[string]credential `json:"servers"`
}

// credentialsPath is where arena login keeps its tokens: ARENA_CONFIG,
// else the user's configuration folder's arena/credentials.json.
func credentialsPath() (string, error) {
	if p := settingValue("ARENA_CONFIG"); p != "" {
		return filepath.Join(p, "credentials.json"), nil
	}
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("no folder for arena's credentials (set ARENA_CONFIG): %w", err)
	}
	return filepath.Join(dir, "arena", "credentials.json"), nil
}

func loadCredentials() (credentials, string, error) {
	c := credentials{Servers: map[string]credential{}}
	path, err := credentialsPath()
	if err != nil {
		return c, "", err
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return c, path, nil
	}
	if err != nil {
		return c, path, err
	}
	if err := json.Unmarshal(b, &c); err != nil {
		return c, path, fmt.Errorf("%s: %w", path, err)
	}
	if c.Servers == nil {
		c.Servers = map[string]credential{}
	}
	return c, path, nil
}

// save writes the credentials readable by their owner only, whole or not
// at all.
func (c credentials) save(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	b, _ := json.MarshalIndent(c, "", "  ")
	tmp, err := os.CreateTemp(filepath.Dir(path), ".credentials-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// apiClient calls a server's API.
type apiClient struct {
	server string
	token  string
	http   *http.Client
	// answerMax bounds an answer read (0: 8 MiB).
	answerMax int64
}

func newAPIClient(server, token string) *apiClient {
	jar, _ := cookiejar.New(nil)
	return &apiClient{server: server, token: token, http: &http.Client{Jar: jar, Timeout: 30 * time.Second}}
}

// call sends a JSON request and decodes a JSON answer into out; an
// answer that is not 2xx becomes an error with the server's message.
func (a *apiClient) call(ctx context.Context, method, path string, body, out any) error {
	if body == nil {
		return a.send(ctx, method, path, "", nil, out)
	}
	b, _ := json.Marshal(body)
	return a.send(ctx, method, path, "application/json", bytes.NewReader(b), out)
}

// send is call with a body of any type (an upload's archive).
func (a *apiClient) send(ctx context.Context, method, path, contentType string, body io.Reader, out any) error {
	res, err := a.do(ctx, method, path, contentType, body)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	limit := a.answerMax
	if limit <= 0 {
		limit = 8 << 20
	}
	data, _ := io.ReadAll(io.LimitReader(res.Body, limit))
	if out != nil && len(data) > 0 {
		if err := json.Unmarshal(data, out); err != nil {
			return fmt.Errorf("%s %s: the answer is not JSON: %w", method, path, err)
		}
	}
	return nil
}

// raw copies the body of a GET (an export) to w.
func (a *apiClient) raw(ctx context.Context, path string, w io.Writer) error {
	res, err := a.do(ctx, "GET", path, "", nil)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	_, err = io.Copy(w, res.Body)
	return err
}

// do sends a request with the client's token; an answer that is not 2xx
// becomes an error with the server's message.
func (a *apiClient) do(ctx context.Context, method, path, contentType string, body io.Reader) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, a.server+path, body)
	if err != nil {
		return nil, err
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if a.token != "" {
		req.Header.Set("Authorization", "Bearer "+a.token)
	}
	res, err := a.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", a.server, err)
	}
	if res.StatusCode/100 == 2 {
		return res, nil
	}
	defer res.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(res.Body, 8<<20))
	var e struct {
		Error string `json:"error"`
	}
	if json.Unmarshal(data, &e) == nil && e.Error != "" {
		return nil, fmt.Errorf("%s %s: %s (%d)", method, path, e.Error, res.StatusCode)
	}
	return nil, fmt.Errorf("%s %s: %s", method, path, res.Status)
}

// me is GET /api/me as a client reads it.
type me struct {
	Mode string `json:"mode"`
	User *struct {
		Name string `json:"name"`
	} `json:"user"`
}

const loginUsage = `Usage:
  arena login [--name NAME] [--password-stdin | --token-stdin] [SERVER]
  arena logout [SERVER]
  arena bots [--json] [SERVER]

login signs in to a server with accounts (SERVER: http(s)://HOST[:PORT],
or HOST:PORT for https://, http:// on this host; by default ARENA_SERVER,
else http://localhost:5006), makes
an API token for this command line and keeps it in the user's
configuration folder (arena/credentials.json, readable by the user only;
ARENA_CONFIG names another folder). The password is asked for on the
terminal, or read from stdin with --password-stdin; --token-stdin keeps
an API token made on the account page instead. The token is also what
docker login takes as the password for the server's registry.

logout revokes the token login made and forgets it (a token given with
--token-stdin is only forgotten: revoke it on the account page). A new
login on a server revokes the token of the last one.

bots lists the images pushed to the server's registry that are yours and
your teams', with the state of their check (pending, ready, rejected and
why).
`

func cmdLogin(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("arena login", flag.ContinueOnError)
	fs.SetOutput(stderr)
	name := fs.String("name", "", "the account's name (asked for when not given)")
	passwordStdin := fs.Bool("password-stdin", false, "read the password from stdin")
	tokenStdin := fs.Bool("token-stdin", false, "read an API token (made on the account page) from stdin instead of signing in")
	fs.Usage = func() { fmt.Fprint(stderr, loginUsage) }
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageErr("%v (see arena help login)", err)
	}
	if len(pos) > 1 || (*passwordStdin && *tokenStdin) {
		return usageErr("usage: arena login [--name NAME] [--password-stdin | --token-stdin] [SERVER]")
	}
	server := defaultServer()
	if len(pos) == 1 {
		server = pos[0]
	}
	if server, err = serverURL(server); err != nil {
		return usageErr("%v", err)
	}
	if u, _ := url.Parse(server); u.Scheme == "http" && !isLoopback(u.Hostname()) {
		fmt.Fprintf(stderr, "arena: warning: %s is plain HTTP: the password and the token cross the network unencrypted (put TLS in front of the server and use https://)\n", server)
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	a := newAPIClient(server, "")
	var who me
	if err := a.call(ctx, "GET", "/api/me", nil, &who); err != nil {
		return platformErr(fmt.Errorf("is an arena server at %s? %w", server, err))
	}
	if who.Mode != "accounts" {
		fmt.Fprintf(stderr, "arena: %s has no accounts (local mode): every command reaches it without logging in\n", server)
		return nil
	}
	in := bufio.NewReader(os.Stdin)
	cred := credential{At: time.Now().UTC()}
	if *tokenStdin {
		err = tokenLogin(ctx, a, in, server, &cred)
	} else {
		err = passwordLogin(ctx, a, in, server, *name, *passwordStdin, stderr, &cred)
	}
	if err != nil {
		return err
	}
	creds, path, err := loadCredentials()
	if err != nil {
		return platformErr(err)
	}
	old, had := creds.Servers[server]
	creds.Servers[server] = cred
	if err := creds.save(path); err != nil {
		return platformErr(fmt.Errorf("keep the token: %w", err))
	}
	if had && old.TokenID != 0 && old.Token != cred.Token {
		// The token of the last login on this server is not needed any more.
		if err := newAPIClient(server, old.Token).call(ctx, "DELETE", fmt.Sprintf("/api/tokens/%d", old.TokenID), nil, nil); err != nil {
			fmt.Fprintf(stderr, "arena: the previous login's token was not revoked (%v): revoke it on the account page\n", err)
		}
	}
	u, _ := url.Parse(server)
	fmt.Fprintf(stdout, "logged in to %s as %s (token kept in %s)\n", server, cred.Name, path)
	fmt.Fprintf(stdout, "to push a bot: docker login %s -u %s, with that token as the password; then docker push %s/%s/BOT:TAG\n", u.Host, cred.Name, u.Host, cred.Name)
	return nil
}

// tokenLogin keeps the API token read from in, once the server takes it.
func tokenLogin(ctx context.Context, a *apiClient, in *bufio.Reader, server string, cred *credential) error {
	tok, _ := in.ReadString('\n')
	a.token = strings.TrimSpace(tok)
	var who me
	if err := a.call(ctx, "GET", "/api/me", nil, &who); err != nil {
		return platformErr(fmt.Errorf("%s does not take that token: %w", server, err))
	}
	if who.User == nil {
		return platformErr(fmt.Errorf("%s does not take that token (it is unknown, revoked, or its account disabled)", server))
	}
	cred.Name, cred.Token = who.User.Name, a.token
	return nil
}

// passwordLogin signs in as name (asked for when ""), with the password
// asked for on the terminal or read from in, and makes a token to keep.
func passwordLogin(ctx context.Context, a *apiClient, in *bufio.Reader, server, name string, passwordStdin bool, stderr io.Writer, cred *credential) error {
	if name == "" {
		fmt.Fprint(stderr, "Name: ")
		line, _ := in.ReadString('\n')
		name = strings.TrimSpace(line)
	}
	if name == "" {
		return usageErr("no name given (--name NAME)")
	}
	var password string
	if !passwordStdin && term.IsTerminal(int(os.Stdin.Fd())) {
		fmt.Fprintf(stderr, "Password for %s: ", name)
		b, err := term.ReadPassword(int(os.Stdin.Fd()))
		fmt.Fprintln(stderr)
		if err != nil {
			return platformErr(err)
		}
		password = string(b)
	} else {
		line, _ := in.ReadString('\n')
		password = strings.TrimRight(line, "\r\n")
	}
	if err := a.call(ctx, "POST", "/api/session", map[string]string{"name": name, "password": password}, nil); err != nil {
		return platformErr(fmt.Errorf("sign in to %s: %w", server, err))
	}
	host, _ := os.Hostname()
	var tok struct {
		ID    int64  `json:"id"`
		Token string `json:"token"`
	}
	err := a.call(ctx, "POST", "/api/tokens", map[string]string{"name": "arena login on " + host}, &tok)
	a.call(ctx, "DELETE", "/api/session", nil, nil) // the token is what stays
	if err != nil {
		return platformErr(fmt.Errorf("make a token on %s: %w", server, err))
	}
	cred.Name, cred.Token, cred.TokenID = name, tok.Token, tok.ID
	return nil
}

// loggedIn is the credential kept for the server a command names.
func loggedIn(pos []string) (string, credential, error) {
	server := defaultServer()
	if len(pos) == 1 {
		server = pos[0]
	}
	server, err := serverURL(server)
	if err != nil {
		return "", credential{}, usageErr("%v", err)
	}
	creds, _, err := loadCredentials()
	if err != nil {
		return "", credential{}, platformErr(err)
	}
	c, ok := creds.Servers[server]
	if !ok {
		return server, credential{}, usageErr("not logged in to %s: arena login %s", server, server)
	}
	return server, c, nil
}

func cmdLogout(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 1 || (len(args) == 1 && strings.HasPrefix(args[0], "-")) {
		return usageErr("usage: arena logout [SERVER]")
	}
	server, c, err := loggedIn(args)
	if err != nil {
		return err
	}
	if c.TokenID != 0 {
		if err := newAPIClient(server, c.Token).call(ctx, "DELETE", fmt.Sprintf("/api/tokens/%d", c.TokenID), nil, nil); err != nil {
			fmt.Fprintf(stderr, "arena: the token was not revoked (%v): revoke it on the account page\n", err)
		}
	} else {
		fmt.Fprintln(stderr, "arena: the token was given with --token-stdin: it is forgotten here, and stays valid until revoked on the account page")
	}
	creds, path, err := loadCredentials()
	if err != nil {
		return platformErr(err)
	}
	delete(creds.Servers, server)
	if err := creds.save(path); err != nil {
		return platformErr(err)
	}
	fmt.Fprintf(stdout, "logged out of %s\n", server)
	return nil
}

func cmdBots(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("arena bots", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print the server's answer (GET /api/registry) as JSON")
	fs.Usage = func() { fmt.Fprint(stderr, loginUsage) }
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageErr("%v (see arena help bots)", err)
	}
	if len(pos) > 1 {
		return usageErr("usage: arena bots [--json] [SERVER]")
	}
	server, c, err := loggedIn(pos)
	if err != nil {
		return err
	}
	var reg struct {
		Images []struct {
			Reference string    `json:"reference"`
			Digest    string    `json:"digest"`
			Size      int64     `json:"size"`
			Game      string    `json:"game"`
			PushedAt  time.Time `json:"pushed_at"`
			State     string    `json:"state"`
			Reason    string    `json:"reason"`
		} `json:"images"`
	}
	var raw json.RawMessage
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := newAPIClient(server, c.Token).call(ctx, "GET", "/api/registry", nil, &raw); err != nil {
		return platformErr(err)
	}
	if *asJSON {
		_, err := fmt.Fprintf(stdout, "%s\n", raw)
		return err
	}
	if err := json.Unmarshal(raw, &reg); err != nil {
		return platformErr(err)
	}
	if len(reg.Images) == 0 {
		fmt.Fprintf(stdout, "no bots pushed to %s yet\n", server)
		return nil
	}
	w := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "BOT\tGAME\tSTATE\tSIZE\tPUSHED\tDIGEST\tWHY")
	for _, im := range reg.Images {
		d := im.Digest
		if len(d) > 19 {
			d = d[7:19]
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%.1f MB\t%s\t%s\t%s\n", im.Reference, im.Game, im.State, float64(im.Size)/1e6,
			im.PushedAt.Local().Format("2006-01-02 15:04"), d, im.Reason)
	}
	return w.Flush()
}
