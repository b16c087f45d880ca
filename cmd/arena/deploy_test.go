package main

import (
	"cmp"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/client"

	"arena/internal/testsupport/dockertest"
	"arena/internal/testsupport/poll"
)

// deploy/Caddyfile in front of arena serve, as docs/deploy.md sets it up,
// with Caddy's own CA standing in for Let's Encrypt, on the Docker
// bridge's address (which the engine does not treat as an insecure
// registry, as it does loopback): the page and the API over TLS, a
// session cookie marked Secure and the client's address as Caddy saw it
// (Arena trusts the proxy); docker login refused until the CA is in the
// engine's certs.d, then docker push over TLS, and the pushed bot
// checked ready.
func TestBehindCaddyWithTLS(t *testing.T) {
	caddy, err := exec.LookPath("caddy")
	if err != nil {
		t.Fatal("caddy is not installed: apt-get install caddy (.ci/run does)")
	}
	cli := dockertest.Client(t)
	bots := dockertest.ExampleBots(t, cli)
	seed := "arena-test/seedbot:labelled"
	dockertest.Build(t, cli, seed, "FROM "+bots[0]+"\nLABEL io.arena.game=tanks\n", nil)
	gw := bridgeAddress(t, cli)
	bin := arenaBinary(t)
	port := freePort(t)
	public := fmt.Sprintf("%s:%d", gw, freePort(t))
	s := startServer(t, bin, t.TempDir(), port, "--auth", "accounts", "--admin-password", "the-admin-password",
		"--trusted-proxies", "127.0.0.1", "--hosts", gw+",localhost,127.0.0.1")

	// Caddy, on the deploy file, with its own CA and no admin endpoint.
	dir := t.TempDir()
	deployed, err := os.ReadFile("../../deploy/Caddyfile")
	if err != nil {
		t.Fatal(err)
	}
	config := filepath.Join(dir, "Caddyfile")
	global := fmt.Sprintf("{\n\tlocal_certs\n\tskip_install_trust\n\tadmin off\n\tauto_https disable_redirects\n\tstorage file_system %s\n}\n", filepath.Join(dir, "caddy"))
	if err := os.WriteFile(config, append([]byte(global), deployed...), 0o644); err != nil {
		t.Fatal(err)
	}
	proxy := exec.Command(caddy, "run", "--config", config, "--adapter", "caddyfile")
	proxy.Env = append(os.Environ(), "ARENA_DOMAIN=https://"+public, fmt.Sprintf("ARENA_UPSTREAM=127.0.0.1:%d", port), "HOME="+dir)
	proxyLog := &lockedBuffer{}
	proxy.Stdout, proxy.Stderr = proxyLog, proxyLog
	if err := proxy.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		proxy.Process.Kill()
		proxy.Wait()
		if t.Failed() {
			t.Logf("caddy's log:\n%s", proxyLog.String())
		}
	})
	root := filepath.Join(dir, "caddy", "pki", "authorities", "local", "root.crt")
	var pool *x509.CertPool
	var client *http.Client
	poll.Until(t, 30*time.Second, func() error {
		pem, err := os.ReadFile(root)
		if err != nil {
			return fmt.Errorf("caddy's CA: %v", err)
		}
		pool = x509.NewCertPool()
		pool.AppendCertsFromPEM(pem)
		jar, _ := cookiejar.New(nil)
		client = &http.Client{Jar: jar, Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
		res, err := client.Get("https://" + public + "/healthz")
		if err != nil {
			return fmt.Errorf("the page over TLS: %v", err)
		}
		res.Body.Close()
		if res.StatusCode != 200 {
			return fmt.Errorf("the page over TLS: %s", res.Status)
		}
		return nil
	})
	res, err := client.Get("https://" + public + "/")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || !strings.Contains(string(page), "<html") {
		t.Errorf("the page over TLS: %d", res.StatusCode)
	}

	// Through the proxy the session cookie is Secure, and the server
	// names the client Caddy saw.
	admin := &webClient{Client: client, url: "https://" + public}
	res, err = client.Post("https://"+public+"/api/session", "application/json", strings.NewReader(`{"name":"admin","password":"the-admin-password"}`))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	secure := false
	for _, c := range res.Cookies() {
		secure = secure || c.Secure
	}
	if res.StatusCode != 200 || !secure {
		t.Errorf("sign in over TLS: %d, cookies %v (want one Secure)", res.StatusCode, res.Header.Values("Set-Cookie"))
	}
	if status, body := admin.call(t, "POST", "/api/users", `{"name":"alice","password":"alice-password"}`); status != 201 {
		t.Fatalf("make alice: %d %v", status, body)
	}
	// Caddy's access log says whom it served; the server names the same
	// client (not Caddy's loopback connection).
	var seen string
	poll.Until(t, 5*time.Second, func() error {
		for _, line := range strings.Split(proxyLog.String(), "\n") {
			if strings.Contains(line, `"uri":"/api/users"`) {
				var entry struct {
					Request struct {
						RemoteIP string `json:"remote_ip"`
					}
				}
				json.Unmarshal([]byte(line), &entry)
				seen = entry.Request.RemoteIP
			}
		}
		if seen == "" || seen == "127.0.0.1" {
			return fmt.Errorf("caddy logged no request to /api/users from another address (%q):\n%s", seen, proxyLog.String())
		}
		if !strings.Contains(s.stderr.String(), `"uri": "/api/users", "status": 201, `) || !strings.Contains(s.stderr.String(), `"client": "`+seen+`"`) {
			return fmt.Errorf("the server did not name the client %s:\n%s", seen, s.stderr.String())
		}
		return nil
	})
	alice := &webClient{Client: &http.Client{Jar: func() http.CookieJar { j, _ := cookiejar.New(nil); return j }(), Timeout: 30 * time.Second, Transport: client.Transport}, url: "https://" + public}
	if status, body := alice.call(t, "POST", "/api/session", `{"name":"alice","password":"alice-password"}`); status != 200 {
		t.Fatalf("alice signs in: %d %v", status, body)
	}
	status, tok := alice.call(t, "POST", "/api/tokens", `{"name":"docker"}`)
	if status != 201 {
		t.Fatalf("alice's token: %d %v", status, tok)
	}

	// docker push over TLS: refused until the engine trusts the CA.
	cfg := t.TempDir()
	if out, err := dockerCLI(t, cfg, tok["token"].(string), "login", public, "-u", "alice", "--password-stdin"); err == nil || !strings.Contains(out, "certificate") {
		t.Errorf("docker login without the CA: %v\n%s", err, out)
	}
	certs := filepath.Join("/etc/docker/certs.d", public)
	if err := os.MkdirAll(certs, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(certs) })
	pem, _ := os.ReadFile(root)
	if err := os.WriteFile(filepath.Join(certs, "ca.crt"), pem, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := dockerCLI(t, cfg, tok["token"].(string), "login", public, "-u", "alice", "--password-stdin"); err != nil {
		t.Fatalf("docker login over TLS: %v\n%s", err, out)
	}
	pushed := public + "/alice/seedbot:v1"
	if err := cli.ImageTag(t.Context(), seed, pushed); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cli.ImageRemove(context.Background(), pushed, image.RemoveOptions{})
		removeHeld(cli, fmt.Sprintf("127.0.0.1:%d", port))
	})
	if out, err := dockerCLI(t, cfg, "", "push", pushed); err != nil {
		t.Fatalf("docker push over TLS: %v\n%s", err, out)
	}
	poll.Until(t, 2*time.Minute, func() error {
		if img := pushedImage(t, alice, "alice/seedbot:v1"); img["state"] != "ready" {
			return fmt.Errorf("the bot pushed over TLS is not ready: %v", img)
		}
		return nil
	})
}

// bridgeAddress is this host's address on Docker's default bridge (its
// gateway): the engine reaches it, and treats it as no insecure registry.
func bridgeAddress(t *testing.T, cli *client.Client) string {
	t.Helper()
	bridge, err := cli.NetworkInspect(t.Context(), "bridge", network.InspectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range bridge.IPAM.Config {
		if c.Gateway != "" {
			return c.Gateway
		}
		// No gateway said: the bridge's interface holds it.
		if name := bridge.Options["com.docker.network.bridge.name"]; name != "" || c.Subnet != "" {
			iface, err := net.InterfaceByName(cmp.Or(name, "docker0"))
			if err != nil {
				continue
			}
			addrs, _ := iface.Addrs()
			_, subnet, _ := net.ParseCIDR(c.Subnet)
			for _, a := range addrs {
				if ip, _, err := net.ParseCIDR(a.String()); err == nil && subnet != nil && subnet.Contains(ip) {
					return ip.String()
				}
			}
		}
	}
	t.Fatalf("the Docker bridge's address: %+v", bridge.IPAM)
	return ""
}
