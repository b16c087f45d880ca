package main

import (
	"bytes"
	"strings"
	"testing"

	"go.uber.org/zap"

	"arena/accounts"
	"arena/store"
)

// The mode follows the address unless set; local mode beyond loopback
// is warned about; accounts mode without an account says how to make
// the first, and ARENA_ADMIN_PASSWORD makes it.
func TestStartAccounts(t *testing.T) {
	for _, c := range []struct {
		host, auth, want string
	}{
		{"127.0.0.1", "", "local"}, {"localhost", "", "local"}, {"::1", "", "local"},
		{"0.0.0.0", "", "accounts"}, {"192.0.2.7", "", "accounts"}, {"0.0.0.0", "local", "local"}, {"127.0.0.1", "accounts", "accounts"},
	} {
		if got := (Config{Host: c.host, Auth: c.auth}).authMode(); got != c.want {
			t.Errorf("host %s, ARENA_AUTH %q: %s, want %s", c.host, c.auth, got, c.want)
		}
	}
	saved := *accounts.Params
	accounts.Params.Memory, accounts.Params.Iterations = 64, 1
	defer func() { *accounts.Params = saved }()
	st, err := store.Open(t.TempDir(), "test")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	run := func(cfg Config) (string, *accounts.Service, string) {
		var out bytes.Buffer
		mode, a, err := startAccounts(t.Context(), cfg, st, zap.NewNop(), &out)
		if err != nil {
			t.Fatalf("%+v: %v", cfg, err)
		}
		return mode, a, out.String()
	}
	if _, _, out := run(Config{Host: "0.0.0.0", Auth: "local"}); !strings.Contains(out, "warning: local mode") {
		t.Errorf("local mode on every address, no warning: %q", out)
	}
	if _, _, out := run(Config{Host: "127.0.0.1", Auth: "local"}); out != "" {
		t.Errorf("local mode on loopback: %q", out)
	}
	if _, _, out := run(Config{Host: "0.0.0.0", Signup: "invite"}); !strings.Contains(out, "set ARENA_ADMIN_PASSWORD") {
		t.Errorf("no account yet, no hint: %q", out)
	}
	_, a, out := run(Config{Host: "0.0.0.0", Signup: "invite", AdminPassword: "the-admin-password"})
	if out != "" {
		t.Errorf("with the admin's password: %q", out)
	}
	if _, err := a.SignIn(t.Context(), "admin", "the-admin-password", "test"); err != nil {
		t.Errorf("the admin signs in: %v", err)
	}
	if _, _, out := run(Config{Host: "0.0.0.0", Signup: "invite"}); out != "" {
		t.Errorf("an account exists, still the hint: %q", out)
	}
	if _, _, err := startAccounts(t.Context(), Config{Host: "0.0.0.0", Signup: "invite", AdminPassword: "short"}, st, zap.NewNop(), &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "ARENA_ADMIN_PASSWORD") {
		t.Errorf("a short admin password: %v", err)
	}
}

// A secret setting is never shown by help, whatever the environment
// holds, and still read from it.
func TestSecretSettingsAreNotShown(t *testing.T) {
	t.Setenv("ARENA_ADMIN_PASSWORD", "do-not-show-me")
	t.Setenv("ARENA_TOKEN", "nor-me")
	t.Setenv("ARENA_REGISTRY_STORAGE", `{"s3": {"bucket": "arena", "secretkey": "nor-my-key"}}`)
	var help bytes.Buffer
	fs, vals := serveFlags(&help)
	fs.Usage()
	for _, secret := range []string{"do-not-show-me", "nor-me", "nor-my-key"} {
		if strings.Contains(help.String(), secret) {
			t.Errorf("help shows a secret:\n%s", help.String())
		}
	}
	cfg, err := loadOnly(vals)
	if err != nil || cfg.AdminPassword != "do-not-show-me" || cfg.Token != "nor-me" || cfg.RegistryStorage.Parameters()["secretkey"] != "nor-my-key" {
		t.Errorf("the secrets from the environment: %q %q %v, %v", cfg.AdminPassword, cfg.Token, cfg.RegistryStorage, err)
	}
	// A bad storage setting is named, and its value not shown.
	t.Setenv("ARENA_REGISTRY_STORAGE", `{"gcs": {"secret": "nor-this"}}`)
	_, vals = serveFlags(&help)
	if _, err := loadOnly(vals); err == nil || !strings.Contains(err.Error(), "ARENA_REGISTRY_STORAGE = (secret): storage driver \"gcs\": not one of") || strings.Contains(err.Error(), "nor-this") {
		t.Errorf("a bad storage setting: %v", err)
	}
}
